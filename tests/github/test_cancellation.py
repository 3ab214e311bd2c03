"""A cancelled job: the runner sends SIGTERM (or SIGINT), then SIGKILL after a grace period. The action,
run as a subprocess against the fake GitHub and a target whose calls hang, must write its partial
results, every report and the job summary, marked interrupted, and tell GitHub, within 5 s."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from support.fake_github import FakeGitHub, parse_output_file
from support.target import Target

EVENTS = Path(__file__).parent / "events"
REPO = "acme/shop"
HANG_S = 60.0
# Two flow runs answer at once; the third hangs until the test ends.
SUITE = """version: 1
suite: Slow
flows:
  - name: quick
    runs: 2
    steps:
      - name: fast
        request: {url: /fast}
        assertions:
          - {type: status_code, expected: 200}
  - name: stuck
    steps:
      - name: hang
        request: {url: /hang, timeout_ms: 120000}
        assertions:
          - {type: status_code, expected: 200}
"""


def start_action(workspace: Path, gh: FakeGitHub, target: Target, **inputs: str) -> tuple[subprocess.Popen, dict]:
    files = workspace.parent / "file_commands"
    files.mkdir()
    paths = {"output": files / "set_output", "summary": files / "step_summary"}
    for path in paths.values():
        path.write_text("")
    environ = {
        "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(workspace.parent), "NO_PROXY": "*",
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_EVENT_PATH": str(EVENTS / "pull_request.json"), "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_REPOSITORY": REPO, "GITHUB_SHA": "9" * 40, "GITHUB_API_URL": gh.url,
        "GITHUB_OUTPUT": str(paths["output"]), "GITHUB_STEP_SUMMARY": str(paths["summary"]),
        "INPUT_GITHUB-TOKEN": "ghs_cancelled0123456789", "INPUT_BASE-URL": target.base_url,
        "INPUT_PROBES": "probes", "INPUT_OUTPUT-DIR": "litmus-report",
        **{f"INPUT_{name.replace('_', '-').upper()}": value for name, value in inputs.items()},
    }
    proc = subprocess.Popen([sys.executable, "-m", "litmus", "action"], cwd=workspace, env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return proc, paths


@pytest.fixture
def hanging_target():
    released = threading.Event()

    def hang(request):
        released.wait(HANG_S)
        return 200, {}, b"late"

    with Target() as target:
        target.json("/fast", {"ok": True})
        target.route("/hang", hang)
        yield target
        released.set()


def cancel(proc: subprocess.Popen, target: Target, signals: tuple[int, ...]) -> tuple[float, str]:
    """Signal the action once the hanging call is under way; seconds from the first signal to its exit."""
    started = time.monotonic()
    while not any(r.path == "/hang" for r in target.requests) and proc.poll() is None:
        assert time.monotonic() - started < 60, "the action never reached the hanging call"
        time.sleep(0.01)
    time.sleep(0.3)  # the quick flow runs have finished by now
    sent = time.monotonic()
    for i, signum in enumerate(signals):
        if i:
            time.sleep(0.1)
        proc.send_signal(signum)
    try:
        output, _ = proc.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the cancelled action was still running when the hanging call would have returned") from None
    return time.monotonic() - sent, output.decode("utf-8", "replace")


@pytest.mark.parametrize("signals", [(signal.SIGTERM,), (signal.SIGINT,)], ids=["SIGTERM", "SIGINT"])
def test_a_cancelled_action_writes_what_it_has_and_tells_github(tmp_path, fake_github, hanging_target, signals):
    workspace = tmp_path / "workspace"
    (workspace / "probes").mkdir(parents=True)
    (workspace / "probes" / "slow.yaml").write_text(SUITE)
    fake_github.state.pr_files[(REPO, 42)] = [{"filename": "probes/slow.yaml", "status": "added"}]
    proc, paths = start_action(workspace, fake_github, hanging_target)
    took, output = cancel(proc, hanging_target, signals)

    assert proc.returncode == 128 + signals[0], output
    assert took < 5, f"the action took {took:.1f} s to end after the signal"
    assert "Traceback" not in output
    assert "::warning::Litmus: the job is being cancelled" in output
    results = json.loads((workspace / "litmus-report" / "results.json").read_text())
    assert results["run"]["interrupted"] is True and results["verdict"] == "failed"
    # The quick flow runs are kept; the one abandoned in its hanging call is left out.
    assert [f["flow"] for f in results["suites"][0]["flow_runs"]] == ["quick", "quick"]
    for name in ("litmus.sarif", "junit.xml", "comment.md", "report.html", "summary.md"):
        assert (workspace / "litmus-report" / name).is_file()
    summary = paths["summary"].read_text()
    assert "interrupted" in summary
    outputs = parse_output_file(paths["output"].read_text())
    assert outputs["verdict"] == "failed" and outputs["results-path"] == "litmus-report/results.json"
    (check,) = fake_github.state.check_runs.values()
    assert check["conclusion"] == "cancelled" and check["output"]["title"].startswith("interrupted")
    (comment,) = fake_github.state.comments[(REPO, 42)]
    assert "interrupted" in comment["body"]


def test_a_second_sigint_skips_github_and_still_writes_the_files(tmp_path, fake_github, hanging_target):
    workspace = tmp_path / "workspace"
    (workspace / "probes").mkdir(parents=True)
    (workspace / "probes" / "slow.yaml").write_text(SUITE)
    proc, paths = start_action(workspace, fake_github, hanging_target)
    took, output = cancel(proc, hanging_target, (signal.SIGINT, signal.SIGINT))

    assert proc.returncode == 130, output
    assert took < 5
    assert json.loads((workspace / "litmus-report" / "results.json").read_text())["run"]["interrupted"] is True
    assert "interrupted" in paths["summary"].read_text()
    assert fake_github.state.check_runs == {} and fake_github.state.comments == {}
    assert parse_output_file(paths["output"].read_text())["verdict"] == "failed"


def test_a_signal_while_waiting_for_the_preview_ends_the_wait(tmp_path, fake_github, hanging_target):
    """wait-for polls a preview that hangs: the signal ends the wait, and the interrupted (empty) run is reported."""
    workspace = tmp_path / "workspace"
    (workspace / "probes").mkdir(parents=True)
    (workspace / "probes" / "slow.yaml").write_text(SUITE)
    proc, paths = start_action(workspace, fake_github, hanging_target, wait_for="/hang", wait_timeout="600")
    took, output = cancel(proc, hanging_target, (signal.SIGTERM,))

    assert proc.returncode == 143, output
    assert took < 5
    results = json.loads((workspace / "litmus-report" / "results.json").read_text())
    assert results["run"]["interrupted"] is True and results["suites"][0]["flow_runs"] == []
    assert [r.path for r in hanging_target.requests] == ["/hang"]  # no probe was sent after the signal
    assert "interrupted" in paths["summary"].read_text()
