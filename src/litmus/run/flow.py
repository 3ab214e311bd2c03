"""One flow run: its steps in order, each step's request, extractions, assertions and retries.

Deterministic assertions are evaluated inline (pure, fast); LLM-based ones go to the judge's
executor so a step's judge calls run in parallel and overlap with other flow runs' HTTP work.
Outcomes keep the assertion order whatever finishes first.
"""

from __future__ import annotations

import base64
import copy
import functools
import http.client
import json
import re
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from litmus import assertions, usage
from litmus.assertions._common import bounded, errored, not_judged, outcome
from litmus.assertions.base import EvalContext
from litmus.assertions.cookie import protected_values as protected_cookie_values
from litmus.deadline import Deadline, clock
from litmus.identity import conversation_finding_ids, step_finding_ids
from litmus.model import COOKIE_VALUE_REFUSED, MISSING, Assertion, Flow, Scenario, Step, Suite, Tls
from litmus.response import Response
from litmus.results import (
    WAIT_STATUSES,
    AssertionOutcome,
    Credentials,
    FlowRunResult,
    FormPart,
    IntentEvaluation,
    RateLimitWait,
    RequestExcerpt,
    ResponseExcerpt,
    StepResult,
    StreamEvent,
    StreamRecord,
    TlsOptions,
)
from litmus.run.conversation import JUDGING_OFF, History, Turn, UnreadableReply, turns
from litmus.run.extract import NotExtracted, extract
from litmus.run.http import (
    IDEMPOTENT_METHODS,
    MAX_REDIRECTS,
    FilePart,
    HttpClient,
    OutgoingRequest,
    TransportError,
    describe_body,
)
from litmus.run.rate import MAX_RESENDS, Rate, RateLimiter, RateLimitExceeded, retry_after
from litmus.run.redact import MASK, SENSITIVE_HEADERS, Redactor, encodings
from litmus.run.stream import StreamedResponse
from litmus.templating import Renderer, TemplateError, references
from litmus.trust import Trust, origin
from litmus.usage import Price
from litmus.verdict import NOT_PASSED, decide_flow_run

# Bodies in results are excerpts: enough to debug, small enough for a PR comment's source.
EXCERPT_CHARS = 4096
# A conversation turn's request keeps more: its body is the history, which its curl must send again.
CONVERSATION_REQUEST_CHARS = 65_536
# A streamed step's results keep its first events (the count says how many there were).
RECORDED_EVENTS = 100
RAW_STREAM_CHARS = 2048
# A URL is absolute only when it starts with a scheme: `/r?next=https://x` is relative.
ABSOLUTE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# GraphQL `errors` kept on a step: enough to see what went wrong.
MAX_GRAPHQL_ERRORS = 20


@dataclass(frozen=True)
class PlannedRun:
    """The identity of one flow run: which suite, flow, scenario and repetition."""

    suite: Suite
    flow: Flow
    scenario: Scenario | None
    run_index: int
    # What the suite's setup extracted (`{{ setup.NAME }}`); None when the suite has no setup.
    setup: Mapping[str, Any] | None = field(default=None, compare=False)

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
    # Set with `stop` (a second SIGINT): flow runs in progress are not waited for at all.
    abort: threading.Event = field(default_factory=threading.Event)
    # Used for steps that did not set `timeout_ms` themselves (nor through suite defaults).
    timeout_ms: float = 30_000
    # --no-judge: LLM-based assertions are skipped on purpose (they do not fail the suite).
    judge_disabled: bool = False
    # `--var` / `--vars-file` values (`{{ vars.NAME }}`).
    run_vars: Mapping[str, Any] = field(default_factory=dict)
    # `--base-url SUITE=URL`: per-suite overrides, winning over `base_url`.
    suite_base_urls: Mapping[str, str] = field(default_factory=dict)
    # When set, no request waits longer than this (teardown after an interruption).
    timeout_cap_ms: float | None = None
    # The run's one trust decision (litmus.trust): what the untrusted policy allows.
    trust: Trust = field(default_factory=Trust.local)
    # The run's process for `python` checks (litmus.assertions.python_worker), started on first use.
    python_worker: Any = None
    # id(step) -> (the step, the `secrets.` names its request mentions): a step's templates are the same in
    # every flow run, so they are read once per run (the step is kept so that its id stays its own).
    secret_names: dict[int, tuple[Step, tuple[str, ...]]] = field(default_factory=dict)
    # The run's one rate limiter (litmus.run.rate), shared by every suite.
    limiter: RateLimiter = field(default_factory=RateLimiter)
    # litmus.yaml's `pricing:`: prices each step's reported tokens (litmus.usage).
    pricing: Mapping[str, Price] = field(default_factory=dict)


