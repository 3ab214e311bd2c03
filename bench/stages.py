#!/usr/bin/env python3
"""Where one `litmus run` spends its time and memory: each stage measured on its own, in one process.

Uses the same nginx, documents and Litmus suite as `run_bench.py` (five checks per probe, every
tenth probe failing), then runs the stages `litmus run` chains, one after the other, and prints per
stage the wall time, the CPU time and the process's peak RSS after it:

    imports   litmus.load, litmus.run, litmus.report and the libraries they pull in
    load      load_suites (YAML, the positioned tree, the model, the schema and JSONPath checks)
    run       run_suites (HTTP, assertions, results), --concurrency as given
    write     results.json
    <format>  each report rendered and written on its own

    python3 bench/stages.py                  # N = 200 and 1000, 3 repetitions, medians
    python3 bench/stages.py --sizes 1000 --repeat 1

Each size and repetition is a fresh process (imports and caches start cold, as in `litmus run`).
It prints figures; it asserts nothing. See docs/performance.md for what they mean.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import cases as bench_cases  # noqa: E402
from run_bench import Nginx, check_prerequisites  # noqa: E402

REPORTS = ("sarif", "junit", "markdown", "html", "summary")


def peak_rss_mb() -> float:
    """This process's peak RSS. VmHWM, not getrusage: ru_maxrss survives fork and exec, so a child
    would report its parent's peak whenever that is higher (the parent here wrote a 1 MB suite)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_stages(suite: str, base_url: str, out: str, concurrency: int) -> dict[str, list[float]]:
    """In this process: {stage: [wall s, cpu s, peak RSS MB after it]}."""
    import gc

    figures: dict[str, list[float]] = {}

    def record(stage: str, started: float, cpu_started: float) -> None:
        figures[stage] = [time.perf_counter() - started, time.process_time() - cpu_started, peak_rss_mb()]

    t, c = time.perf_counter(), time.process_time()
    from litmus.load import load_suites
    from litmus.report import write_reports
    from litmus.results import write_results
    from litmus.run.runner import RunOptions, run_suites
    record("imports", t, c)

    t, c = time.perf_counter(), time.process_time()
    suites = load_suites([suite]).suites
    record("load", t, c)
    gc.freeze()  # as litmus run does

    t, c = time.perf_counter(), time.process_time()
    result = run_suites(suites, RunOptions(base_url=base_url, concurrency=concurrency))
    record("run", t, c)
    gc.freeze()

    t, c = time.perf_counter(), time.process_time()
    write_results(Path(out) / "results.json", result)
    record("write", t, c)
    for name in REPORTS:
        t, c = time.perf_counter(), time.process_time()
        write_reports(result, Path(out), [name])
        record(name, t, c)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="200,1000", help="comma-separated probe counts N (default 200,1000)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per size (default 3); medians")
    parser.add_argument("--concurrency", type=int, default=16, help="flow runs at once (default 16, as run_bench)")
    parser.add_argument("--child", nargs=4, metavar=("SUITE", "BASE_URL", "OUT", "CONCURRENCY"),
                        help=argparse.SUPPRESS)  # one measurement, in a fresh process
    args = parser.parse_args(argv)
    if args.child:
        suite, base_url, out, concurrency = args.child
        print(json.dumps(measure_stages(suite, base_url, out, int(concurrency))))
        return 0

    sizes = [int(size) for size in args.sizes.split(",")]
    nginx_binary = check_prerequisites(setup=False, node_tools=False)
    tmp = Path(tempfile.mkdtemp(prefix="litmus-stages-"))
    tmp.chmod(0o755)  # nginx workers must read the documents
    nginx = None
    try:
        all_cases = {size: bench_cases.make_cases(size, 10) for size in sizes}
        bench_cases.write_documents(all_cases[max(sizes)], tmp / "www")
        nginx = Nginx(nginx_binary, tmp, tmp / "www")
        nginx.wait_ready(all_cases[max(sizes)][0].path)
        for size in sizes:
            suite = tmp / f"suite-{size}.yaml"
            bench_cases.write_litmus_suite(all_cases[size], suite)
            runs = []
            for _ in range(args.repeat):
                # In the temp dir: the loader reads probe files inside the working directory only.
                child = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--child", str(suite), nginx.base_url,
                     str(tmp / "out"), str(args.concurrency)], capture_output=True, text=True, check=True, cwd=tmp)
                runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
            print(f"\nN={size}, medians of {args.repeat} fresh processes (--concurrency {args.concurrency})")
            print(f"{'stage':<9} {'wall s':>7} {'CPU s':>6} {'peak RSS MB after':>18}")
            for stage in runs[0]:
                wall, cpu, peak = (statistics.median(run[stage][i] for run in runs) for i in range(3))
                print(f"{stage:<9} {wall:>7.3f} {cpu:>6.2f} {peak:>18.1f}")
            total = statistics.median(sum(run[stage][0] for stage in run) for run in runs)
            print(f"{'total':<9} {total:>7.3f}   (the interpreter's own start-up comes on top)")
    finally:
        if nginx:
            nginx.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
