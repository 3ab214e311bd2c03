"""`consistent_with_scenario_data`: nothing in the response contradicts the scenario data."""

from litmus.assertions.base import AssertionSpec

SPEC = AssertionSpec(
    type="consistent_with_scenario_data",
    family="scenario",
    doc="Nothing in the response contradicts the scenario data.",
    fields={},
)


def evaluate(assertion, ctx):
    from litmus.judges.assertion import evaluate_with_judge

    return evaluate_with_judge(assertion, ctx)
