"""Run the example suites against the bundled demo target: offline, no API key, no Docker.

Starts a small shop API (litmus.demo.target: an order flow, a chat assistant, a support RAG
endpoint) on a free 127.0.0.1 port, runs the probe suites in probes/ against it, replays the judge
verdicts recorded in probes/cassettes/ for the LLM-based assertions and Intent Evaluations, writes
results.json and every report (SARIF, JUnit, Markdown comment, HTML, job summary) to --out, and
prints the summary `litmus run` prints. Then it calibrates the recorded judge on the labelled replies
in probes/calibration/ (verdicts replayed too), prints the table `litmus calibrate` prints and writes
calibration.json and calibration.html to --out (docs/judges.md, "How far to trust your judge").

The demo target has deliberate bugs, so the demo finds problems on purpose: a price sent as the
string "12.50", a slow search, a banned disclaimer in a chat reply, an order missing from the
support index, an invented delivery date. The documented verdict is FAILED: exit status 1 with
the default --fail-on suite (0 with --fail-on never). See docs/demo.md for every expected finding.

The suites read three environment variables; the demo sets these documented values unless they
are already set (the target accepts whatever values the suites will send):
  LITMUS_DEMO_USER=ada@example.com  LITMUS_DEMO_PASSWORD=demo-password  LITMUS_DEMO_TOKEN=demo-api-token

Exit status: 1 the documented (failed) verdict, 0 with --fail-on never, 2 bad probes or usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from litmus.commands.run import FAIL_ON
from litmus.demo.run import run_demo
from litmus.report.options import add_sarif_category_argument
from litmus.results import DEFAULT_OUT

DEFAULT_PROBES = "probes/"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--probes", default=DEFAULT_PROBES, metavar="PATH",
                        help=f"probe files or directory to run (default: {DEFAULT_PROBES}); recorded judge verdicts "
                             "are read from its cassettes/ folder")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                        help=f"where results.json and the reports go (default: {DEFAULT_OUT}/)")
    add_sarif_category_argument(parser)
    parser.add_argument("--fail-on", choices=FAIL_ON, default="suite",
                        help="suite: exit 1 when a suite misses its pass threshold (default); assertion: when any "
                             "assertion did not pass; never: exit 0 whatever was found")


def run(args: argparse.Namespace) -> int:
    if not Path(args.probes).exists():
        print(f"litmus demo: {args.probes} not found. The example suites live in the probes/ folder of the Litmus "
              "repository: run `litmus demo` from a clone of it, or pass --probes PATH.", file=sys.stderr)
        return 2
    status = run_demo(Path(args.probes), Path(args.out), args.fail_on, os.environ, sys.stdout, sys.stderr,
                      sarif_category=args.sarif_category)
    if args.probes == DEFAULT_PROBES and status != 2:
        print("expected: FAILED, 1 of 5 suites passed: the demo target's bugs are deliberate (docs/demo.md)")
    return status
