"""A check run of our own ("Litmus") through the Checks API, carrying every annotation.

Workflow commands show at most 10 errors and 10 warnings per step; a check run takes any number of
annotations, 50 per request: the first batch goes with the create call, the rest with updates
(GitHub appends the annotations of each update to the run's list).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from litmus.github.api import GitHubClient
from litmus.github.findings import Annotation
from litmus.text import clip

CHECK_NAME = "Litmus"
ANNOTATIONS_PER_REQUEST = 50
# Checks API limits on output text fields.
SUMMARY_LIMIT = 65_535
TITLE_LIMIT = 255
_LEVELS = {"error": "failure", "warning": "warning", "notice": "notice"}


@dataclass(frozen=True)
class CheckRun:
    id: int
    url: str
    requests: int


def annotation(finding: Annotation) -> dict:
    return {
        "path": finding.file,
        "start_line": finding.line,
        "end_line": finding.line,
        "start_column": finding.column,
        "end_column": finding.column,
        "annotation_level": _LEVELS[finding.level],
        "title": finding.title[:TITLE_LIMIT],
        "message": finding.message[:64_000],
    }


def publish_check_run(
    client: GitHubClient, repository: str, head_sha: str, *, conclusion: str, title: str, summary: str,
    findings: Sequence[Annotation], details_url: str | None = None, name: str = CHECK_NAME,
) -> CheckRun:
    """Create a completed check run with the verdict as conclusion and every finding as an annotation."""
    batches = [list(findings[i: i + ANNOTATIONS_PER_REQUEST]) for i in range(0, len(findings), ANNOTATIONS_PER_REQUEST)]
    output = {"title": clip(title, TITLE_LIMIT), "summary": clip(summary, SUMMARY_LIMIT)}
    body = {
        "name": name, "head_sha": head_sha, "status": "completed", "conclusion": conclusion,
        "output": {**output, "annotations": [annotation(f) for f in (batches[0] if batches else [])]},
    }
    if details_url:
        body["details_url"] = details_url
    created = client.post(f"/repos/{repository}/check-runs", body)
    for batch in batches[1:]:
        client.patch(
            f"/repos/{repository}/check-runs/{created['id']}",
            {"output": {**output, "annotations": [annotation(f) for f in batch]}},
        )
    return CheckRun(created["id"], created.get("html_url", ""), max(1, len(batches)))
