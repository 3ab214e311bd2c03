"""Run probe suites against a deployment, then write results.json and the reports.

  litmus run                                   # every suite under probes/, base URL from the suites
  litmus run probes/chat.yaml --base-url https://preview-42.example.com
  litmus run --suite Checkout --flow "Ask about an order" --concurrency 8
  litmus run --shard 2/4 --out shard-2        # one of 4 balanced slices (merge with `litmus merge`)
  litmus run --var tenant=acme --vars-file staging.yaml --base-url Orders=https://orders.staging.example

Each flow runs once per scenario of the suite's context (times `runs`); flow runs execute
concurrently (--concurrency), the steps of one run in order, one cookie session per run.
A suite's `setup` runs once before its flow runs and its `teardown` once after them, even after
failures or an interruption; `serial: true` runs its flow runs one at a time, in file order.
{{ vars.NAME }} templates take --var / --vars-file values; --base-url SUITE=URL sets one suite's.
A failure is printed as one line pointing at the probe:

  probes/chat.yaml:23:11 Ask › ask › json_path $.order.status: expected "delayed", got "shipped"

followed by a table per suite: flow runs passed / total against the suite's pass_threshold.
Secrets ({{ secrets.NAME }}) are shown as *** in everything the run prints or writes.

Written to --out (default litmus-report/): results.json (the results document, see
docs/running.md) and the reports chosen with --format (default: all).

Nothing unchecked passes: a suite whose LLM-based assertions no judge evaluated (none configured,
or the judge.max_calls budget ran out) fails, saying how many and why. --no-judge is the explicit
choice of deterministic checks only: those assertions are then skipped, counted and said. An
assertion marked `critical: true` fails its flow run whatever the Intent Evaluation says.

Exit status: 0 every suite passed (per --fail-on), 1 not, 2 usage or probe errors (no suite
found, a --suite/--flow filter that matches nothing, litmus.yaml errors included), an --out folder
that cannot be written (checked before any request), or an output file that could not be written
(results.json is written first, each report whatever befell the others), 130/143 interrupted by
SIGINT/SIGTERM (partial results are still written, marked interrupted).
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
    parser.add_argument("--base-url", action="append", default=[], metavar="[SUITE=]URL",
                        help="the deployment to probe: URL overrides every suite's base_url [LITMUS_BASE_URL]; "
                             "SUITE=URL (repeatable) overrides one suite's, and wins over URL")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                        help="set {{ vars.NAME }} (repeatable; text; wins over --vars-file)")
    parser.add_argument("--vars-file", action="append", default=[], metavar="FILE",
                        help="a YAML or JSON mapping of {{ vars.NAME }} values (repeatable, later files win)")
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
                        help="per-step timeout where a step sets no timeout_ms (default: 30000); it bounds the "
                             "whole exchange: connecting, headers, redirects and body")
    parser.add_argument("--max-body-bytes", type=_positive, default=10 * 1024 * 1024, metavar="BYTES",
                        help="response bodies are read up to this size, then marked truncated; a stream (stream:) cut "
                             "there is an error (default: 10 MiB)")
    parser.add_argument("--transport-retries", type=_non_negative, default=0, metavar="N",
                        help="retry connection failures of idempotent requests N times (default: 0); "
                             "a failed assertion is never retried (use a step's retry: for polling). "
                             "Without it too, an idempotent request that met a pooled connection the server had "
                             "closed is sent once more on a new one")
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
    from litmus.results import OutputError, check_output_dir

    environ = os.environ
    console = Console(verbosity=-1 if args.quiet else 1 if args.verbose else 0, environ=environ)
    formats = _formats(args.format)
    if isinstance(formats, str):
        return _usage(formats)
    try:
        run_vars = read_run_vars(args)
        base_url, suite_base_urls = _base_urls(args.base_url)
    except ValueError as exc:
        return _usage(str(exc))
    except ProbeError as exc:
        print(render_diagnostics(exc.diagnostics), file=sys.stderr)
        return 2
    try:
        loaded = load_suites(args.paths, strict_env=True, environ=environ, run_vars=run_vars, named_anywhere=True)
    except ProbeError as exc:
        print(render_diagnostics(exc.diagnostics), file=sys.stderr)
        return 2
    if loaded.warnings:
        print(render_diagnostics(loaded.warnings), file=sys.stderr)
    from litmus.config import resolve_config
    from litmus.judges.service import JudgeConfigError, JudgeService
    from litmus.run.runner import RunOptions, selected_suites

    problem = _check_selection(loaded.suites, args.suite, args.flow)
    unknown = sorted(set(suite_base_urls) - {s.name for s in loaded.suites})
    if unknown:
        problem = f"--base-url names no suite {', '.join(map(repr, unknown))}"
    if problem:
        return _usage(problem)
    base_url = base_url or environ.get("LITMUS_BASE_URL") or None
    options = RunOptions(
        base_url=base_url, concurrency=args.concurrency, suites=tuple(args.suite), flows=tuple(args.flow),
        shard=args.shard, fail_on=args.fail_on, max_body_bytes=args.max_body_bytes,
        transport_retries=args.transport_retries, timeout_ms=args.timeout_ms, run_vars=run_vars,
        suite_base_urls=suite_base_urls,
    )
    suites = selected_suites(loaded.suites, options)
    unset = [s.name for s in suites if not base_url and not s.base_url and s.name not in suite_base_urls]
    if unset:
        return _usage(f"no base URL for suite(s) {', '.join(map(repr, unset))}: pass --base-url "
                      "(or set LITMUS_BASE_URL, or base_url in the suite)")
    baseline = _baseline(args.baseline)
    if isinstance(baseline, str):
        return _usage(baseline)
    try:
        check_output_dir(args.out)  # before any request: a run that cannot be saved is not started
    except OutputError as exc:
        return _usage(f"--out: {exc}")
    try:
        config = resolve_config(args, environ, repo_root())
    except ProbeError as exc:
        print(render_diagnostics(exc.diagnostics), file=sys.stderr)
        return 2
    options.judge_disabled = config.judge_disabled
    try:
        judge = JudgeService.from_config(config.judge, environ)
    except JudgeConfigError as exc:
        return _usage(f"judge configuration: {exc}")
    return _execute(args, suites, options, judge, formats, console, baseline)


def read_run_vars(args: argparse.Namespace) -> dict:
    """`--vars-file` then `--var` values (ValueError or ProbeError when malformed)."""
    from litmus.load.run_vars import run_vars

    return run_vars(args.vars_file, args.var)


def _base_urls(given: list[str]) -> tuple[str | None, dict[str, str]]:
    from litmus.load.run_vars import base_url_override

    every, per_suite = None, {}
    for text in given:
        suite, url = base_url_override(text)
        if suite is None:
            every = url
        else:
            per_suite[suite] = url
    return every, per_suite


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


def _execute(args, suites, options, judge, formats, console, baseline=None) -> int:
    import contextlib
    import dataclasses
    import gc

    from litmus.results import write_results
    from litmus.run.redact import Redactor
    from litmus.run.runner import failed_by, run_suites
    from litmus.run.signals import StopOnSignals, exit_abandoning

    out = Path(args.out)
    # The suites, and then the results, live until the process exits: frozen, the cyclic GC stops
    # re-scanning them at every full collection (0.1-0.16 s each at 1000 steps).
    gc.freeze()
    # The handlers stay on while results and reports are written: a signal then must not cut a report.
    with StopOnSignals(options.stop, options.abort) as signals:
        try:
            if baseline is not None and baseline.url:
                # The base deployment first, with the same options and judge (so its cache is shared).
                console.note(f"baseline: running the suites against {baseline.url}")
                baseline.result = run_suites(suites, dataclasses.replace(options, base_url=baseline.url),
                                             judge=judge, on_event=console.on_event,
                                             redactor=Redactor(on_warning=console.warning))
                # Kept beside results.json for the record; the comparison needs only the document.
                with contextlib.suppress(OSError):
                    write_results(out / "baseline.json", baseline.result)
            # After a signal the runner starts nothing more: the head run comes back interrupted.
            result = run_suites(suites, options, judge=judge, on_event=console.on_event,
                                redactor=Redactor(on_warning=console.warning))
        finally:
            if judge is not None:
                judge.close(abandon=options.stop.is_set())
        gc.freeze()
        if baseline is not None and baseline.result is not None:
            from litmus.compare import compare, headline

            compare(baseline.result, result, source=baseline.source)
        results_path = out / "results.json"
        problems = _write_outputs(result, results_path, formats)
        console.report(result, None if problems and not results_path.is_file() else str(results_path))
        for problem in problems:
            _usage(problem)
        if result.baseline is not None:
            console.note(f"compared with {baseline.source}: {headline(result.baseline)}")
    if signals.exit_code:
        return exit_abandoning(signals.exit_code)
    if problems:
        return 2  # the checks ran, but what they found is not all on disk
    return 1 if failed_by(result, args.fail_on) else 0


def _write_outputs(result, results_path: Path, formats: list[str] | None) -> list[str]:
    """results.json first (the run itself), then the reports, each whatever befell the others;
    returns what could not be written."""
    from litmus.report import write_reports
    from litmus.results import OutputError, write_results

    problems = []
    try:
        write_results(results_path, result)
    except OSError as exc:
        problems.append(f"could not write {results_path}: {exc.strerror or exc}")
    try:
        write_reports(result, results_path.parent, formats)
    except OutputError as exc:
        problems.append(str(exc))
    return problems


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
    """Why the --suite/--flow filters select nothing they name (None: each names something)."""
    known = {s.name for s in suites}
    missing = [n for n in suite_names if n not in known]
    if missing:
        return f"no suite named {', '.join(map(repr, missing))}; suites: {', '.join(sorted(known)) or '(none)'}"
    chosen = [s for s in suites if not suite_names or s.name in suite_names]
    flows = {f.name for s in chosen for f in s.flows}
    missing = [n for n in flow_names if n not in flows]
    if missing:
        return f"no flow named {', '.join(map(repr, missing))}; flows: {', '.join(sorted(flows)) or '(none)'}"
    empty = [s.name for s in chosen if suite_names and flow_names and not {f.name for f in s.flows} & set(flow_names)]
    if empty:
        return f"suite(s) {', '.join(map(repr, empty))} have no flow named {', '.join(map(repr, flow_names))}"
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
