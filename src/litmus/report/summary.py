"""The job summary (`summary.md`, for `$GITHUB_STEP_SUMMARY`): the comment's content, without the
sticky marker, within GitHub's 1 MiB per-step limit (measured in UTF-8 bytes, with a margin), plus a
bar chart of pass rate per suite against its threshold that GitHub draws natively (Mermaid).

It lists every finding the comment lists, and more of them: code scanning shows an alert on a PR
only when its line is in the diff, so the summary and the comment must carry the findings themselves.
"""

from __future__ import annotations

import json
import re

from litmus.report.markdown import SUMMARY, document
from litmus.report.options import Options
from litmus.results import RunResult
from litmus.text import clip

# Suites charted at most: past that the bars are too thin to read (the table lists every suite).
CHART_SUITES = 30
# A label is a Mermaid double-quoted string, which has no escapes (xychart's grammar: `"` starts it,
# the next `"` ends it; `"`` ` starts a Markdown string instead), and is lexed after Mermaid turns
# `#name;` into an entity. What could end or change it is replaced by a look-alike that cannot.
_LABEL_LOOK_ALIKES = str.maketrans({'"': "'", "`": "'", "[": "(", "{": "(", "]": ")", "}": ")", ";": ","})
_LABEL_DROPPED = re.compile(r"[\\<>\x00-\x1f\x7f\u2028\u2029]")
# `%%` right after the opening quote starts a Mermaid comment that swallows the rest of the line.
_COMMENT_START = re.compile(r"%{2,}")


def render(result: RunResult, **options) -> str:
    chart = pass_rate_chart(result)
    return document(result, Options(**options), SUMMARY, extra=(chart,) if chart else ())


def chart_label(name: str) -> str:
    """A suite name as a Mermaid quoted label (the rules above), at most 40 characters."""
    text = " ".join(_LABEL_DROPPED.sub(" ", name.translate(_LABEL_LOOK_ALIKES)).split())
    return json.dumps(clip(_COMMENT_START.sub("%", text) or "suite", 40), ensure_ascii=False)


def pass_rate_chart(result: RunResult) -> str | None:
    """A Mermaid `xychart-beta`: one bar per suite (pass rate, %) and a line of its pass_threshold."""
    suites = result.suites[:CHART_SUITES]
    if not suites:
        return None
    labels = ", ".join(chart_label(s.name) for s in suites)
    rates = ", ".join(f"{s.pass_rate:.1f}" for s in suites)
    thresholds = ", ".join(f"{s.pass_threshold:.1f}" for s in suites)
    return "\n".join([
        "```mermaid",
        "xychart-beta",
        '    title "Flow runs passed per suite (bars, %) against the pass threshold (line, %)"',
        f"    x-axis [{labels}]",
        '    y-axis "percent" 0 --> 100',
        f"    bar [{rates}]",
        f"    line [{thresholds}]",
        "```",
    ])
