"""The base branch's last results, from GitHub Actions artifacts (the action's `baseline: artifact`).

Listing runs by branch name is not provenance: a fork's pull request whose branch is named `main` runs in
this repository too, can change the workflow that uploads the artifact, and would hand over a results.json
that turns the PR's new failures into "already failing". So a baseline is taken only from a run that
this repository's own push (or schedule, or manual dispatch) made on the base branch, of this workflow,
successful (`run_problem`), and only from an artifact that names that run as its producer, has not
expired, is of bounded size and carries the sha256 `digest` its bytes are checked against
(`artifact_problem`). Its zip is read in memory: an archive with an absolute, `..` or link member is
refused, and only `results.json` is read, capped (no member is ever extracted to a path).

Whatever fails gives no baseline and a notice naming the check: comparing is a help to the reviewer,
and its absence must never fail the check (every finding then counts as new).

`workflow_run_provenance` judges, by the same rules, whether a `workflow_run` event's triggering run may
be trusted as a source of results; `fetch_pr_results` finds a pull request's own latest results for the
comment commands, from runs the pull request cannot have rewritten (`pr_run_problem`).
"""

from __future__ import annotations

import hashlib
import io
import re
import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.results import MAX_RESULTS_BYTES, ResultsError, RunResult, load_results

DEFAULT_ARTIFACT = "litmus-results"
RESULTS_MEMBER = "results.json"
# A results.json of 10,000 steps is about 25 MB; an artifact larger than this is not ours (its results.json member
# is held to litmus.results.MAX_RESULTS_BYTES, like every results file read back).
MAX_ARTIFACT_BYTES = 64 * 1024 * 1024
# Workflow runs looked at, newest first, before giving up on finding one of this workflow.
MAX_RUNS_SCANNED = 300
# Events only people with write access cause, running the branch's own workflow file.
TRUSTED_EVENTS = ("push", "schedule", "workflow_dispatch")
# Events whose runs use the base branch's workflow file, whatever the pull request changed.
BASE_CODE_EVENTS = ("pull_request_target",)
# Earlier heads of a pull request looked at for results that still hold for its current head.
MAX_EARLIER_HEADS = 10
WORKFLOWS_DIR = ".github/workflows/"
_DIGEST = re.compile(r"sha256:([0-9a-f]{64})")
# What zipfile can read without a password: a member outside these is said so, before zipfile is asked.
_READABLE_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})
_ENCRYPTED = 0x1  # general purpose bit 0 of a zip member's flags


@dataclass(frozen=True)
class BaselineArtifact:
    result: RunResult | None
    # What happened, for the log: where the baseline came from, or why there is none.
    notice: str
    source: str = ""


def workflow_path(workflow_ref: str) -> str:
    """'.github/workflows/litmus.yml' from GITHUB_WORKFLOW_REF ('owner/repo/.github/workflows/litmus.yml@ref')."""
    path = workflow_ref.split("@", 1)[0]
    parts = path.split("/", 2)
    return parts[2] if len(parts) == 3 else ""


def fetch_baseline(client: GitHubClient, repository: str, *, workflow: str, branch: str, save_to: Path,
                   artifact_name: str = DEFAULT_ARTIFACT) -> BaselineArtifact:
    """The results of the newest trusted run of `workflow` on `branch` (`run_problem`); saved to `save_to` when
    found and every check holds, else no result and a notice naming the failed check."""
    none = lambda why: BaselineArtifact(None, f"no baseline: {why}")  # noqa: E731
    if not (workflow and branch):
        return none("the workflow file or the base branch is unknown (GITHUB_WORKFLOW_REF, pull request)")
    try:
        found, refused = _latest_trusted_run(client, repository, workflow, branch)
        if found is None:
            return none(f"no successful run of {workflow} on {branch} that this repository's own push made, among "
                        f"the last {MAX_RUNS_SCANNED} runs" + (f" (refused {refused})" if refused else ""))
        # The run itself, by id: the object the artifact's producer is checked against.
        run = client.get(f"/repos/{repository}/actions/runs/{found['id']}")
        problem = run_problem(run, repository=repository, workflow=workflow, branch=branch)
        if problem:
            return none(f"run {found['id']} refused: {problem}")
    except GitHubAPIError as exc:
        return none(f"GitHub refused or failed ({exc.method} {exc.path}: HTTP {exc.status})")
    except (ValueError, TypeError, KeyError, AttributeError):
        return none("GitHub's answer about the workflow run is not one Litmus can read")
    found = run_results(client, repository, run, artifact_name, save_to, f"{workflow} on {branch}")
    if found.result is None:
        return none(found.notice)
    return BaselineArtifact(found.result, f"baseline: {found.source}", found.source)


