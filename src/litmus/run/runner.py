"""`run_suites`: plan the flow runs (filters, shard), run them concurrently, and assemble the results.

Flow runs execute in a thread pool (`concurrency`), each step of a run in order; results come
back in plan order (suite, flow, scenario, repetition) whatever finished first. When `options.stop`
is set (SIGINT/SIGTERM, see `litmus.run.signals`), no new flow run starts, running ones stop after
their current step, and the result says `interrupted`.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from litmus import __version__
from litmus.identity import stamp
from litmus.model import Suite
from litmus.results import (
    FlowRunResult,
    IntentEvaluation,
    JudgeTotals,
    RunInfo,
    RunResult,
    SuiteResult,
    Tool,
)
from litmus.run.flow import NOT_PASSED, PlannedRun, RunEnvironment, run_flow
from litmus.run.http import DEFAULT_MAX_BODY_BYTES, HttpClient
from litmus.run.redact import Redactor
from litmus.templating import references

FailOn = Literal["suite", "assertion", "new", "never"]


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
    # Set it to stop the run cleanly (no new flow runs; running ones stop after their current step).
    stop: threading.Event = field(default_factory=threading.Event)


@dataclass
class RunEvent:
    """Progress for the terminal: `started` (total known), then one `flow_run` per finished flow run."""

    kind: Literal["started", "flow_run", "finished"]
    total: int
    done: int = 0
    suite: Suite | None = None
    flow_run: FlowRunResult | None = None


def plan(suites: Iterable[Suite], options: RunOptions) -> list[PlannedRun]:
    """Every flow run to execute, in result order, after the suite/flow filters and the shard."""
    planned = [
        PlannedRun(suite, flow, scenario, index)
        for suite in suites if not options.suites or suite.name in options.suites
        for flow in suite.flows if not options.flows or flow.name in options.flows
        for scenario in (suite.context.scenarios if suite.context else (None,))
        for index in range(flow.runs)
    ]
    if options.shard is None:
        return planned
    k, n = options.shard
    # Sort by a hash of the identity and deal round-robin: stable across machines, shards differ by <= 1.
    dealt = sorted(planned, key=lambda p: (hashlib.sha256(p.key.encode()).hexdigest(), p.key))
    mine = {id(p) for p in dealt[k - 1:: n]}
    return [p for p in planned if id(p) in mine]


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
    selected = [s for s in suites if not options.suites or s.name in options.suites]
    # The judge's API keys too: a probe may send `{{ env.OPENAI_API_KEY }}` (or the action's
    # LITMUS_JUDGE_API_KEY), which no `secrets.` reference marks as secret.
    for value in [*secret_values(selected, environ), *getattr(judge, "secrets", ())]:
        redactor.register(value)
    runs = plan(selected, options)
    emit = on_event or (lambda event: None)
    emit(RunEvent("started", total=len(runs)))
    client = HttpClient(pool_size=options.concurrency, transport_retries=options.transport_retries,
                        max_body_bytes=options.max_body_bytes)
    env = RunEnvironment(client=client, base_url=options.base_url, environ=environ, redactor=redactor,
                         judge=judge, stop=options.stop, timeout_ms=options.timeout_ms)
    results: dict[int, FlowRunResult] = {}
    try:
        with ThreadPoolExecutor(max_workers=max(1, options.concurrency), thread_name_prefix="litmus-run") as pool:
            futures = {pool.submit(_run_one, planned, env): i for i, planned in enumerate(runs)}
            for future in as_completed(futures):
                index = futures[future]
                flow_run = future.result()
                if flow_run is None:
                    continue  # not started: the run was stopped first
                redactor.redact_in_place(flow_run)
                results[index] = flow_run
                emit(RunEvent("flow_run", total=len(runs), done=len(results), suite=runs[index].suite,
                              flow_run=flow_run))
    finally:
        client.close()
    suite_results = _suite_results(selected, runs, results)
    result = RunResult(
        run=_run_info(options, started_at, environ),
        verdict="passed" if all(s.verdict == "passed" for s in suite_results) else "failed",
        tool=Tool(name="litmus", version=__version__),
        judge=_judge_totals(judge),
        suites=suite_results,
    )
    if options.stop.is_set():
        result.run.interrupted = True
        result.verdict = "failed"  # an incomplete run proves nothing
    redactor.redact_in_place(result)
    # After masking, which must never touch an identity.
    stamp(result)
    emit(RunEvent("finished", total=len(runs), done=len(results)))
    return result


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


def _suite_results(suites: list[Suite], runs: list[PlannedRun],
                   results: dict[int, FlowRunResult]) -> list[SuiteResult]:
    by_suite: dict[int, list[FlowRunResult]] = {id(s): [] for s in suites}
    for index in sorted(results):
        by_suite[id(runs[index].suite)].append(results[index])
    out = []
    for suite in suites:
        flow_runs = by_suite[id(suite)]
        passed = sum(1 for f in flow_runs if f.intent_evaluation.status == "passed")
        # No flow run here (another shard has them all, or the run stopped first): nothing failed,
        # so the suite passes with rate 100; `litmus merge` decides over the union.
        rate = round(100 * passed / len(flow_runs), 2) if flow_runs else 100.0
        out.append(SuiteResult(
            name=suite.name, file=suite.file, line=suite.pos.line, intent=suite.intent,
            pass_threshold=suite.pass_threshold, pass_rate=rate,
            verdict="passed" if rate >= suite.pass_threshold else "failed", flow_runs=flow_runs,
        ))
    return out


def failed_by(result: RunResult, fail_on: FailOn) -> bool:
    """Whether the run counts as failed under `--fail-on`."""
    if fail_on == "never":
        return False
    if fail_on == "suite":
        return result.verdict == "failed"
    if fail_on == "new":
        from litmus.compare import has_new

        return result.run.interrupted or has_new(result)
    return result.run.interrupted or any(
        step.status == "error" or any(o.status in NOT_PASSED for o in step.assertions)
        for suite in result.suites for flow_run in suite.flow_runs for step in flow_run.steps
    )


def secret_values(suites: list[Suite], environ: Mapping[str, str]) -> Iterable[str]:
    """Values of every `{{ secrets.NAME }}` the suites mention, registered before anything runs."""
    names: dict[str, None] = {}
    for suite in suites:
        # A suite's repr holds every string in it; scanning it is far cheaper than walking the tree.
        for ref in references(repr(suite)):
            if ref.namespace == "secrets":
                names[ref.name.split(".", 1)[1]] = None
    return [environ[name] for name in names if name in environ]


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
    )


def _git_head() -> str | None:
    import subprocess

    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and sha else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
