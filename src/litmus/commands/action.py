"""The GitHub Action entrypoint: run the probes, write every report, then tell GitHub.

Runs inside the action's container (`ENTRYPOINT ["/action/venv/bin/litmus", "action"]`). It takes no
flags: its inputs come from the `INPUT_*` variables the runner sets from the workflow's `with:`
(`INPUT_BASE-URL`, `INPUT_FAIL-ON`, ...; see action.yml), its context from `GITHUB_*`.

In order:
  1. masks the judge API key, the token (and its `x-access-token:` basic-auth forms) and every
     `{{ secrets.NAME }}` value (`::add-mask::`) before anything else is printed;
  2. reads the event file (exit 2 naming the field when a field it relies on is malformed), finds
     the pull request (pull_request / pull_request_target payload; on deployment_status the open PR
     the deployed commit heads; else `refs/pull/N/merge`) and its changed files (REST; `git diff`
     against the base when the API refuses);
  3. waits for the preview (`wait-for`), loads and runs the suites (or, with `merge`, merges the
     results.json of earlier shard jobs instead of running);
  4. writes results.json and every report into `output-dir`, the outputs into $GITHUB_OUTPUT and
     the job summary into $GITHUB_STEP_SUMMARY;
  5. publishes a "Litmus" check run with every finding on a changed probe file as an annotation
     (or, without `checks: write`, at most 10 error and 10 warning workflow-command annotations),
     and creates or updates the single sticky PR comment;
  6. exits by `fail-on`: 1 when the run failed by it, 2 on bad input, else 0. A comment or check
     run GitHub refuses (a fork PR's read-only token) is a warning, never a failure.

A cancelled job (SIGINT or SIGTERM, SIGKILL a few seconds later) still gets steps 4 and 5, marked
interrupted, within about 1.5 s: calls in flight are abandoned, the check run is `cancelled`,
and the exit status is 130 / 143. A second SIGINT skips the GitHub calls.

Try it locally, as the container would be run (`env`, since a shell cannot assign a name with a hyphen):
  env INPUT_BASE-URL=http://127.0.0.1:8000 INPUT_COMMENT=false GITHUB_WORKSPACE=$PWD litmus action
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, TextIO
from urllib.parse import urlsplit

from litmus.commands.comment_command import CommandSettings, handle_comment
from litmus.compare import MAX_COST_INCREASE, headline
from litmus.github.api import GitHubAPIError, GitHubClient, token_forms
from litmus.github.artifacts import WORKFLOWS_DIR, fetch_baseline, workflow_path, workflow_run_provenance
from litmus.github.changes import (
    MAX_PR_FILES,
    changed_checks,
    git_changed_files,
    pull_request_files,
    pull_request_of_commit,
    suites_touched,
)
from litmus.github.checks import publish_check_run
from litmus.github.comment import token_login, upsert_comment
from litmus.github.context import (
    GitHubContext,
    InputError,
    PullRequest,
    read_bool_input,
    read_choice_input,
    read_input,
)
from litmus.github.decision_records import recorded_sources
from litmus.github.envfiles import append_summary, write_outputs
from litmus.github.findings import Annotation, annotations, cap_per_level, select
from litmus.github.trust_decision import decide_trust
from litmus.github.wait import NotReady, wait_until_ready
from litmus.github.workflow import WorkflowCommands
from litmus.load.run_vars import assignment_lines
from litmus.merge import MergeError, merge
from litmus.numbers import parse_number
from litmus.pipeline import Baseline, RunRefused, RunRequest, execute, prepare
from litmus.pipeline import write_outputs as write_reports
from litmus.report.options import check_sarif_category
from litmus.results import DEFAULT_OUT, OutputError, ResultsError, RunResult, check_output_dir, load_results
from litmus.run.rate import parse_rate_limit
from litmus.run.runner import RunOptions
from litmus.run.signals import StopOnSignals, exit_abandoning
from litmus.text import count
from litmus.trust import FORK_CODE_INPUT, Trust, origin
from litmus.verdict import conclusion as conclusion_of
from litmus.verdict import exit_code

FAIL_ON = ("suite", "assertion", "new", "never")
BASELINE = ("", "artifact")
ANNOTATIONS = ("changed", "all", "none")
RESULTS_FILE = "results.json"
# A run with no suite: only changed-only selects none (finding none is an error), here or in the shards merged.
NOTHING_CHECKED = "nothing checked: changed-only selected no suite (the PR changes no probe file nor a file one reads)"
# The judge key given as an input reaches the judge through this variable (config `api_key_env`).
JUDGE_KEY_VARIABLE = "LITMUS_JUDGE_API_KEY"
# A job runs at most 6 hours on GitHub-hosted runners: a longer wait is a typo.
MAX_WAIT_TIMEOUT_S = 6 * 3600
# After a cancellation the runner kills the step within seconds: each GitHub call gets this long.
CANCELLED_API_TIMEOUT_S = 2.0


class ActionFailure(Exception):
    """Bad input or an unusable environment: reported as an error annotation, exit status 2."""


@dataclass(frozen=True)
class ActionInputs:
    probes: tuple[str, ...]
    base_url: str
    config: str
    judge_provider: str
    judge_model: str
    judge_base_url: str
    judge_api_key: str
    fail_on: str
    baseline: str
    baseline_url: str
    baseline_artifact: str
    comment: bool
    annotations: str
    check_run: bool
    changed_only: bool
    shard: tuple[int, int] | None
    merge: tuple[str, ...]
    output_dir: str
    wait_for: str
    wait_timeout: float
    github_token: str
    # `vars:`, one NAME=VALUE a line: {{ vars.NAME }}.
    run_vars: tuple[tuple[str, str], ...] = ()
    # The trust policy's inputs (docs/security.md).
    allow_fork_code: bool = False
    env_allow: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    deployment_hosts: tuple[str, ...] = ()
    # The SARIF run's category (None: the file names none, so upload-sarif's `category:` applies).
    sarif_category: str | None = None
    # `max-cost-increase`: percent; a flow whose cost (or tokens) per run rose more against the baseline regressed.
    max_cost_increase: float | None = None
    # The comment commands (`issue_comment`): whose runs' results artifact they decide on.
    results_workflow: str = ""
    results_artifact: str = "litmus-report"
    # Requests per second to each origin for the whole run (`--rate-limit`); None: only the suites' limits.
    rate_limit: float | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ActionInputs:
        inputs = cls(
            probes=tuple(read_input(environ, "probes", "probes").split()),
            base_url=read_input(environ, "base-url"),
            config=read_input(environ, "config"),
            judge_provider=read_input(environ, "judge-provider"),
            judge_model=read_input(environ, "judge-model"),
            judge_base_url=read_input(environ, "judge-base-url"),
            judge_api_key=read_input(environ, "judge-api-key"),
            fail_on=read_choice_input(environ, "fail-on", FAIL_ON, "suite"),
            baseline=read_choice_input(environ, "baseline", BASELINE, ""),
            baseline_url=read_input(environ, "baseline-url"),
            baseline_artifact=read_input(environ, "baseline-artifact", "litmus-results"),
            comment=read_bool_input(environ, "comment", True),
            annotations=read_choice_input(environ, "annotations", ANNOTATIONS, "changed"),
            check_run=read_bool_input(environ, "check-run", True),
            changed_only=read_bool_input(environ, "changed-only", False),
            shard=_shard(read_input(environ, "shard")),
            merge=tuple(read_input(environ, "merge").split()),
            output_dir=read_input(environ, "output-dir", DEFAULT_OUT),
            wait_for=read_input(environ, "wait-for"),
            wait_timeout=_seconds(read_input(environ, "wait-timeout", "300")),
            github_token=read_input(environ, "github-token"),
            run_vars=_run_vars(read_input(environ, "vars")),
            allow_fork_code=read_bool_input(environ, "allow-fork-code", False),
            env_allow=_names(read_input(environ, "env-allow")),
            allowed_origins=_origins(read_input(environ, "allowed-origins")),
            deployment_hosts=_names(read_input(environ, "deployment-hosts")),
            sarif_category=_parsed(environ, "sarif-category", check_sarif_category),
            results_workflow=_workflow_file(read_input(environ, "results-workflow")),
            results_artifact=read_input(environ, "results-artifact", "litmus-report"),
            max_cost_increase=_parsed(environ, "max-cost-increase", lambda text: parse_number(
                text, whole=False, low=0, high=MAX_COST_INCREASE, unit="percent")),
            rate_limit=_parsed(environ, "rate-limit", parse_rate_limit, " (requests per second to each origin)"),
        )
        if inputs.max_cost_increase is not None and not (inputs.baseline or inputs.baseline_url):
            raise InputError("input 'max-cost-increase' compares with a baseline: set 'baseline: artifact' or "
                             "'baseline-url' too")
        return inputs


def _names(text: str) -> tuple[str, ...]:
    """A list input: names separated by spaces, commas or newlines."""
    return tuple(dict.fromkeys(re.split(r"[\s,]+", text.strip()))) if text.strip() else ()


def _origins(text: str) -> tuple[str, ...]:
    found = []
    for given in _names(text):
        normal = origin(given)
        if normal is None:
            raise InputError(f"input 'allowed-origins': {given!r} is not an http(s) origin such as https://api.example.com")
        found.append(normal)
    return tuple(found)


def _workflow_file(text: str) -> str:
    """`results-workflow`: a workflow file of this repository, as GitHub names it in a run's `path`."""
    if not text:
        return ""
    path = text if text.startswith(WORKFLOWS_DIR) else WORKFLOWS_DIR + text
    if not re.fullmatch(r"\.github/workflows/[\w.-]+\.ya?ml", path):
        raise InputError(f"input 'results-workflow' must name a workflow file such as litmus.yml "
                         f"(or .github/workflows/litmus.yml); got {text!r}")
    return path