def run_results(client: GitHubClient, repository: str, run: dict, artifact_name: str, save_to: Path,
                what: str) -> BaselineArtifact:
    """The results.json of `run`'s artifact `artifact_name` (`artifact_problem`, digest and archive checked),
    saved to `save_to`; else no result and why. `what` names the run's workflow for the messages."""
    none = lambda why: BaselineArtifact(None, why)  # noqa: E731
    try:
        artifacts = client.get(f"/repos/{repository}/actions/runs/{run['id']}/artifacts",
                               name=artifact_name, per_page=100).get("artifacts", [])
        artifact = next((a for a in artifacts if a.get("name") == artifact_name), None)
        if artifact is None:
            return none(f"run {run['id']} of {what} has no artifact named {artifact_name!r}")
        problem = artifact_problem(artifact, run)
        if problem:
            return none(f"the artifact {artifact_name!r} of run {run['id']} refused: {problem}")
        archive = client.download(f"/repos/{repository}/actions/artifacts/{artifact['id']}/zip", MAX_ARTIFACT_BYTES)
    except GitHubAPIError as exc:
        if exc.status == 410:
            return none(f"the artifact {artifact_name!r} of run {run['id']} has expired (HTTP 410)")
        return none(f"GitHub refused or failed ({exc.method} {exc.path}: HTTP {exc.status})")
    except (ValueError, TypeError, KeyError, AttributeError):
        return none("GitHub's answer about the workflow run's artifacts is not one Litmus can read")
    source = f"artifact {artifact_name!r} of run {run['id']} ({what}, {str(run['head_sha'])[:12]})"
    if hashlib.sha256(archive).hexdigest() != _DIGEST.fullmatch(artifact["digest"]).group(1):
        return none(f"{source} refused: the bytes downloaded do not match its digest {artifact['digest']}")
    data, problem = read_results_member(archive)
    if problem:
        return none(f"{source} {problem}")
    save_to.parent.mkdir(parents=True, exist_ok=True)
    save_to.write_bytes(data)
    try:
        result = load_results(save_to)
    except ResultsError as exc:
        return none(f"{source}: {exc}")
    return BaselineArtifact(result, source, source)


def run_problem(run: dict, *, repository: str, workflow: str, branch: str) -> str | None:
    """Why `run` (GitHub's workflow-run object) is not a successful run of `workflow` that a push (schedule,
    dispatch) to `branch` of `repository` made; None when it is one."""
    if run.get("event") not in TRUSTED_EVENTS:
        return f"its event is {run.get('event')!r}, not {', '.join(TRUSTED_EVENTS)}"
    own = (run.get("repository") or {})
    if str(own.get("full_name", "")).casefold() != repository.casefold():
        return f"it ran in {own.get('full_name')!r}, not {repository}"
    foreign = _foreign_head(run)
    if foreign:
        return foreign
    if run.get("head_branch") != branch:
        return f"its head branch is {run.get('head_branch')!r}, not {branch!r}"
    if run.get("path") != workflow:
        return f"its workflow is {run.get('path')!r}, not {workflow}"
    if (run.get("status"), run.get("conclusion")) != ("completed", "success"):
        return f"it is {run.get('status')}/{run.get('conclusion')}, not completed/success"
    return None


def artifact_problem(artifact: dict, run: dict) -> str | None:
    """Why `artifact` (an artifact list entry) is not a usable artifact that `run` produced; None when it is."""
    produced = artifact.get("workflow_run") or {}
    expected = {"id": run["id"], "repository_id": run["repository"]["id"],
                "head_repository_id": run["head_repository"]["id"], "head_branch": run["head_branch"],
                "head_sha": run["head_sha"]}
    for key, value in expected.items():
        if produced.get(key) != value:
            return f"its workflow_run.{key} is {produced.get(key)!r}, not the run's {value!r}"
    if artifact.get("expired") is not False:
        return "it has expired"
    size = artifact.get("size_in_bytes")
    if not isinstance(size, int) or size > MAX_ARTIFACT_BYTES:
        return f"its size ({size!r} bytes) is more than {MAX_ARTIFACT_BYTES // 2**20} MiB"
    if not (isinstance(artifact.get("digest"), str) and _DIGEST.fullmatch(artifact["digest"])):
        return "it has no sha256 digest to check its bytes against (upload it with actions/upload-artifact v4 or newer)"
    return None


