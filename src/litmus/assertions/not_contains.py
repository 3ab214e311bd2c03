"""`not_contains`: the body text does not contain the value."""

from litmus.assertions._common import body_search
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="not_contains",
    family="deterministic",
    doc="The body text does not contain the value.",
    fields={
        "value": FieldSpec("string", "the text that must not appear", required=True, templated=True),
        "ignore_case": FieldSpec("boolean", "compare case-insensitively"),
    },
)


def evaluate(assertion, ctx):
    return body_search(assertion, ctx, negate=True)
