"""The results model: one versioned JSON document, the only contract between running and reporting.

`RunResult.to_dict()` gives exactly what `results.json` holds (see `schemas/results.schema.json`);
`RunResult.from_dict()` reads it back for the reporters, which never see anything else.
Everything here is already redacted by the runner: reporters may trust it not to hold secrets.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from litmus import files

SCHEMA_VERSION = 1
# What a secret's value reads as wherever the document holds text.
MASK = "***"

AssertionStatus = Literal["passed", "failed", "error", "skipped", "needs_review"]
StepStatus = Literal["passed", "failed", "error", "skipped"]
IntentStatus = Literal["passed", "failed", "needs_review", "error"]
# Why an LLM-based check was not put to a judge: no judge configured, the `max_calls` budget ran out,
# or the user turned judging off (`--no-judge`, `judge: {provider: none}`). What each means for the
# verdict is `litmus.verdict`'s.
JudgeSkip = Literal["no_judge", "budget", "disabled"]
# How a finding relates to the baseline run (see `litmus.compare`): "none" when no baseline was given.
BaselineState = Literal["new", "unchanged", "none"]


@dataclass
class Mismatch:
    path: str
    expected: Any
    actual: Any
    reason: str
    # Set by a baseline comparison: whether this path failed in the baseline's same assertion too.
    baseline: BaselineState | None = None


@dataclass
class JudgeTier:
    provider: str
    model: str
    score: float | None
    reason: str
    latency_ms: float
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False


@dataclass
class JudgeRecord:
    escalated: bool
    tiers: list[JudgeTier] = field(default_factory=list)


@dataclass
class JudgedReply:
    """The text a scenario-aware judge read (the body, or what `select` chose), whole up to the body cap: what
    `litmus accept-references` writes as the scenario's new reference. Redacted like all free text."""

    text: str
    # The response was cut at the run's body cap: the text is not the whole reply.
    truncated: bool = False
    # Redaction replaced something in it with `***`: the text is not the reply as sent.
    masked: bool = False


@dataclass
class DecidedBy:
    """A human's verdict that replaced the judge (`litmus.decisions`): who, when, why, and where it was made
    (the pull-request comment's URL, when a comment command made it)."""
    by: str
    at: str
    reason: str
    kind: Literal["human"] = "human"
    verdict: Literal["pass", "fail"] = "pass"
    url: str | None = None


@dataclass
class AssertionOutcome:
    type: str
    status: AssertionStatus
    reason: str
    line: int
    column: int
    name: str | None = None
    mismatches: list[Mismatch] = field(default_factory=list)
    score: float | None = None
    threshold: float | None = None
    judge: JudgeRecord | None = None
    # `critical: true` in the probe: when not passed, it fails the flow run whatever the Intent Evaluation says.
    critical: bool = False
    # Set when an LLM-based assertion was skipped because no judge evaluated it (see JudgeSkip).
    judge_skip: JudgeSkip | None = None
    # Stable identity (`litmus.identity`), and for a failing outcome its baseline state.
    id: str | None = None
    baseline: BaselineState | None = None
    # Scenario-aware types: the reply the judge read (also when it could not judge for want of a reference).
    reply: JudgedReply | None = None
    # A judged outcome: the hash of what was judged (`litmus.decisions.content_sha256`), and the human
    # decision that took the judge's place, when one matched.
    content_sha256: str | None = None
    decided_by: DecidedBy | None = None


@dataclass
class TlsOptions:
    """`tls:` as used: whether the server's certificate was verified, and the files (repository-relative)."""

    verify: bool = True
    ca_file: str | None = None
    client_cert: str | None = None
    client_key: str | None = None


@dataclass
class FormPart:
    """One part of a multipart request body as sent: a text field (`value`, its `content_type` if it had
    one) or a file (`file` repository-relative, the `filename` and `content_type` sent)."""

    name: str
    value: str | None = None
    file: str | None = None
    filename: str | None = None
    content_type: str | None = None


@dataclass
class Credentials:
    """`auth: {basic: ...}` or `auth: {digest: ...}` as sent: the username, and the password (always masked)."""

    username: str
    password: str


