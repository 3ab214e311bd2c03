"""`no_hallucination_vs_scenario`: the response invents no facts beyond the scenario data."""

from litmus.assertions.base import AssertionSpec

SPEC = AssertionSpec(
    type="no_hallucination_vs_scenario",
    family="scenario",
    doc="The response invents no facts beyond the scenario data.",
    fields={},
)


def evaluate(assertion, ctx):
    from litmus.judges.assertion import evaluate_with_judge

    return evaluate_with_judge(assertion, ctx)
