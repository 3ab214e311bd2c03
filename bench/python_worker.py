"""The cost of one `python` check call in the run's worker process, after start-up, and the start-up itself.

    python bench/python_worker.py            # 2,000 calls of a trivial check, with a 1 KiB JSON body
    python bench/python_worker.py --calls 10000

Prints figures; nothing in tests/ depends on it. Runs the worker as it runs in `litmus run` (confined,
and dropped to `nobody` when run as root).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from litmus.assertions.python_worker import PythonWorker

CHECK = b"def total_is_positive(response, context, minimum):\n    return response.json()['total'] >= minimum\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    calls = parser.parse_args().calls
    body = json.dumps({"total": 34, "padding": "x" * 1000})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "check.py"
        path.write_bytes(CHECK)
        request = {"path": str(path), "function": "total_is_positive", "args": {"minimum": 1},
                   "response": {"status": 200, "headers": [["Content-Type", "application/json"]], "body": body,
                                "encoding": "utf-8", "truncated": False, "elapsed_ms": 1.0},
                   "context": {"variables": {"total": 34}, "scenario": None, "run_index": 0}}
        worker = PythonWorker({"PATH": "/usr/bin:/bin"})
        try:
            started = time.perf_counter()
            first = worker.call(request, CHECK, started + 30)
            startup = time.perf_counter() - started
            assert first["kind"] == "returned" and first["value"] is True, first
            times = []
            for _ in range(calls):
                began = time.perf_counter()
                worker.call(request, path.read_bytes(), began + 30)
                times.append(time.perf_counter() - began)
        finally:
            worker.close()
    times.sort()
    print(f"start-up and first call: {startup * 1000:.1f} ms")
    print(f"per call after start-up ({calls} calls, {len(body)}-byte body, the file read each call as Litmus does): "
          f"median {statistics.median(times) * 1e6:.0f} µs, p95 {times[int(len(times) * 0.95)] * 1e6:.0f} µs, "
          f"mean {statistics.fmean(times) * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
