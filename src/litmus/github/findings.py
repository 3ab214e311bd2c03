"""Findings to annotate: what failed, where in the probe file, most important first. Pure functions.

One finding per probe location and level: an assertion that failed in several flow runs (scenarios,
`runs: N`) is one annotation saying in how many, not N identical ones. Levels: a failed or errored
assertion, a step that got no response and a judged intent that was not met are errors; an outcome
the judges could not decide (`needs_review`) is a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from litmus.results import FlowRunResult, RunResult

# GitHub shows at most this many error and this many warning annotations per step; the rest vanish.
WORKFLOW_ANNOTATIONS_PER_LEVEL = 10
_LEVEL_ORDER = {"error": 0, "warning": 1, "notice": 2}
_MISMATCHES_SHOWN = 5


@dataclass(frozen=True)
class Finding:
    level: str  # error | warning | notice
    file: str
    line: int
    column: int
    title: str
    message: str


def _where(flow_run: FlowRunResult) -> str:
    return f"scenario {flow_run.scenario}" if flow_run.scenario else f"run {flow_run.run_index + 1}"


def _assertion_message(outcome) -> str:
    lines = [outcome.reason]
    for mismatch in outcome.mismatches[:_MISMATCHES_SHOWN]:
        lines.append(f"{mismatch.path}: {mismatch.reason}")
    if len(outcome.mismatches) > _MISMATCHES_SHOWN:
        lines.append(f"... and {len(outcome.mismatches) - _MISMATCHES_SHOWN} more mismatches")
    return "\n".join(lines)


def _raw_findings(result: RunResult) -> Iterable[tuple[Finding, str]]:
    """(finding, which flow run) in document order, one per failing outcome."""
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            head = f"{suite.name} › {flow_run.flow}"
            for step in flow_run.steps:
                if step.status == "error" and step.error:
                    yield Finding("error", suite.file, step.line, 1, f"{head} › {step.name}: no response",
                                  step.error), _where(flow_run)
                for outcome in step.assertions:
                    level = {"failed": "error", "error": "error", "needs_review": "warning"}.get(outcome.status)
                    if level is None:
                        continue
                    label = outcome.name or outcome.type
                    state = {"failed": "failed", "error": "could not be evaluated",
                             "needs_review": "needs review"}[outcome.status]
                    yield Finding(level, suite.file, outcome.line, outcome.column,
                                  f"{head} › {step.name}: {label} {state}", _assertion_message(outcome)), \
                        _where(flow_run)
            intent = flow_run.intent_evaluation
            if intent.method == "judge" and intent.status != "passed":
                level = "warning" if intent.status == "needs_review" else "error"
                yield Finding(level, suite.file, flow_run.line, 1, f"{head}: intent {intent.status.replace('_', ' ')}",
                              intent.reason), _where(flow_run)


def findings(result: RunResult) -> list[Finding]:
    """Every finding of a run, merged by location and level, errors first, then in document order."""
    merged: dict[tuple, tuple[Finding, list[str]]] = {}
    for finding, where in _raw_findings(result):
        key = (finding.level, finding.file, finding.line, finding.column, finding.title)
        if key in merged:
            merged[key][1].append(where)
        else:
            merged[key] = (finding, [where])
    out = []
    for finding, wheres in merged.values():
        if len(wheres) > 1:
            finding = Finding(finding.level, finding.file, finding.line, finding.column, finding.title,
                              f"{finding.message}\n(in {len(wheres)} flow runs: {', '.join(wheres)})")
        out.append(finding)
    return sorted(out, key=lambda f: _LEVEL_ORDER[f.level])


def select(all_findings: Sequence[Finding], mode: str, changed_files: set[str] | None) -> list[Finding]:
    """The findings to annotate for `annotations: changed | all | none`.

    `changed` keeps findings in probe files the PR changed; outside a PR (no change set known) it keeps all.
    """
    if mode == "none":
        return []
    if mode == "all" or changed_files is None:
        return list(all_findings)
    return [f for f in all_findings if f.file in changed_files]


def cap_per_level(
    selected: Sequence[Finding], limit: int = WORKFLOW_ANNOTATIONS_PER_LEVEL,
) -> tuple[list[Finding], int]:
    """The first `limit` findings of each level (the rest GitHub would drop silently) and how many were left."""
    shown: list[Finding] = []
    counts: dict[str, int] = {}
    for finding in selected:
        counts[finding.level] = counts.get(finding.level, 0) + 1
        if counts[finding.level] <= limit:
            shown.append(finding)
    return shown, len(selected) - len(shown)
