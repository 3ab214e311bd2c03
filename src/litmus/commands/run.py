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
Secrets ({{ secrets.NAME }}) are shown as *** in everything the run prints or writes, and so are
{{ env.NAME }} values unless --env-allow NAME lists them (one line says which were masked).

Written to --out (default litmus-report/): results.json (the results document, see
docs/running.md) and the reports chosen with --format (default: all).

Nothing unchecked passes: a suite whose LLM-based assertions no judge evaluated (none configured,
or the judge.max_calls budget ran out) fails, saying how many and why. --no-judge is the explicit
choice of deterministic checks only: those assertions are then skipped, counted and said. An
assertion marked `critical: true` fails its flow run whatever the Intent Evaluation says.

--update-references then writes each scenario's reply as its new reference answer (see
`litmus accept-references --help`): review the diff and commit it; the next run judges against it.

Exit status: 0 every suite passed (per --fail-on), 1 not (or --update-references refused), 2 usage
or probe errors (no suite found, a --suite/--flow filter that matches nothing, litmus.yaml errors
included), an --out folder
that cannot be written (checked before any request), or an output file that could not be written
(results.json is written first, each report whatever befell the others), 130/143 interrupted by
SIGINT/SIGTERM (partial results are still written, marked interrupted).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from litmus.compare import MAX_COST_INCREASE
from litmus.config import add_config_arguments
from litmus.errors import ProbeError, render_diagnostics
from litmus.load import repo_root
from litmus.load.run_vars import base_url_override, run_vars
from litmus.numbers import number_argument as _number
from litmus.report.options import add_sarif_category_argument
from litmus.results import DEFAULT_OUT, ResultsError, load_results
from litmus.run.rate import RATE_LIMIT_BOUNDS, parse_rate_limit
from litmus.trust import Trust, never_resolves

if TYPE_CHECKING:
    from litmus.trust import Trust

