"""Findings: what every reporter lists, derived from a `RunResult` and nothing else.

A finding is one thing a reviewer must look at:
- an assertion outcome that `failed`, could not be evaluated (`error`) or `needs_review`;
- a step that got no response (transport error; its assertions are `skipped`, not findings);
- a flow run whose judge-based Intent Evaluation failed, errored or needs review. A failed
  *deterministic* Intent Evaluation is not a finding of its own: it only restates the failed
  assertions of that run, which are findings already.

The same assertion failing in several runs (`runs: N`) of one flow and scenario is ONE finding
that lists the run indexes: code scanning would fold identical alerts on one line anyway, and a
reviewer wants "failed in 2 of 3 runs", not the same table three times. Each scenario is its own
finding, so the identity (suite, flow, step, assertion, scenario) is unique per finding.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from litmus import identity, verdict
from litmus.files import VCS_DIRECTORIES
from litmus.openapi.coverage import summary
from litmus.results import (
    MASK,
    WAIT_STATUSES,
    AssertionOutcome,
    BaselineSummary,
    DecidedBy,
    FlowComparison,
    FlowRunResult,
    FormPart,
    IntentEvaluation,
    JudgeRecord,
    OpenAPICoverage,
    RequestExcerpt,
    RunResult,
    StepResult,
    SuiteResult,
    TlsOptions,
)
from litmus.text import clip, count, noun_for
from litmus.usage import change_text, totals_text

TRANSPORT_ERROR = "transport_error"
INTENT_EVALUATION = "intent_evaluation"
NEEDS_REVIEW = "needs_review"

# The icon every format shows by what happened (the level is `litmus.verdict`'s).
ICONS = {"failed": "❌", "transport_error": "🔌", "error": "⚠️", "needs_review": "🧐", "passed": "✅", "skipped": "⏭️"}


# Where conversation assertions sort among a flow's findings: after every step's.
AFTER_STEPS = 1 << 30


@dataclass
class Finding:
    rule: str  # an assertion type, TRANSPORT_ERROR, INTENT_EVALUATION or NEEDS_REVIEW
    kind: str  # "failed", "error", "needs_review" or "transport_error"
    level: verdict.Level  # SARIF level and annotation level: `litmus.verdict.Checked.level`
    suite: SuiteResult
    flow_run: FlowRunResult  # the first run it occurred in (its details are shown)
    step: StepResult | None  # None for Intent Evaluation findings
    outcome: AssertionOutcome | None  # None for transport errors and Intent Evaluations
    line: int
    column: int
    key: str  # `litmus.identity.report_key`: never line numbers or messages
    # The results.json `id` of what it is about (the assertion, the step or the Intent Evaluation): the
    # same in every run, and in the undecided and the failed finding of one assertion.
    id: str
    order: tuple
    runs: list[int] = field(default_factory=list)
    total_runs: int = 0

    @property
    def icon(self) -> str:
        return ICONS[self.kind]

    @property
    def fingerprint(self) -> str:
        return identity.fingerprint(self.key)

    @property
    def intent(self) -> IntentEvaluation:
        return self.flow_run.intent_evaluation

    @property
    def scenario(self) -> str | None:
        return self.flow_run.scenario

    @property
    def baseline(self) -> str | None:
        """"new", "unchanged" or "none" (`litmus.compare`), from the record the finding shows."""
        if self.outcome is not None:
            return self.outcome.baseline
        return self.step.baseline if self.rule == TRANSPORT_ERROR else self.intent.baseline

    @property
    def label(self) -> str:
        """What failed, in a few words: the assertion's name or type, or the kind of problem."""
        if self.outcome is not None:
            return self.outcome.name or self.outcome.type
        return transport_label(self.step) if self.rule == TRANSPORT_ERROR else "Intent Evaluation"

    @property
    def _judged(self) -> AssertionOutcome | IntentEvaluation | None:
        """What carries the score and judge record: the assertion, the Intent Evaluation, or nothing."""
        if self.outcome is not None:
            return self.outcome
        return self.intent if self.step is None else None

    @property
    def judge(self) -> JudgeRecord | None:
        return self._judged.judge if self._judged else None

    @property
    def score(self) -> float | None:
        return self._judged.score if self._judged else None

    @property
    def threshold(self) -> float | None:
        return self._judged.threshold if self._judged else None

    @property
    def reason(self) -> str:
        if self.outcome is not None:
            return self.outcome.reason
        if self.rule == TRANSPORT_ERROR:
            return self.step.error or "no response"
        return self.intent.reason

    @property
    def where(self) -> str:
        """suite › flow › step, the grouping every report uses."""
        parts = [self.suite.name, self.flow_run.flow] + (
            [self.step.name] if self.step else ["conversation"] if self.outcome else [])
        return " › ".join(parts)

    @property
    def decidable_id(self) -> str | None:
        """The results.json `id` a human decision names, when this is a judged outcome no human decided yet
        (what the comment's `/litmus accept ID` takes); None for every other finding."""
        judged = self._judged
        if judged is None or not judged.content_sha256 or judged.decided_by is not None:
            return None
        return judged.id

    @property
    def decided_by(self) -> DecidedBy | None:
        return self._judged.decided_by if self._judged else None

    def runs_text(self) -> str:
        return runs_text(self.runs, self.total_runs)


