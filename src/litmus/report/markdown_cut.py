"""Cutting a Markdown document to a size limit so that what is kept still renders whole.

The sticky comment (65,536 characters) and the job summary (1 MiB) are cut when too long. A cut at
an arbitrary line can land inside a fenced code block, whose fence then swallows everything after it,
notice included, or inside one of our `<details>`, which then folds away the rest of the page. So a
document is cut only where a top-level block starts, as markdown-it-py's token stream gives them
(`Token.map`: the block's source lines); the HTML elements that the `html_block` tokens before the cut
left open (`<details>`, `<summary>`, `<table>`, ...) are closed, innermost first; and a notice then says
which sections were left out and where the whole report is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser

from markdown_it import MarkdownIt

from litmus.text import clip, count

# As GitHub reads a comment: raw HTML kept as HTML blocks, GFM tables as one block each. Blocks are all a
# cut needs: the inline rule is off, so a heading's inline token holds its source text, unparsed.
_PARSER = MarkdownIt("commonmark", {"html": True}).enable("table").disable("inline")
# A line with its ending, counted as markdown-it counts lines (`\r\n`, `\r` and `\n` each end one).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
# Elements that have no closing tag, so never stay open.
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                   "wbr"})

# Block tokens that can be cut between lines, and the lines each must keep.
_LINE_SPLITTABLE = {"paragraph_open": 1, "table_open": 2}


class _OpenElements(HTMLParser):
    """The elements the HTML fed so far leaves open, outermost first."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        # An end tag closes its element and whatever was left open inside it, as a browser does.
        if tag in self.stack:
            del self.stack[len(self.stack) - 1 - self.stack[::-1].index(tag):]


@dataclass(frozen=True)
class _Boundary:
    line: int  # the first line left out
    size: int  # the measure of the lines kept
    open_elements: tuple[str, ...]  # outermost first
    headings_after: int  # index into the document's headings of the first one left out


def fit(markdown: str, limit: int, *, limit_text: str, where: str, measure: Callable[[str], int] = len) -> str:
    """`markdown` when it measures at most `limit`; else its longest start that ends at a top-level block
    boundary (or a line of a top-level paragraph or table) and, with its open HTML elements closed and
    the cut notice, measures at most `limit`. Empty when not even the notice fits.

    `measure` must add up over pieces of text (characters, UTF-8 bytes); `limit_text` names the limit
    ("GitHub's 1 MiB limit") and `where` says where the whole report is.
    """
    if measure(markdown) <= limit:
        return markdown
    lines = _LINE.findall(markdown)
    tokens = _PARSER.parse(markdown)
    headings = [(tokens[i].map[0], tokens[i + 1].content) for i, token in enumerate(tokens)
                if token.type == "heading_open" and token.map]
    best: tuple[int, str] | None = None  # lines kept, and what follows them
    for boundary in _boundaries(lines, tokens, headings, measure):
        if boundary.size > limit:
            break
        closing = "".join(f"\n</{tag}>\n" for tag in reversed(boundary.open_elements))
        ending = closing + _notice(headings[boundary.headings_after:], limit_text, where)
        if boundary.size + measure(ending) <= limit:
            best = boundary.line, ending
    return "".join(lines[:best[0]]) + best[1] if best else ""


def _boundaries(lines: list[str], tokens, headings: list[tuple[int, str]],
                measure: Callable[[str], int]):
    """Every place a top-level block starts, in order, with what cutting there keeps and leaves open."""
    starts = {token.map[0] for token in tokens if token.level == 0 and token.nesting >= 0 and token.map}
    # A paragraph or table longer than the limit on its own can also end at any of its lines (a table after
    # its delimiter row): what is kept is still a paragraph, or a table with fewer rows.
    for token in tokens:
        if token.level == 0 and token.type in _LINE_SPLITTABLE and token.map:
            first, end = token.map
            starts.update(range(first + _LINE_SPLITTABLE[token.type], end))
    html_blocks = [(token.map[0], token.content) for token in tokens if token.type == "html_block" and token.map]
    elements = _OpenElements()
    size = fed = kept_lines = heading = 0
    for start in sorted(starts):
        while fed < len(html_blocks) and html_blocks[fed][0] < start:
            elements.feed(html_blocks[fed][1])
            fed += 1
        size += sum(measure(line) for line in lines[kept_lines:start])
        kept_lines = start
        while heading < len(headings) and headings[heading][0] < start:
            heading += 1
        yield _Boundary(start, size, tuple(elements.stack), heading)


def _notice(left_out: list[tuple[int, str]], limit_text: str, where: str) -> str:
    """What the cut left out, named by the first section heading it dropped, and where the rest is."""
    if left_out:
        what = (f"{count(len(left_out), 'more section')} left out here, from “{clip(left_out[0][1], 200)}” on")
    else:
        what = "the end of the last section left out here"
    return f"\n---\n\n✂️ **Cut at {limit_text}**: {what}. {where}\n"
