"""Cutting the comment and the summary to GitHub's limits: at every place the cut can fall, what is kept
renders whole as GitHub renders it (cmarkgfm with GitHub's extensions): no fence left open to swallow
the rest, every `<details>` closed, the cut notice shown outside both, and the size within the limit."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options as CmarkOptions
from markdown_it import MarkdownIt
from report_fixtures import RESULTS

from litmus.github.comment import fit_body
from litmus.github.envfiles import fit_summary
from litmus.report.markdown import COMMENT, MARKER, document
from litmus.report.options import Options
from litmus.results import BaselineSummary, Mismatch, load_results

NOTICE = "Cut at GitHub"
# Room every cut has for its notice and the closing tags: a boundary with this much room must be kept.
NOTICE_ROOM = 600


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


CUTTERS = {"comment": (fit_body, len), "summary": (fit_summary, utf8_size)}


def long_report() -> str:
    """A comment with every structure a cut can land in: tables, folded mismatch tables, curl fences in
    `<details>`, and the "Already failing on the base branch" `<details>` around whole findings."""
    result = load_results(RESULTS)
    copies = []
    for copy in range(2):
        for suite in load_results(RESULTS).suites:
            suite.name, suite.file = f"{suite.name} {copy}", f"probes/copy{copy}/{suite.file}"
            copies.append(suite)
    result.suites = copies
    result.baseline = BaselineSummary("base/results.json")
    outcomes = [o for s in result.suites for r in s.flow_runs for step in r.steps for o in step.assertions]
    for number, outcome in enumerate(outcomes):
        outcome.baseline = "unchanged" if number % 2 else "new"
        if outcome.mismatches:
            outcome.mismatches = [Mismatch(f"$.items[{i}]", i, f"wrong ```\n{i}", "differs") for i in range(7)]
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            flow_run.intent_evaluation.baseline = "unchanged"
    return document(result, Options(), COMMENT)


class Rendered(HTMLParser):
    """Where the notice shows in the rendered HTML, and whether every `<details>` closes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.details = self.min_details = self.code = 0
        self.notices: list[tuple[int, int]] = []  # (open <details>, open <pre>/<code>) where it shows

    def handle_starttag(self, tag, attrs):
        self.details += tag == "details"
        self.code += tag in ("pre", "code")

    def handle_endtag(self, tag):
        self.details -= tag == "details"
        self.min_details = min(self.min_details, self.details)
        self.code -= tag in ("pre", "code")

    def handle_data(self, data):
        if NOTICE in data:
            self.notices.append((self.details, self.code))


def rendered(markdown: str) -> Rendered:
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=CmarkOptions.CMARK_OPT_UNSAFE)
    parsed = Rendered()
    parsed.feed(html)
    parsed.close()
    return parsed


def block_starts(markdown: str) -> list[int]:
    """The character offset of every top-level block of `markdown`, as markdown-it reads it."""
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(markdown)
    line_offsets = [0] + [m.end() for m in re.finditer("\n", markdown)]
    return sorted({line_offsets[t.map[0]] for t in tokens if t.level == 0 and t.nesting >= 0 and t.map})


@pytest.fixture(scope="module")
def report() -> str:
    return long_report()


def test_the_long_report_has_what_a_cut_can_break(report):
    assert report.count("<details>") >= 20 and report.count("```sh") >= 10
    assert "<details><summary>Already failing on the base branch" in report
    assert re.search(r"<details><summary>7 mismatches</summary>\n\n\| path", report)


@pytest.mark.parametrize("flavour", CUTTERS)
def test_a_cut_at_every_block_boundary_renders_whole(report, flavour):
    cut, measure = CUTTERS[flavour]
    starts = block_starts(report)
    assert len(starts) > 100
    broken, seen = [], set()
    for start, following in zip(starts, [*starts[1:], len(report)], strict=True):
        at_boundary = measure(report[:start]) + NOTICE_ROOM
        between = at_boundary + measure(report[start:following]) // 2
        for limit in (at_boundary, between):
            if limit >= measure(report):
                continue
            text = cut(report, limit)
            assert measure(text) <= limit
            kept = re.sub(r"(\n</\w+>\n)*$", "", text.split("\n---\n\n✂️")[0])
            assert report.startswith(kept) and len(kept) >= start, (limit, "kept less than fits")
            if text in seen:
                continue
            seen.add(text)
            html = rendered(text)
            if html.notices != [(0, 0)] or html.details or html.min_details:
                broken.append((start, limit, html.notices, html.details))
            if flavour == "comment":
                assert text.startswith(MARKER) and text.endswith(f"{MARKER}\n")
    assert broken == [], f"{len(broken)} of {2 * len(starts)} cuts render broken"


def test_the_notice_names_the_first_section_left_out(report):
    start = report.index("\n## New in this PR") + 1
    text = fit_body(report, start + 250)
    assert text.startswith(report[:start])
    assert "more sections left out here, from “New in this PR" in text
    assert "The job summary and the report artifact hold the whole report." in text


def test_nothing_fits_gives_nothing_and_a_short_document_is_kept_whole(report):
    assert fit_summary(report, 10) == ""
    assert fit_summary(report, utf8_size(report)) == report