def runs_text(runs: list[int], total_runs: int) -> str:
    """"2 of 3 runs (runs 1, 3)": people count runs from 1; `run_index` is 0-based data."""
    if total_runs <= 1:
        return ""
    listed = ", ".join(str(i + 1) for i in runs)
    return f"{len(runs)} of {total_runs} runs ({noun_for(len(runs), 'run')} {listed})"


# The SARIF rule of a step warning, and the finding-key part that tells warnings from checked things.
WARNING_RULE = "request_nonconforming"
_WARNING_PART = "warning"


@dataclass
class StepWarning:
    """A warning recorded on a step (`StepResult.warnings`: a request that does not conform to its OpenAPI
    operation). Worth a look, never a finding: it decides nothing. The same text on one step of one flow and
    scenario in several runs is one warning listing the runs, as a finding is."""

    suite: SuiteResult
    flow_run: FlowRunResult  # the first run it was recorded in
    step: StepResult
    text: str
    key: str  # suite, flow, scenario, step and the text: never line numbers
    runs: list[int] = field(default_factory=list)
    total_runs: int = 0

    @property
    def fingerprint(self) -> str:
        return identity.fingerprint(self.key)

    @property
    def where(self) -> str:
        parts = [self.suite.name, self.flow_run.flow, self.step.name]
        return " › ".join(parts) + (f" [{self.flow_run.scenario}]" if self.flow_run.scenario else "")

    @property
    def location(self) -> str:
        return f"{self.suite.file}:{self.step.line}"

    def runs_text(self) -> str:
        return runs_text(self.runs, self.total_runs)


def step_warnings(suites: list[SuiteResult]) -> list[StepWarning]:
    """Every step warning of the suites, in document order (flow runs, then setup, then teardown), runs of
    one flow and scenario folded into one."""
    found: dict[str, StepWarning] = {}
    for suite in suites:
        runs_per = Counter((run.flow, run.scenario) for run in suite.flow_runs)
        for flow_run in [*suite.flow_runs, *verdict.phase_runs(suite)]:
            for step in flow_run.steps:
                for text in step.warnings:
                    key = identity.report_key(
                        identity.finding_key(suite.name, flow_run.flow, flow_run.scenario, step.name, _WARNING_PART),
                        text)
                    warning = found.get(key)
                    if warning is None:
                        warning = found[key] = StepWarning(suite, flow_run, step, text, key,
                                                           total_runs=runs_per[flow_run.flow, flow_run.scenario])
                    if flow_run.run_index not in warning.runs:  # steps of one name in a run: one warning
                        warning.runs.append(flow_run.run_index)
    return list(found.values())


def decide_commands(finding_id: str) -> tuple[str, str]:
    """The pull-request comment commands that decide a judged finding (the action handles them)."""
    return f"/litmus accept {finding_id}", f"/litmus reject {finding_id}"


@dataclass(frozen=True)
class HumanDecided:
    """A judged outcome a human decided (`litmus.decisions`): every report lists them, passed ones included."""

    suite: SuiteResult
    flow_run: FlowRunResult
    step: StepResult | None
    record: AssertionOutcome | IntentEvaluation

    @property
    def label(self) -> str:
        return (self.record.name or self.record.type) if isinstance(self.record, AssertionOutcome) \
            else "Intent Evaluation"

    @property
    def where(self) -> str:
        parts = [self.suite.name, self.flow_run.flow] + ([self.step.name] if self.step else [])
        return " › ".join(parts) + (f" [{self.flow_run.scenario}]" if self.flow_run.scenario else "")

    @property
    def critical(self) -> bool:
        return getattr(self.record, "critical", False)

    def text(self) -> str:
        """"accepted by ann at 2026-05-04T12:00:00Z: looks right", saying when it overrides a critical check."""
        decided = self.record.decided_by
        verb = "accepted" if decided.verdict == "pass" else "rejected"
        critical = "critical check, overridden by a human: " if self.critical else ""
        why = f": {decided.reason}" if decided.reason else ""
        return f"{critical}{verb} by {decided.by} at {decided.at}{why}"


