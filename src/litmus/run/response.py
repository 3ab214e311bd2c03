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
                too_deep = nested_deeper(self.body, MAX_JSON_DEPTH)
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


def nested_deeper(body: bytes, limit: int) -> bool:
    """Whether the JSON text `body` (already parsed without error) nests containers more than `limit` deep.

    Scanned at C speed, not walked in Python (a walk took longer than `json.loads` itself): only the
    brackets are kept, then one level of empty pairs is removed per pass. The first scan counts
    brackets inside strings too, which is nearly always an upper bound and cheap; only a body it
    finds too deep is scanned again without its strings (a regex pass as slow as parsing).
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    encoding = json.detect_encoding(body)
    if not encoding.startswith("utf-8"):
        body = body.decode(encoding).encode("utf-8")
    if not _deeper(body.translate(_ONE_BRACKET_KIND, _NOT_BRACKETS), limit):
        return False
    return _deeper(_JSON_STRING.sub(b"", body).translate(_ONE_BRACKET_KIND, _NOT_BRACKETS), limit)


def _deeper(brackets: bytes, limit: int) -> bool:
    for _ in range(limit):
        # `replace` does not rescan what it joined: each pass removes exactly the innermost pairs.
        brackets = brackets.replace(b"[]", b"")
        if not brackets:
            return False
    return True


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# Parsed JSON nests its brackets properly, so one kind is enough to count levels.
_ONE_BRACKET_KIND = bytes.maketrans(b"{}", b"[]")


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
