"""Run probe suites against a deployment, then write results.json and the reports.

  litmus run                                   # every suite under probes/, base URL from the suites
  litmus run probes/chat.yaml --base-url https://preview-42.example.com
  litmus run --suite Checkout --flow "Ask about an order" --concurrency 8
  litmus run --shard 2/4 --out shard-2        # one of 4 balanced slices (merge with `litmus merge`)

Each flow runs once per scenario of the suite's context (times `runs`); flow runs execute
concurrently (--concurrency), the steps of one run in order, one cookie session per run.
A failure is printed as one line pointing at the probe:

  probes/chat.yaml:23:11 Ask › ask › json_path $.order.status: expected "delayed", got "shipped"

followed by a table per suite: flow runs passed / total against the suite's pass_threshold.
Secrets ({{ secrets.NAME }}) are shown as *** in everything the run prints or writes.

Written to --out (default litmus-report/): results.json (the results document, see
docs/running.md) and the reports chosen with --format (default: all).

Exit status: 0 every suite passed (per --fail-on), 1 not, 2 usage or probe errors,
130/143 interrupted by SIGINT/SIGTERM (partial results are still written, marked interrupted).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

FAIL_ON = ("suite", "assertion", "new", "never")
DEFAULT_OUT = "litmus-report"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["probes/"], metavar="PATHS",
                        help="probe files or directories (default: probes/)")
    parser.add_argument("--base-url", metavar="URL", help="the deployment to probe; overrides every suite's "
                        "base_url [LITMUS_BASE_URL]")
    parser.add_argument("--out", metavar="DIR", default=DEFAULT_OUT,
                        help=f"where results.json and the reports go (default: {DEFAULT_OUT}/)")
    parser.add_argument("--format", action="append", metavar="FORMATS",
                        help="report formats, comma-separated or repeated: sarif, junit, markdown, html, summary "
                             "(default: all)")
    parser.add_argument("--concurrency", type=_positive, default=4, metavar="N",
                        help="flow runs executed at once (default: 4)")
    parser.add_argument("--suite", action="append", default=[], metavar="NAME",
                        help="run only this suite (repeatable)")
    parser.add_argument("--flow", action="append", default=[], metavar="NAME",
                        help="run only flows with this name (repeatable)")
    parser.add_argument("--fail-on", choices=FAIL_ON, default="suite",
                        help="suite: exit 1 when a suite misses its pass_threshold (default); assertion: when any "
                             "assertion did not pass or a step got no response; new: when a finding is not already "
                             "failing in the --baseline or a flow's pass rate regressed (without a baseline every "
                             "finding counts as new); never: always exit 0")
    parser.add_argument("--baseline", metavar="PATH|URL",
                        help="compare with a baseline: a results.json, or a base deployment's URL (then the same "
                             "suites also run against it first, sharing the judge cache); findings become new, "
                             "unchanged or fixed (docs/baseline.md)")
    parser.add_argument("--shard", type=_shard, metavar="K/N",
                        help="run only the K-th of N balanced, stable slices of the flow runs (1 <= K <= N)")
    parser.add_argument("--timeout-ms", type=_positive_float, default=30_000, metavar="MS",
                        help="per-step timeout where a step sets no timeout_ms (default: 30000)")
    parser.add_argument("--max-body-bytes", type=_positive, default=10 * 1024 * 1024, metavar="BYTES",
                        help="response bodies are read up to this size, then marked truncated (default: 10 MiB)")
    parser.add_argument("--transport-retries", type=_non_negative, default=0, metavar="N",
                        help="retry connection failures of idempotent requests N times (default: 0); "
                             "a failed assertion is never retried (use a step's retry: for polling)")
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", action="store_true", help="print only the verdict line")
    loudness.add_argument("-v", "--verbose", action="store_true",
                          help="also print every flow run as it ends, skipped assertions and every mismatch")
    from litmus.config import add_config_arguments

    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from litmus.console import Console
    from litmus.errors import ProbeError, render_diagnostics
    from litmus.load import load_suites, repo_root

    environ = os.environ
    console = Console(verbosity=-1 if args.quiet else 1 if args.verbose else 0, environ=environ)
    formats = _formats(args.format)
    if isinstance(formats, str):
        return _usage(formats)
    try:
        loaded = load_suites(args.paths, strict_env=True, environ=environ)
    except ProbeError as exc:
        print(render_diagnostics(exc.diagnostics), file=sys.stderr)
        return 2
    if loaded.warnings:
        print(render_diagnostics(loaded.warnings), file=sys.stderr)
    suites = loaded.suites
    problem = _check_selection(suites, args.suite, args.flow)
    if problem:
        return _usage(problem)
    base_url = args.base_url or environ.get("LITMUS_BASE_URL") or None
    unset = [s.name for s in suites if not base_url and not s.base_url and (not args.suite or s.name in args.suite)]
    if unset:
        return _usage(f"no base URL for suite(s) {', '.join(map(repr, unset))}: pass --base-url "
                      "(or set LITMUS_BASE_URL, or base_url in the suite)")
    baseline = _baseline(args.baseline)
    if isinstance(baseline, str):
        return _usage(baseline)
    try:
        judge = _judge(args, environ, repo_root())
    except (ProbeError, ValueError) as exc:
        return _usage(f"judge configuration: {exc}")
    return _execute(args, suites, base_url, judge, formats, console, baseline)


def _baseline(given: str | None):
    """None, the base deployment's URL, a loaded results document, or a usage error message."""
    if not given:
        return None
    if re.match(r"(?i)https?://", given):
        return Baseline(url=given)
    from litmus.results import ResultsError, load_results

    try:
        return Baseline(result=load_results(given), source=given)
    except ResultsError as exc:
        return f"--baseline: {exc}"


