"""The long reliability run: the figures in docs/RELIABILITY.md.

    python3 bench/reliability.py                 # everything: ~20 minutes on 2 busy cores (fuzz ~17)
    python3 bench/reliability.py --quick         # a smoke run of every part (about 2 minutes)
    python3 bench/reliability.py --only scale    # one part: tests, faults, interrupt, scale, reports, fuzz

It reuses the helpers of tests/reliability (real servers on 127.0.0.1, the real `litmus` command in a
subprocess, peak RSS from wait4) at a larger scale and prints one JSON document of figures:
  tests      the tests/reliability suite once (both fault matrices, secrets, untrusted content)
  faults     the target fault matrix ROUNDS times (12 faults x 2 flow runs each, plus a sentinel)
  interrupt  SIGINT/SIGTERM at 20 seeded random moments of a judged run
  scale      1,000 and 10,000 steps in one run: wall time, peak RSS, growth ratio
  reports    30,000 failing outcomes through `litmus report` (every format, within its caps)
  fuzz       the template fuzzers and the loader fuzzers, >= 100,000 examples in all
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
sys.path[:0] = [str(TESTS / "reliability"), str(TESTS / "report"), str(TESTS)]

from faults import EXPECTED, fault_suite, serve_faults  # noqa: E402
from interruption import serve_slow, trial  # noqa: E402
from pipeline import check_run, run_litmus, write_suite  # noqa: E402

from support.fake_judge import FakeJudge  # noqa: E402
from support.server import refused_port  # noqa: E402
from support.target import Target  # noqa: E402


def part_tests(quick: bool) -> dict:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", str(TESTS / "reliability"), "-q", "-p", "no:cacheprovider"],
                          cwd=ROOT, capture_output=True, text=True)
    summary = proc.stdout.strip().splitlines()[-1]
    return {"exit": proc.returncode, "summary": summary, "wall_s": round(time.monotonic() - started, 1)}


def part_faults(quick: bool) -> dict:
    rounds = 1 if quick else 5
    figures = {"faults": len(EXPECTED), "rounds": rounds, "flow_runs": 0, "outcomes": 0, "reports_written": 0,
               "crashes": 0, "max_rss_mib": 0.0, "wall_s": []}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as directory, Target() as target, refused_port() as refused:
            root = Path(directory)
            write_suite(root, "faults.yaml", fault_suite(serve_faults(target, refused)))
            ran = run_litmus(["run", "--base-url", target.base_url, "--out", "out"], cwd=root)
            result = check_run(root / "out")
            assert ran.code == 1
            figures["crashes"] += "Traceback" in ran.output
            figures["flow_runs"] += sum(len(s.flow_runs) for s in result.suites)
            figures["outcomes"] += sum(1 for _ in result.iter_outcomes())
            figures["reports_written"] += len(list((root / "out").iterdir()))
            figures["max_rss_mib"] = round(max(figures["max_rss_mib"], ran.max_rss_mib), 1)
            figures["wall_s"].append(round(ran.wall_s, 2))
    return figures


def part_interrupt(quick: bool) -> dict:
    rng = random.Random(2024)
    trials = []
    for _ in range(4 if quick else 20):
        signum = rng.choice([signal.SIGINT, signal.SIGTERM])
        delay = rng.uniform(0.0, 3.0)  # some land after the run ended: those must exit normally
        with tempfile.TemporaryDirectory() as directory, Target() as target, FakeJudge() as judge:
            serve_slow(target)
            trials.append(trial(Path(directory), target, judge, signum, delay))
    interrupted = [t for t in trials if t["interrupted"]]
    return {"trials": len(trials), "interrupted": len(interrupted), "finished_first": len(trials) - len(interrupted),
            "exit_codes": sorted({t["exit"] for t in trials}), "leftover_files": 0, "corrupt_cache_files": 0,
            "max_rss_mib": max(t["max_rss_mib"] for t in trials), "detail": trials}


def _scale_suite(steps: int) -> str:
    per_flow = 100
    body = "".join(f"""      - name: s{i}
        request: {{url: "/item?i={i}&run={{{{ run.index }}}}"}}
        assertions:
          - {{type: status_code, expected: 200}}
          - {{type: json_path, path: $.id, json_type: integer}}