def _run_vars(text: str) -> tuple[tuple[str, str], ...]:
    try:
        return tuple(assignment_lines(text))
    except ValueError as exc:
        raise ActionFailure(f"input 'vars': {exc}") from None


def _parsed(environ: Mapping[str, str], name: str, parse: Callable[[str], Any], hint: str = "") -> Any:
    """Input `name` read by `parse` (None when it is not set); a value it refuses is an error naming the input."""
    text = read_input(environ, name)
    try:
        return parse(text) if text else None
    except ValueError as exc:
        raise InputError(f"input '{name}': {exc}{hint}") from None


def _shard(text: str) -> tuple[int, int] | None:
    if not text:
        return None
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise InputError(f"input 'shard' must be K/N with 1 <= K <= N, e.g. 2/4; got {text!r}")
    return int(k), int(n)


def _seconds(text: str) -> float:
    try:
        return parse_number(text, whole=False, low=0, high=MAX_WAIT_TIMEOUT_S, unit="seconds")
    except ValueError as exc:
        raise InputError(f"input 'wait-timeout': {exc} (6 hours, a job's limit)") from None


def configure(parser: argparse.ArgumentParser) -> None:
    """No flags: everything comes from the INPUT_* and GITHUB_* environment (see action.yml)."""


def run(args: argparse.Namespace) -> int:
    # After a cancellation, calls still in flight are abandoned: end without waiting for their threads.
    return exit_abandoning(main(os.environ, sys.stdout))


