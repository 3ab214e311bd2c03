"""`status_code`: the HTTP status matches."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="status_code",
    family="deterministic",
    doc="The HTTP status matches.",
    fields={
        "expected": FieldSpec("status", "an int, a list of ints, or a class like \"2xx\"", required=True),
    },
)
