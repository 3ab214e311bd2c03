"""`accurate_with_scenario_context`: the response aligns with the scenario's approved reference_response."""

from litmus.assertions.base import AssertionSpec

SPEC = AssertionSpec(
    type="accurate_with_scenario_context",
    family="scenario",
    doc="The response aligns with the scenario's approved reference_response.",
    fields={},
)


def evaluate(assertion, ctx):
    from litmus.judges.assertion import evaluate_with_judge

    return evaluate_with_judge(assertion, ctx)
