"""Random templates in suite-shaped probe files, loaded and then run: the loader only raises positioned
ProbeErrors, and a suite it accepts runs with every template either rendered or recorded as that step's
or assertion's error, never an internal error, never a hang. (tests/load/test_load_fuzz.py fuzzes
arbitrary YAML; this fuzzes the templating through load and run.)

Derandomized in CI; bench/reliability.py runs it with LITMUS_FUZZ_EXAMPLES set to a large number.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litmus.errors import ProbeError
from litmus.load import load_suites
from litmus.run.runner import RunOptions, run_suites
from support.fuzz import fuzz_settings
from support.target import Target

FUZZ = fuzz_settings(60)

names = st.sampled_from([
    "v", "w", "loop", "extracted", "missing", "env.HOME_X", "env.UNSET_Y", "secrets.TOKEN", "secrets.NOPE",
    "scenario.id", "scenario.data.a", "scenario.data.a.0", "scenario.data.b.c", "scenario.reference_response",
    "scenario.nope", "run.index", "run.other", "1bad", "a..b", "", " ", "}}", "{{ v }}", "env.", "scenario.data.",
])
fragments = st.one_of(st.text(alphabet="{} ab:./$-\"'\n\\", max_size=6), names.map(lambda n: f"{{{{ {n} }}}}"))
templates = st.lists(fragments, max_size=4).map("".join)
values = st.one_of(templates, st.integers(-3, 3), st.booleans(), st.none(), st.lists(templates, max_size=2),
                   st.dictionaries(templates, templates, max_size=2))


def suite_document(url, header, body, expected, variable, scenarios):
    document = {
        "version": 1, "suite": "Fuzz", "variables": {"v": variable, "w": "{{ v }}-x", "loop": "{{ loop }}"},
        "flows": [{"name": "f", "steps": [
            {"name": "one", "request": {"method": "POST", "url": url, "headers": {"X-T": header}, "json": body},
             "extract": {"extracted": {"json_path": "$.echo"}},
             "assertions": [{"type": "status_code", "expected": 200},
                            {"type": "json_path", "path": "$.echo", "expected": expected},
                            {"type": "contains", "value": expected if isinstance(expected, str) else "x"}]},
            {"name": "two", "request": {"url": "/echo?x={{ extracted }}"},
             "assertions": [{"type": "extract_match", "variable": "extracted", "expected": expected}]},
        ]}],
    }
    if scenarios:
        document["context"] = {"name": "c", "scenarios": [
            {"id": "s1", "data": {"a": [1, "two"], "b": {"c": None}}, "reference_response": "r"}]}
    return document


@pytest.fixture(scope="module")
def echo_target():
    with Target() as target:
        target.route("/echo", lambda req: (200, {"Content-Type": "application/json"},
                                           json.dumps({"echo": req.body.decode("utf-8", "replace")}).encode()))
        yield target


@FUZZ
@given(url=st.one_of(templates.map(lambda t: "/echo" + t), templates), header=templates, body=values,
       expected=values, variable=values, scenarios=st.booleans())
def test_random_templates_load_and_run_or_fail_with_a_position(echo_target, url, header, body, expected, variable,
                                                               scenarios):
    document = suite_document(url, header, body, expected, variable, scenarios)
    environ = {"HOME_X": "/home/x", "TOKEN": "tok-{{ v }}"}
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory, "s.yaml")
        path.write_text(json.dumps(document), encoding="utf-8")  # JSON is YAML
        try:
            suites = load_suites([path], root=Path(directory), environ=environ).suites
        except ProbeError as exc:
            for diagnostic in exc.diagnostics:
                assert diagnostic.position.path == "s.yaml" and diagnostic.position.line >= 1
                diagnostic.render()
            return
    result = run_suites(suites, RunOptions(base_url=echo_target.base_url, concurrency=1, timeout_ms=5000),
                        environ=environ)
    for flow_run in result.suites[0].flow_runs:
        assert not flow_run.intent_evaluation.reason.startswith("internal error"), flow_run.intent_evaluation
        for step in flow_run.steps:
            assert step.status != "error" or step.error
            for outcome in step.assertions:
                assert outcome.status == "passed" or outcome.reason
    assert "tok-" not in json.dumps(result.to_dict())  # the secret is masked whatever the template did


@pytest.fixture(scope="module")
def fixed_suite(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fixed")
    document = suite_document("/echo", "h", {"a": 1}, "x", "{{ w }}", scenarios=True)
    (directory / "s.yaml").write_text(json.dumps(document))
    return load_suites([directory / "s.yaml"], root=directory, environ={"TOKEN": "t"}).suites[0]


@FUZZ
@given(value=values, extracted=values)
def test_rendering_any_template_gives_a_value_or_a_template_error(fixed_suite, value, extracted):
    from litmus.run.redact import Redactor
    from litmus.templating import Renderer, TemplateError

    renderer = Renderer(fixed_suite, scenario=fixed_suite.context.scenarios[0], run_index=1,
                        variables={"extracted": extracted}, environ={"HOME_X": "/h", "TOKEN": "t"},
                        redactor=Redactor())
    try:
        rendered = renderer.render(value)
    except TemplateError as exc:
        assert str(exc)
        return
    json.dumps(rendered)  # a rendered request is always JSON-able


def test_a_key_template_giving_a_list_becomes_its_json_text(fixed_suite):
    """Found by the fuzzer: a mapping key rendering to a list crashed the whole flow run (unhashable)."""
    from litmus.run.redact import Redactor
    from litmus.templating import Renderer

    renderer = Renderer(fixed_suite, scenario=fixed_suite.context.scenarios[0], run_index=0, variables={},
                        environ={}, redactor=Redactor())
    assert renderer.render({"{{ scenario.data.a }}": "{{ scenario.data.a }}"}) == {'[1, "two"]': [1, "two"]}


moments = st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
                    st.sampled_from(["9999-12-31T23:59:59Z", "0001-01-01T00:00:00", "1e300", "-1", "2026-02-30",
                                     "2026-12-02T02:53:12.123+14:00"]),
                    st.none(), st.booleans(), st.lists(st.integers(), max_size=2))
offsets = st.one_of(st.integers(-10**30, 10**30), st.floats(allow_nan=False, allow_infinity=False))


@FUZZ
@given(value=moments, seconds=offsets, form=st.text(alphabet="%YmdHMSzZjaAbBcx-: %", max_size=12))
def test_date_filters_give_a_value_or_a_template_error_for_any_value(fixed_suite, value, seconds, form):
    """A fork's probe feeds absurd moments and offsets to `date` / `add_seconds`: never a crash."""
    from litmus.run.redact import Redactor
    from litmus.templating import Renderer, TemplateError

    renderer = Renderer(fixed_suite, run_index=0, variables={"extracted": value}, environ={}, redactor=Redactor())
    for template in (f"{{{{ extracted | add_seconds({json.dumps(seconds)}) }}}}",
                     f"{{{{ extracted | date({json.dumps(form)}) }}}}"):
        try:
            json.dumps(renderer.render(template))
        except TemplateError as exc:
            assert str(exc)


def test_a_catastrophically_backtracking_regex_filter_ends_as_an_error(fixed_suite, monkeypatch):
    """The regex filter searches with the runner's engine and its time bound, like an extraction."""
    from litmus.assertions import _common
    from litmus.run.redact import Redactor
    from litmus.templating import Renderer, TemplateError

    monkeypatch.setattr(_common, "DEFAULT_REGEX_TIMEOUT_S", 0.05)
    renderer = Renderer(fixed_suite, run_index=0, variables={"extracted": "a" * 64 + "!"}, environ={},
                        redactor=Redactor())
    with pytest.raises(TemplateError, match="did not finish within"):
        renderer.render("{{ extracted | regex('^(a|aa)+$') }}")
