"""`run_suites`: plan the flow runs (filters, shard), run them concurrently, and assemble the results.

Flow runs execute in a thread pool (`concurrency`), each step of a run in order; results come
back in plan order (suite, flow, scenario, repetition) whatever finished first. When `options.stop`
is set (SIGINT/SIGTERM, see `litmus.run.signals`), no new flow run starts, running ones get
`GRACE_S` to finish their current step and are then abandoned (at once when `options.abort` is set),
and the result says `interrupted`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from litmus import __version__, usage
from litmus.assertions.python_worker import PythonWorker
from litmus.deadline import Deadline
from litmus.load.data_rows import scenarios as scenarios_of
from litmus.model import Suite
from litmus.openapi.coverage import coverage
from litmus.results import (
    FlowRunResult,
    IntentEvaluation,
    JudgeTotals,
    RunInfo,
    RunResult,
    SuiteResult,
    Tool,
    Totals,
)
from litmus.run.flow import PlannedRun, RunEnvironment, run_flow
from litmus.run.http import DEFAULT_MAX_BODY_BYTES, HttpClient
from litmus.run.rate import Rate, RateLimiter
from litmus.run.redact import Redactor, masks_env_value
from litmus.run.signals import GRACE_S
from litmus.run.suite_run import TEARDOWN_GRACE_S, SuiteRunResult, run_suite
from litmus.templating import references
from litmus.trust import Trust, origin
from litmus.usage import Price
from litmus.verdict import FailOn, decide_run, decide_suite, stamp


@dataclass
class RunOptions:
    # Overrides every suite's `base_url`.
    base_url: str | None = None
    concurrency: int = 4
    # Only these suites / flows (by name); empty = all.
    suites: tuple[str, ...] = ()
    flows: tuple[str, ...] = ()
    # (k, n): run the k-th (1-based) of n balanced shards.
    shard: tuple[int, int] | None = None
    fail_on: FailOn = "suite"
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    # Retries of connection failures of idempotent requests (never of failed assertions).
    transport_retries: int = 0
    # For steps that set no `timeout_ms` (neither themselves nor through suite defaults).
    timeout_ms: float = 30_000
    # Set it to stop the run cleanly (no new flow runs; running ones stop after their current step,
    # or are abandoned after GRACE_S); set `abort` too to abandon them at once.
    stop: threading.Event = field(default_factory=threading.Event)
    # --no-judge / judge.provider none: LLM-based assertions are skipped on purpose, not for want of a judge.
    judge_disabled: bool = False
    # `--var` / `--vars-file` values, and `--base-url SUITE=URL` overrides.
    run_vars: Mapping[str, Any] = field(default_factory=dict)
    suite_base_urls: Mapping[str, str] = field(default_factory=dict)
    # Set with `stop` to abandon the flow runs in progress at once (a second SIGINT).
    abort: threading.Event = field(default_factory=threading.Event)
    # The run's one trust decision (litmus.trust): what the untrusted policy allows.
    trust: Trust = field(default_factory=Trust.local)
    # --rate-limit: requests per second to each origin, whatever the suites say (the stricter wins).
    rate_limit: float | None = None
    # litmus.yaml's `pricing:` (the base commit's in an untrusted run): model -> USD per million tokens.
    pricing: Mapping[str, Price] = field(default_factory=dict)


@dataclass
class RunEvent:
    """Progress for the terminal: `started` (total known), then one `flow_run` per finished flow run."""

    kind: Literal["started", "flow_run", "finished"]
    total: int
    done: int = 0
    suite: Suite | None = None
    flow_run: FlowRunResult | None = None


def selected_suites(suites: Iterable[Suite], options: RunOptions) -> list[Suite]:
    """The suites the --suite/--flow filters keep: a suite none of whose flows is chosen is left out
    of the run and of every output (never reported as passed)."""
    return [
        suite for suite in suites
        if (not options.suites or suite.name in options.suites)
        and (not options.flows or any(flow.name in options.flows for flow in suite.flows))
    ]


def plan(suites: Iterable[Suite], options: RunOptions) -> list[PlannedRun]:
    """Every flow run to execute, in result order, after the suite/flow filters and the shard."""
    selected = [s for s in suites if not options.suites or s.name in options.suites]
    keep = shard_keys(selected, options)
    return [p for suite in selected for p in iter_plan(suite, options, keep)]


def iter_plan(suite: Suite, options: RunOptions, keep: set[str] | None) -> Iterator[PlannedRun]:
    """One suite's flow runs in result order, made as they are asked for (rows of a scenarios file
    are read as the run goes); `keep`: only these keys (the shard's), None for all."""
    for flow in suite.flows:
        if options.flows and flow.name not in options.flows:
            continue
        context = suite.context_of(flow)
        for scenario in (scenarios_of(context) if context else (None,)):
            for index in range(flow.runs):
                planned = PlannedRun(suite, flow, scenario, index)
                if keep is None or planned.key in keep:
                    yield planned


def shard_keys(suites: list[Suite], options: RunOptions) -> set[str] | None:
    """The keys of the flow runs in this shard (None: no shard, all of them)."""
    if options.shard is None:
        return None
    k, n = options.shard
    keys = [p.key for suite in suites for p in iter_plan(suite, options, None)]
    # Sort by a hash of the identity and deal round-robin: stable across machines, shards differ by <= 1.
    dealt = sorted(keys, key=lambda key: (hashlib.sha256(key.encode()).hexdigest(), key))
    return set(dealt[k - 1:: n])


def _planned_count(suites: list[Suite], options: RunOptions, keep: set[str] | None) -> int:
    if keep is not None:
        return len(keep)
    return sum(flow.runs * (suite.context_of(flow).count if suite.context_of(flow) else 1)
               for suite in suites for flow in suite.flows if not options.flows or flow.name in options.flows)


def run_suites(
    suites: list[Suite],
    options: RunOptions,
    *,
    judge: Any = None,
    environ: Mapping[str, str] = os.environ,
    on_event: Callable[[RunEvent], None] | None = None,
    redactor: Redactor | None = None,
) -> RunResult:
    started_at = _now()
    redactor = redactor or Redactor()
    selected = selected_suites(suites, options)
    for name, value in secret_items(selected, environ):
        redactor.register(value, name=name)
    # The judge's credentials too: a probe may send `{{ env.OPENAI_API_KEY }}` (or the action's
    # LITMUS_JUDGE_API_KEY), which no `secrets.` reference marks as secret; and a Vertex access token is issued
    # during the run, after this.
    if hasattr(judge, "mask_with"):
        judge.mask_with(redactor)
    for _, value in masked_env_items(selected, environ, options.trust):
        redactor.register_env(value)
    keep = shard_keys(selected, options)
    total = _planned_count(selected, options, keep)
    emit = on_event or (lambda event: None)
    emit(RunEvent("started", total=total))
    client = HttpClient(pool_size=options.concurrency, transport_retries=options.transport_retries,
                        max_body_bytes=options.max_body_bytes,
                        # A trusted run may reach any origin: no check per request.
                        origin_allowed=None if options.trust.runs_pr_code else options.trust.origin_allowed)
    env = RunEnvironment(client=client, base_url=options.base_url, environ=environ, redactor=redactor,
                         judge=judge, stop=options.stop, abort=options.abort, timeout_ms=options.timeout_ms,
                         judge_disabled=options.judge_disabled, run_vars=options.run_vars,
                         suite_base_urls=options.suite_base_urls, trust=options.trust,
                         python_worker=PythonWorker(environ, options.trust.env_allow),
                         limiter=_limiter(selected, options), pricing=options.pricing)
    try:
        results, suite_runs = _run_all(selected, options, keep, env, total, emit)
    finally:
        client.close()
        env.python_worker.close()
    suite_results = _suite_results(selected, results, suite_runs)
    result = RunResult(
        run=_run_info(options, started_at, environ),
        verdict="failed",  # decided below, once the run knows whether it was interrupted
        tool=Tool(name="litmus", version=__version__),
        judge=_judge_totals(judge),
        suites=suite_results,
        totals=Totals(target=usage.target_totals(suite_results),
                      judge=usage.judge_totals(getattr(judge, "calls_by_model", dict)(), options.pricing)),
    )
    result.run.interrupted = options.stop.is_set()
    decide_run(result)
    # Last, once every verdict is decided; it masks free text only (see `litmus.run.redact`).
    redactor.redact_in_place(result)
    # After masking, which must never touch an identity.
    stamp(result)
    emit(RunEvent("finished", total=total, done=sum(len(s.flow_runs) for s in suite_results)))
    return result


def _limiter(suites: list[Suite], options: RunOptions) -> RateLimiter:
    """The run's rate limiter, each suite's `rate_limit:` already set on the origin of its base URL (when it
    is not a template), so that every suite's requests there keep to it from the first one. A suite's other
    origins (absolute URLs, a templated base_url) take its limit on its first request to them."""
    limiter = RateLimiter(Rate(options.rate_limit) if options.rate_limit else None)
    for suite in suites:
        base = options.suite_base_urls.get(suite.name) or options.base_url or suite.base_url or ""
        rate = Rate.of(suite)
        if rate is not None and "{{" not in base and (found := origin(base)) is not None:
            limiter.limit(found, rate)
    return limiter


def _run_all(suites: list[Suite], options: RunOptions, keep: set[str] | None, env: RunEnvironment, total: int,
             emit: Callable[[RunEvent], None]) -> tuple[dict[int, dict[int, FlowRunResult]], dict[int, SuiteRunResult]]:
    """Each suite's run (see `litmus.run.suite_run`) on its own coordinating thread, their flow runs
    on one shared pool; finished flow runs come back here, to this thread, for the progress events.

    After a stop the flow runs in progress get GRACE_S (then the suites' teardowns their own grace);
    after `abort`, nothing more is waited for. What is still running then is abandoned, not joined:
    a judge or target call may take minutes."""
    workers = max(1, options.concurrency)
    finished: queue.Queue = queue.Queue()
    results: dict[int, dict[int, FlowRunResult]] = {id(s): {} for s in suites}
    suite_runs: dict[int, SuiteRunResult] = {}
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="litmus-run")
    coordinators = ThreadPoolExecutor(max_workers=max(1, min(len(suites), workers)), thread_name_prefix="litmus-suite")

    def coordinate(suite: Suite) -> None:
        try:
            suite_runs[id(suite)] = run_suite(
                suite, enumerate(iter_plan(suite, options, keep)), env, pool, _run_one,
                lambda index, flow_run: finished.put((suite, index, flow_run)), window=2 * workers)
        finally:
            finished.put(None)

    done = 0
    # Teardown after an interruption has its own bounded grace period (suite_run.TEARDOWN_GRACE_S).
    grace = GRACE_S + (TEARDOWN_GRACE_S if any(suite.teardown for suite in suites) else 0)
    deadline = None
    try:
        running = [coordinators.submit(coordinate, suite) for suite in suites]
        remaining = len(running)
        while remaining:
            try:
                # Short waits: a signal only sets an event, which must be seen within a tenth of a second.
                item = finished.get(timeout=0.1)
            except queue.Empty:
                item = False
            if item is None:
                remaining -= 1
            elif item:
                suite, index, flow_run = item
                results[id(suite)][index] = flow_run
                done += 1
                emit(RunEvent("flow_run", total=total, done=done, suite=suite, flow_run=flow_run))
            if options.stop.is_set():
                deadline = deadline or Deadline.after(grace)
                if options.abort.is_set() or deadline.expired:
                    break
        else:
            for future in running:
                future.result()  # a coordinator's own failure is a bug: surface it
    finally:
        stopped = options.stop.is_set()
        pool.shutdown(wait=not stopped, cancel_futures=stopped)
        coordinators.shutdown(wait=not stopped, cancel_futures=stopped)
    return results, suite_runs


