"""The base branch's last results, from GitHub Actions artifacts (the action's `baseline: artifact`).

The latest successful run of this workflow on the PR's base branch is found through the workflow-runs
list, its artifact by name through the run's artifact list, and the artifact's zip downloaded through
the same client (its retries, its timeouts) with a size cap, then `results.json` read out of it in
memory (no member is ever extracted to a path, so a crafted archive cannot write anywhere).

A missing workflow run, artifact or file, an expired artifact, an API refusal or an unreadable
document gives no baseline and a notice saying why: comparing is a help to the reviewer, and its
absence must never fail the check.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.results import ResultsError, RunResult, load_results

DEFAULT_ARTIFACT = "litmus-results"
RESULTS_MEMBER = "results.json"
# A results.json of 10,000 steps is about 25 MB; an artifact larger than this is not ours.
MAX_ARTIFACT_BYTES = 64 * 1024 * 1024
# Workflow runs looked at, newest first, before giving up on finding one of this workflow.
MAX_RUNS_SCANNED = 300


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
    """The results of the newest successful run of `workflow` on `branch`; saved to `save_to` when found."""
    none = lambda why: BaselineArtifact(None, f"no baseline: {why}")  # noqa: E731
    if not (workflow and branch):
        return none("the workflow file or the base branch is unknown (GITHUB_WORKFLOW_REF, pull request)")
    try:
        run = _latest_successful_run(client, repository, workflow, branch)
        if run is None:
            return none(f"no successful run of {workflow} on {branch} among the last {MAX_RUNS_SCANNED} runs")
        artifacts = client.get(f"/repos/{repository}/actions/runs/{run['id']}/artifacts",
                               name=artifact_name, per_page=100).get("artifacts", [])
        artifact = next((a for a in artifacts if a.get("name") == artifact_name), None)
        if artifact is None:
            return none(f"run {run['id']} of {workflow} on {branch} has no artifact named {artifact_name!r}")
        if artifact.get("expired"):
            return none(f"the artifact {artifact_name!r} of run {run['id']} has expired")
        archive = client.download(f"/repos/{repository}/actions/artifacts/{artifact['id']}/zip", MAX_ARTIFACT_BYTES)
    except GitHubAPIError as exc:
        if exc.status == 410:
            return none("the baseline artifact has expired (HTTP 410)")
        return none(f"GitHub refused or failed ({exc.method} {exc.path}: HTTP {exc.status})")
    source = f"artifact {artifact_name!r} of run {run['id']} ({workflow} on {branch}, {run.get('head_sha', '')[:12]})"
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as bundle:
            member = next((n for n in bundle.namelist() if n.rsplit("/", 1)[-1] == RESULTS_MEMBER), None)
            if member is None:
                return none(f"{source} holds no {RESULTS_MEMBER}")
            if bundle.getinfo(member).file_size > MAX_ARTIFACT_BYTES:
                return none(f"{source}: {RESULTS_MEMBER} is larger than {MAX_ARTIFACT_BYTES // 2**20} MiB")
            data = bundle.read(member)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        return none(f"{source} is not a readable zip ({type(exc).__name__})")
    save_to.parent.mkdir(parents=True, exist_ok=True)
    save_to.write_bytes(data)
    try:
        result = load_results(save_to)
    except ResultsError as exc:
        return none(f"{source}: {exc}")
    return BaselineArtifact(result, f"baseline: {source}", source)


def _latest_successful_run(client: GitHubClient, repository: str, workflow: str, branch: str) -> dict | None:
    scanned = 0
    page = 1
    while scanned < MAX_RUNS_SCANNED:
        runs = client.get(f"/repos/{repository}/actions/runs", branch=branch, status="success",
                          per_page=100, page=page).get("workflow_runs", [])
        for run in runs:  # newest first, as GitHub lists them
            if run.get("path") == workflow and run.get("conclusion") == "success":
                return run
        scanned += len(runs)
        if len(runs) < 100:
            return None
        page += 1
    return None