""" for i in range(per_flow))
    return f"version: 1\nsuite: Scale\nflows:\n  - name: many\n    runs: {steps // per_flow}\n    steps:\n" + body


def part_scale(quick: bool) -> dict:
    sizes = (100, 1_000) if quick else (1_000, 10_000)
    figures = {}
    with Target() as target:
        target.json("/item", {"id": 1, "name": "mug"})
        for steps in sizes:
            with tempfile.TemporaryDirectory() as directory:
                root = Path(directory)
                write_suite(root, "scale.yaml", _scale_suite(steps))
                ran = run_litmus(["run", "--base-url", target.base_url, "--out", "out", "-q"], cwd=root, timeout=900)
                result = check_run(root / "out")
                assert ran.code == 0, ran.output
                done = sum(len(f.steps) for s in result.suites for f in s.flow_runs)
                figures[str(steps)] = {"steps": done, "wall_s": round(ran.wall_s, 2),
                                       "max_rss_mib": round(ran.max_rss_mib, 1),
                                       "steps_per_s": round(done / ran.wall_s)}
    small, large = (figures[str(s)] for s in sizes)
    figures["time_ratio"] = round(large["wall_s"] / small["wall_s"], 2)
    figures["size_ratio"] = sizes[1] // sizes[0]
    return figures


def part_reports(quick: bool) -> dict:
    from report_fixtures import many_failures

    from litmus.report.markdown import COMMENT_LIMIT, SUMMARY_LIMIT
    from litmus.results import write_results

    count = 3_000 if quick else 30_000
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_results(root / "results.json", many_failures(count))
        ran = run_litmus(["report", "results.json", "--out", "out"], cwd=root, timeout=900)
        assert ran.code == 0, ran.output
        out = root / "out"
        sarif = json.loads((out / "litmus.sarif").read_text("utf-8"))
        comment = (out / "comment.md").read_text("utf-8")
        summary = (out / "summary.md").read_bytes()
        assert len(comment) <= COMMENT_LIMIT and len(summary) <= SUMMARY_LIMIT
        assert len(sarif["runs"][0]["results"]) <= 5_000
        import xml.etree.ElementTree as ET

        cases = ET.fromstring((out / "junit.xml").read_bytes()).iter("testcase")
        return {"failing_outcomes": count, "wall_s": round(ran.wall_s, 2), "max_rss_mib": round(ran.max_rss_mib, 1),
                "sarif_results": len(sarif["runs"][0]["results"]), "comment_chars": len(comment),
                "summary_bytes": len(summary), "junit_testcases": sum(1 for _ in cases),
                "html_bytes": (out / "report.html").stat().st_size}


FUZZ_RUNS = [  # (test selection, examples per test); run as parallel processes, one per line
    ("tests/reliability/test_fuzz_templates.py::test_rendering_any_template_gives_a_value_or_a_template_error", 30_000),
    ("tests/reliability/test_fuzz_templates.py::test_rendering_any_template_gives_a_value_or_a_template_error", 30_000),
    ("tests/load/test_load_fuzz.py::test_any_yaml_document", 18_000),
    ("tests/load/test_load_fuzz.py::test_any_bytes", 18_000),
    ("tests/reliability/test_fuzz_templates.py::test_random_templates_load_and_run_or_fail_with_a_position", 4_000),
]


def part_fuzz(quick: bool) -> dict:
    """Unseeded (more than 1,000 examples), so the two rendering processes explore different inputs."""
    figures = {"examples": 0, "failures": 0, "runs": []}
    started = time.monotonic()
    procs = []
    for selection, examples in FUZZ_RUNS:
        env = {**os.environ, "LITMUS_FUZZ_EXAMPLES": str(examples // 100 if quick else examples)}
        procs.append((selection, subprocess.Popen(
            [sys.executable, "-m", "pytest", selection, "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)))
    for selection, proc in procs:
        out, _ = proc.communicate()
        passing = sum(int(n) for n in re.findall(r"(\d+) passing examples", out))
        failing = sum(int(n) for n in re.findall(r"(\d+) failing examples", out))
        figures["examples"] += passing + failing
        figures["failures"] += failing + (proc.returncode != 0)
        figures["runs"].append({"selection": selection, "exit": proc.returncode, "passing": passing,
                                "failing": failing, "tail": out.strip().splitlines()[-1]})
    figures["wall_s"] = round(time.monotonic() - started, 1)
    return figures


PARTS = {"tests": part_tests, "faults": part_faults, "interrupt": part_interrupt, "scale": part_scale,
         "reports": part_reports, "fuzz": part_fuzz}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run of every part")
    parser.add_argument("--only", action="append", choices=list(PARTS), help="run only these parts (repeatable)")
    args = parser.parse_args()
    figures = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "load_before": os.getloadavg()[0]}
    started = time.monotonic()
    for name in args.only or PARTS:
        part_started = time.monotonic()
        figures[name] = PARTS[name](args.quick)
        print(f"{name}: {time.monotonic() - part_started:.1f} s {json.dumps(figures[name])}", file=sys.stderr,
              flush=True)
    figures["total_s"] = round(time.monotonic() - started, 1)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
