"""The judge's side of the judged assertion types (litmus.assertions.judged, whose `evaluate` hands
each to the judge service): choose the judged text (`select`, else the body), render and redact the
type's fields, build the type's prompt, and turn the service's decision into an `AssertionOutcome`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from litmus.assertions._jsonpaths import find
from litmus.decisions import Decision as HumanDecision
from litmus.decisions import content_sha256, decide_outcome
from litmus.judges.escalation import Decision
from litmus.judges.prompts import SCENARIO_TYPES, Block, Prompt, assertion_prompt, transcript_prompt, turn_count
from litmus.response import BodyNotJSON
from litmus.results import AssertionOutcome, JudgedReply, JudgeRecord, Mismatch
from litmus.text import MARK

if TYPE_CHECKING:
    from litmus.assertions.base import EvalContext
    from litmus.model import Assertion, Scenario

# The judged text is cut here: enough for any chat reply, bounded for cost.
MAX_JUDGED_CHARS = 20_000
DEFAULT_THRESHOLD = 75.0
# A turn as a judge may name it: `turns[3]`, `$.turns[3]`, `turn 3`, `Turn 3, assistant`, `3`.
TURN = re.compile(r"\s*(?:\$\.?)?(?:turns?)?\s*[\[.]?\s*(\d+)\b", re.IGNORECASE)


class NotJudgeable(Exception):
    """The assertion cannot be put to a judge (bad select, missing scenario field); an `error` outcome."""


class JudgedInput(NamedTuple):
    """What a judge is asked about one assertion: the redacted prompt, where the judged text is in the
    response (a concrete JSON path, or `$`), and the content hash of the unmasked input (`litmus.decisions`)."""

    prompt: Prompt
    where: str
    content_sha256: str


def build_prompt(assertion: Assertion, ctx: EvalContext) -> JudgedInput:
    """The judged input of one assertion; NotJudgeable when it cannot be built."""
    redact = ctx.redact
    rendered = _rendered_fields(assertion, ctx)
    params = {name: redact(value) for name, value in rendered.items()}
    scenario_data, reference, facts = _scenario_context(assertion, ctx)
    text, where = judged_text(assertion.select, ctx)
    judged = Block("response", _judged_label(assertion.select), redact(text))
    intent = redact(ctx.suite.intent) if ctx.suite.intent else None
    content = content_sha256(assertion.type, rendered, text, facts)
    return JudgedInput(assertion_prompt(assertion.type, params, judged, intent, scenario_data, reference), where,
                       content)


def build_transcript_prompt(assertion: Assertion, transcript: list[dict], ctx: EvalContext) -> JudgedInput:
    """The judged input of one assertion judged on a conversation's transcript (given unmasked: the content
    hash is over it, the prompt gets each message redacted and cut like a judged response)."""
    redact = ctx.redact
    rendered = _rendered_fields(assertion, ctx)
    if assertion.type == "conversation_completeness" and not rendered.get("goal"):
        if not ctx.suite.intent:
            raise NotJudgeable("conversation_completeness needs the user's goal: give it a `goal`, or give the "
                               "suite an `intent`")
        rendered["goal"] = ctx.suite.intent.strip()
    scenario_data, reference, facts = _scenario_context(assertion, ctx)
    # Masked before the cut: a secret across the cut must not leave a readable part behind.
    masked = [{**message, "content": _cut(redact(rendered_text(message.get("content", ""))))}
              for message in transcript]
    intent = redact(ctx.suite.intent) if ctx.suite.intent else None
    text = json.dumps(transcript, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    prompt = transcript_prompt(assertion.type, {name: redact(value) for name, value in rendered.items()}, masked,
                               intent, scenario_data, reference)
    return JudgedInput(prompt, "$", content_sha256(assertion.type, rendered, text, facts))


def _rendered_fields(assertion: Assertion, ctx: EvalContext) -> dict[str, str]:
    """The assertion's fields rendered, unmasked (the content hash is over them)."""
    try:
        return {name: rendered_text(ctx.render(value)) for name, value in assertion.params.items()}
    except Exception as exc:  # a template that cannot be rendered makes this assertion, and only it, an error
        raise NotJudgeable(f"cannot render the assertion's fields: {exc}") from None


def _scenario_context(assertion: Assertion, ctx: EvalContext) -> tuple[str | None, str | None, dict[str, Any] | None]:
    """For a scenario-aware type: the scenario's data and reference as the prompt shows them (masked), and
    the facts the content hash covers; (None, None, None) for any other type."""
    if assertion.type not in SCENARIO_TYPES:
        return None, None, None
    scenario = ctx.scenario
    scenario_data = ctx.redact(json.dumps(scenario.data, indent=2, ensure_ascii=False, default=str))
    reference = None
    if assertion.type == "accurate_with_scenario_context":
        if not scenario.reference_response:
            raise NotJudgeable(f"scenario {scenario.id!r} has no reference_response to compare with")
        reference = ctx.redact(scenario.reference_response)
    return scenario_data, reference, scenario_facts(scenario)


def turn_placer(transcript: list[dict]) -> Callable[[Mismatch], Mismatch]:
    """Places a judge's mismatch at `turns[N]` (1-based) when it names a turn of `transcript`; a turn number
    outside it, or no turn number, is dropped (the path is `$`, the whole conversation), the reason kept."""
    turns = turn_count(transcript)

    def place(mismatch: Mismatch) -> Mismatch:
        named = TURN.match(mismatch.path)
        number = int(named.group(1)) if named else 0
        path = f"turns[{number}]" if 1 <= number <= turns else "$"
        return Mismatch(path, mismatch.expected, mismatch.actual, mismatch.reason)

    return place