def run_flow(planned: PlannedRun, env: RunEnvironment) -> FlowRunResult:
    flow = planned.flow
    if flow.skip or all(step.skip for step in flow.steps):
        # A flow run that sends nothing checks nothing: reported skipped, left out of the pass rate.
        return skipped_run(planned, flow.skip or "every step has skip:")
    started = time.perf_counter()
    history, variables = None, {}
    if planned.flow.conversation is None:
        steps, _ = run_steps(planned, env)
    else:
        steps, history, variables = _run_conversation(planned, env)
    flow_run = FlowRunResult(
        flow=planned.flow.name, line=planned.flow.pos.line, run_index=planned.run_index,
        scenario=planned.scenario.id if planned.scenario else None,
        intent_evaluation=IntentEvaluation(status="error", method="deterministic", reason="not evaluated"),
        steps=steps, transcript=history.transcript if history else None,
        usage=usage.total(step.usage for step in steps),
    )
    if history is not None:
        flow_run.conversation_assertions = _transcript_outcomes(planned, env, history, variables)
    flow_run.intent_evaluation = _evaluate_intent(planned, flow_run, env)
    decide_flow_run(flow_run)
    flow_run.duration_ms = round((time.perf_counter() - started) * 1000, 1)
    return flow_run


def run_steps(planned: PlannedRun, env: RunEnvironment,
              stop: threading.Event | None = None) -> tuple[list[StepResult], dict[str, Any]]:
    """The flow's steps in order (a flow run, or a suite's setup or teardown), and what they extracted.

    `stop` (default the run's) cuts the steps short; teardown passes its own, with a grace period.
    """
    stop = stop or env.stop
    variables: dict[str, Any] = {}
    renderer = Renderer(planned.suite, scenario=planned.scenario, run_index=planned.run_index, variables=variables,
                        environ=env.environ, redactor=env.redactor, run_vars=env.run_vars, setup=planned.setup,
                        trust=env.trust)
    session = env.client.session()  # never closed: closing a Session closes the shared pool
    steps: list[StepResult] = []
    stopped: str | None = None
    for step in planned.flow.steps:
        if stopped is None and stop.is_set():
            stopped = "run interrupted before this step"
        if stopped is not None or step.skip:
            steps.append(skipped_step(step, stopped or step.skip))
            continue
        try:
            result, stop_reason = _run_step(step, planned, env, renderer, session, variables, stop)
        except Exception as exc:  # noqa: BLE001 - a bug or a hostile body fails this step, never the flow run's record
            message = f"internal error: {_exception_text(exc)}"
            result = _error_step(step, message, None, None, skipped_because=f"step could not finish: {message}")
            stop_reason = f"step '{step.name}': {message}"
        steps.append(result)
        stopped = stop_reason
    return steps, variables


def _run_conversation(planned: PlannedRun,
                      env: RunEnvironment) -> tuple[list[StepResult], History, dict[str, Any]]:
    """A conversation flow's turns in order (what `run_steps` is for other flows), its history, and what
    its steps extracted."""
    variables: dict[str, Any] = {}
    renderer = Renderer(planned.suite, scenario=planned.scenario, run_index=planned.run_index, variables=variables,
                        environ=env.environ, redactor=env.redactor, run_vars=env.run_vars, setup=planned.setup,
                        trust=env.trust)
    session = env.client.session()  # never closed: closing a Session closes the shared pool
    conversation = planned.flow.conversation
    history = History(planned.flow, _text(renderer.render(conversation.system)) if conversation.system else None)

    def run_turn(step: Step, turn: Turn) -> tuple[StepResult, str | None]:
        try:
            return _run_step(step, planned, env, renderer, session, variables, env.stop, turn)
        except Exception as exc:  # noqa: BLE001 - a bug or a hostile body fails this turn, never the flow run's record
            message = f"internal error: {_exception_text(exc)}"
            return (_error_step(step, message, None, None, skipped_because=f"step could not finish: {message}"),
                    f"step '{step.name}': {message}")

    simulator = JUDGING_OFF if env.judge_disabled else env.judge or (
        "'simulate' needs a judge (litmus.yaml 'judge:', or --judge-provider replay with recorded turns)")
    steps = turns(planned.flow, history, run_turn, simulator, renderer.render, skipped_step,
                  lambda: "run interrupted before this step" if env.stop.is_set() else None)
    return steps, history, variables


