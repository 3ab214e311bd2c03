"""The job summary (`summary.md`, for `$GITHUB_STEP_SUMMARY`): the comment's content, without the
sticky marker, within GitHub's 1 MiB per-step limit (measured in UTF-8 bytes, with a margin).

It lists every finding the comment lists, and more of them: code scanning shows an alert on a PR
only when its line is in the diff, so the summary and the comment must carry the findings themselves.
"""

from __future__ import annotations

from litmus.report.markdown import SUMMARY, document
from litmus.report.options import Options
from litmus.results import RunResult


def render(result: RunResult, **options) -> str:
    return document(result, Options(**options), SUMMARY)
