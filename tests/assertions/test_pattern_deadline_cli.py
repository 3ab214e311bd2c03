"""A schema's `pattern` (an OpenAPI spec's, or a `schema` assertion's) is written by the pull request and the value
by the server: a pattern that backtracks catastrophically on the value ends at the step's deadline as an `error`
of the check naming the regex, and the run goes on (it used to search for as long as Python's `re` took)."""

import json
import time

import pytest
import yaml

from support.cli import litmus
from support.target import Target

pytestmark = pytest.mark.timing  # the check must end at the step's deadline

SCHEMA = {"type": "object", "properties": {"word": {"type": "string", "pattern": "^(a|aa)+$"}}}
SPEC = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/word": {"get": {"responses": {
    "200": {"description": "a word", "content": {"application/json": {"schema": SCHEMA}}}}}}}}
CHECKS = {"openapi": ({"openapi": "../spec.json"}, {"type": "openapi"}),
          "schema": ({}, {"type": "schema", "schema": SCHEMA})}


@pytest.mark.parametrize("check", CHECKS)
def test_a_backtracking_pattern_is_an_error_at_the_step_deadline_not_a_hang(tmp_path, check):
    (tmp_path / ".git").mkdir()
    (tmp_path / "probes").mkdir()
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    suite_keys, assertion = CHECKS[check]
    suite = {"version": 1, "suite": "S", **suite_keys, "flows": [{"name": "f", "steps": [
        {"name": "s", "request": {"url": "/word", "timeout_ms": 1000}, "assertions": [assertion]}]}]}
    (tmp_path / "probes" / "s.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    with Target() as target:
        target.json("/word", {"word": "a" * 60 + "!"})
        started = time.monotonic()
        done = litmus(tmp_path, "run", "probes", "--base-url", target.base_url, "--out", "out", "--fail-on", "never",
                      timeout=60)
        elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    outcome = json.loads((tmp_path / "out" / "results.json").read_text())["suites"][0]["flow_runs"][0]["steps"][0][
        "assertions"][0]
    assert outcome["status"] == "error"
    assert outcome["reason"].startswith("regex /^(a|aa)+$/ did not finish within the step's deadline")
    assert elapsed < 30
