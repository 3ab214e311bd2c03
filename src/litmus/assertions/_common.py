"""Helpers the deterministic evaluators share: outcomes, JSON-aware comparison, value descriptions."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, get_args

from litmus.deadline import Deadline
from litmus.model import Assertion
from litmus.results import AssertionOutcome, AssertionStatus, JudgeSkip, Mismatch
from litmus.text import MARK, clip, count

# A mismatch's `actual` may be a whole response object: past this many characters of JSON it is
# recorded as a cut string instead, so results stay small.
VALUE_LIMIT = 1024
_SHOW_LIMIT = 80


def outcome(assertion: Assertion, status: AssertionStatus, reason: str,
            mismatches: Iterable[Mismatch] = ()) -> AssertionOutcome:
    return AssertionOutcome(
        type=assertion.type, status=status, reason=reason, line=assertion.pos.line,
        column=assertion.pos.column, name=assertion.name, mismatches=list(mismatches),
    )


# Why an LLM-based assertion was not put to a judge; the causes that are a `JudgeSkip` are recorded as
# `judge_skip` (litmus.verdict decides what each means), a missing scenario is "not applicable".
NOT_JUDGED = {
    "no_scenario": "scenario-aware assertion, and this flow run has no scenario (the suite has no context)",
    "disabled": "judging turned off (--no-judge or judge.provider none)",
    "no_judge": "no judge configured",
    "budget": "judge budget reached: max_calls {max_calls} judge calls were made in this run "
              "(raise judge.max_calls to judge more)",
}


def not_judged(assertion: Assertion, cause: str, *, max_calls: int | None = None,
               threshold: float | None = None) -> AssertionOutcome:
    """The one `skipped` outcome of an LLM-based assertion that no judge evaluated, for a NOT_JUDGED cause."""
    result = outcome(assertion, "skipped", NOT_JUDGED[cause].format(max_calls=max_calls))
    result.threshold = threshold
    result.judge_skip = cause if cause in get_args(JudgeSkip) else None
    return result


def passed(assertion: Assertion, reason: str) -> AssertionOutcome:
    return outcome(assertion, "passed", reason)


def failed(assertion: Assertion, mismatches: list[Mismatch]) -> AssertionOutcome:
    """A failure whose one-line reason is the first mismatch (`$.a.b: expected ..., got ...`)."""
    first = mismatches[0]
    reason = f"{first.path}: {first.reason}"
    if len(mismatches) > 1:
        reason += f" (and {len(mismatches) - 1} more)"
    return outcome(assertion, "failed", reason, mismatches)


def errored(assertion: Assertion, reason: str, path: str = "$") -> AssertionOutcome:
    return outcome(assertion, "error", reason, [Mismatch(path=path, expected=None, actual=None, reason=reason)])


def mismatch(path: str, expected: Any, actual: Any, reason: str) -> Mismatch:
    return Mismatch(path=path, expected=bounded(expected), actual=bounded(actual), reason=reason)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def has_type(value: Any, expected: str) -> bool:
    """JSON Schema's notion: every integer is a number, and 1.0 is an integer."""
    actual = json_type(value)
    if expected == "number":
        return actual in ("integer", "number")
    if expected == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == expected


def show(value: Any) -> str:
    """A value as JSON, cut to one short line."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, _SHOW_LIMIT)


def describe(value: Any) -> str:
    """`string "12.50"`, `integer 3`, `null`, `array of 2 items`: what a reason says was found."""
    kind = json_type(value)
    if kind == "null":
        return "null"
    if kind == "array":
        return f"array of {count(len(value), 'item')}"
    if kind == "object":
        return f"object {show(value)}"
    return f"{kind} {show(value)}"


def bounded(value: Any) -> Any:
    if isinstance(value, (dict, list)) or (isinstance(value, str) and len(value) > VALUE_LIMIT):
        text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
        if len(text) > VALUE_LIMIT:
            return text[:VALUE_LIMIT] + f"{MARK} ({len(text)} characters)"
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality as JSON sees it: `true` is not `1`, `1` equals `1.0`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if is_number(a) and is_number(b):
        return a == b
    return type(a) is type(b) and a == b


class EvaluationTimeout(Exception):
    """Evaluating the assertion overran the step's deadline (an `error` outcome, with this message)."""


@lru_cache(maxsize=1024)
def regex(pattern: str):
    """`pattern` compiled with the `regex` module: Python's `re` syntax, plus a timeout on each search,
    so a catastrophically backtracking pattern ends as an error instead of hanging the run."""
    import regex as engine  # lazy: regex: ~30 ms, only for a suite that uses a regex

    return engine.compile(pattern)


# A search with no deadline of its own (extractions outside a step's evaluation) still ends.
DEFAULT_REGEX_TIMEOUT_S = 30.0


# The step's deadline for the `pattern` searches of a JSON Schema check: validators are compiled once and shared by
# every check (and thread), while each check has its own deadline.
PATTERN_DEADLINE: ContextVar[Deadline | None] = ContextVar("pattern_deadline", default=None)


