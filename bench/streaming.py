"""Benchmark: streamed chat steps through `litmus run`, against a local streaming server.

    python3 bench/streaming.py                 # 200 steps of 50 events, 3 repetitions
    python3 bench/streaming.py --steps 50 --repeat 1

A streaming server on 127.0.0.1 (tests/support/stream_target.py) answers every step with an
OpenAI-style Server-Sent Events stream of `--events` events (role chunk, content chunks, finish
chunk, `[DONE]`). `litmus run` runs in a subprocess (as users run it) one suite whose flow has
`runs: --steps` and one streamed step with four checks on the assembled text and the events. The
same suite against a plain JSON reply of the same text is the baseline, so the figures separate
what streaming costs from what a step costs anyway. Printed: wall time, the litmus process's CPU
time (user + system, from the kernel's accounting of the child), and CPU per event over the baseline.
It is a script to read numbers from, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.stream_target import Script, StreamTarget, openai_chunks  # noqa: E402

SUITE = """\
version: 1
suite: Streaming bench
flows:
  - name: chat
    runs: {steps}
    steps:
      - name: ask
        request:
          method: POST
          url: {path}
          json: {{stream: true, messages: [{{role: user, content: hi}}]}}
          {stream}
        assertions:
          - {{type: status_code, expected: 200}}
          - {{type: contains, value: "word 7 "}}
          - {{type: not_contains, value: "as an AI"}}
          - {{type: json_path, path: {done_path}, expected: {done_value}}}
"""


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(workdir: Path, base_url: str, suite: str, concurrency: int) -> tuple[float, float, dict]:
    (workdir / "probes").mkdir(exist_ok=True)
    (workdir / "probes" / "bench.yaml").write_text(suite)
    cpu_before, started = child_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "litmus", "run", "probes", "--base-url", base_url, "--out", "out", "--format",
         "junit", "--concurrency", str(concurrency), "-q"], cwd=workdir, capture_output=True, text=True, timeout=600)
    wall, cpu = time.perf_counter() - started, child_cpu() - cpu_before
    if done.returncode != 0:
        raise SystemExit(f"litmus run failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    results = json.loads((workdir / "out" / "results.json").read_text())
    return wall, cpu, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200, help="streamed steps (flow runs) per run (default 200)")
    parser.add_argument("--events", type=int, default=50, help="events per stream, [DONE] included (default 50)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions; the best is kept (default 3)")
    parser.add_argument("--concurrency", type=int, default=4, help="litmus run --concurrency (default 4)")
    args = parser.parse_args()

    pieces = [f"word {i} " for i in range(args.events - 3)]  # + role chunk, finish chunk, [DONE]
    frames = openai_chunks(*pieces)
    assert len(frames) == args.events
    text = "".join(pieces)
    streamed = textwrap.dedent(SUITE).format(steps=args.steps, path="/stream", stream="stream: openai",
                                             done_path="$.done", done_value="true")
    plain = textwrap.dedent(SUITE).format(steps=args.steps, path="/plain", stream="", done_path="$.done",
                                          done_value="true")
    figures: dict[str, tuple[float, float]] = {}
    with StreamTarget() as target, tempfile.TemporaryDirectory(prefix="litmus-bench-stream-") as tmp:
        target.script("/stream", Script(frames))
        target.script("/plain", Script([json.dumps({"text": text, "done": True}).encode()],
                                       content_type="application/json"))
        for name, suite in (("streamed", streamed), ("plain JSON (baseline)", plain)):
            best = None
            for _ in range(args.repeat):
                wall, cpu, results = run_once(Path(tmp), target.base_url, suite, args.concurrency)
                steps = [s for su in results["suites"] for fr in su["flow_runs"] for s in fr["steps"]]
                assert len(steps) == args.steps and all(s["status"] == "passed" for s in steps), "a step did not pass"
                if name == "streamed":
                    assert all(s["stream"]["events_count"] == args.events for s in steps)
                best = (wall, cpu) if best is None or wall < best[0] else best
            figures[name] = best
    events = args.steps * args.events
    print(f"{args.steps} steps x {args.events} events = {events} events, litmus run --concurrency "
          f"{args.concurrency}, best of {args.repeat}")
    print(f"{'run':<24}{'wall s':>10}{'CPU s':>10}{'CPU per step ms':>18}")
    for name, (wall, cpu) in figures.items():
        print(f"{name:<24}{wall:>10.2f}{cpu:>10.2f}{cpu / args.steps * 1000:>18.2f}")
    (s_wall, s_cpu), (p_wall, p_cpu) = figures["streamed"], figures["plain JSON (baseline)"]
    print(f"streamed, all in: {s_cpu / events * 1e6:.0f} us CPU per event (process start-up included)")
    print(f"streaming over the baseline: {(s_cpu - p_cpu) / events * 1e6:.0f} us CPU per event, "
          f"{(s_wall - p_wall) / args.steps * 1000:+.2f} ms wall per step")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
