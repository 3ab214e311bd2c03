from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from litmus.report import render
from litmus.report.markdown import MARKER
from litmus.report.markdown_text import cell, code, fenced, prose
from litmus.results import JudgeRecord, JudgeTier, Mismatch

PAYLOAD = "a | b </details> <script>alert(1)</script> @octocat `x` ``` #12 &lt;b&gt; [l](javascript:x) <!-- -->"


def github_like() -> MarkdownIt:
    """Raw HTML on, as in a GitHub comment: our own <details> must stay the only HTML."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def outside_code(html: str) -> str:
    return re.sub(r"<code[^>]*>.*?</code>", "", html, flags=re.S)


def json_path_failure(result):
    """The failed json_path outcome of the first flow run (a finding with a mismatch table)."""
    return next(o for o in result.suites[0].flow_runs[0].steps[0].assertions if o.type == "json_path")


def test_comment_structure(result):
    comment = render("markdown", result)
    assert comment.startswith(MARKER)
    assert "## ❌ Litmus: 2 of 2 suites failed" in comment
    tokens = github_like().parse(comment)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "Findings (8)" in headings  # needs_review is a finding like the others, worded once
    assert any(h.startswith("Checkout assistant › Ask about an order › ask") for h in headings)
    # Every finding shows where, the request, a mismatch table, the judge and a curl.
    link = "https://github.com/octo-org/shop/blob/0123456789abcdef0123456789abcdef01234567/probes/checkout.yaml#L32"
    assert f"[`probes/checkout.yaml:32:11`]({link})" in comment
    assert "**Request:** `POST https://shop.example.com/chat?key=***` → 200 in 812\\.25 ms" in comment
    assert '| `$.order.status` | `"delayed"` | `"shipped"` | `expected "delayed", got "shipped"` |' in comment
    assert "decided by tier 2 \\(anthropic\\/claude\\-sonnet\\-4\\-5\\)\\, escalated from tier 1" in comment
    assert ("""curl --compressed -c cookies.txt -X POST 'https://shop.example.com/chat?key='"$SHOP_KEY" """
            """-H 'Authorization: Bearer '"$API_TOKEN" -H 'Content-Type: application/json'""") in comment
    assert "**Why:**" not in comment  # the headline says it once


def test_runs_are_counted_from_one(result):
    comment = render("markdown", result)
    assert "2 of 2 runs \\(runs 1\\, 2\\)" in comment and "1 of 2 runs \\(run 2\\)" in comment
    assert "run 0" not in comment


def test_mismatch_values_are_json_so_types_show(result):
    outcome = json_path_failure(result)
    outcome.mismatches = [Mismatch("$.price", 12.5, "12.50", "expected number, got string"),
                          Mismatch("$.tags", ["a"], '["a"]', "expected array, got string")]
    comment = render("markdown", result)
    assert '| `$.price` | `12.5` | `"12.50"` |' in comment
    assert """| `$.tags` | `["a"]` | `"[\\"a\\"]"` |""" in comment


def test_a_suite_that_passed_with_findings_is_never_a_bare_all_passed(result):
    result.suites = result.suites[:1]
    result.suites[0].verdict, result.verdict = "passed", "passed"  # met its pass_threshold despite failures
    comment = render("markdown", result)
    heading = comment.splitlines()[2]
    assert heading == "## ⚠️ Litmus: 1 suite passed with 6 findings"
    assert "⚠️ passed with 6 findings" in comment  # the suite's row says the same
    assert "✅" not in comment


def test_failing_suites_first_then_findings_by_severity(result):
    result.suites[0].verdict = "passed"  # Checkout assistant passes, Users API fails
    comment = render("markdown", result)
    assert comment.index("### Users API") < comment.index("### Checkout assistant")
    table = [line for line in comment.splitlines() if line.startswith("| [")]
    assert "Users API" in table[0] and "Checkout assistant" in table[1]
    users = comment[comment.index("### Users API"):comment.index("### Checkout assistant")]
    assert users.index("schema failed") < users.index("could not be evaluated")  # failed before error
    checkout = comment[comment.index("### Checkout assistant › Ask about an order › ask"):]
    assert checkout.index("polite reply failed") < checkout.index("needs human review")


def test_judge_columns_only_when_a_judge_ran(result):
    for *_, outcome in result.iter_outcomes():
        outcome.judge = None
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            flow_run.intent_evaluation.judge = None
    result.judge.calls = result.judge.cached = 0
    comment = render("markdown", result)
    assert "| Judge |" not in comment and "Judge, whole run" not in comment and "**Judge:**" not in comment


def test_an_oversized_finding_is_shortened_not_the_end_of_the_list(result):
    for *_, outcome in result.iter_outcomes():  # each failing outcome's table alone is ~25,000 characters
        if outcome.status == "failed":
            outcome.mismatches = [Mismatch(f"$.items[{i}]", "x" * 290, "y" * 290, "r" * 290) for i in range(400)]
    comment = render("markdown", result)
    assert len(comment) <= 60_000
    assert comment.count("This finding is shortened here") == 4  # the 4 failures: their first rows, not 20
    assert comment.count("| `$.items[") == 4 * 3
    assert "more finding" not in comment  # every finding is still listed
    assert comment.count("\n#### ") == 8


def test_no_links_without_repository_server_and_sha(result):
    result.run.repository = None
    comment = render("markdown", result)
    assert "](https://github.com" not in comment
    assert "`probes/checkout.yaml:32:11`" in comment
    assert "](https://example.test/o/r/blob/abc/probes/checkout.yaml#L32)" in render(
        "markdown", result, repository="o/r", server_url="https://example.test", sha="abc")


@pytest.mark.parametrize("render_cell", [cell, code, prose])
def test_escapes_survive_markdown(render_cell):
    text = render_cell(PAYLOAD)
    html = github_like().render(f"| h |\n|---|\n| {text} |\n" if render_cell is cell else text)
    assert "<script" not in html and "</details>" not in html and "<!--" not in html
    assert "@octocat" not in outside_code(html) and "#12" not in outside_code(html)
    assert 'href="javascript' not in html


def test_fenced_blocks_cannot_be_closed_from_inside():
    html = github_like().render(fenced("````\n</details>\n````", "sh") + "\n\nafter")
    assert html.count("<pre>") == 1 and "&lt;/details&gt;" in html and "<p>after</p>" in html


def test_untrusted_content_cannot_break_the_comment(result):
    step = result.suites[0].flow_runs[0].steps[0]
    step.name = f"step {PAYLOAD}"
    outcome = step.assertions[1]
    outcome.reason = f"reason {PAYLOAD}\n\n# heading\n<details>"
    outcome.mismatches = [Mismatch(f"$.x{PAYLOAD}", PAYLOAD, {"k": PAYLOAD}, PAYLOAD)] * 3
    outcome.judge = JudgeRecord(False, [JudgeTier("openai", "m", 10, f"judge {PAYLOAD}", 1.0)])
    for name in ("markdown", "summary"):
        comment = render(name, result)
        tokens = github_like().parse(comment)
        ours = [t.content.strip() for t in tokens if t.type == "html_block"]
        assert all(block.startswith(("<!-- litmus-report -->", "<details><summary>", "</details>")) for block in ours)
        html = github_like().render(comment)
        assert "<script" not in html
        assert html.count("<details>") == html.count("</details>") == comment.count("<details><summary>")
        assert "@octocat" not in outside_code(html)
        for i, token in enumerate(tokens):  # every table row keeps exactly 4 (or 5, the suite table) cells
            if token.type == "tr_open":
                cells = 0
                for t in tokens[i + 1:]:
                    if t.type == "tr_close":
                        break
                    cells += t.type in ("td_open", "th_open")
                assert cells in (4, 5)


def test_comment_with_no_findings(result):
    for suite in result.suites:
        suite.flow_runs = []
        suite.verdict = "passed"
    result.verdict = "passed"
    comment = render("markdown", result)
    assert "## ✅ Litmus: all 2 suites passed" in comment and "No findings" in comment