def _run_one(planned: PlannedRun, env: RunEnvironment) -> FlowRunResult | None:
    if env.stop.is_set():
        return None
    try:
        return run_flow(planned, env)
    except Exception as exc:  # noqa: BLE001 - a bug in one flow run must not lose the others' results
        return FlowRunResult(
            flow=planned.flow.name, line=planned.flow.pos.line, run_index=planned.run_index,
            scenario=planned.scenario.id if planned.scenario else None,
            intent_evaluation=IntentEvaluation(status="error", method="deterministic",
                                               reason=f"internal error: {type(exc).__name__}: {exc}"),
        )


def _suite_results(suites: list[Suite], results: dict[int, dict[int, FlowRunResult]],
                   suite_runs: dict[int, SuiteRunResult]) -> list[SuiteResult]:
    out = []
    for suite in suites:
        flow_runs = [results[id(suite)][index] for index in sorted(results[id(suite)])]
        suite_run = suite_runs.get(id(suite), SuiteRunResult())
        # No flow run here (another shard has them all, or the run stopped first): nothing failed,
        # so the suite passes with rate 100; `litmus merge` decides over the union.
        result = SuiteResult(
            name=suite.name, file=suite.file, line=suite.pos.line, intent=suite.intent,
            pass_threshold=suite.pass_threshold, pass_rate=100.0, verdict="passed", flow_runs=flow_runs,
            setup=suite_run.setup, teardown=suite_run.teardown,
        )
        if suite.openapi is not None:
            steps = [*result.setup, *(step for run in flow_runs for step in run.steps), *result.teardown]
            result.openapi = coverage(suite.openapi, steps)
        decide_suite(result)
        out.append(result)
    return out