def scenario_facts(scenario: Scenario | None) -> dict[str, Any] | None:
    """What the content hash takes of a scenario: its data and reference (None without a scenario)."""
    return None if scenario is None else {"data": scenario.data, "reference": scenario.reference_response}


def human_outcome(assertion: Assertion, decision: HumanDecision, threshold: float, where: str,
                  reply: JudgedReply | None = None) -> AssertionOutcome:
    """The outcome a human decision gives in the judge's place (no judge was called)."""
    decided = outcome(assertion, "needs_review", "", threshold=threshold, reply=reply)
    decided.critical = assertion.critical
    decide_outcome(decided, decision, where)
    return decided


def judged_text(select: str | None, ctx: EvalContext) -> tuple[str, str]:
    """`selected_text` cut to MAX_JUDGED_CHARS: what a judge is shown."""
    text, where = selected_text(select, ctx)
    return _cut(text), where


def _cut(text: str) -> str:
    if len(text) <= MAX_JUDGED_CHARS:
        return text
    return text[:MAX_JUDGED_CHARS] + f"\n[{MARK} {len(text) - MAX_JUDGED_CHARS} more characters cut by Litmus]"


def judged_reply(assertion: Assertion, ctx: EvalContext) -> JudgedReply | None:
    """For scenario-aware types, the whole selected text as results.json keeps it (None for other types, or
    when `select` chooses nothing): redacted, and saying whether redaction or the body cap changed it."""
    if assertion.type not in SCENARIO_TYPES:
        return None
    try:
        text, _ = selected_text(assertion.select, ctx)
    except NotJudgeable:
        return None
    masked = ctx.redact(text)
    return JudgedReply(masked, truncated=ctx.response.truncated, masked=masked != text)


def selected_text(select: str | None, ctx: EvalContext) -> tuple[str, str]:
    """The body text, or the `select`ed JSON node(s): one string node as is, else JSON; and where it is
    (`$`, the one node's concrete path, or the expression when it matched several nodes)."""
    where = "$"
    if select is None:
        text = ctx.response.text
    else:
        try:
            matches = find(select, ctx.response.json())
        except BodyNotJSON as exc:
            raise NotJudgeable(f"select {select}: {exc}") from None
        if not matches:
            raise NotJudgeable(f"select {select} matches no node in the response")
        where, value = matches[0] if len(matches) == 1 else (select, [v for _, v in matches])
        text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    return text, where


def threshold_for(assertion: Assertion, ctx: EvalContext, default: float) -> float:
    if assertion.threshold is not None:
        return float(assertion.threshold)
    suite_judge = ctx.suite.judge
    if suite_judge is not None and suite_judge.threshold is not None:
        return float(suite_judge.threshold)
    return default


def decision_outcome(assertion: Assertion, decision: Decision, threshold: float, where: str,
                     reply: JudgedReply | None = None,
                     place: Callable[[Mismatch], Mismatch] | None = None) -> AssertionOutcome:
    """The outcome of a judge's decision; `place` puts each of the judge's mismatches (default: at the
    scenario-data path for scenario-aware types, else at `where`)."""
    place = place or (lambda mismatch: _placed(mismatch, assertion.type, where))
    mismatches = [place(m) for m in (decision.verdict.mismatches if decision.verdict else ())]
    if decision.status != "passed" and not mismatches:
        expected = f"a score of at least {threshold:g}" if decision.status == "failed" else "a judge verdict"
        actual = decision.score if decision.status == "failed" else None
        mismatches = [Mismatch(where, expected, actual, decision.reason)]
    if decision.status == "passed":
        mismatches = []
    return outcome(
        assertion, decision.status, decision.reason, mismatches=mismatches, score=decision.score,
        threshold=threshold,
        judge=JudgeRecord(escalated=decision.escalated, tiers=[t.record for t in decision.tiers]), reply=reply,
    )


def outcome(assertion: Assertion, status: str, reason: str, **fields) -> AssertionOutcome:
    return AssertionOutcome(
        type=assertion.type, status=status, reason=" ".join(reason.split()), line=assertion.pos.line,
        column=assertion.pos.column, name=assertion.name, **fields,
    )


def _placed(mismatch: Mismatch, kind: str, where: str) -> Mismatch:
    """Scenario-aware types keep the judge's path as `scenario.data.<path>`; the others point at the
    judged text (`select`, else `$`), whatever label the judge gave."""
    if kind not in SCENARIO_TYPES:
        return Mismatch(where, mismatch.expected, mismatch.actual, mismatch.reason)
    return Mismatch(scenario_path(mismatch.path), mismatch.expected, mismatch.actual, mismatch.reason)


def scenario_path(path: str) -> str:
    """`eta`, `$.eta`, `data.eta`, `scenario.data.eta` -> `scenario.data.eta`."""
    path = path.strip()
    if path.startswith(("scenario.data", "scenario.reference_response")):
        return path
    for prefix in ("$.", "$", "scenario.", "data."):
        if path.startswith(prefix):
            path = path[len(prefix):]
    if not path:
        return "scenario.data"
    return "scenario.data" + ("" if path.startswith("[") else ".") + path


def _judged_label(select: str | None) -> str:
    return f"The response to judge (the part selected by {select})" if select else "The response to judge (HTTP body)"


def rendered_text(value: Any) -> str:
    """A rendered field as the text a judge reads (JSON for anything but a string)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
