"""The target fault matrix through `litmus run`: every fault is an outcome with a reason, the run goes on,
every report is written, the exit status is the documented one and memory stays bounded."""

from __future__ import annotations

import threading

import pytest
from faults import EXPECTED, fault_suite, serve_faults
from pipeline import check_run, peak_rss_limit_mib, run_litmus, write_suite

from support.server import refused_port
from support.target import Target

pytestmark = pytest.mark.timing  # read timeouts and trickling bodies against their deadlines


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    root = tmp_path_factory.mktemp("faults")
    with Target() as target, refused_port() as refused:
        write_suite(root, "faults.yaml", fault_suite(serve_faults(target, refused)))
        ran = run_litmus(["run", "--base-url", target.base_url, "--out", "out"], cwd=root)
    return ran, check_run(root / "out")


def runs_of(result, name):
    return [f for f in result.suites[0].flow_runs if f.flow == name]


def test_the_run_finishes_writes_everything_and_exits_1(matrix):
    ran, result = matrix
    assert ran.code == 1, ran.output  # documented: a suite below its pass_threshold
    assert "Traceback" not in ran.output
    assert result.verdict == "failed" and not result.run.interrupted
    assert ran.max_rss_mib < peak_rss_limit_mib(), ran.max_rss_mib


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_fault_is_recorded_and_later_flow_runs_still_run(matrix, name):
    _, result = matrix
    expect = EXPECTED[name]
    runs = runs_of(result, name)
    assert len(runs) == 2  # the second flow run ran after the first hit the fault
    for flow_run in runs:
        before, fault, after = flow_run.steps
        assert before.status == "passed"
        assert flow_run.intent_evaluation.status == "failed" and flow_run.intent_evaluation.reason
        if expect.error:
            assert fault.status == "error" and expect.error in fault.error, fault.error
            assert {o.status for o in fault.assertions} == {"skipped"}
            assert all(o.reason.startswith("no response: ") for o in fault.assertions)
            assert after.status == "skipped" and after.attempts == 0
        else:
            assert tuple(o.status for o in fault.assertions) == expect.outcomes
            reasons = " | ".join(o.reason for o in fault.assertions if o.status != "passed")
            assert expect.reason in reasons
            assert fault.response.truncated == expect.truncated
            assert after.status == "passed"  # on_failure: continue
    sentinel = runs_of(result, "sentinel")
    assert [f.intent_evaluation.status for f in sentinel] == ["passed"]


def test_an_invalid_host_fails_without_a_lookup(matrix):
    _, result = matrix
    for flow_run in runs_of(result, "unresolvable .invalid host"):
        before, fault, _ = flow_run.steps
        assert flow_run.duration_ms - before.response.elapsed_ms < 500


def test_every_fault_shows_in_the_terminal_and_the_comment(matrix, tmp_path_factory):
    ran, result = matrix
    for name in EXPECTED:
        assert name in ran.stdout.decode()


def test_a_target_killed_mid_run(tmp_path):
    """The server process dies after a few requests: the remaining steps error, the run completes."""
    with Target() as target:
        count = []

        def die(req):
            count.append(1)
            if len(count) == 3:
                threading.Thread(target=target.stop).start()
                target.dead = True
            return 200, {"Content-Type": "application/json"}, b'{"ok": true}'

        target.route("/ok", die)
        write_suite(tmp_path, "dies.yaml", """version: 1
suite: Dies
flows:
  - name: chat
    runs: 4
    steps:
      - name: one
        request: {url: /ok}
        assertions:
          - {type: status_code, expected: 200}
          - {type: json_path, path: $.ok, expected: true}
      - name: two
        request: {url: /ok}
        assertions:
          - {type: status_code, expected: 200}
""")
        ran = run_litmus(["run", "--base-url", target.base_url, "--out", "out", "--concurrency", "1"],
                         cwd=tmp_path)
    result = check_run(tmp_path / "out")
    assert ran.code == 1 and "Traceback" not in ran.output
    runs = result.suites[0].flow_runs
    assert len(runs) == 4 and runs[0].intent_evaluation.status == "passed"
    assert all(f.steps[0].status == "error" and f.steps[0].error for f in runs[2:])