@dataclass
class RequestExcerpt:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    body_truncated: bool = False
    # Headers the probe set (plus the computed Content-Type); None in older documents.
    probe_headers: list[str] | None = None
    # Secret names behind the request's `***` masks, in order of appearance (url, probe headers, body or
    # multipart parts, basic auth).
    secrets: list[str] = field(default_factory=list)
    # What a curl needs that the headers and body text do not say (None in older documents, and when unused):
    # the file sent as the body (repository-relative), a multipart body's parts, basic- or digest-auth credentials,
    # the TLS options, and how many redirects the request was to follow (None: it followed none,
    # `follow_redirects: false`).
    body_file: str | None = None
    multipart: list[FormPart] | None = None
    basic_auth: Credentials | None = None
    digest_auth: Credentials | None = None
    tls: TlsOptions | None = None
    max_redirects: int | None = None


@dataclass
class Redirect:
    """One redirect followed: where to, the status that sent it there, and what did not go along
    (the probe's headers and a 307/308 body, when the redirect left the origin)."""

    url: str
    status: int
    dropped_headers: list[str] = field(default_factory=list)
    body_dropped: bool = False


@dataclass
class ResponseExcerpt:
    status: int
    elapsed_ms: float
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    # Bytes read from the wire (up to the size cap).
    size: int = 0
    # The body hit the run's size cap; `body` is an excerpt either way.
    truncated: bool = False
    body_excerpt_truncated: bool = False
    # The redirects followed to get this response, in order.
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class StreamEvent:
    event: str | None
    data: Any
    id: str | None


@dataclass
class StreamRecord:
    """A step whose request said `stream:`: how its events arrived and what text they assembled."""

    format: str
    events_count: int
    # Milliseconds from sending the request to the first body byte / the first event.
    first_byte_ms: float | None
    first_event_ms: float | None
    # The end marker arrived (or, for sse/ndjson without one, the connection closed after an event).
    done: bool
    # The assembled text; `response.body` holds the same excerpt.
    text: str = ""
    text_truncated: bool = False
    # The first events (each `data` bounded); `events_count` says how many there were.
    events: list[StreamEvent] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    # The beginning of the body as it came off the wire (SSE frames), for debugging a bad stream.
    raw: str = ""


# Statuses that mean "not now": a request is waited out and sent again (litmus.run.rate).
WAIT_STATUSES = frozenset({429, 503})


@dataclass
class RateLimitWait:
    """A `429` or `503` the target answered, waited out before the request was sent again."""

    status: int
    waited_ms: float


