"""The example suites in probes/ validate and, together, exercise the whole probe format."""

from __future__ import annotations

from pathlib import Path

import pytest

from litmus.assertions import REGISTRY, spec
from litmus.assertions import predicates as predicate_set
from litmus.demo.target import DEMO_ENVIRONMENT
from litmus.load import load_suites
from litmus.load.suite import EXTRACTION_KINDS
from litmus.templating import references
from support.cli import litmus

ROOT = Path(__file__).resolve().parents[2]
PROBES = ROOT / "probes"


@pytest.fixture(scope="module")
def suites():
    return load_suites([PROBES], root=ROOT, environ=DEMO_ENVIRONMENT).suites


def all_strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from all_strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from all_strings(item)


def test_litmus_validate_accepts_the_examples():
    done = litmus(ROOT, "validate", "probes/", timeout=60,
                  env={"LITMUS_DEMO_USER": "u", "LITMUS_DEMO_PASSWORD": "p", "LITMUS_DEMO_TOKEN": "t"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("5 suites, ") and done.stdout.rstrip().endswith(": OK")
    assert done.stderr == ""


def test_every_assertion_type_and_extraction_kind_is_used(suites):
    steps = [step for suite in suites for flow in suite.flows for step in flow.steps]
    assertions = [a for step in steps for a in step.assertions]
    # The conversation types judge a whole transcript (conversation_assertions), never a step's response.
    assert {a.type for a in assertions} == {name for name in REGISTRY if spec(name).family != "conversation"}
    assert {e.kind for step in steps for e in step.extract} == set(EXTRACTION_KINDS)
    assert {a.on_failure for a in assertions} == {"continue", "stop_request", "stop_flow"}
    assert any(e.kind == "regex" and e.group == 1 for step in steps for e in step.extract)
    schemas = [a.params for a in assertions if a.type == "schema"]
    assert any("schema" in p for p in schemas) and any("schema_file" in p for p in schemas)
    json_path_predicates = {key for a in assertions if a.type == "json_path" for key in a.params} - {"path"}
    assert json_path_predicates >= {"expected", "matches", "exists", "contains", "length", "gt", "gte", "lt", "lte",
                                    "one_of", "json_type", "starts_with", "between", "approx", "not", "tolerance"}
    used = {key for a in assertions for key in a.params}
    assert set(predicate_set.KEYS) | {"not", "tolerance"} <= used
    assert {key for a in assertions if a.type == "xpath" for key in a.params} >= {"namespaces"}
    assert {key for a in assertions if a.type == "body" for key in a.params} >= {"sha256", "size_lte"}


def test_a_conversation_uses_user_and_simulated_turns_and_every_conversation_type(suites):
    conversations = [flow for suite in suites for flow in suite.flows if flow.conversation]
    steps = [step for flow in conversations for step in flow.steps]
    assert any(step.user for step in steps) and any(step.simulate for step in steps)
    judged_on_transcripts = {a.type for flow in conversations for a in flow.conversation_assertions}
    assert judged_on_transcripts == {name for name in REGISTRY if spec(name).family == "conversation"}
    assert judged_on_transcripts >= {"knowledge_retention", "role_adherence", "conversation_completeness"}


def test_every_suite_level_feature_is_used(suites):
    assert any(s.intent for s in suites) and any(s.pass_threshold != 100 for s in suites)
    assert any(s.defaults for s in suites) and any(s.variables for s in suites) and any(s.judge for s in suites)
    assert any(flow.runs > 1 for s in suites for flow in s.flows)
    assert any(step.retry and step.retry.attempts > 1 for s in suites for f in s.flows for step in f.steps)
    scenarios = [sc for s in suites if s.context for sc in s.context.scenarios]
    from_files = [sc for sc in scenarios if sc.data_file and sc.reference_response_file]
    assert from_files and from_files[0].data["order_id"] == 1077 and "UPS" in from_files[0].reference_response


def test_every_template_namespace_is_used():
    import yaml

    names = {ref.name for path in PROBES.glob("*.yaml")
             for text in all_strings(yaml.safe_load(path.read_text()))
             for ref in references(text)}
    heads = {name.split(".")[0] if "." in name else "bare" for name in names}
    assert {"bare", "env", "secrets", "scenario", "run"} <= heads
    assert {"scenario.id", "scenario.reference_response", "run.index"} <= names
    assert any(name.startswith("scenario.data.") for name in names)
    # The suites read only the variables `litmus demo` provides.
    assert {n.split(".", 1)[1] for n in names if n.startswith(("env.", "secrets."))} == set(DEMO_ENVIRONMENT)


def test_suites_point_editors_at_the_shipped_schema_and_satisfy_it():
    import json

    import yaml
    from jsonschema import Draft202012Validator

    comment = "# yaml-language-server: $schema=../src/litmus/schemas/probe-suite.schema.json"
    schema = json.loads((PROBES / comment.split("=", 1)[1]).read_text())
    for path in PROBES.glob("*.yaml"):
        assert path.read_text().splitlines()[0] == comment, path
        assert [e.message for e in Draft202012Validator(schema).iter_errors(yaml.safe_load(path.read_text()))] == []