def _transcript_outcomes(planned: PlannedRun, env: RunEnvironment, history: History,
                         variables: dict[str, Any]) -> list[AssertionOutcome]:
    """The flow's `conversation_assertions`, judged on the transcript (each in the judge's executor)."""
    judged = planned.flow.conversation_assertions
    if not judged:
        return []
    ids = dict(zip((a.pos for a in judged), conversation_finding_ids(
        planned.suite.name, planned.flow.name, planned.scenario.id if planned.scenario else None, judged),
        strict=True))
    renderer = Renderer(planned.suite, scenario=planned.scenario, run_index=planned.run_index, variables=variables,
                        environ=env.environ, redactor=env.redactor, run_vars=env.run_vars, setup=planned.setup,
                        trust=env.trust)
    ctx = EvalContext(response=None, suite=planned.suite, variables=variables, scenario=planned.scenario,
                      render=renderer.render, redact=env.redactor.redact, judge=env.judge,
                      run_index=planned.run_index, deadline=None, trust=env.trust, python_worker=env.python_worker,
                      finding_ids=ids)
    transcript = [dict(message) for message in history.transcript]
    pending: list[AssertionOutcome | Future] = []
    for assertion in judged:
        cause = _not_judged_cause(assertion, planned, env)
        pending.append(not_judged(assertion, cause) if cause is not None else
                       env.judge.executor.submit(_judge_transcript, env.judge, assertion, transcript, ctx))
    outcomes = [p.result() if isinstance(p, Future) else p for p in pending]
    for assertion, result in zip(judged, outcomes, strict=True):
        result.critical = result.critical or assertion.critical
    return outcomes


def _judge_transcript(judge, assertion: Assertion, transcript: list[dict], ctx: EvalContext) -> AssertionOutcome:
    """The judge's outcome on the transcript; a judge that raises yields an `error` outcome, never a crash."""
    try:
        return judge.evaluate_transcript(assertion, transcript, ctx)
    except Exception as exc:  # noqa: BLE001 - isolation: one assertion never breaks another
        return errored(assertion, f"could not evaluate: {_exception_text(exc)}")