@dataclass
class Usage:
    """The tokens a step's response says it used (`litmus.usage`), and what they cost by `pricing:`."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    # Where they were read: "openai" or "anthropic" (the API's own `usage`), or "paths" (the request's
    # `usage: {input_path, output_path}`).
    source: str = ""
    # The model priced: the response's `model` when the table prices it, else the request's `pricing_model`
    # (else the response's, unpriced); None when neither names one.
    model: str | None = None
    # The `pricing:` entry that priced it (the model itself, or the longest prefix of it); None: unpriced.
    price_key: str | None = None
    cost_usd: float | None = None


@dataclass
class UsageTotals:
    """Tokens and cost summed over the steps that reported usage (`count`), or the judge calls made."""

    input_tokens: int = 0
    output_tokens: int = 0
    # The priced part's cost; None when nothing was priced.
    cost_usd: float | None = None
    # Steps that reported usage (target), or judge calls made (judge: cached and replayed ones cost nothing).
    count: int = 0
    # How many of them had no price (their tokens are counted, their cost is not).
    unpriced: int = 0


@dataclass
class Totals:
    target: UsageTotals = field(default_factory=UsageTotals)
    judge: UsageTotals = field(default_factory=UsageTotals)


@dataclass
class StepResult:
    name: str
    line: int
    status: StepStatus
    request: RequestExcerpt | None = None
    response: ResponseExcerpt | None = None
    error: str | None = None
    attempts: int = 1
    # Times the transport sent the request again on a new connection: a pooled connection the server
    # had closed, or a connection failure under --transport-retries.
    transport_retries: int = 0
    # Each 429 / 503 waited out before the request was sent again, in order (see litmus.run.rate).
    rate_limited: list[RateLimitWait] = field(default_factory=list)
    extracted: dict[str, Any] = field(default_factory=dict)
    assertions: list[AssertionOutcome] = field(default_factory=list)
    stream: StreamRecord | None = None
    # Generator values the step's templates used (`{"gen.uuid": "..."}`), to reproduce a failure.
    generated: dict[str, Any] = field(default_factory=dict)
    # A graphql step's non-empty response `errors`; None otherwise.
    graphql_errors: list[Any] | None = None
    # A conversation step: its turn (1-based, in step order) and the user's message it sent.
    turn: int | None = None
    user: str | None = None
    # Set when a simulated turn could not be played for want of judge budget (it fails the suite).
    judge_skip: JudgeSkip | None = None
    # Identity of the step's "no response" finding, and its baseline state when it has one.
    id: str | None = None
    baseline: BaselineState | None = None
    # What is worth a look but decides nothing (a request that does not conform to its OpenAPI operation).
    warnings: list[str] = field(default_factory=list)
    # The tokens the response reported (None: it reported none); a conversation turn's own.
    usage: Usage | None = None


@dataclass
class IntentEvaluation:
    status: IntentStatus
    method: Literal["judge", "deterministic"]
    reason: str
    score: float | None = None
    threshold: float | None = None
    judge: JudgeRecord | None = None
    # Set when the judge was not asked because the `max_calls` budget ran out (deterministic fallback).
    judge_skip: JudgeSkip | None = None
    id: str | None = None
    baseline: BaselineState | None = None
    content_sha256: str | None = None
    decided_by: DecidedBy | None = None


@dataclass
class FlowRunResult:
    flow: str
    line: int
    run_index: int
    intent_evaluation: IntentEvaluation
    scenario: str | None = None
    duration_ms: float = 0.0
    steps: list[StepResult] = field(default_factory=list)
    # The flow run's verdict, what the suite's pass rate counts: the Intent Evaluation's status, except
    # that a critical assertion that did not pass makes it `failed` (None in older documents: the status).
    status: IntentStatus | None = None
    # Why `status` differs from the Intent Evaluation's (a critical assertion did not pass), else None.
    reason: str | None = None
    # The flow run passed by intent despite this many failed or errored checks (non-critical assertions
    # and steps without a response): reports mark those findings as overruled.
    overruled_failures: int = 0
    # Why the flow run did not run (a failed setup); such a run is left out of the suite's pass rate.
    skipped: str | None = None
    # A conversation flow run: every message as `{role, content}` (system, user, assistant, tool), and the
    # outcomes of its `conversation_assertions`, judged on it.
    transcript: list[dict[str, str]] | None = None
    conversation_assertions: list[AssertionOutcome] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.status is None:
            self.status = self.intent_evaluation.status
    # The flow's identity across runs and scenarios (pass rates are compared per flow).
    flow_id: str | None = None
    # Its steps' (a conversation's turns') usage summed; None when no step reported any.
    usage: UsageTotals | None = None


@dataclass
class OpenAPICoverage:
    """How much of the suite's OpenAPI description its requests exercised: `operations` and `exercised` are
    counts, `missing` the operations no request matched ("GET /orders/{id}"), in spec order."""
    spec: str
    operations: int
    exercised: int
    missing: list[str] = field(default_factory=list)


@dataclass
class SuiteResult:
    name: str
    file: str
    line: int
    pass_threshold: float
    pass_rate: float
    verdict: Literal["passed", "failed"]
    intent: str | None = None
    flow_runs: list[FlowRunResult] = field(default_factory=list)
    # What the pass rate alone does not say, one line: LLM-based assertions that no judge evaluated
    # (why the suite failed), or those skipped on purpose (--no-judge; the verdict ignores them).
    reason: str | None = None
    # The suite's setup and teardown steps (empty when it has none).
    setup: list[StepResult] = field(default_factory=list)
    teardown: list[StepResult] = field(default_factory=list)
    # Present when the suite names an OpenAPI description (`openapi:`).
    openapi: OpenAPICoverage | None = None

    @property
    def setup_failed(self) -> bool:
        """A setup step failed or errored: the flow runs were skipped, so the suite fails (even when
        its pass_threshold would let their rate pass)."""
        return any(step.status in ("failed", "error") for step in self.setup)


def run_label(run_index: int, runs: int) -> str:
    """How people count runs, "run 1 of 3"; `run_index` stays 0-based data."""
    return f"run {run_index + 1} of {runs}"


def runs_per_flow(suite: SuiteResult) -> Counter[tuple[str, str | None]]:
    """How many runs each (flow, scenario) of a suite has: the "of N" of `run_label`."""
    return Counter((flow_run.flow, flow_run.scenario) for flow_run in suite.flow_runs)


@dataclass
class JudgeTotals:
    calls: int = 0
    cached: int = 0
    escalated: int = 0
    needs_review: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    wall_ms: float = 0.0


@dataclass
class RunInfo:
    base_url: str | None
    started_at: str
    finished_at: str
    interrupted: bool = False
    git_sha: str | None = None
    # "K/N" when the run was one shard of several.
    shard: str | None = None
    # "owner/name" and e.g. "https://github.com", when known: reports link probe lines with them.
    repository: str | None = None
    server_url: str | None = None
    # The run's one trust decision (litmus.trust) and why; None in older documents.
    trusted: bool | None = None
    trust_reason: str | None = None
    # Probe, config, cassette and decision files the pull request changed ("This pull request changes its
    # own checks"), and what the untrusted policy did about its content (e.g. its litmus.yaml not applied).
    changed_checks: list[str] = field(default_factory=list)
    trust_notes: list[str] = field(default_factory=list)


@dataclass
class Tool:
    name: str = "litmus"
    version: str = ""


@dataclass
class PassRate:
    """Flow runs passed of total, with the 95% Wilson score interval (percent)."""
    passed: int
    total: int
    rate: float
    low: float
    high: float


@dataclass
class UsageChange:
    """A flow's tokens and cost, here and in the baseline (summed over its runs), and the change per run."""

    # What `change_pct` compares: "cost" when every step on both sides was priced, else "tokens" (input and
    # output together).
    measure: Literal["cost", "tokens"]
    here: UsageTotals
    baseline: UsageTotals
    # The change of the measure per flow run, in percent; None when the baseline's is 0.
    change_pct: float | None = None
    # The rise is beyond --max-cost-increase: the flow regressed on it.
    over_limit: bool = False


