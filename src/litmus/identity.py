"""Stable identities of flows and findings: the one definition that the report's finding list, SARIF
fingerprints and the baseline comparison share.

A key is built from names the probe author chose (suite, flow, step, assertion name) and from the
assertion's ordinal among the step's assertions of its type, plus the scenario id. It never holds a
line number, a message or a run index, so a finding keeps its identity when a comment line is added
above it, when a reason's wording changes, across runs of a flow, and across shards of one run.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    RunResult,
    StepResult,
    SuiteResult,
)

TRANSPORT = "transport"  # a step's "no response" finding
INTENT = "intent"  # a flow run's judged Intent Evaluation finding
# Statuses that make a checked thing a finding: a reviewer must look at it.
FINDING_STATUSES = frozenset({"failed", "error", "needs_review"})


def assertion_keys(step: StepResult) -> list[str]:
    """A key per assertion of a step: `name=LABEL` when it has a name, else `TYPE#ORDINAL` among the
    step's unnamed assertions of that type (adding a `status_code` check does not renumber `json_path`s)."""
    seen: Counter[str] = Counter()
    keys = []
    for outcome in step.assertions:
        if outcome.name:
            keys.append(f"name={outcome.name}")
        else:
            keys.append(f"{outcome.type}#{seen[outcome.type]}")
            seen[outcome.type] += 1
    return keys


def flow_key(suite: str, flow: str) -> str:
    """A flow across all its runs and scenarios: what pass rates are compared per."""
    return _join(suite, flow)


def finding_key(suite: str, flow: str, scenario: str | None, step: str, part: str) -> str:
    """One checked thing of one scenario: `part` is an assertion key, TRANSPORT or INTENT (then `step` is "")."""
    return _join(suite, flow, scenario or "", step, part)


def report_key(key: str, rule: str) -> str:
    """A finding key split by rule (the assertion's type, or "needs_review" where no judge could settle
    it): the reports list a failure and an undecided verdict of one assertion apart, and code scanning
    tracks them as separate alerts. The baseline comparison matches on `key` alone."""
    return _join(key, rule)


def fingerprint(key: str) -> str:
    """The key as 32 hex digits: what results.json (`id`) and SARIF (`partialFingerprints`) carry."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _join(*parts: str) -> str:
    # A separator no name can fake: names are YAML strings, and U+001F is refused in them by the loader
    # (control character), so "a / b" + "c" can never equal "a" + "b / c".
    return "\x1f".join(parts)


def outcome_keys(suite: SuiteResult, flow_run: FlowRunResult,
                 step: StepResult) -> Iterator[tuple[AssertionOutcome, str, str]]:
    """Each assertion outcome of a step with its assertion key and its finding key."""
    for outcome, part in zip(step.assertions, assertion_keys(step), strict=True):
        yield outcome, part, finding_key(suite.name, flow_run.flow, flow_run.scenario, step.name, part)


@dataclass(frozen=True)
class Checked:
    """One checked thing of one flow run: an assertion, a step's exchange, or a judged Intent Evaluation.

    `record` is the results object that carries its `id` and `baseline` (the outcome, step or intent).
    """

    key: str
    part: str  # an assertion key, TRANSPORT or INTENT
    status: str
    suite: SuiteResult
    flow_run: FlowRunResult
    step: StepResult | None
    record: AssertionOutcome | StepResult | IntentEvaluation

    @property
    def is_finding(self) -> bool:
        return self.status in FINDING_STATUSES


def phase_runs(suite: SuiteResult) -> list[FlowRunResult]:
    """The suite's setup and teardown, each read as a flow run of its own named `setup` / `teardown`
    (so their steps have identities and findings like any flow's)."""
    return [FlowRunResult(flow=phase, line=steps[0].line, run_index=0, steps=steps,
                          intent_evaluation=IntentEvaluation("passed", "deterministic", phase))
            for phase, steps in (("setup", suite.setup), ("teardown", suite.teardown)) if steps]


def checked(result: RunResult) -> Iterator[Checked]:
    """Everything the run checked, in document order. A failed *deterministic* Intent Evaluation only
    restates its run's failed assertions, so only a judge's Intent Evaluation is a thing of its own."""
    for suite in result.suites:
        for flow_run in [*suite.flow_runs, *phase_runs(suite)]:
            intent = flow_run.intent_evaluation
            if intent.method == "judge" or intent.status in ("error", "needs_review"):
                key = finding_key(suite.name, flow_run.flow, flow_run.scenario, "", INTENT)
                yield Checked(key, INTENT, intent.status, suite, flow_run, None, intent)
            for step in flow_run.steps:
                key = finding_key(suite.name, flow_run.flow, flow_run.scenario, step.name, TRANSPORT)
                got_no_response = step.status == "error" and bool(step.error)
                status = "error" if got_no_response else "skipped" if step.response is None else "passed"
                yield Checked(key, TRANSPORT, status, suite, flow_run, step, step)
                for outcome, part, key in outcome_keys(suite, flow_run, step):
                    yield Checked(key, part, outcome.status, suite, flow_run, step, outcome)


def stamp(result: RunResult) -> RunResult:
    """Write the identities into the results document: `id` on every flow run, step, Intent Evaluation
    and assertion outcome (fingerprints of their keys), so scripts and later comparisons need not
    rebuild them; a finding not compared with any baseline gets `baseline: "none"`."""
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            flow_run.flow_id = fingerprint(flow_key(suite.name, flow_run.flow))
            flow_run.intent_evaluation.id = fingerprint(
                finding_key(suite.name, flow_run.flow, flow_run.scenario, "", INTENT))
    for item in checked(result):
        item.record.id = fingerprint(item.key)
        if item.is_finding and item.record.baseline is None:
            item.record.baseline = "none"
    return result
