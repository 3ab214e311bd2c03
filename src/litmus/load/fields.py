"""Reading one YAML mapping's fields with their types checked, unknown keys reported, positions kept."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from litmus.errors import Position
from litmus.load.diagnostics import Collector
from litmus.load.source import Item
from litmus.model import MISSING
from litmus.text import did_you_mean

_TYPE_NAMES = {
    "string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
    "mapping": "a mapping", "list": "a list",
}


def describe(value: Any) -> str:
    """How a value's type reads in a message: 'a list', 'the number 3', 'null'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan (not a number)" if math.isnan(value) else f"{'-' * (value < 0)}.inf (no finite number)"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) <= 40 else "a string"
    return "a mapping" if isinstance(value, dict) else "a list"


def is_kind(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        # YAML's .nan and .inf are floats, but no setting means them: NaN passes every bound check.
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "mapping":
        return isinstance(value, dict)
    if kind == "list":
        return isinstance(value, list)
    return True


class Fields:
    """The fields of one mapping (`where` names it in messages, e.g. "a step").

    Unknown keys are reported on creation; `take` checks one field and records its position.
    """

    def __init__(self, item: Item, where: str, allowed: tuple[str, ...], collector: Collector,
                 *, extensions: bool = False, hints: Mapping[str, str] | None = None) -> None:
        self.item = item
        self.where = where
        self.collector = collector
        self.field_pos: dict[str, Position] = {}
        self.ok = True
        for key, key_item in item.keys.items():
            # `x-` keys (where allowed) hold YAML anchors for reuse and are otherwise ignored.
            if key not in allowed and not (extensions and key.startswith("x-")):
                # A hint (how this key is spelled here) says more than the closest allowed key.
                suggestion = f" ({hints[key]})" if hints and key in hints else did_you_mean(key, allowed)
                self.error(key_item, f"unknown key '{key}' in {where}{suggestion}")

    def error(self, item: Item, message: str) -> None:
        self.ok = False
        self.collector.error(item.span, message)

    def has(self, name: str) -> bool:
        return name in self.item.value

    def raw(self, name: str) -> Item | None:
        """The field's Item (position recorded), or None when absent."""
        item = self.item.value.get(name)
        if item is not None:
            self.field_pos[name] = item.pos
        return item

    def take(self, name: str, kind: str, *, required: bool = False, default: Any = MISSING,
             minimum: float | None = None, maximum: float | None = None, choices: tuple[str, ...] = (),
             nonempty: bool = False) -> Any:
        """The field's plain value when valid; `default` when absent or invalid (the error is recorded)."""
        item = self.raw(name)
        if item is None:
            if required:
                self.error(self.item, f"{self.where} needs '{name}'")
            return default
        return self.check(item, name, kind, minimum=minimum, maximum=maximum, choices=choices,
                          nonempty=nonempty, default=default)

    def check(self, item: Item, name: str, kind: str, *, minimum: float | None = None,
              maximum: float | None = None, choices: tuple[str, ...] = (), nonempty: bool = False,
              default: Any = MISSING) -> Any:
        value = item.value
        if not is_kind(value, kind):
            self.error(item, f"'{name}' must be {_TYPE_NAMES[kind]}, not {describe(value)}")
            return default
        if choices and value not in choices:
            listed = ", ".join(choices)
            self.error(item, f"'{name}' must be one of {listed}, not {describe(value)}{did_you_mean(value, choices)}")
            return default
        if minimum is not None and value < minimum or maximum is not None and value > maximum:
            self.error(item, f"'{name}' must be {_range(minimum, maximum)}, not {value}")
            return default
        if nonempty and not value:
            self.error(item, f"'{name}' must not be empty")
            return default
        return item.plain() if kind in ("mapping", "list") else value


def _range(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"between {minimum:g} and {maximum:g}"
    return f"at least {minimum:g}" if minimum is not None else f"at most {maximum:g}"
