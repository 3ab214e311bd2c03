"""How fast a signal is honoured, phase by phase: the figures of docs/RELIABILITY.md, "Action and signals".

    python3 bench/signals.py              # 5 trials per phase (about 2 minutes on 2 busy cores)
    python3 bench/signals.py --trials 1   # a smoke run

Each trial starts the real command in a subprocess against servers on 127.0.0.1 whose calls hang for
60 s, waits until the phase is under way, sends the signal(s) and times the exit from the first one.
Every trial also checks what was left: results.json valid and marked interrupted, every report
written, no temporary file. Phases:
  run: target call        `litmus run`, SIGTERM while a step waits on a target that answers after 60 s
  run: judge call         `litmus run`, SIGTERM while a judge call takes 60 s
  run: judge call, SIGINT  the same with Ctrl-C
  run: double Ctrl-C      two SIGINTs 0.1 s apart during the judge call (skips the 1 s grace)
  action: run             `litmus action`, SIGTERM during a hanging target call (files, check run, comment)
  action: wait-for        `litmus action`, SIGTERM while wait-for polls a preview that hangs
Prints one JSON document: per phase, the exit status and the min / median / max seconds to exit.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
sys.path[:0] = [str(TESTS / "reliability"), str(TESTS)]

from interruption import serve_phases, signal_latency  # noqa: E402

from support.cancel import cancel, hanging_target, start_action, workspace_with_slow_suite  # noqa: E402
from support.fake_github import FakeGitHub  # noqa: E402
from support.fake_judge import FakeJudge  # noqa: E402
from support.target import Target  # noqa: E402

RUN_PHASES = [
    ("run: target call", "target call", (signal.SIGTERM,)),
    ("run: judge call", "judge call", (signal.SIGTERM,)),
    ("run: judge call, SIGINT", "judge call", (signal.SIGINT,)),
    ("run: double Ctrl-C", "judge call", (signal.SIGINT, signal.SIGINT)),
]


def run_trial(phase: str, signals: tuple[int, ...]) -> tuple[int, float]:
    released = threading.Event()
    with tempfile.TemporaryDirectory() as root, Target() as target, FakeJudge() as judge:
        serve_phases(target, judge, released)
        try:
            figures = signal_latency(Path(root), target, judge, phase, signals)
        finally:
            released.set()
    assert figures["interrupted"], figures
    return figures["exit"], figures["exit_after_s"]


def action_trial(**inputs: str) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as root, hanging_target() as target, FakeGitHub() as gh:
        workspace = workspace_with_slow_suite(Path(root))
        proc, paths = start_action(workspace, gh, target, **inputs)
        took, output = cancel(proc, target, (signal.SIGTERM,))
        results = json.loads((workspace / "litmus-report" / "results.json").read_text())
        assert results["run"]["interrupted"] and "interrupted" in paths["summary"].read_text(), output
    return proc.returncode, took


def summarize(name: str, trials: list[tuple[int, float]]) -> dict:
    seconds = [s for _, s in trials]
    return {"phase": name, "exit": sorted({code for code, _ in trials}), "trials": len(trials),
            "min_s": round(min(seconds), 2), "median_s": round(statistics.median(seconds), 2),
            "max_s": round(max(seconds), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=5, help="trials per phase (default: 5)")
    args = parser.parse_args()
    figures = [summarize(name, [run_trial(phase, signals) for _ in range(args.trials)])
               for name, phase, signals in RUN_PHASES]
    figures.append(summarize("action: run", [action_trial() for _ in range(args.trials)]))
    figures.append(summarize("action: wait-for", [action_trial(wait_for="/hang", wait_timeout="600")
                                                  for _ in range(args.trials)]))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
