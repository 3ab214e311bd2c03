"""The response of one HTTP request, as the evaluators see it."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from litmus.results import Redirect
from litmus.text import MARK


class BodyNotJSON(ValueError):
    """The body cannot be read as JSON; the message says what it was instead."""


@dataclass(frozen=True)
class TextReading:
    """The body as text, and how it was decoded (for a finding that says which reading matched)."""

    text: str
    decoding: str


# RFC 8259 section 8.1: JSON is UTF-8 whatever the charset parameter says; a BOM may be ignored.
# (The UTF-32 marks first: UTF-32-LE's starts with UTF-16-LE's.)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_JSON_TYPE = re.compile(r"^\s*application/(?:[\w.+-]+\+)?json\s*(?:;|$)", re.IGNORECASE)


@dataclass
class Response:
    status: int
    # Case-insensitive (requests' CaseInsensitiveDict when it comes from the wire).
    headers: Mapping[str, str]
    body: bytes
    # From sending the request until the body was read (or the size cap was hit).
    elapsed_ms: float
    # From sending the request until the first byte of the response (its status line) arrived; None
    # for a response not read from the wire.
    first_byte_ms: float | None = None
    # The body was cut at the size cap.
    truncated: bool = False
    url: str = ""
    # The charset the Content-Type declares (a codec name), if any.
    encoding: str | None = None
    redirects: tuple[Redirect, ...] = ()
    # How often the transport sent the request again (a stale pooled connection, connection failures).
    transport_retries: int = 0
    # Every header line as received, repeats kept apart (`headers` joins them with commas, which
    # breaks Set-Cookie's `Expires=Wed, 21 Oct ...`). Empty when the response was built from a mapping.
    header_lines: list[tuple[str, str]] = field(default_factory=list)
    _json: Any = field(default=None, init=False, repr=False)

    @property
    def api_response(self) -> Response:
        """The response as the API sent it: this one; for a conversation's reply (its text as the body),
        the API's response it was read from, where its tool calls are."""
        return self

    def header_values(self, name: str) -> list[str]:
        """The values of header `name` (case-insensitive), one per header line, in order."""
        if self.header_lines:
            wanted = name.lower()
            return [value for key, value in self.header_lines if key.lower() == wanted]
        value = self.headers.get(name)
        if value is None:  # a plain dict in tests: no case-insensitive lookup of its own
            value = next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)
        return [] if value is None else [value]

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "") or ""

    @cached_property
    def text_encoding(self) -> str:
        """The codec the body text is read with: for JSON types RFC 8259's (UTF-8, or the BOM's),
        otherwise the declared charset, else UTF-8."""
        if _JSON_TYPE.match(self.content_type):
            return next((codec for bom, codec in _BOMS if self.body.startswith(bom)), "utf-8")
        return self.encoding or "utf-8"

    @cached_property
    def text(self) -> str:
        return self.body.decode(self.text_encoding, errors="replace")

    @cached_property
    def text_readings(self) -> tuple[TextReading, ...]:
        """The body text, plus its UTF-8 reading when the declared charset may be a lie: it does not
        decode the body cleanly, or the body is valid UTF-8 and reads differently in UTF-8. Text checks
        that must not be evaded (`not_contains`) look at every reading."""
        primary = TextReading(self.text, self.text_encoding)
        if codecs.lookup(self.text_encoding).name in ("utf-8", "utf-8-sig"):
            return (primary,)
        try:
            self.body.decode(self.text_encoding)
            declared_clean = "\ufffd" not in self.text
        except UnicodeDecodeError:
            declared_clean = False
        utf8 = self.body.decode("utf-8", errors="replace")
        if utf8 == self.text or (declared_clean and "\ufffd" in utf8):
            return (primary,)
        return primary, TextReading(utf8, "utf-8")

    def describe_body(self, limit: int = 60) -> str:
        """A short, safe description of the body for error messages."""
        kind = self.content_type or "no content type"
        head = self.body[:limit].decode("utf-8", errors="backslashreplace")
        more = MARK if len(self.body) > limit else ""
        return f"{kind}, {len(self.body)} bytes{' (truncated)' if self.truncated else ''}: {head!r}{more}"

    def json(self) -> Any:
        if self._json is None:
            if self.truncated:
                raise BodyNotJSON(f"body is not JSON (cut at the size cap): {self.describe_body()}")
            try:
                self._json = (json_value(self.body),)
            except TooDeep:
                raise BodyNotJSON(f"body is JSON nested deeper than {MAX_JSON_DEPTH} levels, which Litmus does "
                                  f"not evaluate: {self.describe_body()}") from None
            except ValueError as exc:  # UnicodeDecodeError included
                raise BodyNotJSON(f"body is not JSON ({exc}): {self.describe_body()}") from None
        return self._json[0]


class TooDeep(ValueError):
    """JSON text nested deeper than MAX_JSON_DEPTH."""


def json_value(text: bytes | str) -> Any:
    """JSON text parsed as every check reads it (a body, a tool call's arguments): nested no deeper than
    MAX_JSON_DEPTH (TooDeep), lone surrogates replaced; ValueError when it is not JSON."""
    data = text.encode("utf-8", errors="surrogatepass") if isinstance(text, str) else text
    try:
        value = json.loads(data)
        too_deep = nested_deeper(data, MAX_JSON_DEPTH)
    except RecursionError:  # deeper than the interpreter's own limit
        too_deep = True
    if too_deep:
        raise TooDeep(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return without_lone_surrogates(value) if _SURROGATE_ESCAPE.search(data) else value


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
