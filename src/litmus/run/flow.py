"""One flow run: its steps in order, each step's request, extractions, assertions and retries.

Deterministic assertions are evaluated inline (pure, fast); LLM-based ones go to the judge's
executor so a step's judge calls run in parallel and overlap with other flow runs' HTTP work.
Outcomes keep the assertion order whatever finishes first.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from litmus import assertions
from litmus.assertions._common import bounded, errored, outcome
from litmus.assertions.base import EvalContext
from litmus.model import MISSING, Assertion, Flow, Scenario, Step, Suite
from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    RequestExcerpt,
    ResponseExcerpt,
    StepResult,
)
from litmus.run.extract import NotExtracted, extract
from litmus.run.http import HttpClient, OutgoingRequest, TransportError
from litmus.run.redact import MASK, SENSITIVE_HEADERS, Redactor
from litmus.run.response import Response
from litmus.run.templating import Renderer, TemplateError

# Bodies in results are excerpts: enough to debug, small enough for a PR comment's source.
EXCERPT_CHARS = 4096
NOT_PASSED = frozenset({"failed", "error", "needs_review"})


@dataclass(frozen=True)
class PlannedRun:
    """The identity of one flow run: which suite, flow, scenario and repetition."""

    suite: Suite
    flow: Flow
    scenario: Scenario | None
    run_index: int

    @property
    def key(self) -> str:
        scenario = self.scenario.id if self.scenario else ""
        return "\x1f".join((self.suite.name, self.flow.name, scenario, str(self.run_index)))


@dataclass
class RunEnvironment:
    """What every flow run of one `litmus run` shares."""

    client: HttpClient
    base_url: str | None
    environ: Mapping[str, str]
    redactor: Redactor
    judge: Any = None
    stop: threading.Event = field(default_factory=threading.Event)
    # Used for steps that did not set `timeout_ms` themselves (nor through suite defaults).
    timeout_ms: float = 30_000


def run_flow(planned: PlannedRun, env: RunEnvironment) -> FlowRunResult:
    started = time.perf_counter()
    suite = planned.suite
    variables: dict[str, Any] = {}
    renderer = Renderer(suite, scenario=planned.scenario, run_index=planned.run_index, variables=variables,
                        environ=env.environ, redactor=env.redactor)
    session = env.client.session()  # never closed: closing a Session closes the shared pool
    steps: list[StepResult] = []
    stopped: str | None = None
    for step in planned.flow.steps:
        if stopped is None and env.stop.is_set():
            stopped = "run interrupted before this step"
        if stopped is not None:
            steps.append(_skipped_step(step, stopped))
            continue
        result, stop_reason = _run_step(step, planned, env, renderer, session, variables)
        steps.append(result)
        stopped = stop_reason
    flow_run = FlowRunResult(
        flow=planned.flow.name, line=planned.flow.pos.line, run_index=planned.run_index,
        scenario=planned.scenario.id if planned.scenario else None,
        intent_evaluation=IntentEvaluation(status="error", method="deterministic", reason="not evaluated"),
        steps=steps,
    )
    flow_run.intent_evaluation = _evaluate_intent(planned, flow_run, env)
    flow_run.duration_ms = round((time.perf_counter() - started) * 1000, 1)
    return flow_run


def _run_step(step: Step, planned: PlannedRun, env: RunEnvironment, renderer: Renderer, session,
              variables: dict[str, Any]) -> tuple[StepResult, str | None]:
    """The step's result, and why the rest of the flow run is skipped (None: go on)."""
    try:
        out = _render_request(step, planned.suite, renderer, env)
        prepared = env.client.prepare(session, out)
    except (TemplateError, ValueError) as exc:
        position = step.request.pos if step.request else step.pos
        message = f"{position}: {exc}"
        return _error_step(step, message, None, None), f"step '{step.name}' could not be sent"
    attempts = step.retry.attempts if step.retry else 1
    for attempt in range(1, attempts + 1):
        try:
            response = env.client.send(session, prepared, out)
        except TransportError as exc:
            result = _error_step(step, str(exc), _request_excerpt(prepared), exc.partial)
            result.attempts = attempt
            return result, f"step '{step.name}' got no response"
        env.redactor.register_cookies(session.cookies)
        extracted = _extract(step, response, env.redactor)
        ctx = EvalContext(
            response=response, suite=planned.suite, variables={**variables, **extracted},
            scenario=planned.scenario, render=renderer.render, redact=env.redactor.redact, judge=env.judge,
        )
        deterministic = {
            i: evaluate_isolated(a, ctx) for i, a in enumerate(step.assertions)
            if not assertions.spec(a.type).llm_based
        }
        if attempt == attempts or all(o.status == "passed" for o in deterministic.values()):
            break
        if env.stop.wait(step.retry.interval_ms / 1000):
            break  # interrupted: report this attempt
        prepared = env.client.prepare(session, out)  # cookies set by the last attempt go along
    variables.update(extracted)
    outcomes, stop_flow_reason = _ordered_outcomes(step, deterministic, ctx, planned, env)
    status = "failed" if any(o.status in NOT_PASSED for o in outcomes) else "passed"
    result = StepResult(
        name=step.name, line=step.pos.line, status=status, request=_request_excerpt(prepared),
        response=_response_excerpt(response), attempts=attempt,
        extracted={k: bounded(v) for k, v in extracted.items()}, assertions=outcomes,
    )
    return result, stop_flow_reason


