"""Good suites load into the model with positions, merged defaults and loaded scenario files."""

from __future__ import annotations

from pathlib import Path

from litmus.load import load_suites

GOOD = Path(__file__).parent / "good"


def test_checkout_suite_loads_with_merged_defaults_and_positions():
    result = load_suites([GOOD / "checkout.yaml"], root=GOOD, environ={"API_TOKEN": "t"})
    assert result.warnings == []
    (suite,) = result.suites
    assert suite.name == "Checkout assistant" and suite.file == "checkout.yaml"
    step = suite.flows[0].steps[0]
    assert step.request.headers == {"Authorization": "Bearer {{ secrets.API_TOKEN }}", "X-Locale": "{{ locale }}"}
    assert step.request.timeout_ms == 5000
    assert [e.name for e in step.extract] == ["reply", "trace", "ticket", "code"]
    json_type = step.assertions[1]
    assert json_type.params == {"path": "$.reply", "type": "string"}
    assert (json_type.pos.line, json_type.pos.column) == (44, 13)
