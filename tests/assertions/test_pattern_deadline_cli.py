"""A schema's `pattern`, `patternProperties` or the `additionalProperties` beside them (an OpenAPI spec's, or a
`schema` assertion's) is written by the pull request and the value or property name by the server: a pattern that
backtracks catastrophically on it ends at the step's deadline as an `error` of the check naming the regex, and the run
goes on (it used to search for as long as Python's `re` took)."""

import json
import time

import pytest
import yaml

from support.cli import litmus
from support.target import Target

pytestmark = pytest.mark.timing  # the check must end at the step's deadline

PATTERN = "^(a|aa)+$"
# What the server sends, and where each schema searches the pattern: a value, or a property's name
# (`additionalProperties` comes first, so that it is the keyword that searches first).
CATCHES = "a" * 60 + "!"
BODIES = {"pattern": {"word": CATCHES}, "patternProperties": {CATCHES: "x"}, "additionalProperties": {CATCHES: "x"}}
SCHEMAS = {
    "pattern": {"type": "object", "properties": {"word": {"type": "string", "pattern": PATTERN}}},
    "patternProperties": {"type": "object", "patternProperties": {PATTERN: {"type": "string"}}},
    "additionalProperties": {"type": "object", "additionalProperties": False, "patternProperties": {PATTERN: {}}},
}


def spec(keyword: str) -> dict:
    # OpenAPI 3.0 schemas have no patternProperties: those are 3.1's (JSON Schema 2020-12).
    version = "3.0.3" if keyword == "pattern" else "3.1.0"
    return {"openapi": version, "info": {"title": "t", "version": "1"}, "paths": {"/word": {"get": {"responses": {
        "200": {"description": "a word", "content": {"application/json": {"schema": SCHEMAS[keyword]}}}}}}}}


def checks(keyword: str) -> dict:
    return {"openapi": ({"openapi": "../spec.json"}, {"type": "openapi"}),
            "schema": ({}, {"type": "schema", "schema": SCHEMAS[keyword]})}


@pytest.mark.parametrize("keyword", SCHEMAS)
@pytest.mark.parametrize("check", ["openapi", "schema"])
def test_a_backtracking_pattern_is_an_error_at_the_step_deadline_not_a_hang(tmp_path, check, keyword):
    (tmp_path / ".git").mkdir()
    (tmp_path / "probes").mkdir()
    (tmp_path / "spec.json").write_text(json.dumps(spec(keyword)))
    suite_keys, assertion = checks(keyword)[check]
    suite = {"version": 1, "suite": "S", **suite_keys, "flows": [{"name": "f", "steps": [
        {"name": "s", "request": {"url": "/word", "timeout_ms": 1000}, "assertions": [assertion]}]}]}
    (tmp_path / "probes" / "s.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    with Target() as target:
        target.json("/word", BODIES[keyword])
        started = time.monotonic()
        done = litmus(tmp_path, "run", "probes", "--base-url", target.base_url, "--out", "out", "--fail-on", "never",
                      timeout=60)
        elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    outcome = json.loads((tmp_path / "out" / "results.json").read_text())["suites"][0]["flow_runs"][0]["steps"][0][
        "assertions"][0]
    assert outcome["status"] == "error"
    assert outcome["reason"].startswith(f"regex /{PATTERN}/ did not finish within the step's deadline")
    assert elapsed < 30