def _run_step(step: Step, planned: PlannedRun, env: RunEnvironment, renderer: Renderer, session,
              variables: dict[str, Any], stop: threading.Event,
              turn: Turn | None = None) -> tuple[StepResult, str | None]:
    """The step's result, and why the rest of the flow run is skipped (None: go on).

    A conversation `turn` adds the history to the request; its reply (not the API's body) is what the
    assertions read, while extractions read the API's response (an id the server keeps the chat under)."""
    generated = renderer.begin_step()
    try:
        out = _render_request(step, planned.suite, renderer, env)
        if turn is not None:
            turn.sent = turn.given if turn.given is not None else _text(renderer.render(step.user))
            turn.history.shape(out, turn.sent)
        prepared = env.client.prepare(session, out)
    except (TemplateError, ValueError, OSError) as exc:
        position = step.request.pos if step.request else step.pos
        message = f"{position}: {exc}"
        result = _error_step(step, message, None, None)
        result.generated = dict(generated)
        return result, f"step '{step.name}' could not be sent"
    if step.request.delay_ms and stop.wait(step.request.delay_ms / 1000):
        return skipped_step(step, "run interrupted before this step"), "run interrupted before this step"
    attempts = step.retry.attempts if step.retry else 1
    transport_retries = 0
    waits: list[RateLimitWait] = []

    def sent() -> RequestExcerpt:
        return _request_excerpt(prepared, out, step, env, turn is not None)

    scenario_id = planned.scenario.id if planned.scenario else None
    finding_ids = dict(zip((a.pos for a in step.assertions), step_finding_ids(
        planned.suite.name, planned.flow.name, scenario_id, step.name, step.assertions), strict=True))
    for attempt in range(1, attempts + 1):
        try:
            response, prepared = _send(step, planned.suite, env, session, prepared, out, stop, waits)
        except TransportError as exc:
            result = _error_step(step, str(exc), sent(), exc.partial)
            result.attempts = attempt
            result.transport_retries = transport_retries + exc.retries
            result.rate_limited = waits
            result.generated = dict(generated)
            return result, f"step '{step.name}' got no response"
        transport_retries += response.transport_retries
        # HttpOnly / Secure cookies: masked in every output.
        env.redactor.register_cookie_values(protected_cookie_values(response.header_values("Set-Cookie")))
        # The step's timeout also bounds evaluating its assertions (regex searches, python calls).
        deadline = Deadline.after(out.timeout_ms / 1000)
        extracted, extract_error = _extract(step, response, env.redactor, deadline)
        checked = response
        if turn is not None:
            try:
                turn.reply = checked = turn.history.read(response)
            except UnreadableReply as exc:
                message = f"turn {turn.history.turn + 1}: {exc}"
                result = _error_step(step, message, sent(), response,
                                     skipped_because=f"no reply: {message}")
                result.attempts, result.transport_retries = attempt, transport_retries
                result.rate_limited = waits
                result.generated = dict(generated)
                return result, f"step '{step.name}': {message}"
        seen = {**variables, **extracted}
        metered = usage.meter(response, step.request, env.pricing)
        ctx = EvalContext(
            response=checked, suite=planned.suite, variables=seen, scenario=planned.scenario,
            # Assertions may use their own step's extractions, as the loader allows.
            render=renderer.seeing(seen).render, redact=env.redactor.redact, judge=env.judge,
            run_index=planned.run_index, deadline=deadline, trust=env.trust, python_worker=env.python_worker,
            finding_ids=finding_ids, request=prepared, metered=metered, pricing=env.pricing,
        )
        deterministic = {
            i: evaluate_isolated(a, ctx) for i, a in enumerate(step.assertions)
            if not assertions.spec(a.type).llm_based
        }
        if attempt == attempts or all(o.status == "passed" for o in deterministic.values()):
            break
        if stop.wait(step.retry.interval_ms / 1000):
            break  # interrupted: report this attempt
        prepared = env.client.prepare(session, out)  # cookies set by the last attempt go along
    variables.update(extracted)
    outcomes, stop_flow_reason = _ordered_outcomes(step, deterministic, ctx, planned, env)
    status = "failed" if any(o.status in NOT_PASSED for o in outcomes) else "passed"
    if extract_error:
        # The later steps would run without the variable: this step is the error, and the flow run stops.
        status, stop_flow_reason = "error", f"step '{step.name}': {extract_error}"
    result = StepResult(
        name=step.name, line=step.pos.line, status=status, request=sent(),
        response=_response_excerpt(response), attempts=attempt, transport_retries=transport_retries,
        rate_limited=waits, error=extract_error,
        extracted={k: bounded(v) for k, v in extracted.items()}, assertions=outcomes,
        stream=_stream_record(response), usage=metered.usage,
        generated=dict(generated), graphql_errors=_graphql_errors(response) if step.request.graphql else None,
        warnings=list(dict.fromkeys(ctx.warnings)),
    )
    return result, stop_flow_reason


def _send(step: Step, suite: Suite, env: RunEnvironment, session, prepared, out: OutgoingRequest,
          stop: threading.Event, waits: list[RateLimitWait]) -> tuple[Response, Any]:
    """The response to the step's request and the request last prepared: sent within the run's rate limits,
    a 429 or 503 waited out (recorded in `waits`) and the request sent again while the step's deadline
    (its timeout_ms, from here) allows. A wait past the deadline, or a request not to be sent again, is a
    TransportError holding the 429 / 503: an error naming the limit, never a pass."""
    limiter = env.limiter
    rate = Rate.of(suite)
    # Without a limit for the run or the suite, nothing here reads the clock until a 429 / 503 arrives.
    target = origin(out.url) if limiter.active or rate else None
    deadline = Deadline.after(out.timeout_ms / 1000) if target is not None else None
    if target is not None and rate is not None:
        limiter.limit(target, rate)
    resend = step.request.retry_on_429
    if resend is None:
        resend = out.method in IDEMPOTENT_METHODS
    waited = False
    for resends in range(MAX_RESENDS + 1):
        sending = out
        if target is not None:
            try:
                waited = limiter.acquire(target, deadline, stop) > 0 or waited
            except RateLimitExceeded as exc:
                env.client.discard(prepared)
                raise TransportError(str(exc)) from None
            if stop.is_set() and waited:
                env.client.discard(prepared)
                raise TransportError(f"run interrupted while waiting for the rate limit of {target}")
            sending = _limited(out, limiter, target, deadline)
        # After a wait the exchange gets what is left of the step's time, not its whole timeout again.
        if waited:
            left_ms = deadline.remaining() * 1000
            if left_ms <= 0:
                env.client.discard(prepared)
                raise TransportError(f"no time left to send the request within {out.timeout_ms:g} ms after "
                                     "waiting")
            sending = copy.copy(sending) if sending is out else sending
            sending.timeout_ms = min(out.timeout_ms, left_ms)
        response = env.client.send(session, prepared, sending)
        if response.status not in WAIT_STATUSES or step.request.retry_on_429 is False:
            return response, prepared
        said = f"{response.status} {http.client.responses.get(response.status, '')}".rstrip()
        if not resend:
            raise TransportError(
                f"{said}: a {out.method} is not sent again unless its request says 'retry_on_429: true' "
                f"('retry_on_429: false' lets its assertions check the {response.status})", partial=response)
        if resends == MAX_RESENDS:
            break
        # The step's deadline counts from its first send, which the response's elapsed time goes back to.
        deadline = deadline or Deadline.after(max(out.timeout_ms - response.elapsed_ms, 0) / 1000)
        asked = retry_after(response.headers)
        wait = asked if asked is not None else limiter.backoff(resends)
        left = deadline.remaining()
        if wait >= left:
            why = f"Retry-After {wait:g} s" if asked is not None else \
                f"the next wait ({wait:.3g} s, backing off after {resends + 1} {response.status}s)"
            raise TransportError(f"{said}: {why} is beyond the step's deadline ({max(left, 0):.3g} s left)",
                                 partial=response)
        started = clock()
        if stop.wait(wait):
            raise TransportError(f"{said}: run interrupted while waiting {wait:.3g} s to send it again",
                                 partial=response)
        waits.append(RateLimitWait(status=response.status, waited_ms=round((clock() - started) * 1000, 1)))
        waited = True
        prepared = env.client.prepare(session, out)  # cookies the 429 set go along
    raise TransportError(f"{said}: still {response.status} after {MAX_RESENDS} resends (the most Litmus sends)",
                         partial=response)


