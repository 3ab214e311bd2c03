"""`extract_match`: a previously extracted variable satisfies the predicate."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="extract_match",
    family="deterministic",
    doc="A previously extracted variable satisfies the predicate.",
    fields={
        "variable": FieldSpec("variable", "the extracted variable's name", required=True),
        "expected": FieldSpec("any", "deep equality", templated=True),
        "matches": FieldSpec("regex", "a regular expression the value matches", templated=True),
    },
    exactly_one_of=(("expected", "matches"),),
)
