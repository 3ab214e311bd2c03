"""The one predicate set every value-checking assertion takes (json_path, header, cookie, body, xpath,
extract_match): exactly one of `expected`, `matches`, `exists`, `contains`, `contains_any`,
`contains_all`, `starts_with`, `ends_with`, `length`, `gt`/`gte`/`lt`/`lte`, `between`, `approx`
(+ `tolerance`), `one_of`, `json_type`, with `not: true` negating it.

A type lists its checked values as `(path, value)` nodes and hands them to `check_nodes`, which
applies the predicate node by node and records each failing node at its own path. Operands may be
templates: they are rendered at run time and type-checked then (a wrong type is an `error`
outcome). A value of the wrong kind for the predicate (a number for `matches`, a string for `gt`)
fails whatever `not` says: negation flips the predicate, never a type mismatch into a pass.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from litmus.assertions._common import (
    EvaluationTimeout,
    describe,
    errored,
    failed,
    has_type,
    is_number,
    json_equal,
    json_type,
    mismatch,
    passed,
    search,
    show,
)
from litmus.assertions.base import FieldSpec
from litmus.deadline import Deadline
from litmus.text import with_article

JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")
COMPARISONS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
# In the order they are listed to users.
KEYS = ("expected", "matches", "exists", "contains", "contains_any", "contains_all", "starts_with", "ends_with",
        "length", "gt", "gte", "lt", "lte", "between", "approx", "one_of", "json_type")
DEFAULT_TOLERANCE = 0.01
# How other tools (and guesses) spell a predicate -> how it is written here; the loader says so.
OTHER_SPELLINGS = {
    **{f"not_{key}": f"write '{key}' with 'not: true'" for key in KEYS},
    "eq": "write 'expected'", "equals": "write 'expected'", "ne": "write 'expected' with 'not: true'",
    "in": "write 'one_of'", "nin": "write 'one_of' with 'not: true'", "match": "write 'matches'",
    "includes": "write 'contains'", "count": "write 'length'",
    "isDefined": "write 'exists'", "startsWith": "write 'starts_with'", "endsWith": "write 'ends_with'",
}


def fields(subject: str) -> dict[str, FieldSpec]:
    """The predicate fields (plus `not` and `tolerance`) of a type whose values are `subject`."""
    return {
        "expected": FieldSpec("any", f"{subject} deep-equals this (JSON types kept: \"12\" is not 12)",
                              templated=True),
        "matches": FieldSpec("regex", f"{subject} is a string matching this regular expression (search)",
                             templated=True),
        "exists": FieldSpec("boolean", "true: there is at least one; false: there is none"),
        "contains": FieldSpec("any", f"{subject} contains this (substring, array element or object key)",
                              templated=True),
        "contains_any": FieldSpec("nonempty_options", f"{subject} contains at least one of these (as `contains`)",
                                  templated=True),
        "contains_all": FieldSpec("nonempty_options", f"{subject} contains every one of these (as `contains`)",
                                  templated=True),
        "starts_with": FieldSpec("string", f"{subject} is a string starting with this", templated=True),
        "ends_with": FieldSpec("string", f"{subject} is a string ending with this", templated=True),
        "length": FieldSpec("count", f"{subject} has this length (string, array, object)", templated=True),
        "gt": FieldSpec("numeric", f"{subject} is a number greater than this", templated=True),
        "gte": FieldSpec("numeric", f"{subject} is a number greater than or equal to this", templated=True),
        "lt": FieldSpec("numeric", f"{subject} is a number less than this", templated=True),
        "lte": FieldSpec("numeric", f"{subject} is a number less than or equal to this", templated=True),
        "between": FieldSpec("range", f"{subject} is a number in [low, high], inclusive", templated=True),
        "approx": FieldSpec("numeric", f"{subject} is a number within `tolerance` of this", templated=True),
        "one_of": FieldSpec("options", f"{subject} equals one of these", templated=True),
        "json_type": FieldSpec("choice", f"the JSON type of {subject}", choices=JSON_TYPES),
        "not": FieldSpec("boolean", "true: negate the predicate (a failure reads \"expected not ...\")"),
        "tolerance": FieldSpec("tolerance", "for approx: relative (default 0.01), or {abs: x} for absolute",
                               templated=True),
    }


class PredicateError(ValueError):
    """A predicate's operand, once rendered, has the wrong type (an `error` outcome, with this message)."""