def _limited(out: OutgoingRequest, limiter: RateLimiter, target: str, deadline: Deadline) -> OutgoingRequest:
    """`out`, passing the limiter's gate as it is written to the connection."""
    sending = copy.copy(out)
    sending.write_turn = functools.partial(limiter.writing, target, deadline)
    return sending


def _graphql_errors(response: Response) -> list[Any] | None:
    """A GraphQL response's non-empty `errors` (at most MAX_GRAPHQL_ERRORS, each bounded), else None."""
    try:
        document = response.json()
    except ValueError:
        return None
    errors = document.get("errors") if isinstance(document, dict) else None
    if not isinstance(errors, list) or not errors:
        return None
    return [bounded(error) for error in errors[:MAX_GRAPHQL_ERRORS]]


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
            cause = _not_judged_cause(assertion, planned, env)
            if cause is not None:
                result = not_judged(assertion, cause)
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
    outcomes = [r.result() if isinstance(r, Future) else r for r in results]
    for assertion, result in zip(step.assertions, outcomes, strict=True):
        # An evaluator may mark its outcome critical itself (a python check the trust policy did not run).
        result.critical = result.critical or assertion.critical
    return outcomes, stop_flow


def _not_judged_cause(assertion: Assertion, planned: PlannedRun, env: RunEnvironment) -> str | None:
    """Why the LLM-based assertion is not put to a judge (a `NOT_JUDGED` cause); None to judge it."""
    if assertions.spec(assertion.type).family == "scenario" and planned.scenario is None:
        return "no_scenario"
    if env.judge_disabled:
        return "disabled"
    if env.judge is None:
        return "no_judge"
    return None


def evaluate_isolated(assertion: Assertion, ctx: EvalContext) -> AssertionOutcome:
    """The assertion's outcome; an evaluator that raises yields an `error` outcome, never a crash."""
    try:
        return assertions.module(assertion.type).evaluate(assertion, ctx)
    except TemplateError as exc:
        return errored(assertion, str(exc))
    except Exception as exc:  # noqa: BLE001 - isolation is the point: one assertion never breaks another
        return errored(assertion, f"could not evaluate: {_exception_text(exc)}")


