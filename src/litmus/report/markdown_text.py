"""Putting untrusted text (response bodies, judge reasons, extracted values) into Markdown safely.

Everything that came from the target or a judge goes through one of these, so it cannot break a
table or a `<details>`, open HTML, ping anyone (`@name`), or link an issue (`#123`):
- `code()` makes an inline code span whose backtick fence is longer than any run inside;
- `cell()` is `code()` for a table cell (GFM splits cells on `|` even inside code spans);
- `prose()` backslash-escapes every ASCII punctuation character and puts mentions and issue
  references in code, where GitHub does not resolve them;
- `fenced()` makes a fenced block whose fence no line inside can close;
- `link()` links Markdown text only to an http(s) URL, percent-encoded so it cannot end the link.
"""

from __future__ import annotations

import re

from litmus.report.options import http_url

_PUNCTUATION = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")
_REFERENCE = re.compile(r"(@[\w-]+(?:/[\w.-]+)?|#\d+|\bGH-\d+)", re.IGNORECASE)
_LINE_BREAKS = re.compile(r"[\r\n\t\f\v\u2028\u2029\x85]+")
# C0/C1 controls (bar tab/newline) and lone surrogates: never meaningful in a report, and
# some break XML or terminals. Shown as visible escapes rather than dropped.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def visible(text: str) -> str:
    """Control characters as `\\xNN` escapes, so they neither vanish nor break a document."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}",
                        text)


def one_line(text: str) -> str:
    return _LINE_BREAKS.sub(" ", visible(text)).strip()


def code(text: str) -> str:
    text = one_line(text)
    if not text:
        return "*(empty)*"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def cell(text: str) -> str:
    return code(text).replace("|", "\\|")


def prose(text: str) -> str:
    parts = _REFERENCE.split(one_line(text))
    # split() with one group alternates: plain text at even indexes, references at odd ones.
    return "".join(code(part) if i % 2 else _PUNCTUATION.sub(r"\\\1", part) for i, part in enumerate(parts))


def fenced(text: str, info: str = "") -> str:
    text = visible(text)
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def link(text: str, url: str | None) -> str:
    """`[text](url)` when `url` is an http(s) URL (see `options.http_url`), else `text` alone."""
    target = http_url(url)
    return f"[{text}]({target})" if target else text
