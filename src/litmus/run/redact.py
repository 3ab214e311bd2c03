"""Secret redaction: every registered secret value becomes `***` in anything the run writes or prints.

Values are registered as templates resolve `{{ secrets.NAME }}`; their URL-encoded forms are
registered too, because a secret in a query string reaches the recorded URL percent-encoded.
"""

from __future__ import annotations

import re
import threading
from dataclasses import fields, is_dataclass
from typing import Any
from urllib.parse import quote, quote_plus

MASK = "***"


class Redactor:
    def __init__(self) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def register(self, value: Any) -> None:
        text = value if isinstance(value, str) else str(value)
        if not text:
            return
        forms = {text, quote(text, safe=""), quote_plus(text)}
        with self._lock:
            if forms <= self._values:
                return
            self._values |= forms
            # Longest first, so a secret that contains another is masked whole.
            alternatives = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(map(re.escape, alternatives)))

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