@dataclass(frozen=True)
class Predicate:
    key: str
    operand: Any
    negated: bool = False
    # (kind, amount): ("rel", 0.01) or ("abs", 0.5); approx only.
    tolerance: tuple[str, float] = ("rel", DEFAULT_TOLERANCE)
    # Values come as text (headers, cookies, variables, XPath node text): a numeric string is a
    # number for the comparisons, and `matches` reads a non-string as its JSON text.
    text_values: bool = False
    # When evaluation must end (bounds regex searches); None: unbounded.
    deadline: Deadline | None = None

    @property
    def expected(self) -> Any:
        """What a mismatch records as expected."""
        shown = self.described()
        return f"not {shown}" if self.negated else (self.operand if self.key in ("expected", "one_of") else shown)

    def described(self) -> str:
        """The predicate in words: `> 4`, `to match /^a/`, `one of ["a", "b"]`."""
        op, key = self.operand, self.key
        if key in COMPARISONS:
            return f"{COMPARISONS[key]} {_number_text(op)}"
        if key == "between":
            return f"between {_number_text(op[0])} and {_number_text(op[1])}"
        if key == "approx":
            kind, amount = self.tolerance
            within = f"±{_number_text(amount)}" if kind == "abs" else f"±{amount * 100:g}%"
            return f"≈ {_number_text(op)} ({within})"
        return {
            "expected": show(op), "matches": f"to match /{op}/", "contains": f"to contain {show(op)}",
            "contains_any": f"to contain any of {show(op)}", "contains_all": f"to contain all of {show(op)}",
            "starts_with": f"to start with {show(op)}", "ends_with": f"to end with {show(op)}",
            "length": f"length {op}", "one_of": f"one of {show(op)}", "json_type": str(op),
            "exists": "to exist" if op else "not to exist",
        }[key]

    def test(self, value: Any) -> str | None:
        """Why `value` fails the predicate (None: it holds)."""
        holds, wrong_kind = self._holds(value)
        if wrong_kind is not None:
            return wrong_kind
        if holds != self.negated:
            return None
        if self.negated:
            return f"expected not {self.described()}, got {show(value)}"
        return self._failure(value)

    def _holds(self, value: Any) -> tuple[bool, str | None]:
        """(the predicate holds, or why it cannot apply to a value of this kind)."""
        key, op = self.key, self.operand
        if key == "expected":
            return json_equal(value, op), None
        if key == "one_of":
            return any(json_equal(value, option) for option in op), None
        if key == "json_type":
            return has_type(value, op), None
        if key == "matches":
            if self.text_values and not isinstance(value, str):
                value = json.dumps(value, ensure_ascii=False)
            if not isinstance(value, str):
                return False, f"expected a string {self._maybe_not()}matching /{op}/, got {describe(value)}"
            return search(op, value, self.deadline) is not None, None
        if key in ("contains", "contains_any", "contains_all"):
            if not isinstance(value, (str, list, dict)):
                wanted = {"contains": _show(op), "contains_any": f"any of {_show(op)}",
                          "contains_all": f"all of {_show(op)}"}[key]
                return False, (f"expected a string, array or object {self._maybe_not()}containing {wanted}, "
                               f"got {describe(value)}")
            if key == "contains":
                return _contains(value, op), None
            found = (_contains(value, item) for item in op)
            return (any(found) if key == "contains_any" else all(found)), None
        if key in ("starts_with", "ends_with"):
            if not isinstance(value, str):
                verb = "starting with" if key == "starts_with" else "ending with"
                return False, f"expected a string {self._maybe_not()}{verb} {_show(op)}, got {describe(value)}"
            return (value.startswith(op) if key == "starts_with" else value.endswith(op)), None
        if key == "length":
            if not isinstance(value, (str, list, dict)):
                return False, f"expected a string, array or object of length {op}, got {describe(value)}"
            return len(value) == op, None
        number = value
        if self.text_values and isinstance(value, str):
            number = _parse_number(value)
        if not is_number(number) or (isinstance(number, float) and math.isnan(number)):
            return False, f"expected a number {self.described()}, got {describe(value)}"
        if key == "gt":
            return number > op, None
        if key == "gte":
            return number >= op, None
        if key == "lt":
            return number < op, None
        if key == "lte":
            return number <= op, None
        if key == "between":
            return op[0] <= number <= op[1], None
        kind, amount = self.tolerance  # approx
        allowed = amount if kind == "abs" else amount * abs(op)
        return abs(number - op) <= allowed, None

    def _maybe_not(self) -> str:
        return "not " if self.negated else ""

    def _failure(self, value: Any) -> str:
        key, op = self.key, self.operand
        if key == "expected":
            if json_type(value) == json_type(op) or (is_number(value) and is_number(op)):
                return f"expected {show(op)}, got {show(value)}"
            return f"expected {describe(op)}, got {describe(value)}"
        if key == "json_type":
            return f"expected {op}, got {describe(value)}"
        if key == "length":
            return f"expected length {op}, got length {len(value)}"
        if key == "contains_all":
            missing = [item for item in op if not _contains(value, item)]
            return f"expected {self.described()}, got {show(value)} (missing {show(missing)[1:-1]})"
        if key == "approx":
            number = _parse_number(value) if isinstance(value, str) else value
            return f"expected {self.described()}, got {show(value)} (off by {_number_text(abs(number - op))})"
        return f"expected {self.described()}, got {show(value)}"


