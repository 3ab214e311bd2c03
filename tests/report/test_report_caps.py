"""30,000 failing outcomes: every capped format stays within GitHub's limits and says what it cut."""

from __future__ import annotations

import gzip
import json

import pytest
from report_fixtures import many_failures

from litmus.report import render
from litmus.report.markdown import COMMENT_LIMIT, SUMMARY_LIMIT


@pytest.fixture(scope="module")
def huge():
    return many_failures(30_000)


def test_sarif_within_code_scanning_caps(huge):
    text = render("sarif", huge)
    log = json.loads(text)
    run = log["runs"][0]
    assert len(log["runs"]) == 1
    assert len(run["results"]) == 5_000  # GitHub shows the top 5,000 per run; rejects over 25,000
    assert len(gzip.compress(text.encode("utf-8"))) < 10_000_000
    note = run["invocations"][0]["toolExecutionNotifications"][0]
    assert note["level"] == "note" and note["message"]["text"].startswith("25000 of 30000 results were left out")
    assert run["properties"]["litmus"]["omittedResults"] == 25_000
    # Deterministic: the first 5,000 in file order (all are errors here).
    assert run["results"][0]["properties"]["litmus"]["step"] == "step 0"
    assert run["results"][-1]["properties"]["litmus"]["step"] == "step 499"


def test_sarif_keeps_errors_before_warnings(huge):
    for step in huge.suites[0].flow_runs[0].steps[:100]:
        for outcome in step.assertions:
            outcome.status = "error"  # 1,000 warnings first in file order
    run = json.loads(render("sarif", huge))["runs"][0]
    assert all(r["level"] == "error" for r in run["results"])


def test_sarif_keeps_findings_before_step_warnings():
    """Step warnings decide nothing: when results must be cut, they go before any finding does, even a
    `warning`-level one, and the first in file order are kept."""
    result = many_failures(200)
    steps = result.suites[0].flow_runs[0].steps
    for step in steps:
        step.warnings = [f"request does not conform to GET /items in api/items.yaml: problem {i}" for i in range(5)]
    for outcome in steps[0].assertions:
        outcome.status = "error"  # warning-level findings, first in file order
    run = json.loads(render("sarif", result, max_results=250))["runs"][0]
    kinds = [r["ruleId"] == "request_nonconforming" for r in run["results"]]
    assert kinds == [False] * 200 + [True] * 50
    assert [r["level"] for r in run["results"][:10]] == ["warning"] * 10  # the findings keep their file order
    assert run["results"][200]["message"]["text"].startswith("Request does not conform to GET /items in "
                                                             "api/items.yaml: problem 0. In Huge › big flow › step 0.")
    assert run["properties"]["litmus"] == {"verdict": "failed", "findings": 200, "warnings": 100,
                                           "omittedResults": 50}


def test_comment_within_65536_characters_and_says_how_many_more(huge):
    comment = render("markdown", huge)
    assert len(comment) <= COMMENT_LIMIT
    shown = comment.count("\n#### ")
    assert shown > 10
    assert f"**{30_000 - shown} more findings not shown here**" in comment
    # Whole findings only: the last one shown ends with its closing </details>, tables complete.
    body = comment.split("\n---\n")[0]
    assert body.rstrip().endswith("</details>")
    assert body.count("<details>") == body.count("</details>")


def test_summary_within_one_mebibyte(huge):
    summary = render("summary", huge)
    assert len(summary.encode("utf-8")) <= SUMMARY_LIMIT
    assert "more findings not shown here" in summary
    assert summary.count("\n#### ") > render("markdown", huge).count("\n#### ")


def test_artifact_link_in_the_footer(huge):
    comment = render("markdown", huge, artifact_url="https://github.com/o/r/actions/runs/1/artifacts/2")
    assert "[the report artifact](https://github.com/o/r/actions/runs/1/artifacts/2)" in comment
