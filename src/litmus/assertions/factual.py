"""`factual`: the response agrees with the ground-truth statement."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="factual",
    family="qualitative",
    doc="The response agrees with the ground-truth statement.",
    fields={
        "ground_truth": FieldSpec("string", "the statement taken as true", required=True, templated=True),
    },
)
