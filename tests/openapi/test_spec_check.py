"""Full validation of a spec (what `litmus validate` adds for a suite's `openapi:`): real specs are valid, each
problem is an error at the spec's line and column with its JSON pointer, and no `$ref` is ever fetched."""

import json

import pytest
import yaml

from litmus.load.openapi_spec import spec_problems
from litmus.openapi.document import load_document
from support.cli import litmus
from support.openapi_specs import copy_spec, spec_bytes
from support.raw_server import RawServer


@pytest.mark.parametrize("name", ["petstore-3.0.json", "petstore-3.0.yaml", "petstore-3.1.json",
                                  "server-variables-3.0.json"])
def test_the_real_specs_have_no_problems(tmp_path, name):
    copy_spec(name, tmp_path)
    assert spec_problems(load_document(name, tmp_path)) == []


def _broken_petstore():
    spec = json.loads(spec_bytes("petstore-3.0.json"))
    spec["paths"]["/pet/{petId}"]["get"]["parameters"][0]["schema"] = {"type": "integr"}
    spec["paths"]["/pet"]["put"]["requestBody"] = {"$ref": "#/components/requestBodies/Nope"}
    return spec


def test_each_problem_is_an_error_at_its_line_and_column_in_yaml_and_json(tmp_path):
    spec = _broken_petstore()
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    (tmp_path / "spec.json").write_text(json.dumps(spec, indent=2))
    shown = {}
    for name in ("spec.yaml", "spec.json"):
        shown[name] = [(str(d.position), d.message) for d in spec_problems(load_document(name, tmp_path))]
    assert shown["spec.yaml"] == [
        ("spec.yaml:56:15", "OpenAPI spec: spec.yaml: $ref target '#/components/requestBodies/Nope' does not exist "
                            "(at #/paths/~1pet/put/requestBody/$ref)"),
        ("spec.yaml:162:17", "OpenAPI spec: 'integr' is not one of ['array', 'boolean', 'integer', 'number', "
                             "'object', 'string'] (at #/paths/~1pet~1{petId}/get/parameters/0/schema/type)")]
    # The same problems, where the JSON file has them.
    assert [message for _, message in shown["spec.json"]] == [
        message.replace("spec.yaml", "spec.json") for _, message in shown["spec.yaml"]]
    assert [position for position, _ in shown["spec.json"]] == ["spec.json:81:19", "spec.json:244:23"]


@pytest.mark.parametrize("ref", ["http://127.0.0.1:{port}/parameters.json#/Id", "file:///etc/passwd#/Id",
                                 "//127.0.0.1:{port}/parameters.json#/Id"])
def test_a_ref_the_validator_would_follow_is_never_fetched(tmp_path, ref):
    """The library fetches a `$ref` with requests or urllib when no handler takes its scheme; the loader's own
    check is bypassed here (read_references=False), so only the validator's handlers stand in the way."""
    with RawServer({}) as server:
        spec = json.loads(spec_bytes("petstore-3.0.json"))
        spec["paths"]["/pet/{petId}"]["get"]["parameters"] = [{"$ref": ref.format(port=server.port)}]
        (tmp_path / "spec.json").write_text(json.dumps(spec))
        problems = spec_problems(load_document("spec.json", tmp_path, read_references=False))
        assert server.connections == 0
    assert problems and all("is not a relative file reference" in p.message or "not a file inside the repository"
                            in p.message for p in problems)


def test_litmus_validate_reports_the_spec_a_suite_names_once_with_its_positions(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "spec.yaml").write_text(yaml.safe_dump(_broken_petstore(), sort_keys=False))
    (tmp_path / "probes").mkdir()
    for name in ("a", "b"):  # two suites, one spec: its problems are reported once
        (tmp_path / "probes" / f"{name}.yaml").write_text(
            f"version: 1\nsuite: {name}\nopenapi: ../api/spec.yaml\nflows:\n  - name: f\n    steps:\n"
            "      - name: s\n        request: {url: /v2/pet/1}\n        assertions: [{type: openapi}]\n")
    done = litmus(tmp_path, "validate")
    assert done.returncode == 2
    assert done.stdout.strip() == "2 errors, 0 warnings: FAILED"
    lines = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert lines == [
        "api/spec.yaml:56:15: error: OpenAPI spec: api/spec.yaml: $ref target '#/components/requestBodies/Nope' does "
        "not exist (at #/paths/~1pet/put/requestBody/$ref)",
        "api/spec.yaml:162:17: error: OpenAPI spec: 'integr' is not one of ['array', 'boolean', 'integer', 'number', "
        "'object', 'string'] (at #/paths/~1pet~1{petId}/get/parameters/0/schema/type)"]
    copy_spec("petstore-3.0.yaml", tmp_path, "api/spec.yaml")
    done = litmus(tmp_path, "validate")
    assert (done.returncode, done.stdout.strip()) == (0, "2 suites, 2 flows, 2 assertions: OK"), done.stderr
