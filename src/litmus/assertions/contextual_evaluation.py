"""`contextual_evaluation`: the response meets the rubric, with the scenario data as context."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="contextual_evaluation",
    family="scenario",
    doc="The response meets the rubric, with the scenario data as context.",
    fields={
        "rubric": FieldSpec("string", "what a good response does, given the scenario", required=True, templated=True),
    },
)


def evaluate(assertion, ctx):
    from litmus.judges.assertion import evaluate_with_judge

    return evaluate_with_judge(assertion, ctx)
