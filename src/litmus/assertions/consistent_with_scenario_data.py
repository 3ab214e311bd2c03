"""`consistent_with_scenario_data`: nothing in the response contradicts the scenario data."""

from litmus.assertions.base import AssertionSpec

SPEC = AssertionSpec(
    type="consistent_with_scenario_data",
    family="scenario",
    doc="Nothing in the response contradicts the scenario data.",
    fields={},
)
