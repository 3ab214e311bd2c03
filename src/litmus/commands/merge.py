"""Merge the results of sharded runs (`litmus run --shard K/N`) into one results.json.

The merged document is one run: flow runs of every shard (ordered by flow line, scenario order,
run index), suite pass rates and verdicts recomputed from the union, judge totals summed,
interrupted if any shard was. Render it with `litmus report`.

Refused, with the reason (exit 2): different tool versions or schema versions, different commits,
a suite whose file, line, intent or pass_threshold differ between shards, the same shard twice,
the same flow run in two shards, shards of different totals (1/3 with 2/4). A missing shard
(2 of 3 given) is refused too, since the verdict would silently cover fewer flow runs; pass
--allow-missing to merge what there is (a warning names the missing shards).

Examples:
  litmus merge results-1.json results-2.json results-3.json -o results.json
  litmus merge shards/*.json -o results.json && litmus report results.json --out reports/
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from litmus.merge import MergeError, merge
from litmus.results import ResultsError, load_results, write_results
from litmus.text import count


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, nargs="+", help="results.json files of the shards")
    parser.add_argument("-o", "--output", type=Path, required=True, help="where to write the merged results.json")
    parser.add_argument("--allow-missing", action="store_true",
                        help="merge even when some shards K/N are missing (warns which)")


def run(args: argparse.Namespace) -> int:
    try:
        documents = [load_results(path) for path in args.results]
        merged, warnings = merge(documents, names=[str(p) for p in args.results], allow_missing=args.allow_missing)
    except (ResultsError, MergeError) as exc:
        print(f"litmus merge: error: {exc}", file=sys.stderr)
        return 2
    for warning in warnings:
        print(f"litmus merge: warning: {warning}", file=sys.stderr)
    try:
        write_results(args.output, merged)
    except OSError as exc:
        print(f"litmus merge: error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    runs = sum(len(suite.flow_runs) for suite in merged.suites)
    print(f"merged {len(documents)} results: {count(len(merged.suites), 'suite')}, {count(runs, 'flow run')}, "
          f"verdict {merged.verdict} -> {args.output}")
    return 0
