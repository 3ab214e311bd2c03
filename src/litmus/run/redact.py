"""Secret redaction: every registered secret value becomes `***` in anything the run writes or prints.

Values are registered before the run (every `{{ secrets.NAME }}`, the judge's API keys, the GitHub
token); their URL-encoded and JSON-escaped forms are registered too, because a secret in a query
string reaches the recorded URL percent-encoded, and a target echoing a JSON body escapes it.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import fields, is_dataclass
from typing import Any
from urllib.parse import quote, quote_plus

from litmus.results import MASK


class Redactor:
    def __init__(self) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def register(self, value: Any) -> None:
        text = value if isinstance(value, str) else str(value)
        if not text:
            return
        # As sent in a query string, and as a target echoing a JSON body writes it (`"` -> `\"`, non-ASCII
        # -> `\u00e9`-style escapes): results only ever hold decoded text, but response bodies are kept as received.
        forms = self.forms(text)
        with self._lock:
            if forms <= self._values:
                return
            self._values |= forms
            # Longest first, so a secret that contains another is masked whole.
            alternatives = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(map(re.escape, alternatives)))

    @staticmethod
    def forms(text: str) -> set[str]:
        """The text as sent in a query string, and as a target echoing a JSON body writes it."""
        return {text, quote(text, safe=""), quote_plus(text), json.dumps(text)[1:-1],
                json.dumps(text, ensure_ascii=False)[1:-1]}

    @property
    def active(self) -> bool:
        return self._pattern is not None

    def redact(self, text: str) -> str:
        pattern = self._pattern
        if pattern is None or not isinstance(text, str):
            return text
        return pattern.sub(MASK, text)

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
        """Mask secrets throughout a tree of result dataclasses (see `litmus.results`)."""
        if self._pattern is None:
            return
        for f in fields(obj):
            value = getattr(obj, f.name)
            if is_dataclass(value):
                self.redact_in_place(value)
            elif isinstance(value, list) and value and is_dataclass(value[0]):
                for item in value:
                    self.redact_in_place(item)
            else:
                setattr(obj, f.name, self.redact_value(value))
