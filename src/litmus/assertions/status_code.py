"""`status_code`: the HTTP status matches. `expected` may be a template, rendered at evaluation and then
read like a written one (a status, a list of them, a class like "2xx")."""

import json
import re
from typing import Any

from litmus.assertions._common import describe, errored, failed, mismatch, passed
from litmus.assertions.base import AssertionSpec, FieldSpec
from litmus.templating import TEMPLATE, TemplateError

SPEC = AssertionSpec(
    type="status_code",
    family="deterministic",
    doc="The HTTP status matches.",
    fields={
        "expected": FieldSpec("status", "an int, a list of ints, or a class like \"2xx\" (or a template giving one)",
                              required=True, templated=True),
    },
)
STATUS_CLASS = re.compile(r"[1-5]xx")


def status_problem(value: Any) -> str | None:
    """Why `value` is not a status expectation: an int 100-599, a list of them, or a class like "2xx"."""
    values = value if isinstance(value, list) else [value]
    if not values:
        return "'expected' must list at least one status"
    for v in values:
        if isinstance(v, str) and STATUS_CLASS.fullmatch(v):
            continue
        if isinstance(v, int) and not isinstance(v, bool) and 100 <= v <= 599:
            continue
        return f"'expected' must be a status 100-599, a list of them, or a class like \"2xx\", not {describe(v)}"
    return None


def templated(value: Any) -> bool:
    """Whether `value` (the written `expected`) holds a template: then it is read only once rendered."""
    return TEMPLATE.search(json.dumps(value)) is not None


def evaluate(assertion, ctx):
    expected = assertion.params["expected"]
    if templated(expected):
        written = json.dumps(expected)
        try:
            expected = _read(ctx.render(expected))
        except TemplateError as exc:
            return errored(assertion, f"'expected' {written} could not be rendered: {exc}")
        if problem := status_problem(expected):
            return errored(assertion, f"'expected' {written} rendered to {json.dumps(expected)}: {problem}")
    status = ctx.response.status
    wanted = expected if isinstance(expected, list) else [expected]
    if any(_status_matches(status, w) for w in wanted):
        return passed(assertion, f"status {status}")
    shown = " or ".join(str(w) for w in wanted)
    return failed(assertion, [mismatch("status", expected, status, f"expected status {shown}, got {status}")])


def _read(value: Any) -> Any:
    """A rendered expectation as a written one: `"201"` (a `--var`, a CSV cell) is the status 201, `"[200, 201]"`
    a list, `"2XX"` the class; anything else is left for `status_problem` to name."""
    if isinstance(value, list):
        return [_read(v) for v in value]
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.isdigit() and len(text) == 3:
        return int(text)
    if text.startswith("["):
        try:
            return _read(json.loads(text))
        except ValueError:
            return value
    return text.lower() if STATUS_CLASS.fullmatch(text.lower()) else value


def _status_matches(status: int, wanted) -> bool:
    if isinstance(wanted, str):  # a class like "2xx"
        return str(status)[0] == wanted[0] and len(wanted) == 3 and wanted[1:].lower() == "xx"
    return status == wanted
