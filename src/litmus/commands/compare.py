"""Compare a run with a baseline run of the same suites: what this pull request changed.

  litmus compare base/results.json litmus-report/results.json -o litmus-report/compared.json
  litmus report litmus-report/compared.json --out litmus-report/   # reports open with "New in this PR"

Findings are matched by identity (suite, flow, scenario, step, assertion name or type and ordinal;
never line numbers or messages), so moving a check down the file or rewording a reason does not make
it new. Each finding of HEAD becomes `new` (did not fail in BASE) or `unchanged` (failed there too);
a finding of BASE whose check ran in HEAD and held in every run is `fixed`. Flows are compared by pass
rate with 95% Wilson intervals: `regressed` only when the intervals separate. With --max-cost-increase PCT
a flow whose cost per run (its tokens, where a step is unpriced) rose more than PCT percent regressed too.
See docs/baseline.md and docs/cost.md.

Exit status: 0 written (whatever the findings; use --fail-on new to gate on them), 1 with
--fail-on new when HEAD has a new finding or a regressed flow, 2 unreadable input or usage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from litmus.compare import MAX_COST_INCREASE, compare, headline
from litmus.numbers import number_argument
from litmus.results import ResultsError, load_results, write_results
from litmus.verdict import exit_code


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("baseline", type=Path, metavar="BASE.json", help="results.json of the baseline run")
    parser.add_argument("head", type=Path, metavar="HEAD.json", help="results.json of the run to judge")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="FILE",
                        help="where to write HEAD's results with the comparison added")
    parser.add_argument("--fail-on", choices=("never", "new"), default="never",
                        help="new: exit 1 when HEAD has a new finding or a regressed flow (default: never)")
    parser.add_argument("--max-cost-increase", metavar="PCT",
                        type=number_argument(whole=False, low=0, high=MAX_COST_INCREASE, unit="percent"),
                        help="a flow whose cost per run (its tokens, where a step is unpriced) rose more than PCT "
                             "percent over BASE regressed (docs/cost.md)")


def run(args: argparse.Namespace) -> int:
    try:
        baseline = load_results(args.baseline)
        head = load_results(args.head)
    except ResultsError as exc:
        print(f"litmus compare: error: {exc}", file=sys.stderr)
        return 2
    compared = compare(baseline, head, source=str(args.baseline), max_cost_increase=args.max_cost_increase)
    write_results(args.output, compared)
    print(f"{headline(compared.baseline)} -> {args.output}")
    return exit_code(compared, args.fail_on)