def human_decided(result: RunResult) -> list[HumanDecided]:
    """Every outcome a human decided, in document order, runs of one flow and scenario folded by id."""
    found: dict[tuple[str | None, str | None], HumanDecided] = {}
    for item in verdict.checked(result.suites):
        record = item.record
        if getattr(record, "decided_by", None) is not None:
            found.setdefault((record.id, record.content_sha256),
                             HumanDecided(item.suite, item.flow_run, item.step, record))
    return list(found.values())


# Worst first: what a reviewer reads first within a suite.
SEVERITY = {"failed": 0, "transport_error": 0, "error": 1, "needs_review": 2}


def reading_order(findings: list[Finding]) -> list[Finding]:
    """Failing suites first; within a suite, the flow › step groups by their worst finding, then
    findings by severity, each in probe-file order (so groups stay together)."""
    worst: dict[tuple[int, str], tuple[int, tuple]] = {}
    for f in findings:
        key = (id(f.suite), f.where)
        worst[key] = min(worst.get(key, (9, f.order)), (SEVERITY[f.kind], f.order))
    return sorted(findings, key=lambda f: (f.suite.verdict != "failed", f.order[0], worst[id(f.suite), f.where],
                                           SEVERITY[f.kind], f.order))


def collect(result: RunResult) -> list[Finding]:
    """All findings (`litmus.verdict` says what one is), ordered suite › flow › step › assertion › scenario
    (the order of the probe file), the runs of one flow and scenario folded into one."""
    findings: dict[str, Finding] = {}
    for suite_index, suite in enumerate(result.suites):
        _collect_suite(suite_index, suite, findings)
    return sorted(findings.values(), key=lambda f: f.order)


def _collect_suite(suite_index: int, suite: SuiteResult, findings: dict[str, Finding]) -> None:
    # The suite's setup and teardown read like flows of their own, named so (setup first, teardown last).
    flow_order: dict[str, int] = {verdict.SETUP: -1}
    step_order: dict[tuple[str, str], int] = {}
    scenario_order: dict[str | None, int] = {}
    runs_per: Counter[tuple[str, str | None]] = Counter()
    for flow_run in suite.flow_runs:
        flow_order.setdefault(flow_run.flow, len(flow_order))
        scenario_order.setdefault(flow_run.scenario, len(scenario_order))
        runs_per[flow_run.flow, flow_run.scenario] += 1
    flow_order[verdict.TEARDOWN] = len(flow_order)
    scenario_order.setdefault(None, len(scenario_order))
    runs_per[verdict.SETUP, None] = runs_per[verdict.TEARDOWN, None] = 1

    for item in verdict.findings([suite]):
        flow_run, step, kind = item.flow_run, item.step, item.kind
        if item.part == identity.TRANSPORT:
            rule, outcome, line, column, position = TRANSPORT_ERROR, None, step.line, 1, (-1,)
        elif item.part == identity.INTENT:
            rule = NEEDS_REVIEW if kind == "needs_review" else INTENT_EVALUATION
            outcome, line, column, position = None, flow_run.line, 1, None
        else:
            rule = NEEDS_REVIEW if kind == "needs_review" else item.record.type
            outcome, line, column = item.record, item.record.line, item.record.column
            # A conversation assertion (no step) comes after the flow's steps, in the order of the probe.
            assertions = step.assertions if step else flow_run.conversation_assertions
            position = (next(i for i, o in enumerate(assertions) if o is outcome),)
        step_index = step_order.setdefault((flow_run.flow, step.name), len(step_order)) if step \
            else AFTER_STEPS if outcome is not None else -1
        order_in_flow = (step_index, *position) if position else (-1, 0)
        key = identity.report_key(item.key, rule)
        finding = findings.get(key)
        if finding is None:
            order = (suite_index, flow_order[flow_run.flow], *order_in_flow, scenario_order[flow_run.scenario])
            finding = findings[key] = Finding(
                rule, kind, item.level, suite, flow_run, step, outcome, line, column, key,
                identity.fingerprint(item.key), order,
                total_runs=runs_per[flow_run.flow, flow_run.scenario],
            )
        elif item.level == "error" and finding.level != "error":
            # A failure in any run outranks an error in another: show the failing run.
            finding.kind, finding.level, finding.flow_run, finding.step, finding.outcome = (
                kind, item.level, flow_run, step, outcome)
        finding.runs.append(flow_run.run_index)


@dataclass(frozen=True)
class Verdict:
    status: Literal["passed", "passed_with_findings", "failed", "nothing"]
    text: str  # "1 of 2 suites failed", "1 suite passed with 3 findings", "all 2 suites passed"