@dataclass
class FlowComparison:
    flow_id: str
    suite: str
    flow: str
    # "regressed", "improved", "within noise", "new flow" (not in the baseline), "not run here".
    verdict: str
    here: PassRate | None = None
    baseline: PassRate | None = None
    # The flow's tokens and cost against the baseline's; None when neither side reported usage.
    usage: UsageChange | None = None


@dataclass
class ScoreStats:
    """Judge scores of one assertion over its runs."""
    n: int
    mean: float
    spread: float  # population standard deviation
    values: list[float] = field(default_factory=list)


@dataclass
class ScoreComparison:
    id: str
    suite: str
    flow: str
    scenario: str | None
    step: str
    assertion: str
    here: ScoreStats | None = None
    baseline: ScoreStats | None = None


@dataclass
class FixedFinding:
    """A finding of the baseline whose check ran here and held in every run."""
    id: str
    suite: str
    flow: str
    scenario: str | None
    step: str | None
    label: str  # the assertion's name or type, "no response" or "Intent Evaluation"
    line: int
    reason: str  # the baseline's reason


@dataclass
class BaselineSummary:
    source: str
    new: int = 0
    unchanged: int = 0
    fixed: int = 0
    regressed: int = 0
    fixed_findings: list[FixedFinding] = field(default_factory=list)
    flows: list[FlowComparison] = field(default_factory=list)
    scores: list[ScoreComparison] = field(default_factory=list)
    # --max-cost-increase: the rise of a flow's cost (or tokens) per run, in percent, beyond which it regressed.
    max_cost_increase: float | None = None


