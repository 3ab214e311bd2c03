"""`response_time`: the response completed within max_ms milliseconds."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="response_time",
    family="deterministic",
    doc="The response completed within max_ms milliseconds.",
    fields={
        "max_ms": FieldSpec("number", "the limit in milliseconds", required=True, minimum=0),
    },
)
