"""The response of one HTTP request, as the evaluators see it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any


class BodyNotJSON(ValueError):
    """The body cannot be read as JSON; the message says what it was instead."""


@dataclass
class Response:
    status: int
    # Case-insensitive (requests' CaseInsensitiveDict when it comes from the wire).
    headers: Mapping[str, str]
    body: bytes
    # From sending the request until the body was read (or the size cap was hit).
    elapsed_ms: float
    # The body was cut at the size cap.
    truncated: bool = False
    url: str = ""
    encoding: str | None = None
    _json: Any = field(default=None, init=False, repr=False)

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "") or ""

    @cached_property
    def text(self) -> str:
        return self.body.decode(self.encoding or "utf-8", errors="replace")

    def describe_body(self, limit: int = 60) -> str:
        """A short, safe description of the body for error messages."""
        kind = self.content_type or "no content type"
        head = self.body[:limit].decode("utf-8", errors="backslashreplace")
        more = "…" if len(self.body) > limit else ""
        return f"{kind}, {len(self.body)} bytes{' (truncated)' if self.truncated else ''}: {head!r}{more}"

    def json(self) -> Any:
        if self._json is None:
            if self.truncated:
                raise BodyNotJSON(f"body is not JSON (cut at the size cap): {self.describe_body()}")
            try:
                value = json.loads(self.body)
                too_deep = nested_deeper(value, MAX_JSON_DEPTH)
            except (ValueError, UnicodeDecodeError) as exc:
                raise BodyNotJSON(f"body is not JSON ({exc}): {self.describe_body()}") from None
            except RecursionError:  # deeper than the interpreter's own limit
                too_deep = True
            if too_deep:
                raise BodyNotJSON(f"body is JSON nested deeper than {MAX_JSON_DEPTH} levels, which Litmus does "
                                  f"not evaluate: {self.describe_body()}")
            if _SURROGATE_ESCAPE.search(self.body):
                value = without_lone_surrogates(value)
            self._json = (value,)
        return self._json[0]


# JSON bodies nested deeper than this are an `error` of every check that reads them as JSON: JSONPath,
# schema validation, redaction and the results writer all recurse, and real APIs stay far below it.
MAX_JSON_DEPTH = 200


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether `value` has containers nested more than `limit` deep (iterative: any depth is safe)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


# `"\ud800"` is valid JSON but decodes to a lone surrogate, which no UTF-8 writer accepts: results.json
# and every report would fail to write. Paired escapes decode to one proper character and are untouched.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    return value
