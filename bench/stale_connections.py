"""Stale pooled connections under load: the figure in docs/RELIABILITY.md ("Transport").

    python3 bench/stale_connections.py                  # 2,000 requests per server, --concurrency 8
    python3 bench/stale_connections.py --requests 400   # a quicker run

Runs `litmus run` (a subprocess, the real command) against two servers on 127.0.0.1 that close
kept-alive connections without sending `Connection: close`:
  after_response  every response is the connection's last
  when_idle       idle connections are closed 20-200 ms after a response
with a CPU hog process busy beside it (so the client often reuses a pooled connection before it has
seen the server's FIN). The suite is one flow of 4 GET steps, repeated so that the run sends
`--requests` requests. Prints, per server, the steps that errored (every one is spurious: the server
answers every request it reads) and the transport retries recorded in results.json. Exits 1 when any
spurious error is found.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
sys.path[:0] = [str(TESTS / "reliability"), str(TESTS)]

from pipeline import run_litmus, write_suite  # noqa: E402

from support.closing_servers import ClosingServer  # noqa: E402

STEPS_PER_FLOW = 4
HOG_SECONDS = 600  # the hog ends by itself even if this script is killed
SUITE = """\
version: 1
suite: Stale connections
flows:
  - name: four steps
    runs: {runs}
    steps:
{steps}
"""
STEP = """\
      - name: step {i}
        request: {{url: /n, timeout_ms: 10000}}
        assertions:
          - {{type: status_code, expected: 200}}
"""


def measure(mode: str, requests: int, concurrency: int) -> dict:
    runs = max(1, requests // STEPS_PER_FLOW)
    steps = "".join(STEP.format(i=i) for i in range(1, STEPS_PER_FLOW + 1))
    with tempfile.TemporaryDirectory() as directory, ClosingServer(mode) as server:
        root = Path(directory)
        write_suite(root, "stale.yaml", SUITE.format(runs=runs, steps=steps))
        ran = run_litmus(["run", "--base-url", server.base_url, "--out", "out", "--concurrency", str(concurrency),
                          "-q"], cwd=root, timeout=1800)
        document = json.loads((root / "out" / "results.json").read_text("utf-8"))
        all_steps = [s for f in document["suites"][0]["flow_runs"] for s in f["steps"]]
        errors = [s for s in all_steps if s["status"] == "error"]
        return {
            "server": mode, "requests": len(all_steps), "exit": ran.code, "wall_s": round(ran.wall_s, 1),
            "spurious_errors": len(errors),
            "transport_retries": sum(s.get("transport_retries", 0) for s in all_steps),
            "connections_accepted": server.connections, "requests_answered": server.requests,
            "first_errors": sorted({s["error"] for s in errors})[:3],
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per server (default 2000)")
    parser.add_argument("--concurrency", type=int, default=8, help="litmus --concurrency (default 8)")
    args = parser.parse_args()
    hog = subprocess.Popen([sys.executable, "-c", f"import time\nend = time.monotonic() + {HOG_SECONDS}\n"
                            "while time.monotonic() < end:\n    pass\n"])
    try:
        time.sleep(0.5)
        figures = [measure(mode, args.requests, args.concurrency) for mode in ("after_response", "when_idle")]
    finally:
        hog.kill()
        hog.wait()
    print(json.dumps({"concurrency": args.concurrency, "cpu_hog": True, "servers": figures}, indent=2))
    return 1 if any(f["spurious_errors"] for f in figures) else 0


if __name__ == "__main__":
    sys.exit(main())
