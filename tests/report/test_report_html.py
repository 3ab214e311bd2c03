from __future__ import annotations

import re

from markdown_it import MarkdownIt

from litmus.report import render


def test_self_contained_and_script_free(result):
    html = render("html", result)
    assert html.startswith("<!doctype html>")
    assert "<script" not in html  # the fixture's response body holds one: it must stay text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert not re.search(r"<(link|img|iframe|object|embed)\b", html)
    assert not re.search(r"src=|url\(|@import", html)
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert "@media print" in html and "@media (max-width: 600px)" in html


def test_has_the_comment_content_plus_full_excerpts(result):
    html = render("html", result)
    # From the comment: finding headings, mismatch table, judge, curl.
    assert "<code>$.order.status</code>" in html
    assert "decided by tier 2" in html
    assert "curl -X POST" in html
    # Only here: full response bodies, every judge tier, every flow run.
    assert "Your order 1042 has shipped and arrives 5 December." in html
    assert "Unsure about the date." in html  # tier 1 reason of an escalated verdict
    assert "Flow runs of Users API" in html
    assert "<details>" not in html  # nothing folded: readable in print


def test_body_is_markdown_it_output_with_raw_html_off(result):
    from litmus.report.html import markdown_renderer

    renderer = markdown_renderer()
    assert renderer.options["html"] is False
    assert isinstance(renderer, MarkdownIt)
    html = render("html", result)
    body = html.split("<main>\n", 1)[1].rsplit("</main>", 1)[0]
    assert "<table>" in body and "<h2>" in body
