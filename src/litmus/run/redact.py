"""Secret redaction: every registered secret becomes `***` in the free text that leaves the run.

Values are registered before the run (every `{{ secrets.NAME }}`, every `{{ env.NAME }}` whose name
is not in env-allow, the judge's API keys, the GitHub token) and during it (the values of
`HttpOnly`/`Secure` cookies the target sets, and any value extracted from a credential header such
as `Set-Cookie`).

What is masked: everything in the results but their `STRUCTURE` (statuses, verdicts, types, names
and files from the probe, numbers), that is the free text listed in `FREE_TEXT` (reasons,
excerpts, URLs, header values, mismatch values, extracted values, judge text, errors); the
document's keys are never touched. So a secret such as `e` or `error` can neither corrupt the
results document nor change a verdict; and the runner masks the results only once every verdict
is decided (the intent judge reads a masked copy). Every report, the terminal and the GitHub
outputs are rendered from those masked results.

Every form a secret takes on the way out is masked (`encodings`): raw, decoded and split as a raw
URL delivers it, percent-encoded (either hex case, `/` kept or not, as requests and urllib3 quote a
URL), `+` form, base64 and base64url (also inside a longer base64 text, as in `Basic` credentials),
JSON-escaped (`\\/`, `\\u00e9` escapes in either case, HTML-safe `\\u003c`, and escaped twice), `repr` and
HTML-escaped; one Aho-Corasick automaton finds them all in one pass. Text cut before masking (an
80-character preview, a 60-byte body description, a 4 KiB excerpt) can end in the start of a
secret: `redact` masks a fragment of at least `MIN_FRAGMENT` characters that a secret form starts
with (ends with) right before (after) an ellipsis, or at the end of a text known to be cut.
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

from ahocorasick_rs import AhoCorasick, MatchKind

from litmus import results
from litmus.results import MASK
from litmus.text import MARK

# Shorter secrets are masked all the same, but they also hide ordinary words: one warning says so.
SHORT_SECRET = 4
# A cut leaves at most this many characters minus one of a secret's start in the text.
MIN_FRAGMENT = 3
# Headers whose values are credentials whatever their value: masked even when not a declared secret.
SENSITIVE_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"})
# What `requests` leaves unquoted when it re-quotes a URL (`requests.utils.requote_uri`), and what
# urllib3 then leaves unquoted in a query (it quotes `[`, `]` and `#` there).
_URL_SAFE = ("!#$%&'()*+,/:;=?@[]~", "!$%&'()*+,/:;=?@~")
# Litmus's own cut mark, and "..." for text cut before it reached Litmus (a judge's reply quoting one).
_CUT_MARKERS = re.compile(re.escape(MARK) + "|\\.\\.\\.")
# What may stand between a cut and its marker: a repr's or JSON string's quote (`'tok=SUPERSE'…`),
# or the opening of a note such as `\n[… 12 more characters]`.
_BETWEEN = "'\"\n [("
# Characters no percent, JSON, repr or HTML encoder changes.
_PLAIN = re.compile(r"[A-Za-z0-9._~-]+")
_HEX_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}")

# The structure of the results document: never masked. Every other field is masked (its strings,
# recursively) or, holding result dataclasses, walked; so a field added to `litmus.results` is masked
# until it is listed here (tests/run/test_redact.py checks that every field is classified).
STRUCTURE: dict[type, frozenset[str]] = {cls: frozenset(names) for cls, names in {
    results.RunResult: ("verdict", "schema_version"),
    results.RunInfo: ("started_at", "finished_at", "interrupted", "git_sha", "shard", "repository", "server_url",
                      "trusted"),
    results.Tool: ("name", "version"),
    results.JudgeTotals: ("calls", "cached", "escalated", "needs_review", "input_tokens", "output_tokens", "wall_ms"),
    results.SuiteResult: ("name", "file", "line", "pass_threshold", "pass_rate", "verdict"),
    results.FlowRunResult: ("flow", "line", "run_index", "scenario", "duration_ms", "status", "overruled_failures",
                            "flow_id"),
    results.IntentEvaluation: ("status", "method", "score", "threshold", "judge_skip", "id", "baseline",
                               "content_sha256"),
    results.StepResult: ("name", "line", "status", "attempts", "transport_retries", "id", "baseline", "turn",
                         "judge_skip"),
    results.ResponseExcerpt: ("status", "elapsed_ms", "size", "truncated", "body_excerpt_truncated"),
    results.AssertionOutcome: ("type", "status", "line", "column", "name", "score", "threshold", "critical",
                               "judge_skip", "id", "baseline", "content_sha256"),
    # Human decisions (`litmus.decisions`): hashes, logins, timestamps, comment URLs, decision-file positions.
    results.DecidedBy: ("by", "at", "kind", "verdict", "url"),
    results.DecisionNote: ("finding", "content", "by", "where"),
    results.DecisionsSummary: ("sources", "applied"),
    # The baseline comparison (`litmus.compare`): identities, states, counts, names from the probe.
    results.Mismatch: ("baseline",),
    results.BaselineSummary: ("new", "unchanged", "fixed", "regressed", "max_cost_increase"),
    results.FixedFinding: ("id", "suite", "flow", "scenario", "step", "label", "line"),
    results.FlowComparison: ("flow_id", "suite", "flow", "verdict"),
    results.PassRate: ("passed", "total", "rate", "low", "high"),
    results.ScoreComparison: ("id", "suite", "flow", "scenario", "step", "assertion"),
    results.ScoreStats: ("n", "mean", "spread", "values"),
    # Header names, and the names (never the values) of the secrets behind a request's masks.
    results.RequestExcerpt: ("method", "body_truncated", "probe_headers", "secrets", "body_file", "max_redirects"),
    # A part's name and file path come from the probe, like suite and file names.
    results.FormPart: ("name", "file"),
    results.TlsOptions: ("verify", "ca_file", "client_cert", "client_key"),
    results.Redirect: ("status", "dropped_headers", "body_dropped"),
    results.RateLimitWait: ("status", "waited_ms"),
    results.StreamRecord: ("format", "events_count", "first_byte_ms", "first_event_ms", "done", "text_truncated"),
    results.JudgeRecord: ("escalated",),
    results.JudgedReply: ("truncated", "masked"),
    results.JudgeTier: ("provider", "model", "score", "latency_ms", "input_tokens", "output_tokens", "cached"),
    # OpenAPI coverage: the spec's path (named by the probe) and its operations ("GET /orders/{id}"), counts.
    results.OpenAPICoverage: ("spec", "operations", "exercised", "missing"),
    # Token counts and costs; the price key is litmus.yaml's (the model is the response's: free text).
    results.Usage: ("input_tokens", "output_tokens", "source", "price_key", "cost_usd"),
    results.UsageTotals: ("input_tokens", "output_tokens", "cost_usd", "count", "unpriced"),
    results.UsageChange: ("measure", "change_pct", "over_limit"),
}.items()}
# The free text, for the record: what the walk masks.
FREE_TEXT: dict[type, tuple[str, ...]] = {
    results.RunInfo: ("base_url", "trust_reason", "changed_checks", "trust_notes"),
    results.SuiteResult: ("intent", "reason"),
    results.FlowRunResult: ("reason", "skipped", "transcript"),
    results.Redirect: ("url",),
    results.BaselineSummary: ("source",),
    results.FixedFinding: ("reason",),
    results.StreamEvent: ("event", "data", "id"),
    results.StreamRecord: ("text", "tool_calls", "raw"),
    results.IntentEvaluation: ("reason",),
    results.StepResult: ("error", "extracted", "generated", "graphql_errors", "user", "warnings"),
    results.RequestExcerpt: ("url", "headers", "body"),
    results.FormPart: ("value", "filename", "content_type"),
    results.Credentials: ("username", "password"),
    results.ResponseExcerpt: ("headers", "body"),
    results.AssertionOutcome: ("reason",),
    results.Mismatch: ("path", "expected", "actual", "reason"),
    results.JudgeTier: ("reason",),
    results.JudgedReply: ("text",),
    results.DecidedBy: ("reason",),
    results.DecisionNote: ("why",),
    results.Usage: ("model",),
}
# Mappings whose keys are names (header names, the probe's variable names) and values free text.
_NAMED_VALUES = frozenset({"headers", "extracted"})
# Excerpts whose flag says they were cut at their end (None: always taken as cut, it has no flag).
_CUT_FLAG = {(results.RequestExcerpt, "body"): "body_truncated",
             (results.ResponseExcerpt, "body"): "body_excerpt_truncated",
             (results.StreamRecord, "text"): "text_truncated",
             (results.StreamRecord, "raw"): None,
             (results.JudgedReply, "text"): "truncated"}
# Texts whose flag says whether masking changed them: a reply with `***` in it is not one to accept as a reference.
_MASKED_FLAG = {(results.JudgedReply, "text"): "masked"}


def masks_env_value(value: str) -> bool:
    """Whether an `env.` value (of a name not in env-allow) is masked: one under SHORT_SECRET characters
    is no credential, and masking it would hide ordinary words in every report (`eu` in `queue`)."""
    return len(value) >= SHORT_SECRET


def encodings(secret: str) -> set[str]:
    """Every form of `secret` that an encoder on the way out (ours, requests', the target's) may write."""
    if _PLAIN.fullmatch(secret):  # most tokens and cookie values: no encoder but base64 changes them
        return {secret} | _base64_forms(secret.encode("ascii"))
    # Sent raw inside a URL, its `%xx` and `+` are escapes, and `&` or `#` ends a query value: the
    # target reads (and echoes) it decoded, or only its pieces.
    readings = {secret, secret.strip()}
    # (requests moves a `#fragment` to the end of the URL, after the query it appends: keep that piece too).
    pieces = {*re.split("[&#]", secret), *(piece for sep in "&#" for piece in secret.split(sep))}
    readings |= {piece for piece in pieces if len(piece) >= SHORT_SECRET}
    readings |= {decode(reading) for reading in readings for decode in (unquote, unquote_plus)}
    # urllib3 upper-cases the `%xx` escapes a raw secret holds before requests quotes the URL again.
    readings = {case for reading in readings for case in _hex_cases(reading)}
    forms: set[str] = set()
    for reading in readings:
        forms |= _encoded(reading)
    # A JSON body quoted inside another JSON string (a tool's output, a logged request) escapes again.
    forms |= {again for form in forms for again in _json_escaped(form)}
    forms = {case for form in forms for case in _hex_cases(form)}
    forms.discard("")
    return forms


def _json_escaped(text: str) -> set[str]:
    """`text` as JSON encoders escape it inside a string: plain, `\\/`, ASCII-only, HTML-safe (`\\u003c`)."""
    plain, ascii_only = json.dumps(text, ensure_ascii=False)[1:-1], json.dumps(text)[1:-1]
    html_safe = ascii_only.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return {plain, ascii_only, html_safe, *(form.replace("/", "\\/") for form in (plain, ascii_only, html_safe))}


def _encoded(secret: str) -> set[str]:
    forms = {secret}
    for safe in ("", "/", *_URL_SAFE, *(chars.replace("%", "") for chars in _URL_SAFE)):
        forms |= {quote(secret, safe=safe), quote_plus(secret, safe=safe)}
    forms |= _json_escaped(secret)
    # repr picks its quote from the content; inside a longer text the other quote may be escaped too.
    forms |= {repr(secret)[1:-1], repr(secret + "'\"")[1:-4]}
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


def _hex_cases(form: str) -> set[str]:
    """`form`, and with the hex digits of its `%2f` and `\\u00e9` escapes all lower or all upper case."""
    return {form, *(_HEX_ESCAPE.sub(lambda m, case=case: m.group()[0] + case(m.group()[1:]).replace("U", "u"), form)
                    for case in (str.lower, str.upper))}


class Redactor:
    """The secrets of one run and the masking of text with them; shared by threads."""

    def __init__(self, on_warning: Callable[[str], None] | None = None) -> None:
        self._values: set[str] = set()
        self._forms: set[str] = set()
        # Built at first use after a registration: cookies are registered step by step.
        self._matcher: AhoCorasick | None = None
        self._prefixes: set[str] = set()
        self._suffixes: set[str] = set()
        # The lengths to try at a cut, by the MIN_FRAGMENT characters next to it: a few, not all.
        self._prefix_lengths: dict[str, tuple[int, ...]] = {}
        self._suffix_lengths: dict[str, tuple[int, ...]] = {}
        self._warned: set[str] = set()
        self._on_warning = on_warning
        self._lock = threading.Lock()

    def register(self, value: Any, name: str | None = None) -> None:
        """Mask `value` from now on; `name` (never the value) is what the short-secret warning names."""
        text = value if isinstance(value, str) else str(value)
        if not text:
            return
        with self._lock:
            if name is not None and len(text) < SHORT_SECRET and name not in self._warned:
                self._warned.add(name)
                if self._on_warning is not None:
                    self._on_warning(
                        f"secret {name} is shorter than {SHORT_SECRET} characters: it is masked as {MASK} in "
                        "all free text (reasons, excerpts, URLs), which also masks ordinary text that holds it")
            if text in self._values:
                return
            self._values.add(text)
        forms = encodings(text)
        with self._lock:
            new = forms - self._forms
            if not new:
                return
            self._forms |= new
            self._matcher = None
            for form in new:
                for k in range(MIN_FRAGMENT, len(form)):
                    _add_piece(self._prefixes, self._prefix_lengths, form[:k], form[k - MIN_FRAGMENT:k])
                    _add_piece(self._suffixes, self._suffix_lengths, form[-k:], form[-k:][:MIN_FRAGMENT])

    def register_env(self, value: Any) -> None:
        """Mask a value read through `{{ env.NAME }}` (or a filter's output of it) of a name not in
        env-allow, unless `masks_env_value` says it is too short to be a credential."""
        text = value if isinstance(value, str) else str(value)
        if masks_env_value(text):
            self.register(text)

    def _current_matcher(self) -> AhoCorasick | None:
        matcher = self._matcher
        if matcher is None and self._forms:
            with self._lock:
                if self._matcher is None:
                    # Leftmost-longest, so a secret that contains another is masked whole.
                    self._matcher = AhoCorasick(sorted(self._forms), matchkind=MatchKind.LeftmostLongest)
                matcher = self._matcher
        return matcher

    def register_cookie_values(self, values: Iterable[str]) -> None:
        """Values of `HttpOnly` or `Secure` cookies (`litmus.assertions.cookie.protected_values` reads
        them from Set-Cookie lines); values under SHORT_SECRET characters are no credentials and would
        mask ordinary words."""
        for value in values:
            if len(value) >= SHORT_SECRET:
                self.register(value)

    def redact(self, text: str, *, cut: bool = False) -> str:
        """`text` with every secret form masked, and fragments left by a cut (`cut`: the text's end is one)."""
        matcher = self._current_matcher() if isinstance(text, str) else None
        if matcher is None:
            return text
        # Whole forms and cut fragments are both found in the text as given, then masked at once: masking
        # the pieces of a secret (split at `&`) first would hide the cut prefix that holds them.
        found = [(start, end) for _, start, end in matcher.find_matches_as_indexes(text)]
        # `in` first: a C scan, where the regex would step through every character of a 4 KiB body.
        markers = [(m.start(), m.end()) for m in _CUT_MARKERS.finditer(text)] \
            if MARK in text or "..." in text else []
        if cut:
            markers.append((len(text), len(text)))
        if markers:
            found += self._fragments(text, markers)
        return _masked(text, sorted(found)) if found else text

    def _fragments(self, text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The spans of secret fragments just before or after the cut markers `spans`."""
        prefixes, suffixes = self._prefixes, self._suffixes
        cuts: list[tuple[int, int]] = []
        for start, end in spans:
            for before in _near(text, start, -1):
                for k in self._prefix_lengths.get(text[before - MIN_FRAGMENT:before], ()):
                    if k <= before and text[before - k:before] in prefixes:
                        cuts.append((before - k, before))
                        break
            for after in _near(text, end, 1):
                for k in self._suffix_lengths.get(text[after:after + MIN_FRAGMENT], ()):
                    if text[after:after + k] in suffixes:
                        cuts.append((after, after + k))
                        break
        return cuts

    def redact_value(self, value: Any) -> Any:
        """A copy of a JSON-able value (strings, lists, dicts, keys too) with secrets masked."""
        if not self._forms:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact_value(k): self.redact_value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.redact_value(v) for v in value]
        return value

    def redact_in_place(self, obj: Any) -> None:
        """Mask secrets in a tree of result dataclasses: everything but its `STRUCTURE`."""
        if not self._forms:
            return
        cls = type(obj)
        for name in _maskable_fields(cls):
            value = getattr(obj, name)
            if is_dataclass(value):
                self.redact_in_place(value)
            elif isinstance(value, list) and value and is_dataclass(value[0]):
                for item in value:
                    self.redact_in_place(item)
            elif (cls, name) in _CUT_FLAG and isinstance(value, str):
                flag = _CUT_FLAG[cls, name]
                masked = self.redact(value, cut=True if flag is None else getattr(obj, flag))
                setattr(obj, name, masked)
                if masked != value and (cls, name) in _MASKED_FLAG:
                    setattr(obj, _MASKED_FLAG[cls, name], True)
            elif name in _NAMED_VALUES and isinstance(value, dict):
                setattr(obj, name, {key: self.redact_value(item) for key, item in value.items()})
            else:
                setattr(obj, name, self.redact_value(value))


def _add_piece(pieces: set[str], lengths: dict[str, tuple[int, ...]], piece: str, key: str) -> None:
    if piece not in pieces:
        pieces.add(piece)
        lengths[key] = tuple(sorted({*lengths.get(key, ()), len(piece)}, reverse=True))


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each (sorted) span replaced by MASK; a span overlapping the one before joins it."""
    out, at = [], 0
    for start, end in spans:
        if start >= at:
            out += [text[at:start], MASK]
        at = max(at, end)
    out.append(text[at:])
    return "".join(out)


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
def _maskable_fields(cls: type) -> tuple[str, ...]:
    """The fields of a results dataclass that are not its structure."""
    return tuple(f.name for f in fields(cls) if f.name not in STRUCTURE.get(cls, ()))