def run_verdict(result: RunResult, findings: list[Finding]) -> Verdict:
    """The one-line verdict every report heads with. It never contradicts the findings below it:
    suites that passed their pass_threshold with findings are "passed with N findings"."""
    suites = result.suites
    failed = sum(s.verdict == "failed" for s in suites)
    if not suites:
        return Verdict("nothing", "nothing checked: no suite was selected")
    if failed:
        return Verdict("failed", f"{failed} of {count(len(suites), 'suite')} failed")
    counted = "" if len(suites) == 1 else "all "
    if over := verdict.over_cost_limit_text(result):
        return Verdict("failed", f"{counted}{count(len(suites), 'suite')} passed, {over}")
    if findings:
        return Verdict("passed_with_findings",
                       f"{counted}{count(len(suites), 'suite')} passed with {count(len(findings), 'finding')}")
    return Verdict("passed", f"{counted}{count(len(suites), 'suite')} passed")


def suite_verdict(suite: SuiteResult, findings: list[Finding]) -> str:
    """"failed", "passed", or "passed with 3 findings"."""
    found = sum(f.suite is suite for f in findings)
    if suite.verdict == "passed" and found:
        return f"passed with {count(found, 'finding')}"
    return suite.verdict


def judge_ran(result: RunResult) -> bool:
    """Whether any judge call was made or answered from the cache (else judge figures are all zero)."""
    totals = result.judge
    return bool(totals.calls or totals.cached or any(
        record.tiers for suite in result.suites for record in _judge_records(suite)))


def _judge_records(suite: SuiteResult) -> list[JudgeRecord]:
    records = []
    for flow_run in suite.flow_runs:
        if flow_run.intent_evaluation.judge:
            records.append(flow_run.intent_evaluation.judge)
        records += [o.judge for step in flow_run.steps for o in step.assertions if o.judge]
    return records


# ---- text pieces shared by the reporters (plain text; each format escapes them itself) ----

def show(value: Any, limit: int = 300) -> str:
    """A value as JSON, so its type shows: the string `"12.50"` is not the number `12.50`, and a list
    is not its JSON text."""
    return clip(json.dumps(value, ensure_ascii=False, sort_keys=True), limit)


def tier_name(record: JudgeRecord, index: int) -> str:
    tier = record.tiers[index]
    return f"tier {index + 1} ({tier.provider}/{tier.model}{', cached' if tier.cached else ''})"


def judge_text(finding: Finding) -> str | None:
    """Score against threshold, which tier decided (or that none could), without the reason."""
    record = finding.judge
    if record is None or not record.tiers:
        return None
    score = "no score" if finding.score is None else f"score {finding.score:g}"
    threshold = "" if finding.threshold is None else f" vs threshold {finding.threshold:g}"
    last = len(record.tiers) - 1
    if finding.kind == "needs_review":
        decided = f"no tier could decide (last: {tier_name(record, last)})"
    else:
        decided = f"decided by {tier_name(record, last)}"
    if record.escalated and last > 0:
        first = record.tiers[0]
        first_score = "unparseable" if first.score is None else f"score {first.score:g}"
        decided += f", escalated from {tier_name(record, 0)} at {first_score}"
    return f"{score}{threshold}, {decided}"


def judge_reason(finding: Finding) -> str | None:
    record = finding.judge
    if record is None or not record.tiers:
        return None
    return record.tiers[-1].reason or None


def summary_sentence(finding: Finding) -> str:
    """The key point in one sentence: used as SARIF message start, JUnit message and comment line."""
    outcome = finding.outcome
    if finding.rule == TRANSPORT_ERROR:
        request = finding.step.request
        target = f"{request.method} {request.url}" if request else finding.step.name
        label = finding.label
        return f"{target} got {'an ' if label.startswith('incomplete') else ''}{label}: {finding.reason}"
    if finding.kind == "error":
        return f"{finding.label} could not be evaluated: {finding.reason}"
    if finding.kind == "needs_review":
        return f"{finding.label} needs human review: {finding.reason}"
    if outcome is not None and outcome.mismatches:
        # The mismatch's own reason says it best ('expected number, got string "12.50"'); the
        # expected and actual values are in the table every format shows beside it.
        first = outcome.mismatches[0]
        more = len(outcome.mismatches) - 1
        tail = f" (+{more} more mismatch{'es' if more > 1 else ''})" if more else ""
        return f"{finding.label} failed at {first.path}: {clip(first.reason, 160)}{tail}"
    if finding.score is not None and finding.threshold is not None:
        return f"{finding.label} failed: score {finding.score:g} below threshold {finding.threshold:g}"
    return f"{finding.label} failed: {finding.reason}"