def read_results_member(archive: bytes) -> tuple[bytes, str]:
    """`results.json` out of an artifact's zip, in memory and capped; (b"", why not) when the archive is not a
    readable one, has a member that could write outside a folder (absolute, `..`, a link) or lacks the file."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as bundle:
            members = bundle.infolist()
            for info in members:
                if _unsafe_member(info):
                    return b"", (f"refused: its member {info.filename!r} is an absolute path, climbs out "
                                 "with '..' or is a link")
            member = next((i for i in members if i.filename.rsplit("/", 1)[-1] == RESULTS_MEMBER and not i.is_dir()),
                          None)
            if member is None:
                return b"", f"holds no {RESULTS_MEMBER}"
            if member.flag_bits & _ENCRYPTED:
                return b"", f"refused: its {RESULTS_MEMBER} is encrypted"
            if member.compress_type not in _READABLE_METHODS:
                return b"", (f"its {RESULTS_MEMBER} uses compression method {member.compress_type}, which Python's "
                             "zipfile cannot read")
            with bundle.open(member) as stream:
                data = stream.read(MAX_RESULTS_BYTES + 1)  # a zip's declared sizes are the uploader's word
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        return b"", f"is not a readable zip ({type(exc).__name__})"
    if len(data) > MAX_RESULTS_BYTES:
        return b"", f"refused: its {RESULTS_MEMBER} is larger than {MAX_RESULTS_BYTES // 2**20} MiB"
    return data, ""


def workflow_run_provenance(event: dict) -> tuple[bool, str]:
    """(trusted, why) for a `workflow_run` event's triggering run as a source of results: trusted when a push,
    schedule or dispatch of this repository made it, or a pull request from this repository itself (a fork's
    run is attacker-made, whatever its branch is called), of a workflow file under .github/workflows/."""
    run = event.get("workflow_run") if isinstance(event, dict) else None
    if not isinstance(run, dict):
        return False, "untrusted: the event carries no workflow_run"
    name = f"run {run.get('id')} ({run.get('event')!r} on {run.get('head_branch')!r})"
    repo_id = (event.get("repository") or {}).get("id")
    if (run.get("repository") or {}).get("id") != repo_id or repo_id is None:
        return False, f"untrusted: {name} did not run in this repository"
    foreign = _foreign_head(run)
    if foreign:
        return False, f"untrusted: {name}: {foreign}"
    if run.get("event") not in (*TRUSTED_EVENTS, "pull_request"):
        return False, f"untrusted: {name}: its event is not push, schedule, workflow_dispatch or pull_request"
    path = run.get("path")
    expected = (event.get("workflow") or {}).get("path", path)
    if not (isinstance(path, str) and path.startswith(WORKFLOWS_DIR) and ".." not in PurePosixPath(path).parts
            and path == expected):
        return False, f"untrusted: {name}: its workflow file {path!r} is not the event's workflow under {WORKFLOWS_DIR}"
    return True, f"trusted: {name} was made by this repository's own {run['event']} of {path}"


def _foreign_head(run: dict) -> str | None:
    """Why `run`'s head repository is not the repository it ran in (a fork; ids survive renames)."""
    head, own = run.get("head_repository") or {}, run.get("repository") or {}
    if head.get("id") is None or head.get("id") != own.get("id"):
        return (f"its head repository {head.get('full_name')!r} (id {head.get('id')}) is not "
                f"{own.get('full_name')!r} (id {own.get('id')}): a fork's")
    return None


def _unsafe_member(info: zipfile.ZipInfo) -> bool:
    name = info.filename.replace("\\", "/")
    mode = info.external_attr >> 16
    return (name.startswith("/") or re.match(r"^[A-Za-z]:", name) is not None
            or ".." in PurePosixPath(name).parts or stat.S_ISLNK(mode))


