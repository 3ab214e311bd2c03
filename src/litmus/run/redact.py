"""Secret redaction: every registered secret becomes `***` in the free text that leaves the run.

Values are registered before the run (every `{{ secrets.NAME }}`, the judge's API keys, the GitHub
token) and during it (the values of `HttpOnly`/`Secure` cookies the target sets, and any value
extracted from a `Cookie`/`Set-Cookie` header).

What is masked: only free text, the fields of `FREE_TEXT` (reasons, excerpts, URLs, header values,
mismatch values, extracted values, judge text, errors). Statuses, verdicts, types, names from the
probe file, numbers and the document's keys are never touched, so a secret such as `e` or `error`
can neither corrupt the results document nor change a verdict; and the runner masks a flow run only
once its verdicts are decided (the intent judge reads a masked copy).

Every form a secret takes on the way out is masked (`encodings`): raw, percent-encoded (either hex
case, `/` kept or not, as `requests` re-quotes a URL), `+` form, base64 and base64url (also inside a
longer base64 text, as in `Basic` credentials), JSON-escaped (`\\/`, `\\uXXXX` in either case,
HTML-safe `\\u003c`), `repr` and HTML-escaped. Text cut before masking (an 80-character preview, a
60-byte body description, a 4 KiB excerpt) can end in the start of a secret: `redact` masks a
fragment of at least `MIN_FRAGMENT` characters that a secret form starts with (ends with) right
before (after) an ellipsis, or at the end of a text known to be cut.
"""

from __future__ import annotations

import base64
import html
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import fields, is_dataclass
from functools import cache
from typing import Any
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from litmus import results

MASK = "***"
# Shorter secrets are masked all the same, but they also hide ordinary words: one warning says so.
SHORT_SECRET = 4
# A cut leaves at most this many characters minus one of a secret's start in the text.
MIN_FRAGMENT = 3
# Headers whose values are credentials whatever their value: masked even when not a declared secret.
SENSITIVE_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"})
# What `requests` leaves unquoted when it re-quotes a URL (`requests.utils.requote_uri`).
_REQUOTE_SAFE = "!#$%&'()*+,/:;=?@[]~"
_CUT_MARKERS = re.compile("…|\\.\\.\\.")
# What may stand between a cut and its marker: a repr's or JSON string's quote (`'tok=SUPERSE'…`),
# or the opening of a note such as `\n[… 12 more characters]`.
_BETWEEN = "'\"\n [("
_HEX_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}")

# The free-text fields of each results dataclass; nested result dataclasses are walked whatever
# their field. Everything else is structure.
FREE_TEXT: dict[type, tuple[str, ...]] = {
    results.RunInfo: ("base_url",),
    results.SuiteResult: ("intent",),
    results.IntentEvaluation: ("reason",),
    results.StepResult: ("error", "extracted"),
    results.RequestExcerpt: ("url", "headers", "body"),
    results.ResponseExcerpt: ("headers", "body"),
    results.AssertionOutcome: ("reason",),
    results.Mismatch: ("path", "expected", "actual", "reason"),
    results.JudgeTier: ("reason",),
}
# Excerpt bodies whose flag says they were cut at their end.
_CUT_FLAG = {(results.RequestExcerpt, "body"): "body_truncated",
             (results.ResponseExcerpt, "body"): "body_excerpt_truncated"}


def encodings(secret: str) -> set[str]:
    """Every form of `secret` that an encoder on the way out (ours, requests', the target's) may write."""
    # Sent raw inside a URL, its `%xx` and `+` are escapes, and `&` or `#` ends a query value: the
    # target reads (and echoes) it decoded, or only its pieces.
    readings = {secret, secret.strip()}
    readings |= {piece for piece in re.split("[&#]", secret) if len(piece) >= SHORT_SECRET}
    readings |= {decode(reading) for reading in readings for decode in (unquote, unquote_plus)}
    forms: set[str] = set()
    for reading in readings:
        forms |= _encoded(reading)
    forms.discard("")
    return forms


