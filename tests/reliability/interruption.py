"""One interruption trial: a judged run against a slow target, a signal at a chosen moment, and the
promises checked on what the run left behind. Shared by tests/reliability and bench/reliability.py."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from pipeline import SIGNAL_EXIT, check_run, finish, leftovers, start_measured, write_suite

from support.cancel import HANG_S, route_hang
from support.fake_judge import API_KEY

SUITE = """version: 1
suite: Slow
flows:
  - name: ask
    runs: 40
    steps:
      - name: one
        request: {url: "/slow?run={{ run.index }}"}
        assertions:
          - {type: status_code, expected: 200}
          - {type: llm_rubric, rubric: "Says ok (run {{ run.index }})"}
      - name: two
        request: {url: "/slow?step=2"}
        assertions:
          - {type: json_path, path: $.ok, expected: true}
"""


def serve_slow(target, seconds: float = 0.05) -> None:
    target.route("/slow", lambda req: time.sleep(seconds) or (200, {"Content-Type": "application/json"},
                                                                b'{"ok": true}'))


def trial(root: Path, target, judge, signum: int, delay: float) -> dict:
    """Run, send `signum` `delay` seconds after the target saw its first request, check everything."""
    write_suite(root, "slow.yaml", SUITE)
    (root / "litmus.yaml").write_text(
        f"judge:\n  provider: openai\n  model: judge-small\n  base_url: {judge.openai_base_url}\n"
        "  api_key_env: JUDGE_KEY\n  cache: cache\n")
    seen = len(target.requests)
    started = time.monotonic()
    proc, out, err = start_measured(["run", "--base-url", target.base_url, "--out", "out", "--concurrency", "2"],
                                    cwd=root, env={"JUDGE_KEY": API_KEY})
    while len(target.requests) == seen and proc.poll() is None and time.monotonic() - started < 30:
        time.sleep(0.005)
    time.sleep(delay)
    finished_first = proc.poll() is not None
    if not finished_first:
        proc.send_signal(signum)
    ran = finish(proc, out, err, started)
    result = check_run(root / "out")
    assert "Traceback" not in ran.output, ran.output
    if finished_first:
        assert ran.code in (0, 1) and not result.run.interrupted
    elif result.run.interrupted:
        assert ran.code == SIGNAL_EXIT[signum], (ran.code, ran.output)
        assert result.verdict == "failed"
    else:
        # The signal came as the process exited, after every file was written (checked above): the
        # default handler is back by then, so it ends the process by the signal or not at all.
        assert ran.code in (0, 1, SIGNAL_EXIT[signum], -signum), (ran.code, ran.output)
    assert leftovers(root) == []
    cache = sorted((root / "cache").rglob("*.json"))
    for path in cache:
        entry = json.loads(path.read_text("utf-8"))
        assert isinstance(entry["reply"], str) and entry["verdict"]["score"] == 90
    flow_runs = result.suites[0].flow_runs
    return {"signal": signal.Signals(signum).name, "delay_s": round(delay, 3), "exit": ran.code,
            "interrupted": result.run.interrupted, "flow_runs": len(flow_runs),
            "outcomes": sum(1 for _ in result.iter_outcomes()), "cache_files": len(cache),
            "max_rss_mib": round(ran.max_rss_mib, 1)}


# One flow run per phase a signal can land in: waiting for the target, waiting for the judge.
PHASE_SUITES = {
    "target call": """version: 1
suite: Hang
flows:
  - name: wait
    steps:
      - name: hang
        request: {url: /hang, timeout_ms: 120000}
        assertions:
          - {type: status_code, expected: 200}
""",
    "judge call": """version: 1
suite: Judged
flows:
  - name: ask
    runs: 3
    steps:
      - name: one
        request: {url: /fast}
        assertions:
          - {type: status_code, expected: 200}
          - {type: llm_rubric, rubric: "Says ok (run {{ run.index }})"}
""",
}


def serve_phases(target, judge, released) -> None:
    """/hang answers only after HANG_S (or once `released` is set); the judge takes HANG_S to answer."""
    route_hang(target, released)
    target.json("/fast", {"ok": True})
    judge.default.delay = HANG_S


def signal_latency(root: Path, target, judge, phase: str, signals: tuple[int, ...]) -> dict:
    """Run until `phase` is under way, send `signals` (0.1 s apart), and time the exit from the first one."""
    write_suite(root, "phase.yaml", PHASE_SUITES[phase])
    (root / "litmus.yaml").write_text(
        f"judge:\n  provider: openai\n  model: judge-small\n  base_url: {judge.openai_base_url}\n"
        "  api_key_env: JUDGE_KEY\n  cache: cache\n  timeout_ms: 120000\n")
    busy = (lambda: judge.calls()) if phase == "judge call" else (lambda: target.requests)
    started = time.monotonic()
    proc, out, err = start_measured(["run", "--base-url", target.base_url, "--out", "out", "--concurrency", "2"],
                                    cwd=root, env={"JUDGE_KEY": API_KEY})
    while not busy() and proc.poll() is None and time.monotonic() - started < 30:
        time.sleep(0.005)
    assert proc.poll() is None, "the run ended before the phase began"
    time.sleep(0.2)  # well inside the call
    sent = time.monotonic()
    for i, signum in enumerate(signals):
        if i:
            time.sleep(0.1)
        proc.send_signal(signum)
    ran = finish(proc, out, err, started)
    exited = time.monotonic() - sent
    result = check_run(root / "out")
    assert "Traceback" not in ran.output, ran.output
    assert leftovers(root) == []
    return {"phase": phase, "signals": "+".join(signal.Signals(s).name for s in signals), "exit": ran.code,
            "exit_after_s": round(exited, 2), "interrupted": result.run.interrupted,
            "flow_runs": len(result.suites[0].flow_runs)}