@dataclass
class DecisionNote:
    """A decision of the decisions file that took no effect in this run, and why."""
    finding: str
    content: str
    by: str
    # Where it was read, `path:line`.
    where: str
    why: str


@dataclass
class DecisionsSummary:
    """How the run used the human decisions (`litmus.decisions`): where they were read, how many replaced
    a judge, and those that did not: `stale` (they match nothing this run judged: the reply changed, or
    the check is gone) and `ignored` (refused: a deterministic check, or one the pull request wrote)."""
    sources: list[str] = field(default_factory=list)
    applied: int = 0
    stale: list[DecisionNote] = field(default_factory=list)
    ignored: list[DecisionNote] = field(default_factory=list)


@dataclass
class RunResult:
    run: RunInfo
    verdict: Literal["passed", "failed"]
    tool: Tool = field(default_factory=Tool)
    judge: JudgeTotals = field(default_factory=JudgeTotals)
    suites: list[SuiteResult] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION
    baseline: BaselineSummary | None = None
    decisions: DecisionsSummary | None = None
    # Tokens and cost of the target's responses and of the judge calls (`litmus.usage`).
    totals: Totals = field(default_factory=Totals)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        return _build(cls, data)

    def iter_outcomes(self):
        """(suite, flow_run, step, assertion) for every assertion outcome, in document order."""
        for suite in self.suites:
            for flow_run in suite.flow_runs:
                for step in flow_run.steps:
                    for outcome in step.assertions:
                        yield suite, flow_run, step, outcome


# Field types that hold nested result dataclasses, for `from_dict`.
_NESTED: dict[tuple[type, str], tuple[type, bool]] = {
    (RunResult, "run"): (RunInfo, False),
    (RunResult, "tool"): (Tool, False),
    (RunResult, "judge"): (JudgeTotals, False),
    (RunResult, "suites"): (SuiteResult, True),
    (SuiteResult, "flow_runs"): (FlowRunResult, True),
    (SuiteResult, "setup"): (StepResult, True),
    (SuiteResult, "teardown"): (StepResult, True),
    (SuiteResult, "openapi"): (OpenAPICoverage, False),
    (FlowRunResult, "intent_evaluation"): (IntentEvaluation, False),
    (FlowRunResult, "steps"): (StepResult, True),
    (FlowRunResult, "conversation_assertions"): (AssertionOutcome, True),
    (StepResult, "request"): (RequestExcerpt, False),
    (RequestExcerpt, "multipart"): (FormPart, True),
    (RequestExcerpt, "basic_auth"): (Credentials, False),
    (RequestExcerpt, "digest_auth"): (Credentials, False),
    (RequestExcerpt, "tls"): (TlsOptions, False),
    (StepResult, "response"): (ResponseExcerpt, False),
    (ResponseExcerpt, "redirects"): (Redirect, True),
    (StepResult, "assertions"): (AssertionOutcome, True),
    (StepResult, "rate_limited"): (RateLimitWait, True),
    (StepResult, "stream"): (StreamRecord, False),
    (StepResult, "usage"): (Usage, False),
    (FlowRunResult, "usage"): (UsageTotals, False),
    (RunResult, "totals"): (Totals, False),
    (Totals, "target"): (UsageTotals, False),
    (Totals, "judge"): (UsageTotals, False),
    (StreamRecord, "events"): (StreamEvent, True),
    (AssertionOutcome, "mismatches"): (Mismatch, True),
    (AssertionOutcome, "judge"): (JudgeRecord, False),
    (AssertionOutcome, "reply"): (JudgedReply, False),
    (IntentEvaluation, "judge"): (JudgeRecord, False),
    (JudgeRecord, "tiers"): (JudgeTier, True),
    (RunResult, "baseline"): (BaselineSummary, False),
    (AssertionOutcome, "decided_by"): (DecidedBy, False),
    (IntentEvaluation, "decided_by"): (DecidedBy, False),
    (RunResult, "decisions"): (DecisionsSummary, False),
    (DecisionsSummary, "stale"): (DecisionNote, True),
    (DecisionsSummary, "ignored"): (DecisionNote, True),
    (BaselineSummary, "fixed_findings"): (FixedFinding, True),
    (BaselineSummary, "flows"): (FlowComparison, True),
    (BaselineSummary, "scores"): (ScoreComparison, True),
    (FlowComparison, "here"): (PassRate, False),
    (FlowComparison, "baseline"): (PassRate, False),
    (FlowComparison, "usage"): (UsageChange, False),
    (UsageChange, "here"): (UsageTotals, False),
    (UsageChange, "baseline"): (UsageTotals, False),
    (ScoreComparison, "here"): (ScoreStats, False),
    (ScoreComparison, "baseline"): (ScoreStats, False),
}


