"""The action as its container runs it, end to end: demo target, fake judge, fake GitHub API.

No Docker engine here, so the image is reproduced instead: a fresh venv, `pip install -r
requirements.lock`, the package copied as the Dockerfile copies it and installed `--no-deps`, then
`<venv>/bin/litmus action` (the image's ENTRYPOINT) run from the workspace with only what a runner
gives a container step: `INPUT_*` (action.yml defaults applied), `GITHUB_*` and the step's `env:`.
The venv is built once per test session.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from litmus.demo.target import start_demo_target, stop_demo_target
from litmus.github.comment import MARKER
from support.checkout import trusted_checkout
from support.fake_github import FakeGitHub, parse_output_file
from support.fake_judge import API_KEY, FakeJudge
from support.target import Target

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "workspace"
EVENTS = Path(__file__).parent / "events"
REPO = "acme/shop"
TOKEN = "ghs_workflowtoken0123456789"
DEMO_TOKEN = "demo-api-token"  # the demo target's API token: a `secrets.` value in the probes
MANY = 60  # failing assertions in one changed file: more than a check-run batch and the log's cap


pytestmark = pytest.mark.container


@pytest.fixture(scope="session")
def entrypoint(tmp_path_factory) -> list[str]:
    """The image's ENTRYPOINT, pointing into a venv built from the same pins and package as the image.

    Built with this interpreter's pip (`--python`) instead of a pip inside the venv, which saves
    bootstrapping one: the installed environment is the image's either way.
    """
    base = tmp_path_factory.mktemp("image")
    build = base / "build"  # what the Dockerfile COPYs (see .dockerignore)
    build.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, build / name)
    shutil.copytree(ROOT / "src", build / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    venv = base / "venv"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    for command in (
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        [*pip, "--python", str(venv / "bin" / "python"), "install", "-r", str(ROOT / "requirements.lock")],
        [*pip, "--python", str(venv / "bin" / "python"), "install", "--no-deps", str(build)],
    ):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
    dockerfile = (ROOT / "Dockerfile").read_text("utf-8")
    command = json.loads(re.search(r"^ENTRYPOINT (.+)$", dockerfile, re.M).group(1))
    return [command[0].replace("/action/venv", str(venv), 1), *command[1:]]


@pytest.fixture(scope="module")
def services():
    server, url = start_demo_target()
    with FakeJudge() as judge:
        judge.when("zebras", score=10, reason="the reply never mentions zebras")
        yield url, judge
    stop_demo_target(server)


@dataclass
class Run:
    code: int
    stdout: str
    outputs: dict[str, str]
    summary: str
    workspace: Path
    # The report folder's files as this run left them (a later run on the same workspace rewrites them).
    reports: dict[str, str]


def many_failures_suite() -> str:
    assertions = "".join(f"          - type: contains\n            value: \"MISSING-{i}\"\n" for i in range(MANY))
    return ("version: 1\nsuite: Many\nflows:\n  - name: Lots\n    steps:\n      - name: health\n"
            "        request:\n          url: /health\n        assertions:\n" + assertions)


def make_workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    shutil.copytree(FIXTURE, workspace)
    (workspace / "probes" / "many.yaml").write_text(many_failures_suite())
    return workspace


def run_action(entrypoint: list[str], workspace: Path, gh: FakeGitHub, *, event: Path, event_name: str,
               inputs: dict[str, str], env: dict[str, str] | None = None) -> Run:
    number = json.loads(event.read_text()).get("number")
    ref = f"refs/pull/{number}/merge" if event_name == "pull_request" else "refs/heads/main"
    files = workspace.parent / "file_commands"  # the runner's /github/file_commands
    files.mkdir(exist_ok=True)
    output, summary = files / "set_output", files / "step_summary"
    for path in (output, summary):
        path.write_text("")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    given = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    given["github-token"] = TOKEN  # the runner evaluates `${{ github.token }}`
    given.update(inputs)
    environ = {
        "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(workspace.parent), "CI": "true",
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": event_name, "GITHUB_REPOSITORY": REPO, "GITHUB_SHA": "9" * 40,
        "GITHUB_REF": ref, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": gh.base_url,
        "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_RUN_ID": "4242",
        "RUNNER_OS": "Linux",
        **{"INPUT_" + name.replace(" ", "_").upper(): value for name, value in given.items()},
        **(env or {}),
    }
    if not (workspace / ".git").exists():
        trusted_checkout(workspace, gh)  # a checkout of the repository's own branch, as the workflows make
    done = subprocess.run(entrypoint, cwd=workspace, env=environ, capture_output=True, text=True, timeout=120)
    report_dir = workspace / given["output-dir"]
    reports = {p.name: p.read_text() for p in report_dir.iterdir()} if report_dir.is_dir() else {}
    return Run(done.returncode, done.stdout + done.stderr, parse_output_file(output.read_text()),
               summary.read_text(), workspace, reports)


def judge_inputs(judge: FakeJudge) -> dict[str, str]:
    return {"judge-provider": "openai", "judge-model": "fake-model", "judge-base-url": judge.openai_base_url,
            "judge-api-key": API_KEY}


def pr_files(gh: FakeGitHub, number: int) -> None:
    gh.state.pr_files[(REPO, number)] = [
        {"filename": "probes/chat.yaml", "status": "modified"},
        {"filename": "probes/many.yaml", "status": "added"},
        {"filename": "src/app.py", "status": "modified"},
    ]


def commands(stdout: str, name: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(f"::{name}")]


def test_two_runs_on_one_pr_leave_one_comment_and_a_check_run_each(entrypoint, services, tmp_path):
    url, judge = services
    workspace = make_workspace(tmp_path)
    with FakeGitHub() as gh:
        pr_files(gh, 42)
        inputs = {"base-url": url, **judge_inputs(judge)}
        first = run_action(entrypoint, workspace, gh, event=EVENTS / "pull_request.json", event_name="pull_request",
                           inputs=inputs, env={"LITMUS_DEMO_TOKEN": DEMO_TOKEN})
        # A second push to the PR: the unchanged-file suite now passes, so the report changes.
        (workspace / "probes" / "catalog.yaml").write_text(
            (workspace / "probes" / "catalog.yaml").read_text().replace("UNCHANGED-FILE-MARKER", "ok"))
        trusted_checkout(workspace, gh)  # the second push: a new commit on the branch
        second = run_action(entrypoint, workspace, gh, event=EVENTS / "pull_request.json", event_name="pull_request",
                            inputs=inputs, env={"LITMUS_DEMO_TOKEN": DEMO_TOKEN})
        state = gh.state

    for run in (first, second):
        assert run.code == 1, run.stdout  # suites failed, fail-on: suite
        lines = run.stdout.splitlines()
        # Masks come first, before any other line, and the secrets appear nowhere else. The token is
        # masked in the forms git and actions/checkout give it too (the basic-auth pair and its base64).
        basic = f"x-access-token:{TOKEN}"
        assert lines[:5] == [f"::add-mask::{API_KEY}", f"::add-mask::{TOKEN}", f"::add-mask::{basic}",
                             f"::add-mask::{base64.b64encode(basic.encode()).decode()}", f"::add-mask::{DEMO_TOKEN}"]
        for secret in (API_KEY, DEMO_TOKEN, base64.b64encode(basic.encode()).decode()):
            assert sum(secret in line for line in lines) == 1
        assert [i for i, line in enumerate(lines) if TOKEN in line] == [1, 2]
        assert commands(run.stdout, "error") == []  # the check run carries the annotations
        # Outputs as GitHub reads them, paths relative to the workspace.
        out = run.outputs
        assert out["verdict"] == "failed" and out["needs-review"] == "0"
        assert out["results-path"] == "litmus-report/results.json"
        assert out["sarif-path"] == "litmus-report/litmus.sarif" and out["junit-path"] == "litmus-report/junit.xml"
        assert out["markdown-path"] == "litmus-report/comment.md" and out["html-path"] == "litmus-report/report.html"
        for key in ("results-path", "sarif-path", "junit-path", "markdown-path", "html-path"):
            assert (run.workspace / out[key]).is_file()
            text = run.reports[out[key].rsplit("/", 1)[1]]
            assert DEMO_TOKEN not in text and API_KEY not in text
        assert out["comment-url"].endswith(f"#issuecomment-{state.comments[(REPO, 42)][0]['id']}")
        assert out["check-run-url"].startswith("https://github.test/acme/shop/runs/")
        assert run.summary.strip() and run.summary == run.reports["summary.md"]
    for run in (first, second):
        suites = json.loads(run.reports["results.json"])["suites"]
        verdicts = [s["verdict"] for s in suites]
        assert (run.outputs["passed"], run.outputs["failed"]) == (str(verdicts.count("passed")),
                                                                  str(verdicts.count("failed")))

    # One comment, created by the first run and updated by the second, found by marker and author.
    comments = state.comments[(REPO, 42)]
    assert len(comments) == 1 and comments[0]["user"]["login"] == "github-actions[bot]"
    assert MARKER in comments[0]["body"]
    assert comments[0]["body"] == second.reports["comment.md"] != first.reports["comment.md"]
    assert [c.method for c in state.calls if "/issues/" in c.path and c.method != "GET"] == ["POST", "PATCH"]
    assert "PR comment created" in first.stdout and "PR comment updated" in second.stdout

    # A check run per run, on the PR head, with every finding of the changed files across batches of 50.
    runs = list(state.check_runs.values())
    assert len(runs) == 2
    for check in runs:
        assert (check["name"], check["head_sha"], check["conclusion"]) == ("Litmus", "1" * 40, "failure")
        paths = [a["path"] for a in check["annotations"]]
        assert paths.count("probes/many.yaml") == MANY and "probes/catalog.yaml" not in paths
        chat = [a for a in check["annotations"] if a["path"] == "probes/chat.yaml"]
        assert {21, 23} <= {a["start_line"] for a in chat}  # the contains and the judged rubric
        assert all(len(c.body["output"]["annotations"]) <= 50 for c in state.calls if "check-runs" in c.path)
    assert len([c for c in state.calls if "check-runs" in c.path]) == 2 * 2  # 62 annotations = 2 requests

    # The rubric went through the judge, with the key given as the input.
    assert any("zebras" in call.prompt for call in judge.calls())


def test_fork_pr_read_only_token_warns_annotates_in_the_log_and_keeps_the_exit_code(entrypoint, services, tmp_path):
    url, judge = services
    workspace = make_workspace(tmp_path)
    with FakeGitHub() as gh:
        pr_files(gh, 7)
        gh.state.deny |= {"comment-write", "check-write"}
        run = run_action(entrypoint, workspace, gh, event=EVENTS / "pull_request_fork.json",
                         event_name="pull_request", inputs={"base-url": url, "fail-on": "assertion"},
                         env={"LITMUS_DEMO_TOKEN": DEMO_TOKEN})
        assert gh.state.comments == {} and gh.state.check_runs == {}
    assert run.code == 1
    warnings = commands(run.stdout, "warning")
    assert any("could not publish the Litmus check run" in w and "fork" in w for w in warnings)
    assert any("could not write the PR comment on #7 (HTTP 403)" in w for w in warnings)
    # GitHub's error text is echoed with command parsing off.
    assert re.search(r"::stop-commands::\w+\n.*Resource not accessible by integration", run.stdout)
    errors = commands(run.stdout, "error")
    assert len(errors) == 10  # GitHub shows 10 per step: the rest are counted, not dropped silently
    assert all("file=probes/many.yaml" in e or "file=probes/chat.yaml" in e for e in errors)
    assert re.search(r"file=probes/chat\.yaml,line=21,col=\d+::", run.stdout)
    notice = commands(run.stdout, "notice")
    assert len(notice) == 1 and "more findings not annotated here" in notice[0]
    assert "litmus-report/litmus.sarif" in notice[0]
    assert run.outputs["comment-url"] == "" and run.outputs["verdict"] == "failed"
    assert run.summary.strip() and (workspace / "litmus-report" / "litmus.sarif").is_file()


def test_fail_on_never_passes_the_step_even_when_github_refuses(entrypoint, services, tmp_path):
    url, _ = services
    with FakeGitHub() as gh:
        gh.state.deny |= {"comment-write", "check-write", "pr-files"}
        run = run_action(entrypoint, make_workspace(tmp_path), gh, event=EVENTS / "pull_request_fork.json",
                         event_name="pull_request", inputs={"base-url": url, "fail-on": "never"},
                         env={"LITMUS_DEMO_TOKEN": DEMO_TOKEN})
    assert run.code == 0 and run.outputs["verdict"] == "failed"
    assert any("could not list the PR's changed files; using git diff" in w for w in commands(run.stdout, "warning"))


def test_deployment_status_takes_the_url_from_the_event_and_waits_for_it(entrypoint, services, tmp_path):
    url, _ = services
    event = json.loads((EVENTS / "deployment_status.json").read_text())
    event["deployment_status"]["environment_url"] = url
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event))
    with FakeGitHub() as gh:
        # The deployed commit heads PR 42 (another, closed PR also contains it).
        gh.state.add_pull(REPO, "4" * 40, 41, state="closed")
        gh.state.add_pull(REPO, "4" * 40, 42)
        pr_files(gh, 42)
        run = run_action(entrypoint, make_workspace(tmp_path), gh, event=event_path, event_name="deployment_status",
                         inputs={"wait-for": "/health", "wait-timeout": "10"},
                         env={"LITMUS_DEMO_TOKEN": DEMO_TOKEN})
        (check,) = gh.state.check_runs.values()
        # The deployment event names no PR: the action found it from the deployed commit and commented there.
        assert list(gh.state.comments) == [(REPO, 42)]
        assert len(gh.calls("GET", rf"^/repos/{REPO}/commits/{'4' * 40}/pulls$")) == 1
    assert run.code == 1 and f"{url}/health is ready (HTTP 200)" in run.stdout
    assert f"the deployed commit {'4' * 12} is the head of PR #42" in run.stdout
    assert check["head_sha"] == "4" * 40
    # The PR's change set applies: the unchanged file's findings are not annotated.
    assert "probes/catalog.yaml" not in {a["path"] for a in check["annotations"]}
    assert json.loads((tmp_path / "workspace" / "litmus-report" / "results.json").read_text())["run"]["base_url"] == url


def test_a_preview_that_never_gets_ready_fails_clearly(entrypoint, services, tmp_path):
    url, _ = services
    with FakeGitHub() as gh:
        run = run_action(entrypoint, make_workspace(tmp_path), gh, event=EVENTS / "push.json", event_name="push",
                         inputs={"base-url": url, "wait-for": "/not-there", "wait-timeout": "1"},
                         env={"LITMUS_DEMO_TOKEN": DEMO_TOKEN})
        assert gh.state.check_runs == {} and gh.state.comments == {}
    assert run.code == 2
    (error,) = commands(run.stdout, "error")
    assert f"wait-for: {url}/not-there was not ready after" in error and "last: HTTP 404" in error
    assert f"waiting for {url}/not-there: HTTP 404" in run.stdout


def test_bad_input_is_an_error_annotation(entrypoint, services, tmp_path):
    with FakeGitHub() as gh:
        run = run_action(entrypoint, make_workspace(tmp_path), gh, event=EVENTS / "push.json", event_name="push",
                         inputs={"shard": "5/4"})
    assert run.code == 2
    assert commands(run.stdout, "error") == [
        "::error title=Litmus::input 'shard' must be K/N with 1 <= K <= N, e.g. 2/4; got '5/4'"]


@pytest.mark.timing  # the spacing of requests is measured; a lenient bound
def test_the_rate_limit_input_spaces_the_requests_the_image_sends(entrypoint, tmp_path):
    """`rate-limit: 4` through the image's entrypoint: 5 requests to one origin take at least 4 intervals of
    250 ms (measured when the target got them, so with a lenient bound); `0` is an error naming the input."""
    workspace = make_workspace(tmp_path)
    shutil.rmtree(workspace / "probes")
    (workspace / "probes").mkdir()
    (workspace / "probes" / "limited.yaml").write_text(
        "version: 1\nsuite: Limited\nflows: [{name: f, runs: 5, steps: [{name: s, request: {url: /limited}, "
        "assertions: [{type: status_code, expected: 200}]}]}]\n")
    arrivals: list[float] = []
    with Target() as server, FakeGitHub() as gh:
        server.route("/limited", lambda req: arrivals.append(time.monotonic()) or (200, {}, b"ok"))
        run = run_action(entrypoint, workspace, gh, event=EVENTS / "push.json", event_name="push",
                         inputs={"base-url": server.base_url, "rate-limit": "4"})
        refused = run_action(entrypoint, workspace, gh, event=EVENTS / "push.json", event_name="push",
                             inputs={"base-url": server.base_url, "rate-limit": "0"})
    assert run.code == 0 and run.outputs["verdict"] == "passed", run.stdout
    assert len(arrivals) == 5 and arrivals[-1] - arrivals[0] >= 4 / 4 - 0.2, arrivals
    assert refused.code == 2 and commands(refused.stdout, "error") == [
        "::error title=Litmus::input 'rate-limit': expected a number above 0 to 100,000, got '0' (requests per "
        "second to each origin)"]
    assert len(arrivals) == 5  # the refused run sent nothing

