"""SIGINT and SIGTERM at (seeded) random points of a judged run: partial results.json valid and marked
interrupted, every report written from it, exit 130/143, no temporary file left, the verdict cache
whole. bench/reliability.py runs 20 such trials."""

from __future__ import annotations

import random
import signal

import pytest
from interruption import serve_phases, serve_slow, signal_latency, trial
from pipeline import SIGNAL_EXIT

from support.cancel import HANG_S
from support.fake_judge import FakeJudge
from support.target import Target

pytestmark = pytest.mark.timing  # signals sent at moments of a run

TRIALS = [(signal.SIGINT, 0.0), (signal.SIGTERM, 0.0)] + [
    (sig, round(random.Random(7 + i).uniform(0.05, 1.0), 3)) for i, sig in enumerate((signal.SIGINT, signal.SIGTERM))
]


@pytest.mark.parametrize("signum, delay", TRIALS, ids=[f"{s.name}@{d}s" for s, d in TRIALS])
def test_interrupted_run_keeps_its_promises(tmp_path, signum, delay):
    with Target() as target, FakeJudge() as judge:
        serve_slow(target)
        figures = trial(tmp_path, target, judge, signum, delay)
    assert figures["interrupted"]
    assert figures["flow_runs"] < 40  # it did stop early


def test_a_signal_while_the_reports_are_written_still_leaves_every_report_whole(tmp_path):
    """results.json is written first; a SIGTERM right then must not cut the reports being rendered."""
    import time

    from pipeline import check_run, finish, start_measured, write_suite

    checks = "".join(f"          - {{type: contains, value: absent-{i}}}\n" for i in range(2500))
    with Target() as target:
        target.json("/x", {"ok": True})
        write_suite(tmp_path, "many.yaml", "version: 1\nsuite: Many\nflows:\n  - name: f\n    steps:\n"
                    "      - name: s\n        request: {url: /x}\n        assertions:\n" + checks)
        started = time.monotonic()
        proc, out, err = start_measured(["run", "--base-url", target.base_url, "--out", "out", "-q"], cwd=tmp_path)
        while not (tmp_path / "out" / "results.json").exists() and proc.poll() is None:
            time.sleep(0.001)
        proc.send_signal(signal.SIGTERM)
        ran = finish(proc, out, err, started)
    assert proc.returncode == 143, ran.output
    result = check_run(tmp_path / "out")
    assert sum(1 for _ in result.iter_outcomes()) == 2500


@pytest.mark.parametrize("phase, signals", [
    ("target call", (signal.SIGTERM,)),
    ("judge call", (signal.SIGTERM,)),
    ("judge call", (signal.SIGINT, signal.SIGINT)),
], ids=["SIGTERM-in-a-target-call", "SIGTERM-in-a-judge-call", "double-SIGINT-in-a-judge-call"])
def test_a_signal_is_honoured_while_a_call_hangs(tmp_path, phase, signals):
    """Calls in flight are abandoned, not joined: the run ends long before the 60 s call would return,
    with results.json and every report written (bench/reliability.py --only signals measures the latency)."""
    import threading

    released = threading.Event()
    with Target() as target, FakeJudge() as judge:
        serve_phases(target, judge, released)
        try:
            figures = signal_latency(tmp_path, target, judge, phase, signals)
        finally:
            released.set()
    assert figures["exit"] == SIGNAL_EXIT[signals[0]]
    assert figures["interrupted"]
    assert figures["exit_after_s"] < HANG_S / 6  # before: 57 s, and a double Ctrl-C wrote nothing