def _fields_of(value: Any) -> dict[str, Any]:
    """A result dataclass as the (shallow) dict `json` encodes, for `json.dumps(default=...)`: the
    document is encoded straight from the dataclasses, with no `to_dict()` copy of the whole tree."""
    names = _FIELD_NAMES.get(type(value))
    if names is None:
        if not hasattr(type(value), "__dataclass_fields__"):
            raise TypeError(f"{type(value).__name__} is not JSON serializable")
        names = _FIELD_NAMES[type(value)] = tuple(f.name for f in fields(value))
    return {name: getattr(value, name) for name in names}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _build(cls: type, data: dict[str, Any]):
    known = {f.name for f in fields(cls)}
    kwargs = {}
    for key, value in data.items():
        if key not in known:
            continue  # newer documents may add keys; readers ignore what they do not know
        nested = _NESTED.get((cls, key))
        if nested and value is not None:
            inner, is_list = nested
            value = [_build(inner, v) for v in value] if is_list else _build(inner, value)
        kwargs[key] = value
    return cls(**kwargs)


def schema() -> dict[str, Any]:
    from importlib.resources import files  # lazy: only validating results needs it (2 ms at start-up)

    return json.loads(files("litmus.schemas").joinpath("results.schema.json").read_text("utf-8"))


def validate(data: dict[str, Any]) -> list[str]:
    """Schema violations of a results document, as 'path: message' lines (empty when valid)."""
    from jsonschema import Draft202012Validator  # lazy: jsonschema: ~115 ms, only when a schema is checked

    validator = Draft202012Validator(schema())
    return [
        f"{error.json_path}: {error.message}"
        for error in sorted(validator.iter_errors(data), key=lambda e: e.json_path)
    ]


# The largest results document read back (report, review, merge, compare, calibrate, a baseline, the results.json
# member of a baseline or comment-command artifact).
MAX_RESULTS_BYTES = 64 * 1024 * 1024


class ResultsError(ValueError):
    """A results file that cannot be read: not JSON, wrong schema version, or invalid."""