def main(environ: Mapping[str, str], stream: TextIO) -> int:
    out = WorkflowCommands(stream)
    # Secrets first: nothing may be printed before the runner knows to hide them.
    out.mask([read_input(environ, "judge-api-key"), *token_forms(read_input(environ, "github-token"))])
    stop, abort = threading.Event(), threading.Event()
    # A cancelled job gets SIGINT or SIGTERM, then SIGKILL: from the first signal on, every stage
    # hurries to write what it has (results, reports, job summary) and to tell GitHub.
    with StopOnSignals(stop, abort) as signals:
        try:
            if environ.get("GITHUB_EVENT_NAME") == "issue_comment":
                code = _comment_command(environ, out)
            else:
                code = _Action(environ, out, stop, abort).run()
        except (ActionFailure, InputError) as exc:
            out.error(str(exc), title="Litmus")
            code = 2
    return signals.exit_code or code


def _comment_command(environ: Mapping[str, str], out: WorkflowCommands) -> int:
    """`issue_comment`: a `/litmus` command in a pull request's comment (litmus.commands.comment_command); no
    probe runs and nothing of the pull request's is checked out or run."""
    inputs = ActionInputs.from_environ(environ)
    ctx = GitHubContext.from_environ(environ)
    workspace = ctx.workspace.resolve()
    try:
        check_output_dir(workspace / inputs.output_dir, workspace)
    except OutputError as exc:
        raise ActionFailure(f"output-dir: {exc}") from None
    client = GitHubClient(ctx.api_url, inputs.github_token) if inputs.github_token and ctx.repository else None
    settings = CommandSettings(results_workflow=inputs.results_workflow, results_artifact=inputs.results_artifact,
                               fail_on=inputs.fail_on, output_dir=workspace / inputs.output_dir,
                               check_run=inputs.check_run, comment=inputs.comment, probes=inputs.probes)
    return handle_comment(ctx, client, settings, out)


