"""Render reports from a results.json: any past run, exactly as `litmus run` renders them.

Formats (comma-separated, default all):
  sarif     litmus.sarif  SARIF 2.1.0 for GitHub code scanning (upload with github/codeql-action/upload-sarif)
  junit     junit.xml     JUnit XML for test reporters (mikepenz/action-junit-report, EnricoMi, Jenkins)
  markdown  comment.md    the sticky PR comment, at most 65,536 characters
  html      report.html   one self-contained page: the findings with full request/response excerpts
  summary   summary.md    the job summary for $GITHUB_STEP_SUMMARY, at most 1 MiB

Links to probe lines need the repository, server and commit; they default to what the results
recorded (run.repository, run.server_url, run.git_sha).

Examples:
  litmus report results.json --out reports/
  litmus report results.json --format sarif,markdown --out reports/ --sarif-category api-probes/staging
  litmus report results.json --format markdown --stdout      # print the comment instead of writing files

Exit status: 0 reports written, 2 unreadable results or bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from litmus.load import repo_root
from litmus.report import FORMATS, UnknownFormat, check_formats, render, write_reports
from litmus.report.options import add_sarif_category_argument
from litmus.results import DEFAULT_OUT, OutputError, ResultsError, check_output_dir, load_results


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, help="a results.json written by `litmus run` or `litmus merge`")
    parser.add_argument("--format", "-f", default=",".join(FORMATS),
                        help=f"comma-separated formats (default: all of {','.join(FORMATS)})")
    parser.add_argument("--out", "-o", type=Path, default=Path(DEFAULT_OUT),
                        help=f"directory to write the reports into (default: {DEFAULT_OUT}/)")
    parser.add_argument("--stdout", action="store_true", help="print the one chosen format instead of writing files")
    parser.add_argument("--repository", help="owner/name, for links to probe lines (default: from the results)")
    parser.add_argument("--server-url", help="e.g. https://github.com (default: from the results)")
    parser.add_argument("--sha", help="commit the probe lines are linked at (default: run.git_sha)")
    add_sarif_category_argument(parser)
    parser.add_argument("--artifact-url", help="link to the uploaded reports, shown when findings are cut for size")


def run(args: argparse.Namespace) -> int:
    try:
        formats = check_formats([name.strip() for name in args.format.split(",") if name.strip()])
        result = load_results(args.results)
    except (UnknownFormat, ResultsError) as exc:
        print(f"litmus report: error: {exc}", file=sys.stderr)
        return 2
    options = {"repository": args.repository, "server_url": args.server_url, "sha": args.sha,
               "sarif_category": args.sarif_category, "artifact_url": args.artifact_url}
    if args.stdout:
        if len(formats) != 1:
            print("litmus report: error: --stdout prints exactly one format; choose it with --format", file=sys.stderr)
            return 2
        sys.stdout.write(render(formats[0], result, **options))
        return 0

    try:
        check_output_dir(args.out, repo_root())
        written = write_reports(result, args.out, formats, **options)
    except OutputError as exc:
        written, problem = exc.written, str(exc)
    else:
        problem = None
    for name, path in written.items():
        print(f"{name:9} {path}")
    if problem:
        print(f"litmus report: error: {problem}", file=sys.stderr)
        return 2
    return 0
