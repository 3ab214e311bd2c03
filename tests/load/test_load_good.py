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
    assert json_type.params == {"path": "$.reply", "json_type": "string"}
    assert (json_type.pos.line, json_type.pos.column) == (44, 13)


def test_scenario_files_anchors_merge_keys_and_yaml_decisions():
    result = load_suites([GOOD / "orders.yaml"], root=GOOD.parents[2], environ={"USER_NAME": "me"})
    (suite,) = result.suites
    assert suite.file == "tests/load/good/orders.yaml"
    delivered, inline = suite.context.scenarios
    assert delivered.data == {"order_id": 7, "status": "delivered", "items": [{"sku": "A1"}]}
    assert delivered.reference_response == "Order 7 was delivered."
    # Timestamps stay text; values follow YAML 1.1 (yes is true); keys are always strings.
    assert inline.data["eta"] == "2026-12-03" and inline.data["on"] is True
    login, get = suite.flows[0].steps
    assert login.request.method == "POST" and login.request.form == {"user": "bob", "scope": ["read", "write"]}
    assert get.request.headers == {"Authorization": "Bearer {{ token }}", "X-Count": "3"}
    plain, merged = get.assertions[:2]
    assert plain.params == merged.params == {"expected": [200, 201]}
    assert (merged.name, merged.on_failure) == ("merged", "stop_flow")
    judged = get.assertions[5]
    assert (judged.select, judged.threshold) == ("$.reply", 60)


def test_missing_env_is_an_error_for_run_and_a_warning_for_validate():
    from litmus.errors import ProbeError

    try:
        load_suites([GOOD / "orders.yaml"], root=GOOD, environ={})
    except ProbeError as exc:
        assert [d.message for d in exc.diagnostics] == [
            "environment variable USER_NAME (for 'env.USER_NAME') is not set"]
    else:
        raise AssertionError("a missing environment variable must fail a strict load")
    result = load_suites([GOOD / "orders.yaml"], root=GOOD, environ={}, strict_env=False)
    assert [(w.severity, w.position.line, w.position.column) for w in result.warnings] == [("warning", 6, 25)]


def test_defaults_merge_key_by_key_and_check_templates_per_step(tmp_path):
    from litmus.errors import ProbeError

    (tmp_path / "d.yaml").write_text(
        "version: 1\nsuite: D\ndefaults:\n  timeout_ms: 900\n  headers: {A: a, T: '{{ tok }}'}\n  query: {q: 1}\n"
        "flows:\n  - name: f\n    steps:\n      - name: s\n        request: {url: /x, headers: {A: b}}\n"
        "        extract: {tok: {header: X-Tok}}\n"
    )
    try:
        load_suites([tmp_path / "d.yaml"], root=tmp_path, environ={})
    except ProbeError as exc:  # the first step cannot use what it has not extracted yet
        assert [(d.position.line, d.position.column) for d in exc.diagnostics] == [(5, 23)]
    else:
        raise AssertionError("expected an unknown template error")
    text = (tmp_path / "d.yaml").read_text().replace("'{{ tok }}'", "t")
    (tmp_path / "d.yaml").write_text(text)
    request = load_suites([tmp_path / "d.yaml"], root=tmp_path, environ={}).suites[0].flows[0].steps[0].request
    assert request.headers == {"A": "b", "T": "t"} and request.query == {"q": 1} and request.timeout_ms == 900
