"""`no_hallucination`: the response does not contradict the given context."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="no_hallucination",
    family="qualitative",
    doc="The response does not contradict the given context.",
    fields={
        "context": FieldSpec("string", "the facts the response must not contradict", required=True, templated=True),
    },
)


def evaluate(assertion, ctx):
    from litmus.judges.assertion import evaluate_with_judge

    return evaluate_with_judge(assertion, ctx)
