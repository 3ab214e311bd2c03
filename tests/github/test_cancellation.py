"""A cancelled job: the runner sends SIGTERM (or SIGINT), then SIGKILL after a grace period. The action,
run as a subprocess against the fake GitHub and a target whose calls hang, must write its partial
results, every report and the job summary, marked interrupted, and tell GitHub, within 5 s
(bench/signals.py measures how long it takes)."""

from __future__ import annotations

import json
import signal

import pytest

from support.cancel import REPO, cancel, hanging_target, start_action, workspace_with_slow_suite
from support.fake_github import parse_output_file

pytestmark = pytest.mark.timing  # a cancelled action must end within seconds


@pytest.fixture
def target_that_hangs():
    with hanging_target() as target:
        yield target


@pytest.mark.parametrize("signals", [(signal.SIGTERM,), (signal.SIGINT,)], ids=["SIGTERM", "SIGINT"])
def test_a_cancelled_action_writes_what_it_has_and_tells_github(tmp_path, fake_github, target_that_hangs, signals):
    workspace = workspace_with_slow_suite(tmp_path)
    fake_github.state.pr_files[(REPO, 42)] = [{"filename": "probes/slow.yaml", "status": "added"}]
    proc, paths = start_action(workspace, fake_github, target_that_hangs)
    took, output = cancel(proc, target_that_hangs, signals)

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


def test_a_second_sigint_skips_github_and_still_writes_the_files(tmp_path, fake_github, target_that_hangs):
    workspace = workspace_with_slow_suite(tmp_path)
    proc, paths = start_action(workspace, fake_github, target_that_hangs)
    took, output = cancel(proc, target_that_hangs, (signal.SIGINT, signal.SIGINT))

    assert proc.returncode == 130, output
    assert took < 5
    assert json.loads((workspace / "litmus-report" / "results.json").read_text())["run"]["interrupted"] is True
    assert "interrupted" in paths["summary"].read_text()
    assert fake_github.state.check_runs == {} and fake_github.state.comments == {}
    assert parse_output_file(paths["output"].read_text())["verdict"] == "failed"


def test_a_signal_while_waiting_for_the_preview_ends_the_wait(tmp_path, fake_github, target_that_hangs):
    """wait-for polls a preview that hangs: the signal ends the wait, and the interrupted (empty) run is reported."""
    workspace = workspace_with_slow_suite(tmp_path)
    proc, paths = start_action(workspace, fake_github, target_that_hangs, wait_for="/hang", wait_timeout="600")
    took, output = cancel(proc, target_that_hangs, (signal.SIGTERM,))

    assert proc.returncode == 143, output
    assert took < 5
    results = json.loads((workspace / "litmus-report" / "results.json").read_text())
    assert results["run"]["interrupted"] is True and results["suites"][0]["flow_runs"] == []
    assert [r.path for r in target_that_hangs.requests] == ["/hang"]  # no probe was sent after the signal
    assert "interrupted" in paths["summary"].read_text()