def _exception_text(exc: BaseException) -> str:
    """`Type: message`, or the type alone when the message is empty (an `assert` inside a library)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _extract(step: Step, response: Response, redactor: Redactor,
             deadline: Deadline) -> tuple[dict[str, Any], str | None]:
    """The extracted values, and why an extraction could not be evaluated at all (None: each was
    extracted, or found nothing to extract)."""
    values: dict[str, Any] = {}
    problems = []
    for extraction in step.extract:
        try:
            values[extraction.name] = extract(extraction, response, redactor, deadline)
        except NotExtracted:
            pass  # left unset: a later use says "never extracted" or "unknown template name"
        except (IndexError, ValueError, TypeError):
            pass  # e.g. a regex group the pattern does not have
        except Exception as exc:  # noqa: BLE001 - e.g. an AssertionError inside jsonpath-ng: this step's error
            problems.append(f"extract '{extraction.name}' (line {extraction.pos.line}) could not be evaluated: "
                            f"{_exception_text(exc)}")
    return values, "; ".join(problems) or None


def _render_request(step: Step, suite: Suite, renderer: Renderer, env: RunEnvironment) -> OutgoingRequest:
    request = step.request
    url = _text(renderer.render(request.url))
    if not ABSOLUTE_URL.match(url):
        base = base_url_of(suite, renderer, env)
        url = base.rstrip("/") + "/" + url.lstrip("/")
    headers = {str(k): _text(v) for k, v in renderer.render(request.headers).items()}
    basic_auth = digest_auth = None
    if request.auth is not None and request.auth.kind == "digest":
        digest_auth = _credentials(request.auth, renderer, env.redactor)  # requests answers the challenge
    elif request.auth is not None:
        headers["Authorization"], basic_auth = _authorization(request, renderer, env.redactor)
    query = {str(k): _field_value(v) for k, v in renderer.render(request.query).items()}
    cookies = {name: _cookie_value(name, renderer.render(value)) for name, value in request.cookies.items()}
    out = OutgoingRequest(
        method=request.method.upper(), url=url, headers=headers, cookies=cookies, query=query, basic_auth=basic_auth,
        digest_auth=digest_auth, tls=request.tls,
        timeout_ms=request.timeout_ms if "timeout_ms" in request.field_pos else env.timeout_ms,
        follow_redirects=request.follow_redirects, stream=request.stream,
    )
    if env.timeout_cap_ms is not None:
        out.timeout_ms = min(out.timeout_ms, env.timeout_cap_ms)
    if request.json is not MISSING:
        out.json, out.has_json = renderer.render(request.json), True
    elif request.body is not None:
        out.data = _text(renderer.render(request.body)).encode("utf-8")
    elif request.form is not None:
        # A list is the field repeated (`tag=a&tag=b`), as in `query`.
        out.data = {str(k): _field_value(v) for k, v in renderer.render(request.form).items()}
    elif request.graphql is not None:
        graphql = request.graphql
        out.json, out.has_json = {"query": renderer.render(graphql.query)}, True
        if graphql.variables is not None:
            out.json["variables"] = renderer.render(graphql.variables)
        if graphql.operation_name is not None:
            out.json["operationName"] = renderer.render(graphql.operation_name)
    elif request.body_file is not None:
        out.body_file = request.body_file
    elif request.multipart is not None:
        out.multipart = [
            (part.name, FilePart(part.file, part.filename or part.file.name, part.content_type, part.file_shown)
             if part.file
             else (_text(renderer.render(part.value)), part.content_type))
            for part in request.multipart
        ]
    return out


def base_url_of(suite: Suite, renderer: Renderer, env: RunEnvironment) -> str:
    """The base URL a suite's relative URLs join: `--base-url SUITE=URL`, `--base-url URL`, then the
    suite's own `base_url` (which may be a template, rendered here)."""
    base = env.suite_base_urls.get(suite.name) or env.base_url
    if not base and suite.base_url:
        base = _text(renderer.render(suite.base_url))
        if not re.match(r"https?://[^/\s]+", base):
            raise TemplateError(f"the suite's base_url renders to {base!r}, not an absolute http(s):// URL")
    if not base:
        raise TemplateError("a relative URL needs a base URL (--base-url or the suite's base_url)")
    return base


def _authorization(request, renderer: Renderer, redactor: Redactor) -> tuple[str, tuple[str, str] | None]:
    """The Authorization header of `auth`, and for basic auth its (username, password); the credentials,
    encoded or not, are masked in every output."""
    auth = request.auth
    if auth.kind == "bearer":
        token = _text(renderer.render(auth.token))
        redactor.register(token)
        return f"Bearer {token}", None
    username, password = _credentials(auth, renderer, redactor)
    encoded = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    redactor.register(encoded)
    return f"Basic {encoded}", (username, password)


def _credentials(auth, renderer: Renderer, redactor: Redactor) -> tuple[str, str]:
    """The rendered (username, password) of basic or digest auth; the password is masked in every output."""
    username, password = _text(renderer.render(auth.username)), _text(renderer.render(auth.password))
    redactor.register(password)
    return username, password


