"""The HTML report as a document: self-contained, inert, findings first, plots inline.

How it behaves in a browser (filters, search, 375 px, load time) is tested in tests/browser/.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from report_fixtures import many_failures

from litmus.report import findings as fd
from litmus.report import render
from litmus.report.html import FINDINGS_SHOWN
from litmus.report.html import anchor as fd_anchor
from litmus.report.markup import script_json
from litmus.verdict import stamp


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of the scripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def parse(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    return parser


def test_self_contained_and_inert(result):
    html = render("html", result)
    assert html.startswith("<!doctype html>")
    tags = parse(html).tags
    # Exactly our two scripts: the filters and their JSON. The fixture's `<script>alert(1)` is text.
    assert [t for t, _ in tags if t == "script"] == ["script", "script"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert not [t for t, _ in tags if t in ("link", "img", "iframe", "object", "embed")]
    assert not re.search(r"\bsrc=|url\(|@import|https?://[^\"'<> ]*\.(js|css|woff2?)", html)
    assert not any(name.startswith("on") for _, attrs in tags for name in attrs)  # no inline handlers
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert "@media print" in html and "prefers-color-scheme: dark" in html


def test_a_step_warning_is_text_wherever_it_is_shown(result):
    """A warning quotes what the request sent (a probe a pull request wrote): in the list and on the step's
    exchange it is escaped text, never markup."""
    step = result.suites[1].flow_runs[0].steps[0]
    step.warnings = ["request does not conform to GET /users in api/openapi.yaml: query parameter 'q': "
                     "expected integer, got string \"<img src=x onerror=alert(1)></ul></section><script>alert(2)\""]
    html = render("html", result)
    tags = parse(html).tags
    assert [t for t, _ in tags if t == "script"] == ["script", "script"]
    assert not [t for t, _ in tags if t == "img"] and not any(name.startswith("on") for _, a in tags for name in a)
    shown = "&lt;img src=x onerror=alert(1)&gt;&lt;/ul&gt;&lt;/section&gt;&lt;script&gt;alert(2)"
    assert html.count(shown) == 2  # the Warnings section and the failing step's exchange
    assert html.index('id="findings"') < html.index('id="warnings"') < html.index('id="flows"')


def test_the_scripts_json_cannot_close_the_script():
    hostile = {"name": "</script><script>alert(1)</script><!--"}
    text = script_json(hostile)
    assert "<" not in text and json.loads(text) == hostile


def test_findings_come_before_the_plots_and_the_outcome_table(result):
    html = render("html", result)
    assert html.index('id="suites"') < html.index('id="findings"') < html.index('id="flows"') < html.index(
        'id="outcomes"')


def test_every_finding_once_with_its_status_and_fingerprint(result):
    html = render("html", result)
    expected = [(f.fingerprint, {"transport_error": "error"}.get(f.kind, f.kind)) for f in fd.collect(result)]
    shown = [(a["data-fingerprint"], a["data-status"]) for t, a in parse(html).tags
             if t == "details" and "finding" in a.get("class", "")]
    assert sorted(shown) == sorted(expected)


def test_failing_suites_come_first(result):
    result.suites[0].verdict = "passed"  # Checkout assistant now passes; Users API still fails
    html = render("html", result)
    findings = html.split('id="findings"', 1)[1]
    assert findings.index("Users API › List users") < findings.index("Checkout assistant › Ask about an order")


def test_excerpts_once_per_step_not_per_finding(result):
    html = render("html", result)
    steps = {id(f.step) for f in fd.collect(result) if f.step is not None}
    assert html.count("<summary>Request, response and curl</summary>") == len(steps)
    for finding in re.findall(r'<details class="finding".*?</details>', html, re.S):
        assert "HTTP 200" not in finding and "curl " not in finding  # the exchange is beside, not inside


def test_the_failing_path_is_highlighted_in_the_pretty_printed_body(result):
    html = render("html", result)
    marks = [a["data-path"] for t, a in parse(html).tags if t == "mark"]
    assert "$.order.status" in marks
    assert re.search(r'<mark class="hl" data-path="\$\.order\.status"[^>]*>&quot;shipped&quot;</mark>', html)


def test_mismatch_values_keep_their_json_type(result):
    html = render("html", result)
    assert "<code>&quot;delayed&quot;</code>" in html  # a string, quoted


def test_status_is_shape_and_text_not_colour_or_emoji_alone(result):
    html = render("html", result)
    for status in ("failed", "error", "needs_review", "passed", "skipped"):
        assert f'<symbol id="s-{status}"' in html
    assert not re.search("[\u2705\u274c\U0001f50c\u26a0\U0001f9d0\u23ed]", html)  # no emoji needed


def test_plots_are_inline_svg(result):
    html = render("html", result)
    flows = html.split('id="flows"', 1)[1]
    assert flows.count('aria-label="Status of each step') == 2  # one grid per flow
    assert 'aria-label="Response time per step of Ask about an order' in flows
    assert 'aria-label="Judge scores of Ask about an order' in flows
    assert 'class="limit"' in flows  # the threshold line of the judge plot


def test_the_latency_mark_of_a_step_that_errored_is_an_error_mark(result):
    """A step that got a response and then errored (a stream cut mid-answer) had a green `passed` circle."""
    step = result.suites[1].flow_runs[0].steps[0]
    step.status, step.error = "error", "the stream ended before its end marker"
    flows = render("html", result).split('id="flows"', 1)[1]
    latency = flows.split('aria-label="Response time per step of List users', 1)[1].split("</svg>", 1)[0]
    marks = re.findall(r'class="st-(\w+)"><title>([^<]*)</title>', latency)
    assert ("error", f"run 1 of 1: {step.response.elapsed_ms:g} ms (error)") in marks
    assert not [title for status, title in marks if status == "passed" and "(error)" in title]


def test_runs_are_counted_from_one(result):
    html = render("html", result)
    assert "run 1 of 2" in html and "run 2 of 2" in html
    assert "run 0" not in html


def test_past_the_findings_drawn_in_full_the_rest_are_the_scripts_data():
    """Before, findings past FINDINGS_SHOWN were left out of the page: not searchable, not linkable. Now
    they are data the script draws on demand (tests/browser), so the page is no heavier to open."""
    result = many_failures(3_000)
    html = render("html", result)
    assert html.count('<details class="finding"') == FINDINGS_SHOWN
    data = json.loads(parse(html).scripts[0])
    assert data["findings"] == 3_000 and len(data["listed"]) == 3_000 - FINDINGS_SHOWN
    drawn = [a["id"] for t, a in parse(html).tags if t == "details" and "finding" in a.get("class", "")]
    findings = fd.reading_order(fd.collect(result))
    assert drawn + [entry[0] for entry in data["listed"]] == [fd_anchor(f) for f in findings]
    assert data["listed"][-1][1:] == ["failed", "Huge", "big flow",
                                      "check 299-9 failed at $.items[9].price: expected 9, got 10",
                                      "probes/huge.yaml:19:7", "json_path"]
    assert f"the other {3_000 - FINDINGS_SHOWN:,} are listed at the end" in html
    assert 'id="f-listed"' in html and html.rstrip().endswith("</html>")


def test_every_finding_has_its_results_id_as_anchor_and_a_visible_link(result):
    html = render("html", result)
    elements = parse(html).tags
    anchors = [a["id"] for t, a in elements if t == "details" and "finding" in a.get("class", "")]
    links = [a["href"] for t, a in elements if t == "a" and a.get("class") == "permalink"]
    assert links == [f"#{anchor}" for anchor in anchors] and len(set(anchors)) == len(anchors) == 8
    stamp(result)  # the ids `litmus run` writes into results.json (this fixture predates them)
    runs = [flow_run for suite in result.suites for flow_run in suite.flow_runs]
    ids = ({o.id for *_, o in result.iter_outcomes()} | {step.id for run in runs for step in run.steps}
           | {run.intent_evaluation.id for run in runs})
    # The polite-reply check failed in one run and was undecided in the other: one id, two findings.
    assert {a.removesuffix("-needs-review") for a in anchors} <= ids
    undecided = sum(f.rule == "needs_review" for f in fd.collect(result))
    assert undecided and sum(a.endswith("-needs-review") for a in anchors) == undecided


def test_runs_are_counted_once_per_suite_not_once_per_finding(monkeypatch):
    # Each step block says "shown: run 2 of 3" from its suite's run counts: counting all of the suite's
    # flow runs for each of up to FINDINGS_SHOWN blocks made the report quadratic in the suite's size.
    from litmus.report import html
    from litmus.results import runs_per_flow

    calls = []
    monkeypatch.setattr(html, "runs_per_flow", lambda suite: calls.append(suite) or runs_per_flow(suite))
    result = stamp(many_failures(200, per_step=1))
    render("html", result)
    assert len(calls) <= 2 * len(result.suites)