def secret_values(suites: list[Suite], environ: Mapping[str, str], trust: Trust | None = None) -> Iterable[str]:
    """Values the run will mask, to mask before anything runs: every `{{ secrets.NAME }}` the suites
    mention, and every `{{ env.NAME }}` value `trust` (default: a local run's) masks."""
    items = [*secret_items(suites, environ), *masked_env_items(suites, environ, trust or Trust.local())]
    return [value for _, value in items]


def secret_items(suites: list[Suite], environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(NAME, value) of every `{{ secrets.NAME }}` the suites mention that the environment sets."""
    return [(name, environ[name]) for name in _mentioned(suites, "secrets") if name in environ]


def masked_env_items(suites: list[Suite], environ: Mapping[str, str], trust: Trust) -> list[tuple[str, str]]:
    """(NAME, value) of every `{{ env.NAME }}` the suites mention whose value is masked in every output:
    set, readable, not in env-allow, and long enough to be a credential (`redact.masks_env_value`)."""
    return [(name, environ[name]) for name in _mentioned(suites, "env")
            if name in environ and trust.may_resolve(name) and trust.masks_env(name)
            and masks_env_value(environ[name])]


def env_mask_notice(names: Iterable[str], allow: str) -> str | None:
    """The run's one notice about masked `env.` values (None when none is), `allow` saying how to list a
    name: `--env-allow` for `litmus run`, the `env-allow` input in the action."""
    names = sorted(set(names))
    if not names:
        return None
    return f"env values masked in every output: {', '.join(names)} (list a name in {allow} to show it)"


def _mentioned(suites: list[Suite], namespace: str) -> list[str]:
    """The NAMEs of every `{{ namespace.NAME }}` (env or secrets) in the suites, in order of first mention."""
    names: dict[str, None] = {}
    for suite in suites:
        names.update(dict.fromkeys(_credential_names(_Identity(suite)).get(namespace, ())))
    return list(names)


class _Identity:
    """A key that is its object's identity: suites are frozen, so what a scan found in one stays true, and the
    cache's reference keeps the suite (and so its id) alive."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Identity) and other.obj is self.obj


@functools.lru_cache(maxsize=64)
def _credential_names(suite: _Identity) -> dict[str, tuple[str, ...]]:
    """`env` and `secrets` -> the names a suite mentions, from one scan (a run asks for both, several times)."""
    found: dict[str, dict[str, None]] = {"env": {}, "secrets": {}}
    # A suite's repr holds every string in it; scanning it is far cheaper than walking the tree.
    for ref in references(repr(suite.obj)):
        if ref.namespace in found:
            found[ref.namespace][ref.name.split(".", 1)[1]] = None
    return {namespace: tuple(names) for namespace, names in found.items()}


def _judge_totals(judge: Any) -> JudgeTotals:
    if judge is None:
        return JudgeTotals()
    totals = judge.totals()
    return JudgeTotals(**totals) if isinstance(totals, Mapping) else totals


def _run_info(options: RunOptions, started_at: str, environ: Mapping[str, str]) -> RunInfo:
    return RunInfo(
        base_url=options.base_url, started_at=started_at, finished_at=_now(),
        git_sha=environ.get("GITHUB_SHA") or _git_head(),
        shard=f"{options.shard[0]}/{options.shard[1]}" if options.shard else None,
        repository=environ.get("GITHUB_REPOSITORY") or None,
        server_url=environ.get("GITHUB_SERVER_URL") or None,
        trusted=options.trust.trusted, trust_reason=options.trust.reason,
    )


def _git_head() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and sha else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