def _contains(value: str | list | dict, item: Any) -> bool:
    """`value` contains `item`: a substring of a string, an element of an array, a key of an object."""
    if isinstance(value, str):
        return isinstance(item, str) and item in value
    if isinstance(value, list):
        return any(json_equal(element, item) for element in value)
    return item in value if isinstance(item, str) else False


def _show(value: Any) -> str:
    return show(value)


def _number_text(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _parse_number(text: str) -> Any:
    """A numeric string's number (`"12.50"` -> 12.5, `" 3 "` -> 3); the text itself when it is not one."""
    try:
        value = json.loads(text.strip())
    except ValueError:
        try:
            value = float(text.strip())  # `1e3`, `.5`, `+2`: numeric strings JSON does not spell so
        except ValueError:
            return text
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else text


def given(params: dict[str, Any]) -> str | None:
    """The predicate key the assertion gives (the loader ensures there is exactly one, where required)."""
    return next((key for key in KEYS if key in params), None)


def build(params: dict[str, Any], render, *, text_values: bool = False,
          deadline: Deadline | None = None) -> Predicate:
    """The assertion's predicate with its operand rendered and type-checked (PredicateError if wrong)."""
    key = given(params)
    raw = params[key]
    operand = render(raw) if key not in ("exists", "json_type") else raw
    tolerance = ("rel", DEFAULT_TOLERANCE)
    if key in ("matches", "starts_with", "ends_with"):
        operand = _need_text(key, operand, raw, numbers_as_text=key == "matches")
    elif key in COMPARISONS or key == "approx":
        operand = _need_number(key, operand, raw)
    elif key == "length":
        operand = _need_number(key, operand, raw)
        if not isinstance(operand, int) or operand < 0:
            raise PredicateError(f"'length' must be a whole number 0 or more, got {_rendered(operand, raw)}")
    elif key == "between":
        operand = _need_range(operand, raw)
    elif key == "one_of" and not isinstance(operand, list):
        raise PredicateError(f"'one_of' must be a list, got {_rendered(operand, raw)}")
    elif key in ("contains_any", "contains_all") and not (isinstance(operand, list) and operand):
        # An empty list would make contains_all hold for anything: a silent pass.
        raise PredicateError(f"'{key}' must be a non-empty list, got {_rendered(operand, raw)}")
    if key == "approx" and "tolerance" in params:
        tolerance = _need_tolerance(render(params["tolerance"]), params["tolerance"])
    return Predicate(key, operand, bool(params.get("not", False)), tolerance, text_values, deadline)


def _rendered(value: Any, raw: Any) -> str:
    if isinstance(raw, str) and "{{" in raw:
        return f"{describe(value)} (rendered from {raw!r})"
    return describe(value)


def _need_text(key: str, value: Any, raw: Any, *, numbers_as_text: bool) -> str:
    if isinstance(value, str):
        return value
    if numbers_as_text and isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.dumps(value)  # `matches: "{{ order_id }}"` with a numeric id: its digits
    raise PredicateError(f"'{key}' must be a string, got {_rendered(value, raw)}")


def _need_number(key: str, value: Any, raw: Any) -> float:
    number = _parse_number(value) if isinstance(value, str) and isinstance(raw, str) and "{{" in raw else value
    if not is_number(number) or (isinstance(number, float) and not math.isfinite(number)):
        raise PredicateError(f"'{key}' must be a number, got {_rendered(value, raw)}")
    return number


def _need_range(value: Any, raw: Any) -> tuple[float, float]:
    if isinstance(raw, list) and isinstance(value, list) and len(value) == 2:
        low, high = (_need_number("between", v, r) for v, r in zip(value, raw, strict=True))
    elif isinstance(value, list) and len(value) == 2:
        low, high = (_need_number("between", v, v) for v in value)
    else:
        raise PredicateError(f"'between' must be a list [low, high], got {_rendered(value, raw)}")
    if low > high:
        raise PredicateError(f"'between' needs low <= high, got [{_number_text(low)}, {_number_text(high)}]")
    return low, high


def _need_tolerance(value: Any, raw: Any) -> tuple[str, float]:
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("abs", "rel"):
        kind, amount = next(iter(value.items()))
        amount = _need_number("tolerance", amount, raw[kind] if isinstance(raw, dict) else amount)
    else:
        kind, amount = "rel", _need_number("tolerance", value, raw)
    if amount < 0:
        raise PredicateError(f"'tolerance' must not be negative, got {_number_text(amount)}")
    return kind, amount


def check_nodes(assertion, predicate: Predicate, nodes: list[tuple[str, Any]], *, where: str, missing: str,
                noun: str = "node"):
    """The outcome of `predicate` over `nodes` ((path, value) pairs). `where` is the path a "nothing
    there" mismatch is recorded at; `missing` says what was looked for (`no node matches`); `noun`
    names one node in messages (`node`, `header`, `cookie`)."""
    if predicate.key == "exists":
        wanted = bool(predicate.operand) != predicate.negated
        if wanted and not nodes:
            return failed(assertion, [mismatch(where, with_article(noun), None, missing)])
        if not wanted and nodes:
            return failed(assertion, [
                mismatch(path, f"no {noun}", value, f"expected no {noun} here, found {show(value)}")
                for path, value in nodes
            ])
        return passed(assertion, f"{where}: {len(nodes)} found" if nodes else f"{where}: none, as expected")
    if not nodes:
        return failed(assertion, [mismatch(where, predicate.expected, None, missing)])
    mismatches = []
    for path, value in nodes:
        try:
            reason = predicate.test(value)
        except EvaluationTimeout as exc:
            return errored(assertion, str(exc), path)
        if reason:
            mismatches.append(mismatch(path, predicate.expected, value, reason))
    if mismatches:
        return failed(assertion, mismatches)
    shown = ("not " if predicate.negated else "") + predicate.described()
    if len(nodes) == 1:
        plain = predicate.key == "expected" and not predicate.negated  # `$.a: "x"` says it all
        return passed(assertion, f"{nodes[0][0]}: {show(nodes[0][1])}" + ("" if plain else f" ({shown})"))
    return passed(assertion, f"{where}: all {len(nodes)} values hold ({shown})")


def evaluate(assertion, ctx, nodes: list[tuple[str, Any]], *, where: str, missing: str,
             text_values: bool = False, noun: str = "node"):
    """Build the assertion's predicate (a wrong operand type is an `error`) and check `nodes` with it."""
    try:
        predicate = build(assertion.params, ctx.render, text_values=text_values, deadline=ctx.deadline)
    except PredicateError as exc:
        return errored(assertion, str(exc), where)
    return check_nodes(assertion, predicate, nodes, where=where, missing=missing, noun=noun)
