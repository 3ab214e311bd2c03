"""The comment as GitHub renders it: cmarkgfm (GitHub's own cmark fork, with its GFM extensions),
raw HTML let through (CMARK_OPT_UNSAFE) so that anything live would show here. GitHub's sanitizer
comes after; these checks do not count on it.

Structure: one mismatch table per finding that has mismatches, `<details>` balanced, no live HTML
from a response, a judge or a name, no @-mention (or #ref) outside code.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from litmus.report import findings as fd
from litmus.report import render
from litmus.results import JudgeRecord, JudgeTier, Mismatch

HOSTILE = ("a | b </details> <script>alert(1)</script> <img src=x onerror=alert(2)> @octocat #12 "
           "`x` ``` <!-- --> [link](javascript:alert(3)) <details open> *em* _u_ \n# heading\n| t |")
OUR_TAGS = {"h2", "h3", "h4", "p", "strong", "em", "code", "pre", "a", "table", "thead", "tbody", "tr", "th", "td",
            "details", "summary", "hr", "ul", "li", "br"}


def github_html(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


class Structure(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.depth = 0  # open <details>
        self.min_depth = 0
        self.code = 0
        self.text_outside_code: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self.depth += tag == "details"
        self.code += tag in ("code", "pre")

    def handle_endtag(self, tag):
        self.depth -= tag == "details"
        self.min_depth = min(self.min_depth, self.depth)
        self.code -= tag in ("code", "pre")

    def handle_data(self, data):
        if not self.code:
            self.text_outside_code.append(data)


def structure(html: str) -> Structure:
    parsed = Structure()
    parsed.feed(html)
    parsed.close()
    return parsed


def hostile(result):
    """Untrusted text in every place the comment shows it."""
    suite = result.suites[0]
    suite.name = f"suite {HOSTILE}"
    for flow_run in suite.flow_runs:
        flow_run.flow = f"flow {HOSTILE}"
        flow_run.intent_evaluation.reason = f"intent {HOSTILE}"
        for step in flow_run.steps:
            step.name = f"step {HOSTILE}"
            step.error = step.error and f"error {HOSTILE}"
            step.warnings = [f"warning {HOSTILE}"]
            if step.request:
                step.request.url += f"?q={HOSTILE}"
                step.request.body = f"body {HOSTILE}"
            if step.response:
                step.response.body = f"response {HOSTILE}"
            for outcome in step.assertions:
                outcome.reason = f"reason {HOSTILE}"
                if outcome.mismatches:
                    outcome.mismatches = [Mismatch(f"$.x{HOSTILE}", HOSTILE, {"k": HOSTILE}, HOSTILE)]
                if outcome.judge:
                    outcome.judge = JudgeRecord(False, [JudgeTier("openai", "m", 10, f"judge {HOSTILE}", 1.0)])
    return result


@pytest.mark.parametrize("untrusted", [False, True])
def test_comment_structure_as_github_renders_it(result, untrusted):
    if untrusted:
        hostile(result)
    comment = render("markdown", result)
    html = github_html(comment)
    parsed = structure(html)
    if untrusted:
        assert "&lt;script&gt;" in html and "@octocat" in html  # shown, as text, inside code
        assert "<h3>Warnings (3)</h3>" in html and "warning a | b &lt;/details&gt; &lt;script&gt;" in html
    # <details> balanced and never closed before it opened (no body can close ours).
    assert parsed.depth == 0 and parsed.min_depth == 0
    assert html.count("<details>") == comment.count("<details><summary>")
    # Only the tags our Markdown makes; no attribute a body could have brought.
    assert {tag for tag, _ in parsed.tags} <= OUR_TAGS
    for tag, attrs in parsed.tags:
        assert set(attrs) <= {"href", "lang", "align"}, (tag, attrs)
        assert not attrs.get("href", "https://").startswith("javascript")
    # No mention or issue reference GitHub would resolve.
    outside = "".join(parsed.text_outside_code)
    assert not re.search(r"@\w", outside) and not re.search(r"#\d", outside)


def test_one_table_per_finding_with_mismatches(result):
    comment = render("markdown", result)
    html = github_html(comment)
    sections = html.split("<h4>")[1:]
    findings = fd.reading_order(fd.collect(result))
    assert len(sections) == len(findings)
    for section, finding in zip(sections, findings, strict=True):
        section = section.split("<h3>")[0].split("<h2>")[0]
        has_mismatches = bool(finding.outcome and finding.outcome.mismatches)
        assert section.count("<table>") == (1 if has_mismatches else 0), fd.summary_sentence(finding)
