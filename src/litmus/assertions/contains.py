"""`contains`: the body text contains the value."""

from litmus.assertions._common import body_search
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="contains",
    family="deterministic",
    doc="The body text contains the value.",
    fields={
        "value": FieldSpec("string", "the text to find", required=True, templated=True),
        "ignore_case": FieldSpec("boolean", "compare case-insensitively"),
    },
)


def evaluate(assertion, ctx):
    return body_search(assertion, ctx, negate=False)