class Baseline:
    """What --baseline named: a base deployment to run the same suites against, or a results.json."""

    def __init__(self, *, url: str | None = None, result=None, source: str | None = None) -> None:
        self.url, self.result, self.source = url, result, source or url


def _execute(args, suites, base_url, judge, formats, console, baseline=None) -> int:
    import dataclasses
    import gc

    from litmus.results import write_results
    from litmus.run.runner import RunOptions, failed_by, run_suites
    from litmus.run.signals import StopOnSignals

    options = RunOptions(
        base_url=base_url, concurrency=args.concurrency, suites=tuple(args.suite), flows=tuple(args.flow),
        shard=args.shard, fail_on=args.fail_on, max_body_bytes=args.max_body_bytes,
        transport_retries=args.transport_retries, timeout_ms=args.timeout_ms,
    )
    out = Path(args.out)
    # The suites, and then the results, live until the process exits: frozen, the cyclic GC stops
    # re-scanning them at every full collection (0.1-0.16 s each at 1000 steps).
    gc.freeze()
    # The handlers stay on while results and reports are written: a signal then must not cut a report.
    with StopOnSignals(options.stop) as signals:
        try:
            if baseline is not None and baseline.url:
                # The base deployment first, with the same options and judge (so its cache is shared).
                console.note(f"baseline: running the suites against {baseline.url}")
                baseline.result = run_suites(suites, dataclasses.replace(options, base_url=baseline.url),
                                             judge=judge, on_event=console.on_event)
                write_results(out / "baseline.json", baseline.result)
            # After a signal the runner starts nothing more: the head run comes back interrupted.
            result = run_suites(suites, options, judge=judge, on_event=console.on_event)
        finally:
            if judge is not None:
                judge.close()
        gc.freeze()
        if baseline is not None and baseline.result is not None:
            from litmus.compare import compare, headline

            compare(baseline.result, result, source=baseline.source)
        results_path = out / "results.json"
        write_results(results_path, result)
        _write_reports(result, out, formats)
        console.report(result, str(results_path))
        if result.baseline is not None:
            console.note(f"compared with {baseline.source}: {headline(result.baseline)}")
    if signals.exit_code:
        return signals.exit_code
    return 1 if failed_by(result, args.fail_on) else 0


def _write_reports(result, out: Path, formats: list[str] | None) -> None:
    try:
        from litmus.report import write_reports
    except ImportError:  # reports are optional for the run itself
        return
    write_reports(result, out, formats)


def _judge(args, environ, root):
    from litmus.config import resolve_config
    from litmus.judges.service import JudgeService

    config = resolve_config(args, environ, root)
    return JudgeService.from_config(config.judge, environ)


def _formats(given: list[str] | None) -> list[str] | None | str:
    """The chosen report formats (None = all), or a usage error message."""
    if not given:
        return None
    names = [name.strip() for value in given for name in value.split(",") if name.strip()]
    from litmus.report import UnknownFormat, check_formats

    try:
        return check_formats(names)
    except UnknownFormat as exc:
        return str(exc)


def _check_selection(suites, suite_names: list[str], flow_names: list[str]) -> str | None:
    known = {s.name for s in suites}
    missing = [n for n in suite_names if n not in known]
    if missing:
        return f"no suite named {', '.join(map(repr, missing))}; suites: {', '.join(sorted(known)) or '(none)'}"
    chosen = [s for s in suites if not suite_names or s.name in suite_names]
    flows = {f.name for s in chosen for f in s.flows}
    missing = [n for n in flow_names if n not in flows]
    if missing:
        return f"no flow named {', '.join(map(repr, missing))}; flows: {', '.join(sorted(flows)) or '(none)'}"
    return None


def _usage(message: str) -> int:
    from litmus.console import clean

    print(f"litmus run: error: {clean(message)}", file=sys.stderr)
    return 2


def _shard(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N with 1 <= K <= N (e.g. 2/4)")
    return int(match.group(1)), int(match.group(2))


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not positive")
    return value
