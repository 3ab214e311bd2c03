"""HTML that escapes by default: the one place `html.escape` is applied for the HTML report.

`tag("td", text)` escapes `text` unless it is `Markup` (HTML this module or its caller built from
escaped parts). Untrusted text (bodies, reasons, names) is passed as plain `str` and so can only
ever be text: it never opens a tag, an attribute, or a script.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from html import escape
from typing import Any

from litmus.report.markdown_text import visible
from litmus.report.options import http_url


class Markup(str):
    """A string of HTML that is already safe: never escaped again."""


def esc(value: Any) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(escape(visible(str(value)), quote=True))


def join(parts: Iterable[Any], separator: str = "") -> Markup:
    return Markup(separator.join(esc(part) for part in parts))


def attributes(attrs: dict[str, Any]) -> str:
    """` name="value"` pairs; `class_` is `class`, `data_x` is `data-x`; None/False drop it, True is bare."""
    out = []
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        name = name.rstrip("_").replace("_", "-")
        out.append(f" {name}" if value is True else f' {name}="{esc(value)}"')
    return "".join(out)


def tag(name: str, *content: Any, **attrs: Any) -> Markup:
    # One join with the tags, not the content joined and then copied between them: a report's outer
    # elements hold megabytes, and each copy was alive next to its source.
    return Markup("".join((f"<{name}{attributes(attrs)}>", *map(esc, content), f"</{name}>")))


def void(name: str, **attrs: Any) -> Markup:
    return Markup(f"<{name}{attributes(attrs)}>")


def script_json(data: Any) -> Markup:
    """JSON for a `<script type="application/json">`: `<` escaped, so no text in it can close the
    script element (`</script>`) or open a comment (`<!--`)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def link(content: Any, url: str | None) -> Markup:
    """`content` as a link to `url` when that is an http(s) URL or a fragment of this page (`#id`);
    otherwise `content` alone: a `javascript:` URL from a results.json is never an href."""
    target = url if url and url.startswith("#") else http_url(url)
    return tag("a", content, href=target) if target else esc(content)
