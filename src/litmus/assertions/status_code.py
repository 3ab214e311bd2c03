"""`status_code`: the HTTP status matches."""

from litmus.assertions._common import failed, mismatch, passed
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="status_code",
    family="deterministic",
    doc="The HTTP status matches.",
    fields={
        "expected": FieldSpec("status", "an int, a list of ints, or a class like \"2xx\"", required=True),
    },
)


def evaluate(assertion, ctx):
    expected = assertion.params["expected"]
    status = ctx.response.status
    wanted = expected if isinstance(expected, list) else [expected]
    if any(_status_matches(status, w) for w in wanted):
        return passed(assertion, f"status {status}")
    shown = " or ".join(str(w) for w in wanted)
    return failed(assertion, [mismatch("status", expected, status, f"expected status {shown}, got {status}")])


def _status_matches(status: int, wanted) -> bool:
    if isinstance(wanted, str):  # a class like "2xx"
        return str(status)[0] == wanted[0] and len(wanted) == 3 and wanted[1:].lower() == "xx"
    return status == wanted