FAIL_ON = ("suite", "assertion", "new", "never")
# Beyond these a value is a typo, not a setting: threads, one step's time (a job's 6-hour limit), a body held
# in memory, reconnections of one request.
MAX_CONCURRENCY = 1_000
MAX_TIMEOUT_MS = 6 * 3600 * 1000
MAX_BODY_BYTES = 1024 ** 3
MAX_TRANSPORT_RETRIES = 100


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
    parser.add_argument("--env-allow", action="append", default=[], metavar="NAME",
                        help="show {{ env.NAME }} values in the outputs: every other env value is masked as *** "
                             "(repeatable or comma-separated) [LITMUS_ENV_ALLOW]")
    parser.add_argument("--out", metavar="DIR", default=DEFAULT_OUT,
                        help=f"where results.json and the reports go (default: {DEFAULT_OUT}/)")
    parser.add_argument("--format", action="append", metavar="FORMATS",
                        help="report formats, comma-separated or repeated: sarif, junit, markdown, html, summary "
                             "(default: all)")
    add_sarif_category_argument(parser)
    parser.add_argument("--concurrency", type=_number(whole=True, low=1, high=MAX_CONCURRENCY), default=4, metavar="N",
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
    parser.add_argument("--max-cost-increase", metavar="PCT",
                        type=_number(whole=False, low=0, high=MAX_COST_INCREASE, unit="percent"),
                        help="with --baseline: a flow whose cost per run (its tokens, where a step is unpriced) rose "
                             "more than PCT percent regressed, and fails the run under every --fail-on but never "
                             "(docs/cost.md)")
    parser.add_argument("--shard", type=_shard, metavar="K/N",
                        help="run only the K-th of N balanced, stable slices of the flow runs (1 <= K <= N)")
    parser.add_argument("--timeout-ms", default=30_000, metavar="MS",
                        type=_number(whole=False, low=0, above_low=True, high=MAX_TIMEOUT_MS, unit="milliseconds"),
                        help="per-step timeout where a step sets no timeout_ms (default: 30000); it bounds the "
                             "whole exchange: connecting, headers, redirects and body")
    parser.add_argument("--max-body-bytes", type=_number(whole=True, low=1, high=MAX_BODY_BYTES),
                        default=10 * 1024 * 1024, metavar="BYTES",
                        help="response bodies are read up to this size, then marked truncated; a stream (stream:) cut "
                             "there is an error (default: 10 MiB)")
    parser.add_argument("--transport-retries", type=_number(whole=True, low=0, high=MAX_TRANSPORT_RETRIES), default=0,
                        metavar="N",
                        help="retry connection failures of idempotent requests N times (default: 0); "
                             "a failed assertion is never retried (use a step's retry: for polling). "
                             "Without it too, an idempotent request that met a pooled connection the server had "
                             "closed is sent once more on a new one")
    parser.add_argument("--rate-limit", type=_number(**RATE_LIMIT_BOUNDS),
                        metavar="N",
                        help="send at most N requests per second to each origin (scheme://host:port), every suite "
                             "together; a suite's rate_limit: for an origin also holds, the stricter wins "
                             "[LITMUS_RATE_LIMIT]. A 429 or 503 is waited out (Retry-After, else backoff) and the "
                             "request sent again within the step's timeout_ms (docs/running.md)")
    parser.add_argument("--update-references", action="store_true",
                        help="after the run, write each scenario's reply (the one its accurate_with_scenario_context "
                             "assertion judged) as its new reference, as `litmus accept-references` does; refused, "
                             "writing nothing, for cut, masked or disagreeing replies (exit status at least 1)")
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", action="store_true", help="print only the verdict line")
    loudness.add_argument("-v", "--verbose", action="store_true",
                          help="also print every flow run as it ends, skipped assertions and every mismatch")

    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from litmus.console import Console  # lazy: validate imports this module; the console costs 30 ms
    from litmus.pipeline import (  # lazy: 130 ms only a run needs (validate imports this module)
        ConsoleChannel,
        RunRefused,
        RunRequest,
        prepare,
    )
    from litmus.run.runner import RunOptions  # lazy: 130 ms only a run needs (validate imports this module)

    environ = os.environ
    console = Console(verbosity=-1 if args.quiet else 1 if args.verbose else 0, environ=environ)
    channel = ConsoleChannel(console)
    formats = _formats(args.format)
    if isinstance(formats, str):
        return _usage(formats)
    try:
        run_vars = read_run_vars(args)
        base_url, suite_base_urls = _base_urls(args.base_url)
        trust = _trust(args.env_allow, environ)
        rate_limit = args.rate_limit if args.rate_limit is not None else _rate_limit(environ)
    except ValueError as exc:
        return _usage(str(exc))
    except ProbeError as exc:
        print(render_diagnostics(exc.diagnostics), file=sys.stderr)
        return 2
    baseline = _baseline(args.baseline)
    if isinstance(baseline, str):
        return _usage(baseline)
    if args.max_cost_increase is not None and baseline is None:
        return _usage("--max-cost-increase compares with a baseline: give --baseline too")
    options = RunOptions(
        base_url=base_url or environ.get("LITMUS_BASE_URL") or None, concurrency=args.concurrency,
        suites=tuple(args.suite), flows=tuple(args.flow), shard=args.shard, fail_on=args.fail_on,
        max_body_bytes=args.max_body_bytes, transport_retries=args.transport_retries, timeout_ms=args.timeout_ms,
        run_vars=run_vars, suite_base_urls=suite_base_urls, trust=trust, rate_limit=rate_limit,
    )
    request = RunRequest(paths=args.paths, root=repo_root(), out_dir=Path(args.out), options=options,
                         config_args=args, environ=environ, formats=formats, baseline=baseline, named_anywhere=True,
                         max_cost_increase=args.max_cost_increase,
                         sarif_category=args.sarif_category)
    try:
        suites, _config, judge = prepare(request, channel)
    except RunRefused as exc:
        return 2 if exc.reported else _usage(str(exc))
    return _execute(request, channel, console, suites, judge, update_references=args.update_references)


def read_run_vars(args: argparse.Namespace) -> dict:
    """`--vars-file` then `--var` values (ValueError or ProbeError when malformed)."""
    return run_vars(args.vars_file, args.var)


def _rate_limit(environ) -> float | None:
    """LITMUS_RATE_LIMIT, read as --rate-limit is (ValueError naming the variable when it is not a rate)."""
    text = environ.get("LITMUS_RATE_LIMIT", "").strip()
    if not text:
        return None
    try:
        return parse_rate_limit(text)
    except ValueError as exc:
        raise ValueError(f"LITMUS_RATE_LIMIT: {exc}") from None


def _trust(env_allow: list[str], environ) -> Trust:
    """A local run's trust: the operator's own files; `--env-allow` (else LITMUS_ENV_ALLOW) lists the
    env values shown in the outputs (ValueError for a name that never resolves: listing it does nothing)."""
    given = env_allow or [environ.get("LITMUS_ENV_ALLOW", "")]
    names = [name.strip() for text in given for name in text.split(",") if name.strip()]
    refused = [name for name in names if never_resolves(name)]
    if refused:
        raise ValueError(f"--env-allow {', '.join(refused)}: never resolves, whatever is allowed (the action's "
                         "credentials reach no template)")
    return Trust.local(env_allow=names)


def _base_urls(given: list[str]) -> tuple[str | None, dict[str, str]]:
    every, per_suite = None, {}
    for text in given:
        suite, url = base_url_override(text)
        if suite is None:
            every = url
        else:
            per_suite[suite] = url
    return every, per_suite


def _baseline(given: str | None):
    """None, the base deployment to run against, a loaded results document, or a usage error message."""
    from litmus.pipeline import Baseline  # lazy: 130 ms only a run needs (validate imports this module)

    if not given:
        return None
    if re.match(r"(?i)https?://", given):
        return Baseline(url=given)

    try:
        return Baseline(result=load_results(given), source=given)
    except ResultsError as exc:
        return f"--baseline: {exc}"


def _execute(request, channel, console, suites, judge, *, update_references: bool = False) -> int:

    from litmus.pipeline import execute  # lazy: 130 ms only a run needs (validate imports this module)
    from litmus.run.signals import (  # lazy: 130 ms only a run needs (validate imports this module)
        StopOnSignals,
        exit_abandoning,
    )
    from litmus.verdict import exit_code  # lazy: 130 ms only a run needs (validate imports this module)

    options = request.options
    # The suites, and then the results, live until the process exits: frozen, the cyclic GC stops
    # re-scanning them at every full collection (0.1-0.16 s each at 1000 steps).
    gc.freeze()
    if request.baseline is not None and request.baseline.url:
        console.note(f"baseline: running the suites against {request.baseline.url}")
    # The handlers stay on while results and reports are written: a signal then must not cut a report.
    with StopOnSignals(options.stop, options.abort) as signals:
        output = execute(request, channel, suites, judge)
        results_path = output.paths.get("results")
        console.report(output.result, str(results_path) if results_path else None)
        for problem in output.problems:
            _usage(problem)
    if signals.exit_code:
        return exit_abandoning(signals.exit_code)
    if output.problems:
        return 2  # the checks ran, but what they found is not all on disk
    status = exit_code(output.result, options.fail_on)
    if update_references:
        from litmus.commands.accept_references import accept  # lazy: only this option needs it

        # The run's own status stands (it judged against the old references); a refusal makes it at least 1.
        return max(status, accept(output.result, suites, request.root, prog="litmus run --update-references"))
    return status


def _formats(given: list[str] | None) -> list[str] | None | str:
    """The chosen report formats (None = all), or a usage error message."""
    from litmus.report import (  # lazy: 130 ms only a run needs (validate imports this module)
        UnknownFormat,
        check_formats,
    )

    if not given:
        return None
    names = [name.strip() for value in given for name in value.split(",") if name.strip()]

    try:
        return check_formats(names)
    except UnknownFormat as exc:
        return str(exc)


def _usage(message: str) -> int:
    from litmus.console import clean  # lazy: validate imports this module; the console costs 30 ms

    print(f"litmus run: error: {clean(message)}", file=sys.stderr)
    return 2


def _shard(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N with 1 <= K <= N (e.g. 2/4)")
    return int(match.group(1)), int(match.group(2))