def transport_label(step: StepResult) -> str:
    """What a step whose exchange broke off got, as every report names it: "no response" when nothing
    arrived; else what did, which is shown beside it ("→ 200 …, streamed: 5 events"): an incomplete stream
    (cut, or an error event), a redirect with no final response after it, or a body that broke off. A
    conversation turn got a reply the conversation cannot go on with, or no simulated user turn at all."""
    response = step.response
    if step.turn is not None:  # a conversation turn: its reply could not go on (or no simulated user spoke)
        return "a reply that ends the conversation" if response is not None else \
            "no response" if step.request is not None else "no simulated user turn"
    if response is None:
        return "no response"
    if response.status in WAIT_STATUSES:
        return "a rate limit it could not wait out"
    if step.stream is not None:
        return "incomplete stream"
    if 300 <= response.status < 400:
        return "no final response"
    return "incomplete response"


def extra_reason(finding: Finding) -> str | None:
    """The reason, when the headline and the judge line do not already say it (said once)."""
    reason = finding.reason
    if not reason or reason in summary_sentence(finding) or reason == judge_reason(finding):
        return None
    if finding.outcome is not None and finding.outcome.mismatches:
        return None  # the mismatch table says it, row by row
    return reason


def context_text(finding: Finding) -> str:
    """Where and how often: flow › step, scenario, runs."""
    parts = [finding.where]
    if finding.scenario:
        parts.append(f"scenario {finding.scenario}")
    if finding.runs_text():
        parts.append(finding.runs_text())
    return ", ".join(parts)


# How much of a streamed step's assembled text the one-line response summary quotes.
STREAMED_TEXT_CHARS = 200


# Operations a coverage line names before "and N more".
COVERAGE_LISTED = 5


def coverage_parts(coverage: OpenAPICoverage) -> tuple[str, list[str], int]:
    """A suite's OpenAPI coverage for one line: "2 of 9 operations exercised (22%)", the first operations no
    request exercised, and how many more there are (the whole list is in results.json)."""
    return summary(coverage), coverage.missing[:COVERAGE_LISTED], max(0, len(coverage.missing) - COVERAGE_LISTED)


def rate_text(rate) -> str:
    """A compared flow's pass rate with its 95% interval: '2/10 = 20% [5.67–50.98]'."""
    if rate is None:
        return "—"
    return f"{rate.passed}/{rate.total} = {rate.rate:g}% [{rate.low:g}–{rate.high:g}]"


def rate_limited_text(step: StepResult) -> str:
    """The 429 / 503 answers the step waited out before it sent its request again ("" when none)."""
    if not step.rate_limited:
        return ""
    waits = ", ".join(f"{wait.status} for {wait.waited_ms:,.0f} ms" for wait in step.rate_limited)
    return f"waited out {waits}, sending the request again after each"


def regression_reason(flow: FlowComparison, limit: float | None) -> str:
    """Why a compared flow regressed: its tokens or cost beyond --max-cost-increase, or its pass rate."""
    if flow.usage is not None and flow.usage.over_limit:
        return f"regressed: {change_text(flow.usage, limit)}"
    return "regressed: the 95% intervals do not overlap"


# The flows whose tokens and cost against the baseline a report lists (the rest are counted).
MAX_USAGE_ROWS = 20


def usage_rows(summary: BaselineSummary) -> tuple[list[list[str]], int]:
    """Each compared flow's tokens and cost against the baseline, as table cells (flow, here, base, change),
    rises first; and how many more flows were compared than listed."""
    flows = sorted((flow for flow in summary.flows if flow.usage is not None),
                   key=lambda flow: -(flow.usage.change_pct if flow.usage.change_pct is not None else math.inf))
    rows = [[f"{flow.suite} › {flow.flow}", totals_text(flow.usage.here, "step"),
             totals_text(flow.usage.baseline, "step"), change_text(flow.usage, summary.max_cost_increase)]
            for flow in flows[:MAX_USAGE_ROWS]]
    return rows, len(flows) - len(rows)


def response_text(step: StepResult) -> str:
    if step.response is None:
        return f"no response ({step.error})" if step.error else "no response"
    text = f"{step.response.status} in {step.response.elapsed_ms:g} ms"
    stream = step.stream
    if stream is not None:
        first = "no event" if stream.first_event_ms is None else f"first at {stream.first_event_ms:g} ms"
        events = count(stream.events_count, 'event')
        text += f", streamed: {events}, {first}{'' if stream.done else ', not finished'}; " \
                f"text: {show(stream.text, STREAMED_TEXT_CHARS)}"
    return text


# Headers curl sets itself from the command: repeating them breaks the command once the body is edited.
_CURL_COMPUTES = {"content-length", "connection", "host"}
# What requests adds to every request, for documents without `probe_headers`: not the probe's headers.
_LIBRARY_DEFAULTS = {"user-agent", "accept", "accept-encoding", "connection", "cookie"}
COOKIE_JAR = "cookies.txt"