def _latest_trusted_run(client: GitHubClient, repository: str, workflow: str, branch: str) -> tuple[dict | None, str]:
    """The newest run of `workflow` on `branch` with no `run_problem`, and why the newest refused one was refused
    (a fork's run named like the branch is passed over, never used)."""
    scanned, page, refused = 0, 1, ""
    while scanned < MAX_RUNS_SCANNED:
        runs = client.get(f"/repos/{repository}/actions/runs", branch=branch, status="success",
                          per_page=100, page=page).get("workflow_runs", [])
        for run in runs:  # newest first, as GitHub lists them
            if run.get("path") != workflow:
                continue  # another workflow's run: not a candidate at all
            problem = run_problem(run, repository=repository, workflow=workflow, branch=branch)
            if problem is None:
                return run, refused
            refused = refused or f"run {run.get('id')}: {problem}"
        scanned += len(runs)
        if len(runs) < 100:
            break
        page += 1
    return None, refused


def pr_run_problem(run: dict, *, repository: str, workflow: str) -> str | None:
    """Why `run` is not a source of a pull request's results (None when it is one): a completed run of
    `workflow`, in `repository`, whose head repository is `repository` (a branch only people with write access
    push to) or whose event runs the base branch's workflow file (`pull_request_target`), so that the run
    itself is code the pull request cannot change."""
    own = run.get("repository") or {}
    if str(own.get("full_name", "")).casefold() != repository.casefold():
        return f"it ran in {own.get('full_name')!r}, not {repository}"
    if run.get("path") != workflow:
        return f"its workflow is {run.get('path')!r}, not {workflow}"
    foreign = _foreign_head(run)
    if foreign and run.get("event") not in BASE_CODE_EVENTS:
        return f"{foreign}, and its event {run.get('event')!r} runs the pull request's own workflow file"
    if run.get("status") != "completed" or run.get("conclusion") not in ("success", "failure"):
        return f"it is {run.get('status')}/{run.get('conclusion')}, not a completed run with results"
    return None


def fetch_pr_results(client: GitHubClient, repository: str, *, workflow: str, artifact_name: str, head_sha: str,
                     head_branch: str, still_valid: Callable[[str], str | None],
                     save_to: Path) -> tuple[BaselineArtifact, str | None]:
    """The newest results of the pull request whose head is `head_sha`, from a run with no `pr_run_problem`:
    a run of `head_sha` itself, else of an earlier head of `head_branch` for which `still_valid` (given that
    head) finds no reason why its results do not hold for `head_sha`. Returns them with the head they were made
    for, or no result and why (each run refused is named)."""
    refused: list[str] = []
    try:
        runs = client.get(f"/repos/{repository}/actions/runs", head_sha=head_sha, per_page=100).get("workflow_runs", [])
        earlier = client.get(f"/repos/{repository}/actions/runs", branch=head_branch,
                             per_page=100).get("workflow_runs", [])
    except GitHubAPIError as exc:
        return BaselineArtifact(None, f"GitHub refused or failed ({exc.method} {exc.path}: HTTP {exc.status})"), None
    except (ValueError, TypeError, AttributeError):
        return BaselineArtifact(None, "GitHub's list of workflow runs is not one Litmus can read"), None
    checked: dict[str, str | None] = {head_sha: None}
    for run in [*runs, *earlier]:  # newest first, as GitHub lists them
        if not isinstance(run, dict) or run.get("path") != workflow:
            continue  # another workflow's run: not a candidate at all
        sha = str(run.get("head_sha"))
        if sha not in checked:
            if len(checked) > MAX_EARLIER_HEADS:
                continue
            checked[sha] = still_valid(sha)
        problem = checked[sha] or pr_run_problem(run, repository=repository, workflow=workflow)
        if problem is None:
            found = run_results(client, repository, run, artifact_name, save_to, workflow)
            if found.result is not None:
                return found, sha
            problem = found.notice
        refused.append(f"run {run.get('id')}: {problem}")
    why = f"no run of {workflow} for {head_sha[:12]} has results Litmus can vouch for"
    return BaselineArtifact(None, why + (f" ({'; '.join(refused[:3])})" if refused else "")), None