def _cookie_value(name: str, value: Any) -> str:
    """A rendered cookie value; one that would end the cookie (`;`, a control character) is the step's error,
    never a second cookie the template's input chose."""
    text = _text(value)
    if COOKIE_VALUE_REFUSED.search(text):
        raise TemplateError(f"cookie '{name}' renders to a value holding ';' or a control character")
    return text


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _field_value(value: Any) -> Any:
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
                env.judge.evaluate_intent, planned.suite, masked, planned.scenario, flow_run
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
    for o in flow_run.conversation_assertions:
        counts[o.status] += 1
        if o.status in NOT_PASSED and first is None:
            first = f"conversation › {o.name or o.type}: {o.reason}"
    if first is None:
        return IntentEvaluation(
            status="passed", method="deterministic",
            reason=f"no assertion failed or errored ({counts['passed']} passed, {counts['skipped']} skipped)",
        )
    parts = [f"{counts[k]} {label}" for k, label in
             (("failed", "failed"), ("error", "errored"), ("needs_review", "need review")) if counts[k]]
    return IntentEvaluation(status="failed", method="deterministic", reason=f"{', '.join(parts)}; first: {first}")


def skipped_step(step: Step, reason: str) -> StepResult:
    # `error` says why no request was sent, for a step without assertions to carry the reason too.
    return StepResult(
        name=step.name, line=step.pos.line, status="skipped", attempts=0, error=reason,
        assertions=[outcome(a, "skipped", reason) for a in step.assertions],
    )


def skipped_run(planned: PlannedRun, reason: str) -> FlowRunResult:
    """A flow run that did not run (`skip:`, a failed setup): each step skipped with its own `skip:` reason
    or `reason`, and `skipped` set so the verdict leaves it out of the pass rate."""
    return FlowRunResult(
        flow=planned.flow.name, line=planned.flow.pos.line, run_index=planned.run_index,
        scenario=planned.scenario.id if planned.scenario else None,
        intent_evaluation=IntentEvaluation(status="error", method="deterministic", reason=f"not run: {reason}"),
        steps=[skipped_step(step, step.skip or reason) for step in planned.flow.steps], skipped=reason,
    )


def _error_step(step: Step, message: str, request: RequestExcerpt | None, partial: Response | None,
                *, skipped_because: str | None = None) -> StepResult:
    reason = skipped_because or f"no response: {message}"
    return StepResult(
        name=step.name, line=step.pos.line, status="error", error=message, request=request,
        response=_response_excerpt(partial) if partial is not None else None,
        assertions=[outcome(a, "skipped", reason) for a in step.assertions], stream=_stream_record(partial),
    )


def _masked(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: MASK if k.lower() in SENSITIVE_HEADERS else str(v) for k, v in headers.items()}


def _excerpt(text: str, limit: int = EXCERPT_CHARS) -> tuple[str, bool]:
    return (text[:limit], True) if len(text) > limit else (text, False)


def _request_excerpt(prepared, out: OutgoingRequest, step: Step, env: RunEnvironment,
                     conversation_turn: bool = False) -> RequestExcerpt:
    body = describe_body(prepared)
    limit = CONVERSATION_REQUEST_CHARS if conversation_turn else EXCERPT_CHARS
    text, cut = _excerpt(body, limit) if body is not None else (None, False)
    sent = {k.lower() for k in out.headers} | ({"cookie"} if out.cookies else set())
    probe_headers = [name for name in prepared.headers if name.lower() in sent]
    if "Content-Type" in prepared.headers and "content-type" not in map(str.lower, probe_headers) \
            and (out.has_json or out.data is not None or out.multipart is not None or out.body_file is not None):
        probe_headers.append("Content-Type")  # computed from json/form: part of what the probe sends
    secrets = _secrets_used(step, env)
    headers = {}
    for name, value in prepared.headers.items():
        value = str(value)
        # A credential header the probe built from a declared secret keeps its shape ("Bearer ***"):
        # the redactor masks the secret, and a curl can put "$NAME" in its place.
        declared = name in probe_headers and any(secret in value for secret in secrets.values())
        if declared and name.lower() == "cookie":  # only when the probe built all of it: the session's are masked
            declared = {part.split("=", 1)[0] for part in value.split("; ")} <= set(out.cookies)
        headers[name] = MASK if name.lower() in SENSITIVE_HEADERS and not declared else value
    parts = _form_parts(out)
    places = [prepared.url, *(headers[name] for name in probe_headers)]
    # In the order a curl writes them: the parts of a multipart body stand for its text.
    places += [text for part in parts for text in _part_texts(part)] if parts is not None else [text or ""]
    basic_auth = digest_auth = None
    password_secret = []
    if (credentials := out.basic_auth or out.digest_auth) is not None:
        username, password = credentials
        if out.basic_auth is not None:
            basic_auth = Credentials(username, password)
        else:
            digest_auth = Credentials(username, password)
        places.append(username)
        # The password is masked whole (one `***`), whatever secrets it is made of: named only when it is one.
        password_secret = [name for name, value in secrets.items() if value == password][:1]
    return RequestExcerpt(method=prepared.method, url=prepared.url, headers=headers, body=text, body_truncated=cut,
                          probe_headers=probe_headers, secrets=_secret_order(places, secrets) + password_secret,
                          body_file=step.request.body_file_shown or None, multipart=parts, basic_auth=basic_auth,
                          digest_auth=digest_auth, tls=_tls_options(step.request.tls),
                          max_redirects=MAX_REDIRECTS if out.follow_redirects else None)