def curl_command(request: RequestExcerpt, body_limit: int | None = None, step_index: int = 0,
                 steps: int = 1) -> str:
    """A curl that replays the (already redacted) request: the probe's headers only, each secret as
    "$NAME" (its environment variable), `--compressed` when the request accepted gzip, for a flow of
    several steps a cookie jar the steps share, as the flow's session did; redirects followed as the run
    followed them (`-L --max-redirs N`), basic auth as `-u`, digest auth as `--digest -u`, a body_file as
    `--data-binary @FILE` and a multipart body as its `-F` parts (files named from the repository root, where the
    command is run).

    The request comes from a results.json that may not be ours (`litmus report`, `merge:`), and the
    command is meant to be pasted into a shell: every word from it is single-quoted, a secret name
    that is not a shell variable name stands as "$LITMUS_SECRET_n", and the notes are comments whose
    text is printable ASCII (nothing in them can end the line)."""
    if request.probe_headers is None:
        names = [n for n in request.headers if n.lower() not in _LIBRARY_DEFAULTS]
    else:
        names = [n for n in request.probe_headers if n in request.headers]
    names = [n for n in names if n.lower() not in _CURL_COMPUTES]
    if request.multipart is not None:  # curl writes the multipart Content-Type with its own boundary
        names = [n for n in names if n.lower() != "content-type"]
    if request.basic_auth is not None or request.digest_auth is not None:  # `-u` sends it
        names = [n for n in names if n.lower() != "authorization"]
    unnamed = [n for n in names if not _HEADER_NAME.fullmatch(n)]
    variables = _SecretVariables(request.secrets)
    argv = ["curl"]
    accepted = " ".join(v for n, v in request.headers.items() if n.lower() == "accept-encoding")
    if "gzip" in accepted:
        argv.append("--compressed")
    if steps > 1:
        argv += ["-b", COOKIE_JAR, "-c", COOKIE_JAR] if step_index else ["-c", COOKIE_JAR]
    follows = isinstance(request.max_redirects, int) and request.max_redirects >= 0
    if follows:
        argv += ["-L", "--max-redirs", str(request.max_redirects)]
    method = request.method.upper()
    sends_body = request.body is not None or request.body_file is not None or request.multipart is not None
    # A body makes curl POST; with -L, `-X POST` would also keep POST after a 301/302/303, where the run sent GET.
    if method != "GET" and not (follows and method == "POST" and sends_body):
        argv += ["-X", shlex.quote(method)]
    # A positional word starting with "-" would be an option: anything but http(s) goes behind --url.
    url = variables.word(request.url)
    argv += [url] if request.url.startswith(("http://", "https://")) else ["--url", url]
    for name in names:
        header = variables.word(f"{name}: {request.headers[name]}")
        if name not in unnamed:  # `-H @file` would read a file: only real header names are sent
            argv += ["-H", header]
    shortened = request.body_truncated
    unsendable: list[str] = []
    if request.multipart is not None:
        shortened = False  # the parts are the body, whole
        for part in request.multipart:
            form = _form_argument(part, variables)
            if form is None:
                unsendable.append(part.name)
            else:
                argv += form
    elif request.body_file is not None:
        shortened = False
        if _repository_path(request.body_file):
            argv += ["--data-binary", "@" + variables.word(request.body_file)]
        else:
            unsendable.append("the body file")
    elif request.body is not None:
        body = request.body
        if body_limit is not None and len(body) > body_limit:
            body, shortened = clip(body, body_limit), True
        argv += ["--data-raw", variables.word(body)]
    if request.tls is not None:
        argv += _tls_arguments(request.tls, variables, unsendable)
    if request.basic_auth is not None:
        argv += ["-u", variables.word(f"{request.basic_auth.username}:{request.basic_auth.password}")]
    elif request.digest_auth is not None:
        argv += ["--digest", "-u", variables.word(f"{request.digest_auth.username}:{request.digest_auth.password}")]
    command = " ".join(argv)
    notes = variables.notes()
    if MASK in command:  # a mask no secret name stands behind (a credential header, an extracted token)
        notes.append("# *** is a value the results never hold (a credential or secret): put it in before running")
    if unnamed:
        notes.append(f"# left out: {count(len(unnamed), 'header')} whose name is not a header name: "
                     f"{_comment_text(', '.join(unnamed))}")
    if unsendable:
        notes.append(f"# left out, as curl cannot send them as recorded: {_comment_text(', '.join(unsendable))}")
    if request.body_file is not None or any(p.file is not None for p in request.multipart or ()) or \
            (request.tls is not None and (request.tls.ca_file or request.tls.client_cert)):
        notes.append("# run from the repository root: the file path is relative to it")
    if shortened:
        notes.append("# body shortened in the results: see report.html / results.json")
    if steps > 1:
        notes.append("# run the flow's earlier steps first: they fill cookies.txt, as the flow's session did"
                     if step_index else "# saves the cookies the flow's later steps send (cookies.txt)")
    return "\n".join([command, *notes]) if notes else command