def _ordered_outcomes(step: Step, deterministic: dict[int, AssertionOutcome], ctx: EvalContext,
                      planned: PlannedRun, env: RunEnvironment) -> tuple[list[AssertionOutcome], str | None]:
    """Apply on_failure in assertion order; LLM-based assertions run in the judge's executor."""
    results: list[AssertionOutcome | Future] = []
    skip_reason: str | None = None
    stop_flow: str | None = None
    for i, assertion in enumerate(step.assertions):
        if skip_reason is not None:
            results.append(outcome(assertion, "skipped", skip_reason))
            continue
        if i in deterministic:
            result = deterministic[i]
        else:
            reason = _judge_skip_reason(assertion, planned, env)
            if reason is not None:
                result = outcome(assertion, "skipped", reason)
            else:
                future = env.judge.executor.submit(evaluate_isolated, assertion, ctx)
                if assertion.on_failure == "continue":
                    results.append(future)
                    continue
                result = future.result()  # its outcome decides whether the rest runs
        results.append(result)
        if result.status in NOT_PASSED and assertion.on_failure != "continue":
            label = assertion.name or assertion.type
            skip_reason = f"{label} (line {assertion.pos.line}) did not pass; on_failure: {assertion.on_failure}"
            if assertion.on_failure == "stop_flow":
                stop_flow = f"step '{step.name}': {skip_reason}"
    return [r.result() if isinstance(r, Future) else r for r in results], stop_flow


def _judge_skip_reason(assertion: Assertion, planned: PlannedRun, env: RunEnvironment) -> str | None:
    if assertions.spec(assertion.type).family == "scenario" and planned.scenario is None:
        return "scenario-aware assertion, and this flow run has no scenario (the suite has no context)"
    if env.judge is None:
        return "no judge configured"
    return None


def evaluate_isolated(assertion: Assertion, ctx: EvalContext) -> AssertionOutcome:
    """The assertion's outcome; an evaluator that raises yields an `error` outcome, never a crash."""
    try:
        return assertions.module(assertion.type).evaluate(assertion, ctx)
    except TemplateError as exc:
        return errored(assertion, str(exc))
    except Exception as exc:  # noqa: BLE001 - isolation is the point: one assertion never breaks another
        return errored(assertion, f"could not evaluate: {type(exc).__name__}: {exc}")


def _extract(step: Step, response: Response, redactor: Redactor) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for extraction in step.extract:
        try:
            values[extraction.name] = extract(extraction, response, redactor)
        except NotExtracted:
            pass  # left unset: a later use says "never extracted" or "unknown template name"
        except (IndexError, ValueError, TypeError):
            pass  # e.g. a regex group the pattern does not have
    return values


