"""`llm_rubric`: the response satisfies the free-text rubric."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="llm_rubric",
    family="qualitative",
    doc="The response satisfies the free-text rubric.",
    fields={
        "rubric": FieldSpec("string", "what a good response does", required=True, templated=True),
    },
)


def evaluate(assertion, ctx):
    from litmus.judges.assertion import evaluate_with_judge

    return evaluate_with_judge(assertion, ctx)