def step_curl(flow_run: FlowRunResult, step: StepResult, body_limit: int | None = None) -> str | None:
    """The curl of one step of a flow run (None when no request was sent)."""
    if step.request is None:
        return None
    index = next(i for i, s in enumerate(flow_run.steps) if s is step)
    return curl_command(step.request, body_limit, index, len(flow_run.steps))


def _tls_arguments(tls: TlsOptions, variables: _SecretVariables, unsendable: list[str]) -> list[str]:
    """`-k`, `--cacert`, `--cert`, `--key` for the request's `tls:` (files named from the repository root)."""
    argv = [] if tls.verify else ["-k"]
    for option, path in (("--cacert", tls.ca_file), ("--cert", tls.client_cert), ("--key", tls.client_key)):
        if path is not None and _repository_path(path):
            argv += [option, variables.word(path)]
        elif path is not None:
            unsendable.append(f"the TLS file of {option}")
    return argv


def _form_argument(part: FormPart, variables: _SecretVariables) -> list[str] | None:
    """curl's arguments for one multipart part as it was sent; None for one curl cannot send so (`-F` ends
    the name at the first `=`, reads curl options in a type that is no media type) or that names a file
    outside the repository (the results may be a downloaded document: a pasted curl must not upload
    `~/.ssh/id_rsa`). A plain text part is `--form-string`, whose value curl never reads as a file (`@x`,
    `<x`); a typed one and a file are `-F`, their words double-quoted as curl reads them."""
    if not part.name or "=" in part.name:
        return None
    if part.content_type is not None and not _media_type(part.content_type):
        return None
    if part.file is not None and not _repository_path(part.file):
        return None
    if part.file is None:
        value = part.value or ""
        if part.content_type is None:
            return ["--form-string", variables.word(f"{part.name}={value}")]
        return ["-F", variables.word(f"{part.name}={_form_quoted(value)};type={part.content_type}")]
    spec = f"{part.name}=@{_form_quoted(part.file)}"
    if part.filename is not None:
        spec += f";filename={_form_quoted(part.filename)}"
    if part.content_type is not None:
        spec += f";type={part.content_type}"
    return ["-F", variables.word(spec)]


def _repository_path(path: str) -> bool:
    """Whether `path` names a file inside the repository the command runs in: relative, no `..`, no
    version-control folder (`.git/config` holds tokens), nothing curl reads otherwise (`-`: stdin)."""
    parts = PurePosixPath(path).parts
    return (bool(parts) and not path.startswith(("/", "-", "~")) and "\\" not in path
            and not any(part == ".." or part in VCS_DIRECTORIES for part in parts))


# RFC 9110 token: what requests sends as a header name, and the words of a media type.
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
# A media type with plain parameters: curl reads `;type=` up to its own keywords, never a file.
_MEDIA_TYPE = re.compile(rf"{_TOKEN}/{_TOKEN}(?:\s*;\s*{_TOKEN}={_TOKEN})*")
_CURL_FORM_KEYWORDS = {"type", "filename", "headers", "encoder"}


def _media_type(text: str) -> bool:
    if not _MEDIA_TYPE.fullmatch(text):
        return False
    names = re.findall(rf";\s*({_TOKEN})=", text)
    return not any(name.lower() in _CURL_FORM_KEYWORDS for name in names)