def _tls_options(tls: Tls | None) -> TlsOptions | None:
    """The request's `tls:` as the results record it (the files by name, never their content)."""
    if tls is None:
        return None
    return TlsOptions(tls.verify, tls.shown.get("ca_file"), tls.shown.get("client_cert"), tls.shown.get("client_key"))


def _form_parts(out: OutgoingRequest) -> list[FormPart] | None:
    """A multipart body's parts as sent (None for any other body)."""
    if out.multipart is None:
        return None
    return [FormPart(name, file=part.shown, filename=part.filename, content_type=part.sent_type)
            if isinstance(part, FilePart) else FormPart(name, value=part[0], content_type=part[1])
            for name, part in out.multipart]


def _part_texts(part: FormPart) -> list[str]:
    """The texts of a part that may carry a secret, in the order a curl writes them."""
    return [text for text in (part.value, part.filename, part.content_type) if text is not None]


def _secrets_used(step: Step, env: RunEnvironment) -> dict[str, str]:
    """name -> value of each `{{ secrets.NAME }}` the step's request (or its user message and tool results,
    which a conversation sends in the body) mentions."""
    known = env.secret_names.get(id(step))
    if known is None:
        sent = repr((step.request, step.user, step.tool_results))
        names = sorted({ref.name.split(".", 1)[1] for ref in references(sent) if ref.namespace == "secrets"})
        known = env.secret_names[id(step)] = (step, tuple(names))
    return {name: env.environ[name] for name in known[1] if env.environ.get(name)}


def _secret_order(places: list[str], secrets: dict[str, str]) -> list[str]:
    """The secret names in the order their values (or encoded forms) appear across `places`: the
    order of the `***` masks the redactor leaves there."""
    if not secrets:
        return []
    forms = {form: name for name, value in secrets.items() for form in encodings(value)}
    pattern = re.compile("|".join(map(re.escape, sorted(forms, key=len, reverse=True))))
    return [forms[match.group()] for place in places for match in pattern.finditer(place)]


def _response_excerpt(response: Response) -> ResponseExcerpt:
    # Decode only the head: a 10 MiB body is not decoded whole just to keep 4 KiB of it.
    head = response.body[: EXCERPT_CHARS * 4]
    text, cut = _excerpt(head.decode(response.text_encoding, errors="replace"))
    cut = cut or len(head) < len(response.body)
    streamed = isinstance(response, StreamedResponse)
    return ResponseExcerpt(
        status=response.status, elapsed_ms=round(response.elapsed_ms, 1), headers=_masked(response.headers),
        body=text, size=response.stream.wire_bytes if streamed else len(response.body),
        truncated=response.truncated, body_excerpt_truncated=cut, redirects=list(response.redirects),
    )


def _stream_record(response: Response | None) -> StreamRecord | None:
    """How a streamed response arrived (None for any other): what reports show beside its text."""
    if not isinstance(response, StreamedResponse):
        return None
    data = response.stream
    text, cut = _excerpt(data.text)
    return StreamRecord(
        format=data.format, events_count=data.events_count, first_byte_ms=data.first_byte_ms,
        first_event_ms=data.first_event_ms, done=data.done, text=text, text_truncated=cut,
        events=[StreamEvent(e["event"], bounded(e["data"]), e["id"]) for e in data.events(RECORDED_EVENTS)],
        tool_calls=[{**call, "arguments": bounded(call["arguments"])} for call in data.tool_calls],
        raw=data.wire_head.decode("utf-8", errors="replace")[:RAW_STREAM_CHARS],
    )