class _Action:
    """One execution of the action; each method is one stage of the docstring's list."""

    def __init__(self, environ: Mapping[str, str], out: WorkflowCommands, stop: threading.Event,
                 abort: threading.Event) -> None:
        self.environ = dict(environ)
        self.out = out
        self.stop = stop
        self.abort = abort
        self.inputs = ActionInputs.from_environ(environ)
        self.ctx = GitHubContext.from_environ(environ)
        self.workspace = self.ctx.workspace.resolve()
        try:  # before any request: a committed symlink at output-dir would take every report elsewhere
            check_output_dir(self.workspace / self.inputs.output_dir, self.workspace)
        except OutputError as exc:
            raise ActionFailure(f"output-dir: {exc}") from None
        can_call_api = bool(self.inputs.github_token and self.ctx.repository)
        self.client = GitHubClient(self.ctx.api_url, self.inputs.github_token) if can_call_api else None
        self.pr = self.ctx.pull_request() or self._deployed_pull_request()
        self._changed: set[str] | None = None
        self._changed_known = False
        self.trust = self._decide_trust()
        # Set when merged results come from a run of unproven provenance: the check run is then neutral.
        self.unproven_results: str | None = None

    # ---- 1-3: the result

    def run(self) -> int:
        written = self._merge_shards() if self.inputs.merge else self._run_suites()
        if written is None:
            return 2
        result, paths = written
        if self.stop.is_set():
            self.out.warning("Litmus: the job is being cancelled; the results so far are written, marked interrupted")
            if self.client:
                self.client.hurry(CANCELLED_API_TIMEOUT_S)
        all_findings = annotations(result)
        selected = select(all_findings, self.inputs.annotations, self.changed_files())
        # A second Ctrl-C: no more calls to GitHub, only the outputs file.
        check_url = None if self.abort.is_set() else self._publish_check_run(result, paths, selected)
        if check_url is None:
            self._annotate_in_log(selected, paths)
        comment_url = None if self.abort.is_set() else self._publish_comment(paths)
        self._write_outputs(result, paths, comment_url, check_url)

        code = exit_code(result, self.inputs.fail_on)
        self.out.log(f"Litmus: verdict {result.verdict}; fail-on {self.inputs.fail_on}: "
                     f"{'failing' if code else 'passing'} the step")
        return code

    def _decide_trust(self) -> Trust:
        """The run's one trust decision, for the commit checked out in the workspace, logged with its reason."""
        inputs = self.inputs
        trusted, reason = decide_trust(self.ctx, self.client, self.workspace, inputs.probes)
        self.deployment_url = self._deployment_url(trusted or inputs.allow_fork_code)
        origins = {origin(url) for url in (inputs.base_url, self.deployment_url) if url}
        changed = self.changed_files()
        trust = Trust(trusted, reason, env_allow=frozenset(inputs.env_allow),
                      allowed_origins=frozenset(o for o in (*origins, *inputs.allowed_origins) if o),
                      changed_files=None if changed is None else frozenset(changed),
                      fork_code_allowed=inputs.allow_fork_code and not trusted,
                      base_sha=self.pr.base_sha if self.pr else None)
        return trust

    def _log_trust(self) -> None:
        """The decision and its reason, once; after the run's secrets are masked, like everything printed."""
        trust = self.trust
        if trust.trusted:
            self.out.log(f"Litmus: {trust.reason}")
        elif trust.fork_code_allowed:
            self.out.warning(f"Litmus: {trust.reason}; run as trusted because {FORK_CODE_INPUT} is true: "
                             "its python checks, litmus.yaml and env names run with this job's token and secrets")
        else:
            self.out.notice(f"Litmus: {trust.reason}. Its python checks do not run, litmus.yaml is read from the "
                            "base commit, env./secrets. resolve only names in env-allow, and requests go only to "
                            "base-url, the deployment URL and allowed-origins (docs/security.md)")

    def _deployment_url(self, trusted: bool) -> str | None:
        """The deployment_status event's URL, when the run uses it (no `base-url` input): data a fork's pull
        request may have shaped, so its host must match `deployment-hosts`; unset, only trusted runs use it."""
        url = None if self.inputs.base_url else self.ctx.deployment_url()
        if not url:
            return None
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
        patterns = self.inputs.deployment_hosts
        if patterns and not any(fnmatch.fnmatchcase(host, p.lower()) for p in patterns):
            raise ActionFailure(f"the deployment URL's host {host!r} matches no pattern of the input "
                                f"'deployment-hosts' ({', '.join(patterns)}): not probing it")
        if not patterns and not trusted:
            raise ActionFailure(f"the deployment URL's host {host!r} comes from an event an untrusted pull request "
                                "may have shaped: set the input 'deployment-hosts' (e.g. '*.vercel.app') to the "
                                "hosts your deployments use")
        return url

    def _deployed_pull_request(self) -> PullRequest | None:
        """On deployment_status: the open PR whose head is the deployed commit, asked of the REST API."""
        sha = self.ctx.deployed_sha()
        if not (sha and self.client):
            return None
        try:
            pr = pull_request_of_commit(self.client, self.ctx.repository, sha)
        except GitHubAPIError as exc:
            self._api_warning(f"could not find the pull request of the deployed commit {sha[:12]}", exc)
            return None
        if pr is None:
            self.out.log(f"no open pull request has the deployed commit {sha[:12]} as its head: no PR comment")
        else:
            self.out.log(f"the deployed commit {sha[:12]} is the head of PR #{pr.number}")
        return pr

    def changed_files(self) -> set[str] | None:
        """Files the PR changed: REST first, then `git diff` (when the API fails, or lists as many files as
        GitHub lists at most); None outside a PR or when neither tells them all."""
        if self._changed_known:
            return self._changed
        self._changed_known = True
        if self.pr is None:
            return None
        if self.client:
            try:
                self._changed = pull_request_files(self.client, self.ctx.repository, self.pr.number)
                if self._changed is not None:
                    return self._changed
                self.out.notice(f"Litmus: GitHub lists at most {MAX_PR_FILES:,} files of a pull request, and this "
                                "one has that many: its changed files may be more; using git diff")
            except GitHubAPIError as exc:
                self._api_warning("could not list the PR's changed files; using git diff", exc)
        self._changed = git_changed_files(self.workspace, self.pr.base_sha)
        if self._changed is None:
            self.out.warning("Litmus: the PR's changed files are unknown (no API access, and git diff failed: "
                             "check out with fetch-depth: 2); annotating every finding")
        return self._changed

    def _run_suites(self) -> tuple[RunResult, dict[str, Path]] | None:
        inputs = self.inputs
        environ = self.environ
        if inputs.judge_api_key:
            environ[JUDGE_KEY_VARIABLE] = inputs.judge_api_key
        base_url = inputs.base_url or self.deployment_url
        state = self.ctx.deployment_state()
        if state and state != "success":
            self.out.warning(f"Litmus: deployment_status is {state!r}, not 'success': the deployment may not be "
                             "live (add `if: github.event.deployment_status.state == 'success'` to the job)")
        options = RunOptions(base_url=base_url or None, shard=inputs.shard, fail_on=inputs.fail_on, stop=self.stop,
                             abort=self.abort, run_vars=dict(inputs.run_vars), trust=self.trust,
                             rate_limit=inputs.rate_limit)
        links = {"repository": self.ctx.repository or None, "server_url": self.ctx.server_url,
                 "sha": self.ctx.head_sha() or None}
        request = RunRequest(
            paths=[self.workspace / p for p in inputs.probes], root=self.workspace,
            out_dir=self.workspace / inputs.output_dir, options=options, config_args=self._config_args(),
            environ=environ, baseline=Baseline(url=inputs.baseline_url) if inputs.baseline_url else None,
            out_dir_setting="output-dir", env_allow_setting="the env-allow input",
            base_url_hint="set the input 'base-url' (this event gives no deployment URL), or base_url in the suite",
            extra_secrets=token_forms(inputs.github_token), report_links=links, sarif_category=inputs.sarif_category,
            select=self._changed_suites if inputs.changed_only else None,
            before_requests=self._wait if inputs.wait_for else None,
            late_baseline=self._baseline_artifact if inputs.baseline == "artifact" else None,
            max_cost_increase=inputs.max_cost_increase,
        )
        request.decision_sources = self._recorded_decisions()
        channel = _ActionChannel(self)
        try:
            suites, _config, judge = prepare(request, channel)
        except RunRefused as exc:
            self._log_trust()
            if exc.reported:
                return None
            raise ActionFailure(str(exc)) from None
        self._log_trust()
        changed = self.changed_files()
        if changed is not None:
            request.changed_checks = changed_checks(changed, suites, inputs.probes, inputs.config)
        output = execute(request, channel, suites, judge)
        self._after_writing(output.paths, output.problems)
        return output.result, output.paths

    def _recorded_decisions(self) -> list:
        """In an untrusted run, the decisions the comment commands recorded on this pull request (their replies,
        written with this token); a trusted run reads the checkout's decisions file, which they committed."""
        if self.trust.runs_pr_code or self.pr is None or self.client is None:
            return []
        try:
            sources = recorded_sources(self.client, self.ctx.repository, self.pr.number, token_login(self.client))
        except GitHubAPIError as exc:
            self._api_warning("could not read the decisions the comment commands recorded", exc)
            return []
        if sources:
            self.out.log(f"Litmus: {len(sources)} decision record(s) of the comment commands on #{self.pr.number}")
        return sources

    def _baseline_artifact(self):
        """The base branch's last results (`baseline: artifact`), or None with a notice saying why."""
        if self.pr is None:
            self.out.log("Litmus: baseline: artifact applies to pull requests; this run has none to compare")
            return None
        if self.client is None:
            self.out.notice("Litmus: no baseline: the GitHub API is not available (github-token, GITHUB_REPOSITORY)")
            return None
        found = fetch_baseline(self.client, self.ctx.repository, workflow=workflow_path(self.ctx.workflow_ref),
                               branch=self.ctx.base_ref, artifact_name=self.inputs.baseline_artifact,
                               save_to=self.workspace / self.inputs.output_dir / "baseline.json")
        if found.result is None:
            self.out.notice(f"Litmus: {found.notice}")
            return None
        self.out.log(f"Litmus: {found.notice}")
        return Baseline(result=found.result, source=found.source)

    def _config_args(self) -> argparse.Namespace:
        inputs = self.inputs
        return argparse.Namespace(
            config=inputs.config or None, judge_provider=inputs.judge_provider or None,
            judge_model=inputs.judge_model or None, judge_base_url=inputs.judge_base_url or None,
            judge_api_key_env=JUDGE_KEY_VARIABLE if inputs.judge_api_key else None,
        )

    def _changed_suites(self, suites: list) -> list:
        """changed-only: the suites whose files (`Suite.referenced_files`) the PR changed; every suite when the
        changed files are unknown, so that an unknown change is never taken for none."""
        changed = self.changed_files()
        if changed is None:
            self.out.warning("Litmus: changed-only needs the PR's changed files, which are unknown: "
                             "running every suite")
            return suites
        touched = suites_touched(suites, changed)
        self.out.log(f"changed-only: {len(touched)} of {count(len(suites), 'suite')} touched by this PR")
        if not touched:
            self.out.warning(f"Litmus: {NOTHING_CHECKED}: the check run is neutral and the verdict failed (nothing "
                             "passes unchecked); the step does not fail for it")
        return touched

    def _wait(self, base_url: str | None) -> None:
        target = self.inputs.wait_for
        if not target.startswith(("http://", "https://")):
            if not base_url:
                raise ActionFailure("input 'wait-for' is a path, which needs a base URL")
            target = base_url.rstrip("/") + "/" + target.lstrip("/")
        try:
            wait_until_ready(target, self.inputs.wait_timeout, log=self.out.log, stop=self.stop)
        except NotReady as exc:
            raise ActionFailure(f"wait-for: {exc}") from None

    def _progress(self, event) -> None:
        if event.kind != "flow_run":
            return
        flow_run = event.flow_run
        where = f" [{flow_run.scenario}]" if flow_run.scenario else ""
        # Names come from probe files, which a PR may change: never let them read as commands.
        self.out.log(f"{event.done}/{event.total} {flow_run.intent_evaluation.status:>12}  "
                     f"{event.suite.name} › {flow_run.flow}{where}")

    def _merge_shards(self) -> tuple[RunResult, dict[str, Path]]:
        files: list[Path] = []
        for given in self.inputs.merge:
            path = self.workspace / given
            files += sorted(path.rglob(RESULTS_FILE)) if path.is_dir() else [path]
        if not files:
            raise ActionFailure(f"merge: no {RESULTS_FILE} under {' '.join(self.inputs.merge)}")
        try:
            merged, warnings = merge([load_results(f) for f in files], names=[self._relative(f) for f in files])
        except (ResultsError, MergeError) as exc:
            raise ActionFailure(f"merge: {exc}") from None
        for warning in warnings:
            self.out.warning(f"Litmus merge: {warning}")
        self.out.log(f"merged {len(files)} shard result(s): verdict {merged.verdict}")
        self._log_trust()
        self._check_results_provenance(merged)
        links = {"repository": self.ctx.repository or None, "server_url": self.ctx.server_url,
                 "sha": self.ctx.head_sha() or None}
        paths, problems = write_reports(merged, self.workspace / self.inputs.output_dir, links=links,
                                        sarif_category=self.inputs.sarif_category)
        self._after_writing(paths, problems)
        return merged, paths

    def _check_results_provenance(self, merged: RunResult) -> None:
        """On `workflow_run`, the results to merge were made by the triggering run, which a fork's pull request
        can make with its own workflow: unless that run is the repository's own, its verdict is reported but
        vouched for by nobody, so the check run is neutral and every report says why."""
        if self.ctx.event_name != "workflow_run":
            return
        proven, why = workflow_run_provenance(self.ctx.event)
        if proven:
            self.out.log(f"Litmus: the results to merge come from a run this repository made ({why})")
            return
        self.unproven_results = f"the results were made by a run Litmus cannot vouch for ({why})"
        self.out.warning(f"Litmus: {self.unproven_results}: the check run is neutral")
        merged.run.trusted, merged.run.trust_reason = False, why
        merged.run.trust_notes = [*merged.run.trust_notes, f"{self.unproven_results}: the check run is neutral"]

    def _report_diagnostics(self, diagnostics) -> None:
        for diagnostic in diagnostics:
            position = diagnostic.position
            self.out.annotate(diagnostic.severity, diagnostic.message, file=position.path, line=position.line,
                              col=position.column, title="Litmus: invalid probe file")
        if diagnostics:
            # The rendering quotes probe lines: a PR's text, printed with command parsing off.
            self.out.echo_untrusted("\n".join(d.render() for d in diagnostics))

    # ---- 4: files

    def _relative(self, path: Path) -> str:
        """Paths for outputs: relative to the workspace, since /github/workspace means nothing outside."""
        try:
            return PurePath(path.resolve().relative_to(self.workspace)).as_posix()
        except ValueError:
            return path.as_posix()

    def _after_writing(self, paths: dict[str, Path], problems: list[str]) -> None:
        """The job summary and a log line once the files are written; a file that could not be written is a
        failure of the step (exit 2), after results.json and the other reports were kept."""
        if problems:
            raise ActionFailure("output-dir: " + "; ".join(problems))
        if self.ctx.summary_path:
            append_summary(self.ctx.summary_path, paths["summary"].read_text("utf-8"))
        out_dir = self.workspace / self.inputs.output_dir
        self.out.log(f"reports written to {self._relative(out_dir)}/: "
                     + ", ".join(sorted(self._relative(p).rsplit("/", 1)[-1] for p in paths.values())))

    def _write_outputs(self, result: RunResult, paths: dict[str, Path], comment_url: str | None,
                       check_url: str | None) -> None:
        if not self.ctx.output_path:
            return
        needs_review = sum(1 for *_, o in result.iter_outcomes() if o.status == "needs_review") + sum(
            1 for s in result.suites for f in s.flow_runs if f.intent_evaluation.status == "needs_review")
        write_outputs(self.ctx.output_path, {
            "verdict": result.verdict,
            "passed": sum(1 for s in result.suites if s.verdict == "passed"),
            "failed": sum(1 for s in result.suites if s.verdict == "failed"),
            "needs-review": needs_review,
            "results-path": self._relative(paths["results"]),
            "sarif-path": self._relative(paths["sarif"]),
            "junit-path": self._relative(paths["junit"]),
            "markdown-path": self._relative(paths["markdown"]),
            "html-path": self._relative(paths["html"]),
            "comment-url": comment_url or "",
            "check-run-url": check_url or "",
        })

    # ---- 5: GitHub

    def _api_warning(self, what: str, exc: GitHubAPIError) -> None:
        hint = ""
        if exc.forbidden:
            hint = (" The token may not do this: a PR from a fork gets a read-only token, and the job needs "
                    "`permissions:` pull-requests: write and checks: write.")
        self.out.warning(f"Litmus: {what} (HTTP {exc.status}).{hint} The reports and job summary are written anyway.")
        # GitHub's own error text, shown with command parsing off.
        self.out.echo_untrusted(str(exc))

    def _publish_check_run(self, result: RunResult, paths: dict[str, Path], selected: list[Annotation]) -> str | None:
        sha = self.ctx.head_sha()
        if not (self.inputs.check_run and self.client and sha):
            return None
        failed = sum(1 for s in result.suites if s.verdict == "failed")
        title = (f"{failed} of {count(len(result.suites), 'suite')} failed" if failed
                 else f"{count(len(result.suites), 'suite')} passed")
        conclusion = conclusion_of(result, self.inputs.fail_on, unproven=bool(self.unproven_results))
        if result.baseline is not None:
            title = headline(result.baseline)
        if result.run.interrupted:
            title = f"interrupted: {title} so far"
        elif not result.suites:
            title = NOTHING_CHECKED
        if self.unproven_results:
            title = f"not vouched for: {self.unproven_results}"
        try:
            check = publish_check_run(
                self.client, self.ctx.repository, sha, conclusion=conclusion, title=title,
                summary=paths["summary"].read_text("utf-8"), findings=selected,
                details_url=self.ctx.run_url,
            )
        except GitHubAPIError as exc:
            self._api_warning("could not publish the Litmus check run; annotating through the log instead", exc)
            return None
        self.out.log(f"check run {check.url}: {count(len(selected), 'annotation')} in "
                     f"{count(check.requests, 'request')}")
        return check.url

    def _annotate_in_log(self, selected: list[Annotation], paths: dict[str, Path]) -> None:
        shown, omitted = cap_per_level(selected)
        for finding in shown:
            self.out.annotate(finding.level, finding.message, file=finding.file, line=finding.line,
                              col=finding.column, title=finding.title)
        if omitted:
            self.out.notice(f"{count(omitted, 'more finding')} not annotated here (GitHub shows 10 errors and 10 "
                            f"warnings per step): see {self._relative(paths['sarif'])} and the PR comment or job "
                            "summary")

    def _publish_comment(self, paths: dict[str, Path]) -> str | None:
        if not (self.inputs.comment and self.pr and self.client):
            return None
        try:
            body = paths["markdown"].read_text("utf-8")
            author = token_login(self.client)
            comment = upsert_comment(self.client, self.ctx.repository, self.pr.number, body, author=author)
        except GitHubAPIError as exc:
            self._api_warning(f"could not write the PR comment on #{self.pr.number}", exc)
            return None
        self.out.log(f"PR comment {comment.action}: {comment.url}")
        return comment.url



class _ActionChannel:
    """The pipeline's channel for the workflow log: masks first, diagnostics as annotations, untrusted text
    printed with command parsing off."""

    def __init__(self, action: _Action) -> None:
        self.action = action
        self.diagnostics = action._report_diagnostics
        self.mask = action.out.mask
        self.on_event = action._progress
        self.phase = action.out.group

    def warning(self, text: str) -> None:
        self.action.out.warning(f"Litmus: {text}")

    def note(self, text: str) -> None:
        self.action.out.log(f"Litmus: {text}")