def _form_quoted(text: str) -> str:
    """`text` as a double-quoted `-F` word, in which `;` is text and curl reads a backslash or a double
    quote escaped by a backslash."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# `@` is no token (curl's `-H @file`).
_HEADER_NAME = re.compile(_TOKEN)
_SHELL_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A secret whose name is no shell variable name stands as $LITMUS_SECRET_1, _2...
_PLACEHOLDER = "LITMUS_SECRET_"


def _comment_text(text: str) -> str:
    """`text` for a shell comment: printable ASCII only (JSON escapes for the rest, quotes kept), so no
    newline, carriage return or line separator in it can end the comment and start a command."""
    return json.dumps(text)[1:-1]


class _SecretVariables:
    """The shell variable each `***` of a request stands for, in the order the masks appear. A secret
    name that is not a shell variable name (`MY-KEY` would expand `$MY`; a name from a hostile
    results.json could be `$(...)`) becomes LITMUS_SECRET_1, _2... with a note saying which is which."""

    def __init__(self, secrets: list[str]):
        self._names = iter(secrets)
        self._placeholders: dict[str, str] = {}

    def _variable(self, name: str) -> str:
        if _SHELL_VARIABLE.fullmatch(name):
            return name
        if name not in self._placeholders:
            self._placeholders[name] = f"{_PLACEHOLDER}{len(self._placeholders) + 1}"
        return self._placeholders[name]

    def word(self, text: str) -> str:
        """One shell word: literal text single-quoted, and each `***` a named secret stands behind as
        "$VARIABLE" (a mask of unknown origin stays literal)."""
        pieces = text.split(MASK)
        out, literal = [], pieces[0]
        for piece in pieces[1:]:
            name = next(self._names, None)
            if name is None:
                literal += MASK + piece
                continue
            if literal:
                out.append(shlex.quote(literal))
            out.append(f'"${self._variable(name)}"')
            literal = piece
        if literal or not out:
            out.append(shlex.quote(literal))
        return "".join(out)

    def notes(self) -> list[str]:
        return [f'# "${variable}" is the secret "{_comment_text(name)}": set {variable} to it before running'
                for name, variable in self._placeholders.items()]


@dataclass
class SuiteStats:
    runs_passed: int
    runs_total: int
    assertions: Counter
    judge_calls: int
    judge_cached: int
    judge_escalated: int
    judge_needs_review: int
    judge_tokens: int


def suite_stats(suite: SuiteResult) -> SuiteStats:
    """Per-suite counts. Judge figures come from the judge records of its outcomes and intent evaluations."""
    assertions: Counter[str] = Counter(o.status for flow_run in suite.flow_runs for step in flow_run.steps
                                       for o in step.assertions)
    records = _judge_records(suite)
    needs_review = sum(flow_run.intent_evaluation.status == "needs_review" for flow_run in suite.flow_runs)
    tiers = [tier for record in records for tier in record.tiers]
    return SuiteStats(
        runs_passed=sum(run.status == "passed" for run in suite.flow_runs),
        runs_total=len(suite.flow_runs),
        assertions=assertions,
        judge_calls=sum(not tier.cached for tier in tiers),
        judge_cached=sum(tier.cached for tier in tiers),
        judge_escalated=sum(record.escalated for record in records),
        judge_needs_review=needs_review + assertions["needs_review"],
        judge_tokens=sum(tier.input_tokens + tier.output_tokens for tier in tiers),
    )


# ---- conversations: the numbered transcript every report shows for a conversation flow's finding

# `turns[N]` in a transcript judge's mismatch path: the turn it blames (1-based).
TURN_PATH = re.compile(r"^turns\[(\d+)\]")
# How much of one message a report quotes.
TRANSCRIPT_MESSAGE_CHARS = 600


@dataclass(frozen=True)
class TranscriptTurn:
    number: int  # 1-based: the N-th user message and what followed it
    messages: list[dict[str, str]]  # the user's message, the reply, tool results


def transcript_turns(transcript: list[dict[str, str]]) -> tuple[str | None, list[TranscriptTurn]]:
    """The system message (if any) and the transcript's turns, numbered as `turns[N]` numbers them."""
    system = None
    turns: list[TranscriptTurn] = []
    for message in transcript:
        if message.get("role") == "system" and not turns:
            system = message.get("content")
        elif message.get("role") == "user" or not turns:
            turns.append(TranscriptTurn(len(turns) + 1, [message]))
        else:
            turns[-1].messages.append(message)
    return system, turns


def turns_at_fault(finding: Finding) -> set[int]:
    """The turns a conversation finding blames: the step's own turn, or the `turns[N]` its judge named."""
    if finding.step is not None:
        return {finding.step.turn} if finding.step.turn else set()
    return blamed_turns(finding.outcome) if finding.outcome is not None else set()


def blamed_turns(outcome: AssertionOutcome) -> set[int]:
    """The turns a transcript judge named in its mismatches (`turns[N]`)."""
    return {int(match.group(1)) for m in outcome.mismatches if (match := TURN_PATH.match(m.path))}


def transcript_text(transcript: list[dict[str, str]], at_fault: set[int]) -> str:
    """The transcript as numbered plain text, each turn at fault marked `▶` with a `◀ turn N at fault` line."""
    system, turns = transcript_turns(transcript)
    lines = [f"   system: {clip(system, TRANSCRIPT_MESSAGE_CHARS)}"] if system else []
    for turn in turns:
        marked = turn.number in at_fault
        for index, message in enumerate(turn.messages):
            head = f"{'▶' if marked else ' '}{turn.number:>2}" if index == 0 else "   "
            text = clip(message.get("content", ""), TRANSCRIPT_MESSAGE_CHARS).replace("\n", "\n" + " " * 15)
            lines.append(f"{head} {message.get('role', ''):>9}: {text}")
        if marked:
            lines.append(f"   ◀ turn {turn.number} at fault")
    return "\n".join(lines)