def load_results(path: str | os.PathLike) -> RunResult:
    """The results document at `path`, which the operator named and may lie anywhere (an artifact downloaded to
    /tmp): read only if it is a regular file of at most MAX_RESULTS_BYTES, so a FIFO or /dev/zero cannot hang the
    command or fill its memory. ResultsError names the file."""
    try:
        real = files.resolve_named(Path(path), shown=str(path))
        data = json.loads(files.read_bytes(real, MAX_RESULTS_BYTES, shown=str(path), what="results files")
                          .decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: cannot read results: {exc}") from None
    except RecursionError:
        raise ResultsError(f"{path}: cannot read results: JSON nested too deeply to be a results document") from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        found = data.get("schema_version") if isinstance(data, dict) else None
        raise ResultsError(f"{path}: schema_version {found!r} is not {SCHEMA_VERSION}")
    problems = validate(data)
    if problems:
        raise ResultsError(f"{path}: not a valid results document: " + "; ".join(problems[:5]))
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        # A "\ud800" escape decodes to a lone surrogate, which no report can be written with.
        raise ResultsError(f"{path}: not a valid results document: it holds a lone surrogate "
                           "(a \\ud800-\\udfff escape without its pair), which is not text") from None
    return RunResult.from_dict(data)


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once, at import (single-threaded): setting and restoring it later would briefly give files
# that other threads create (judge cache entries) mode 0666.
_UMASK = _read_umask()


def write_json_atomic(path: str | os.PathLike, data: Any, *, indent: int | None = 2) -> None:
    """Write JSON so readers see the old file or the new one, never half of one.

    `indent=None` writes one compact ASCII line (other characters as \\u escapes), four times faster:
    only then does `json` use its C encoder, and ASCII text takes a byte a character in memory.
    Result dataclasses in `data` are encoded as their fields.
    """
    # dumps, not dump: json.dump never uses the C encoder. Encoded at once (the text is freed then) and the
    # newline written after it: no second copy of a document that is 25 MB at 10,000 steps.
    encoded = json.dumps(data, indent=indent, ensure_ascii=indent is None, default=_fields_of).encode("utf-8")
    write_bytes_atomic(path, encoded, b"\n")


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """`write_bytes_atomic` of `text` in UTF-8."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | os.PathLike, *parts: bytes) -> None:
    """Write a file (`parts` one after the other) whole or not at all, never through a symlink or into a file
    that was there.

    The bytes go to a fresh temporary file beside it (created exclusively, so a planted symlink is
    never followed), which then replaces the name: a symlink or hard link planted at `path` (a pull
    request can commit one into the output folder) is replaced, its target left untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates the file 0600; give it the mode any other file we write gets (0666 & ~umask).
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as handle:
            for part in parts:
                handle.write(part)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class OutputError(Exception):
    """An output folder or file that cannot be written; the message names it and says why.
    `written`: the files that were written all the same (format name -> path)."""

    def __init__(self, message: str, written: dict[str, Path] | None = None):
        super().__init__(message)
        self.written = dict(written or {})


# Where `litmus run`, `litmus demo`, `litmus report` and the action write results.json and the reports.
DEFAULT_OUT = "litmus-report"


def check_output_dir(path: str | os.PathLike, root: str | os.PathLike | None = None) -> Path:
    """The output folder, created if missing and proven writable (a file is written, then removed),
    so that a run never does its work only to lose it at the end. OutputError says what is wrong.

    A folder that is a symlink, or lies under one inside `root` (the workspace), is refused: a pull
    request can commit `litmus-report` as a link, and every report would go where it points."""
    out = Path(path)
    link = _symlink_on_the_way(out, root)
    if link is not None:
        raise OutputError(f"output folder {out}: {link} is a symbolic link; refused so that nothing is written "
                          "where it points (remove the link or choose another folder)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"output folder {out}: exists and is not a directory") from None
    except OSError as exc:
        raise OutputError(f"output folder {out}: cannot be created: {exc.strerror or exc}") from None
    if not out.is_dir():
        raise OutputError(f"output folder {out}: is not a directory")
    try:
        # Some bytes, not an empty file: that can be created even on a full disk. (No fsync: it costs
        # tens of milliseconds on a busy disk, and a full one refuses the write itself.)
        fd, tmp = tempfile.mkstemp(prefix=".litmus-write-check.", dir=out)
        try:
            os.write(fd, b"\0" * 4096)
        finally:
            os.close(fd)
            os.unlink(tmp)
    except OSError as exc:
        raise OutputError(f"output folder {out}: cannot be written: {exc.strerror or exc}") from None
    return out


def _symlink_on_the_way(path: Path, root: str | os.PathLike | None = None) -> Path | None:
    """The first symlink among `path` and its parents inside `root` (`path` alone when it is not inside
    `root`), read lexically: `..` is not followed through a link."""
    absolute = Path(os.path.abspath(path))
    folders = [absolute]
    if root is not None:
        inside = Path(os.path.abspath(root))
        if absolute.is_relative_to(inside):
            folders = [p for p in (absolute, *absolute.parents) if p != inside and p.is_relative_to(inside)]
    return next((folder for folder in reversed(folders) if folder.is_symlink()), None)


def write_results(path: str | os.PathLike, result: RunResult) -> None:
    """results.json, compact: 1000 steps make 4 MB indented, and indenting took longer than all the
    reports together (pretty-print it with `python -m json.tool` or `jq .`)."""
    write_json_atomic(path, result, indent=None)
