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


def evaluate(assertion, ctx):
    from litmus.judges.assertion import evaluate_with_judge

    return evaluate_with_judge(assertion, ctx)
