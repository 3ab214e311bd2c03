"""The HTML report (`report.html`): one self-contained file, readable offline, on a phone and in print.

Content: everything the comment has, uncapped, plus each flow run's Intent Evaluation, every judge
tier, and the full request/response excerpts the results hold. It is the Markdown of
`litmus.report.markdown` (flavour FULL) rendered by markdown-it-py with raw HTML disabled, so
nothing from a response or a judge can open a tag; the page around it is ours. Inline CSS only,
no script, no external asset.
"""

from __future__ import annotations

from html import escape

from markdown_it import MarkdownIt

from litmus.report.markdown import FULL, document
from litmus.report.options import Options
from litmus.results import RunResult

CSS = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #fff; --muted: #59636e; --line: #d1d9e0; --code: #f6f8fa; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --code: #161b22; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem; overflow-wrap: anywhere; }
h1, h2, h3, h4 { line-height: 1.25; margin: 1.5rem 0 .5rem; }
h2 { border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
h4 { font-size: 1rem; }
a { color: #0969da; }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code); }
code { padding: .1em .3em; border-radius: 4px; }
pre { padding: .75rem; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; }
pre code { padding: 0; }
table { display: block; max-width: 100%; overflow-x: auto; border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--code); }
hr { border: 0; border-top: 1px solid var(--line); }
@media (max-width: 600px) { body { font-size: 14px; } main { padding: .5rem; } th, td { padding: .2rem .4rem; } }
@media print {
  :root { --fg: #000; --bg: #fff; --code: #f4f4f4; }
  main { max-width: none; padding: 0; }
  a { color: inherit; text-decoration: underline; }
  table { display: table; }
  pre { white-space: pre-wrap; overflow: visible; }
  h2, h3, h4 { break-after: avoid; }
  pre, tr { break-inside: avoid; }
}
"""


def markdown_renderer() -> MarkdownIt:
    """CommonMark plus GFM tables and strikethrough; raw HTML off, so untrusted text stays text."""
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"])


def render(result: RunResult, **options) -> str:
    body = markdown_renderer().render(document(result, Options(**options), FULL))
    title = escape(f"Litmus report: {result.verdict}")
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n"
    )
