"""`answers_question`: the response adequately answers the question."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="answers_question",
    family="qualitative",
    doc="The response adequately answers the question.",
    fields={
        "question": FieldSpec("string", "the question the response must answer", required=True, templated=True),
    },
)


def evaluate(assertion, ctx):
    from litmus.judges.assertion import evaluate_with_judge

    return evaluate_with_judge(assertion, ctx)
