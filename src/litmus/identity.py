"""Stable identities of flows and findings: the one definition that the report's finding list, SARIF
fingerprints and the baseline comparison share (what a finding *is* is `litmus.verdict`'s).

A key is built from names the probe author chose (suite, flow, step, assertion name) and from the
assertion's ordinal among the step's assertions of its type, plus the scenario id. It never holds a
line number, a message or a run index, so a finding keeps its identity when a comment line is added
above it, when a reason's wording changes, across runs of a flow, and across shards of one run.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator

from litmus.results import AssertionOutcome, FlowRunResult, StepResult, SuiteResult

TRANSPORT = "transport"  # a step's "no response" finding
INTENT = "intent"  # a flow run's judged Intent Evaluation finding
CONVERSATION = "conversation"  # a flow run's conversation assertions: `conversation#` + the assertion key


def assertion_keys(step: StepResult) -> list[str]:
    """A key per assertion of a step: `name=LABEL` when it has a name, else `TYPE#ORDINAL` among the
    step's unnamed assertions of that type (adding a `status_code` check does not renumber `json_path`s)."""
    return keys_of(step.assertions)


def keys_of(assertions: Iterable) -> list[str]:
    """`assertion_keys` of anything with a `name` and a `type`: outcomes, or the probe's own assertions
    (the judge path knows a finding's identity before its outcome exists)."""
    seen: Counter[str] = Counter()
    keys = []
    for assertion in assertions:
        if assertion.name:
            keys.append(f"name={assertion.name}")
        else:
            keys.append(f"{assertion.type}#{seen[assertion.type]}")
            seen[assertion.type] += 1
    return keys


def step_finding_ids(suite: str, flow: str, scenario: str | None, step: str, assertions: Iterable) -> list[str]:
    """The finding id (`fingerprint`) of each assertion of a step, in order, from the probe's own assertions:
    the ids `litmus.verdict.stamp` writes into results.json later."""
    return [fingerprint(finding_key(suite, flow, scenario, step, part)) for part in keys_of(assertions)]


def conversation_keys(assertions: Iterable) -> list[str]:
    """A key per conversation assertion of a flow: `conversation#name=LABEL` or `conversation#TYPE#ORDINAL`
    (flow-level like INTENT, so no step name; the prefix keeps them apart from the Intent Evaluation)."""
    return [f"{CONVERSATION}#{key}" for key in keys_of(assertions)]


def conversation_finding_ids(suite: str, flow: str, scenario: str | None, assertions: Iterable) -> list[str]:
    """The finding id of each conversation assertion of a flow, from the probe's own assertions."""
    return [fingerprint(finding_key(suite, flow, scenario, "", part)) for part in conversation_keys(assertions)]


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


def conversation_outcome_keys(suite: SuiteResult,
                              flow_run: FlowRunResult) -> Iterator[tuple[AssertionOutcome, str, str]]:
    """Each conversation assertion outcome of a flow run with its assertion key and its finding key."""
    for outcome, part in zip(flow_run.conversation_assertions, conversation_keys(flow_run.conversation_assertions),
                             strict=True):
        yield outcome, part, finding_key(suite.name, flow_run.flow, flow_run.scenario, "", part)