def _encoded(secret: str) -> set[str]:
    forms = {secret}
    for safe in ("", "/", _REQUOTE_SAFE, _REQUOTE_SAFE.replace("%", "")):
        for quoted in (quote(secret, safe=safe), quote_plus(secret, safe=safe)):
            # Lower-case hex too: the regex matches either case, fragments are looked up as written.
            forms |= {quoted, re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), quoted)}
    for ensure_ascii in (False, True):
        escaped = json.dumps(secret, ensure_ascii=ensure_ascii)[1:-1]
        forms |= {escaped, escaped.replace("/", "\\/")}
    html_safe = json.dumps(secret)[1:-1].replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    forms |= {html_safe, html_safe.replace("/", "\\/")}
    # repr picks its quote from the content; inside a longer text the other quote may be escaped too.
    forms |= {repr(secret)[1:-1], repr(secret + "'\"")[1:-3]}
    forms |= {html.escape(secret), html.escape(secret, quote=False), html.escape(secret).replace("&#x27;", "&#39;")}
    forms |= _base64_forms(secret.encode("utf-8"))
    return forms


def _base64_forms(data: bytes) -> set[str]:
    """base64/base64url of `data` alone (padded or not), and the characters of its encoding that do
    not depend on the neighbours when it sits at any offset inside longer data (`user:secret`)."""
    forms = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(data).decode("ascii")
        forms |= {whole, whole.rstrip("=")}
        for offset in range(3):
            encoded = encode(b"\0" * offset + data + b"\0\0").decode("ascii")
            # Character i covers bits [6i, 6i + 6); keep those inside the secret's bits.
            first, end = -(-8 * offset // 6), (8 * (offset + len(data))) // 6
            core = encoded[first:end]
            if len(core) >= 2 * SHORT_SECRET:
                forms.add(core)
    return forms


def _pattern_text(form: str) -> str:
    """A regex for `form` in which the hex digits of `%2F` and `\\u00E9` escapes match either case."""
    parts, at = [], 0
    for match in _HEX_ESCAPE.finditer(form):
        escape = match.group()
        lead = 1 if escape[0] == "%" else 2
        parts += [re.escape(form[at:match.start()]), re.escape(escape[:lead])]
        parts += [f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in escape[lead:]]
        at = match.end()
    parts.append(re.escape(form[at:]))
    return "".join(parts)


class Redactor:
    """The secrets of one run and the masking of text with them; shared by threads."""

    def __init__(self, on_warning: Callable[[str], None] | None = None) -> None:
        self._forms: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._prefixes: frozenset[str] = frozenset()
        self._suffixes: frozenset[str] = frozenset()
        self._longest = 0
        self._warned: set[str] = set()
        self._on_warning = on_warning
        self._lock = threading.Lock()

    def register(self, value: Any, name: str | None = None) -> None:
        """Mask `value` from now on; `name` (never the value) is what the short-secret warning names."""
        text = value if isinstance(value, str) else str(value)
        if not text:
            return
        forms = encodings(text)
        with self._lock:
            if name is not None and len(text) < SHORT_SECRET and name not in self._warned:
                self._warned.add(name)
                if self._on_warning is not None:
                    self._on_warning(
                        f"secret {name} is shorter than {SHORT_SECRET} characters: it is masked as {MASK} in "
                        "all free text (reasons, excerpts, URLs), which also masks ordinary text that holds it")
            if forms <= self._forms:
                return
            self._forms |= forms
            # Longest first, so a secret that contains another is masked whole.
            ordered = sorted(self._forms, key=len, reverse=True)
            self._pattern = re.compile("|".join(map(_pattern_text, ordered)))
            self._prefixes = frozenset(f[:k] for f in ordered for k in range(MIN_FRAGMENT, len(f)))
            self._suffixes = frozenset(f[-k:] for f in ordered for k in range(MIN_FRAGMENT, len(f)))
            self._longest = len(ordered[0])

    def register_cookies(self, jar: Iterable[Any]) -> None:
        """The values of the `HttpOnly` or `Secure` cookies in a cookie jar (values under
        SHORT_SECRET characters are no credentials and would mask ordinary words)."""
        for cookie in jar:
            flagged = cookie.secure or any(cookie.has_nonstandard_attr(a) for a in ("HttpOnly", "httponly"))
            if flagged and cookie.value and len(cookie.value) >= SHORT_SECRET:
                self.register(cookie.value)

    @property
    def active(self) -> bool:
        return self._pattern is not None

    def redact(self, text: str, *, cut: bool = False) -> str:
        """`text` with every secret form masked, and fragments left by a cut (`cut`: the text's end is one)."""
        pattern = self._pattern
        if pattern is None or not isinstance(text, str):
            return text
        text = pattern.sub(MASK, text)
        spans = [(m.start(), m.end()) for m in _CUT_MARKERS.finditer(text)]
        if cut:
            spans.append((len(text), len(text)))
        return self._mask_fragments(text, spans) if spans else text

    def _mask_fragments(self, text: str, spans: list[tuple[int, int]]) -> str:
        prefixes, suffixes, longest = self._prefixes, self._suffixes, self._longest
        cuts: list[tuple[int, int]] = []
        for start, end in spans:
            for before in _near(text, start, -1):
                for k in range(min(longest, before), MIN_FRAGMENT - 1, -1):
                    if text[before - k:before] in prefixes:
                        cuts.append((before - k, before))
                        break
            for after in _near(text, end, 1):
                for k in range(min(longest, len(text) - after), MIN_FRAGMENT - 1, -1):
                    if text[after:after + k] in suffixes:
                        cuts.append((after, after + k))
                        break
        if not cuts:
            return text
        out, at = [], 0
        for start, end in sorted(cuts):
            if start >= at:
                out += [text[at:start], MASK]
                at = end
        out.append(text[at:])
        return "".join(out)

    def redact_value(self, value: Any) -> Any:
        """A copy of a JSON-able value (strings, lists, dicts, keys too) with secrets masked."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact_value(k): self.redact_value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.redact_value(v) for v in value]
        return value

    def redact_in_place(self, obj: Any) -> None:
        """Mask secrets in the free-text fields (`FREE_TEXT`) of a tree of result dataclasses."""
        if self._pattern is None:
            return
        cls = type(obj)
        for name in FREE_TEXT.get(cls, ()):
            value = getattr(obj, name)
            flag = _CUT_FLAG.get((cls, name))
            if flag is not None and isinstance(value, str):
                setattr(obj, name, self.redact(value, cut=getattr(obj, flag)))
            elif name == "headers":  # header names are protocol, their values free text
                setattr(obj, name, {key: self.redact(text) for key, text in value.items()})
            else:
                setattr(obj, name, self.redact_value(value))
        for name in _other_fields(cls):
            value = getattr(obj, name)
            if is_dataclass(value):
                self.redact_in_place(value)
            elif isinstance(value, list) and value and is_dataclass(value[0]):
                for item in value:
                    self.redact_in_place(item)


def _near(text: str, at: int, direction: int) -> set[int]:
    """`at`, and the positions up to two `_BETWEEN` characters away from it in `direction`."""
    positions = {at}
    for _ in range(2):
        inside = at - 1 if direction < 0 else at
        if not 0 <= inside < len(text) or text[inside] not in _BETWEEN:
            break
        at += direction
        positions.add(at)
    return positions


@cache
def _other_fields(cls: type) -> tuple[str, ...]:
    """The fields of a results dataclass that are no free text: structure, or nested result dataclasses."""
    return tuple(f.name for f in fields(cls) if f.name not in FREE_TEXT.get(cls, ()))