@contextmanager
def patterns_bounded_by(deadline: Deadline | None) -> Iterator[None]:
    """Within it, `bounded_pattern` searches end at `deadline` (EvaluationTimeout)."""
    token = PATTERN_DEADLINE.set(deadline)
    try:
        yield
    finally:
        PATTERN_DEADLINE.reset(token)


def bounded_pattern(validator, pattern: str, instance: Any, schema: Any):
    """JSON Schema's `pattern` keyword on the runner's regex engine, stopped at the check's deadline: a pull
    request writes the pattern and the server the value, so a backtracking pattern is an `error` of the check,
    never a hang (for `jsonschema.validators.extend`)."""
    from jsonschema.exceptions import ValidationError  # lazy: jsonschema: ~115 ms, only when a schema is checked

    if validator.is_type(instance, "string") and not search(pattern, instance, PATTERN_DEADLINE.get()):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def bounded_pattern_properties(validator, pattern_properties: dict, instance: Any, schema: Any):
    """JSON Schema's `patternProperties` with each name matched by the bounded `search`; the descent into the
    values is jsonschema's own (for `jsonschema.validators.extend`)."""
    if not validator.is_type(instance, "object"):
        return
    deadline = PATTERN_DEADLINE.get()
    for pattern, subschema in pattern_properties.items():
        for name, value in instance.items():
            if search(pattern, name, deadline):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def bounded_keywords(cls) -> dict[str, Any]:
    """The keywords of `cls` (a jsonschema validator class) that search a regex, on the runner's regex engine and
    stopped at the check's deadline: `pattern`, `patternProperties`, and `additionalProperties` where it consults
    `patternProperties` (for `jsonschema.validators.extend`)."""
    keywords: dict[str, Any] = {"pattern": bounded_pattern}
    if "patternProperties" in cls.VALIDATORS:
        keywords["patternProperties"] = bounded_pattern_properties
    if "additionalProperties" in cls.VALIDATORS:
        keywords["additionalProperties"] = _bounded_additional_properties(cls.VALIDATORS["additionalProperties"])
    return keywords


def _bounded_additional_properties(keyword):
    """`keyword` (a library's `additionalProperties`) with the names `patternProperties` covers found by the bounded
    `search` and left out: the library's own check then sees the other names, and no pattern to search."""

    def additional_properties(validator, additional: Any, instance: Any, schema: Any):
        patterns = schema.get("patternProperties") if isinstance(schema, dict) else None
        if patterns and validator.is_type(instance, "object"):
            deadline = PATTERN_DEADLINE.get()
            instance = {name: value for name, value in instance.items()
                        if not any(search(pattern, name, deadline) for pattern in patterns)}
            schema = {key: value for key, value in schema.items() if key != "patternProperties"}
        yield from keyword(validator, additional, instance, schema)

    return additional_properties


def search(pattern: str, text: str, deadline: Deadline | None = None):
    """`regex(pattern).search(text)`, stopped at `deadline`: EvaluationTimeout then."""
    timeout = DEFAULT_REGEX_TIMEOUT_S if deadline is None else max(deadline.remaining(), 0.001)
    try:
        return regex(pattern).search(text, timeout=timeout)
    except TimeoutError:
        raise EvaluationTimeout(
            f"regex /{pattern}/ did not finish within the step's deadline ({timeout * 1000:.0f} ms left): "
            "it backtracks catastrophically on this value") from None


def body_search(assertion: Assertion, ctx, *, negate: bool) -> AssertionOutcome:
    """`contains` (negate=False) and `not_contains` (negate=True) on the body text."""
    value = ctx.render(assertion.params["value"])
    value = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    # Every reading of the body: the declared charset's, and UTF-8's when the charset may be a lie.
    readings = ctx.response.text_readings
    text = readings[0].text
    fold = assertion.params.get("ignore_case")
    needle = value.casefold() if fold else value
    hits = [(r, (r.text.casefold() if fold else r.text).find(needle)) for r in readings]
    reading, at = next(((r, at) for r, at in hits if at >= 0), (readings[0], -1))
    # A match only in the UTF-8 reading: the declared charset does not read the body as it is.
    note = (f" (in the body read as UTF-8; read as the declared {readings[0].decoding} it does not)"
            if reading is not readings[0] else "")
    found = at >= 0
    if found != negate:
        return passed(assertion, f"body {'does not contain' if negate else 'contains'} {show(value)}{note}")
    if negate:
        start, end = max(0, at - 40), at + len(value) + 40
        # The window's cuts are marked: redaction masks a secret's fragment left at a marked cut.
        context = (MARK if start else "") + reading.text[start:end] + (MARK if end < len(reading.text) else "")
        reason = f"body contains {show(value)} at character {at}{note}: {show(context)}"
        return failed(assertion, [mismatch("$", f"no {show(value)}", context, reason)])
    head = text[:200] + (MARK if len(text) > 200 else "")
    return failed(assertion, [mismatch("$", value, head, f"body does not contain {show(value)}")])
