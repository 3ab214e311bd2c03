"""Annotations: the report findings as GitHub annotations, most important first. Pure functions.

The findings themselves (what counts, levels, runs folded together) come from
`litmus.report.findings`, the one list every report uses; this module only shapes them for the
annotation channels (check-run annotations, workflow commands) and picks which to show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from litmus.report.findings import collect, context_text, summary_sentence
from litmus.results import RunResult

# GitHub shows at most this many error and this many warning annotations per step; the rest vanish.
WORKFLOW_ANNOTATIONS_PER_LEVEL = 10
_LEVEL_ORDER = {"error": 0, "warning": 1, "notice": 2}
_MISMATCHES_SHOWN = 5
# Appended to the finding's label in the title; a transport error's label ("incomplete stream") says it all.
_STATE = {"failed": " failed", "transport_error": "", "error": " could not be evaluated",
          "needs_review": " needs review"}


@dataclass(frozen=True)
class Annotation:
    level: str  # error | warning | notice
    file: str
    line: int
    column: int
    title: str
    message: str


def annotations(result: RunResult) -> list[Annotation]:
    """Every finding of a run as an annotation, errors first, then in probe-file order."""
    out = []
    for finding in collect(result):
        lines = [summary_sentence(finding)]
        mismatches = finding.outcome.mismatches if finding.outcome else []
        lines += [f"{m.path}: {m.reason}" for m in mismatches[1:_MISMATCHES_SHOWN]]
        if len(mismatches) > _MISMATCHES_SHOWN:
            lines.append(f"... and {len(mismatches) - _MISMATCHES_SHOWN} more mismatches")
        lines.append(f"({context_text(finding)})")
        title = f"{finding.where}: {finding.label}{_STATE[finding.kind]}"
        out.append(Annotation(finding.level, finding.suite.file, finding.line, finding.column, title,
                              "\n".join(lines)))
    return sorted(out, key=lambda a: _LEVEL_ORDER[a.level])


def select(all_annotations: Sequence[Annotation], mode: str, changed_files: set[str] | None) -> list[Annotation]:
    """The annotations to show for `annotations: changed | all | none`.

    `changed` keeps those in probe files the PR changed; outside a PR (no change set known) it keeps all.
    """
    if mode == "none":
        return []
    if mode == "all" or changed_files is None:
        return list(all_annotations)
    return [a for a in all_annotations if a.file in changed_files]


def cap_per_level(
    selected: Sequence[Annotation], limit: int = WORKFLOW_ANNOTATIONS_PER_LEVEL,
) -> tuple[list[Annotation], int]:
    """The first `limit` annotations of each level (the rest GitHub would drop silently) and how many were left."""
    shown: list[Annotation] = []
    counts: dict[str, int] = {}
    for annotation in selected:
        counts[annotation.level] = counts.get(annotation.level, 0) + 1
        if counts[annotation.level] <= limit:
            shown.append(annotation)
    return shown, len(selected) - len(shown)