def _render_request(step: Step, suite: Suite, renderer: Renderer, env: RunEnvironment) -> OutgoingRequest:
    request = step.request
    url = str(renderer.render(request.url))
    if "://" not in url:
        base = env.base_url or suite.base_url
        if not base:
            raise TemplateError(f"relative URL {url!r} needs a base URL (--base-url or the suite's base_url)")
        url = base.rstrip("/") + "/" + url.lstrip("/")
    headers = {str(k): _text(v) for k, v in renderer.render(request.headers).items()}
    query = {str(k): _query_value(v) for k, v in renderer.render(request.query).items()}
    out = OutgoingRequest(
        method=request.method.upper(), url=url, headers=headers, query=query,
        timeout_ms=request.timeout_ms if "timeout_ms" in request.field_pos else env.timeout_ms,
        follow_redirects=request.follow_redirects,
    )
    if request.json is not MISSING:
        out.json, out.has_json = renderer.render(request.json), True
    elif request.body is not None:
        out.data = _text(renderer.render(request.body)).encode("utf-8")
    elif request.form is not None:
        out.data = {str(k): _text(v) for k, v in renderer.render(request.form).items()}
    return out


def _text(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _query_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_text(v) for v in value]
    return _text(value)


def _evaluate_intent(planned: PlannedRun, flow_run: FlowRunResult, env: RunEnvironment) -> IntentEvaluation:
    if env.judge is not None and planned.suite.intent:
        # The judge reads a masked copy: the flow run itself is masked only after its verdict (runner).
        masked = copy.deepcopy(flow_run)
        env.redactor.redact_in_place(masked)
        try:
            return env.judge.executor.submit(
                env.judge.evaluate_intent, planned.suite, masked, planned.scenario
            ).result()
        except Exception as exc:  # noqa: BLE001 - a judge failure is recorded, not fatal
            return IntentEvaluation(status="error", method="judge", reason=f"intent evaluation failed: {exc}")
    return deterministic_intent(flow_run)


def deterministic_intent(flow_run: FlowRunResult) -> IntentEvaluation:
    """The fallback: the flow run passes when no assertion failed, errored or needs review."""
    counts = {"failed": 0, "error": 0, "needs_review": 0, "passed": 0, "skipped": 0}
    first: str | None = None
    for step in flow_run.steps:
        if step.status == "error":
            counts["error"] += 1
            first = first or f"step '{step.name}': {step.error}"
        for o in step.assertions:
            counts[o.status] += 1
            if o.status in NOT_PASSED and first is None:
                first = f"step '{step.name}' › {o.name or o.type}: {o.reason}"
    if first is None:
        return IntentEvaluation(
            status="passed", method="deterministic",
            reason=f"no assertion failed or errored ({counts['passed']} passed, {counts['skipped']} skipped)",
        )
    parts = [f"{counts[k]} {label}" for k, label in
             (("failed", "failed"), ("error", "errored"), ("needs_review", "need review")) if counts[k]]
    return IntentEvaluation(status="failed", method="deterministic", reason=f"{', '.join(parts)}; first: {first}")


def _skipped_step(step: Step, reason: str) -> StepResult:
    return StepResult(
        name=step.name, line=step.pos.line, status="skipped", attempts=0,
        assertions=[outcome(a, "skipped", reason) for a in step.assertions],
    )


def _error_step(step: Step, message: str, request: RequestExcerpt | None, partial: Response | None) -> StepResult:
    reason = f"no response: {message}"
    return StepResult(
        name=step.name, line=step.pos.line, status="error", error=message, request=request,
        response=_response_excerpt(partial) if partial is not None else None,
        assertions=[outcome(a, "skipped", reason) for a in step.assertions],
    )


def _masked(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: MASK if k.lower() in SENSITIVE_HEADERS else str(v) for k, v in headers.items()}


def _excerpt(text: str) -> tuple[str, bool]:
    return (text[:EXCERPT_CHARS], True) if len(text) > EXCERPT_CHARS else (text, False)


def _request_excerpt(prepared) -> RequestExcerpt:
    body = prepared.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    text, cut = _excerpt(body) if body is not None else (None, False)
    return RequestExcerpt(method=prepared.method, url=prepared.url, headers=_masked(prepared.headers),
                          body=text, body_truncated=cut)


def _response_excerpt(response: Response) -> ResponseExcerpt:
    # Decode only the head: a 10 MiB body is not decoded whole just to keep 4 KiB of it.
    head = response.body[: EXCERPT_CHARS * 4]
    text, cut = _excerpt(head.decode(response.encoding or "utf-8", errors="replace"))
    cut = cut or len(head) < len(response.body)
    return ResponseExcerpt(
        status=response.status, elapsed_ms=round(response.elapsed_ms, 1), headers=_masked(response.headers),
        body=text, size=len(response.body), truncated=response.truncated, body_excerpt_truncated=cut,
    )
