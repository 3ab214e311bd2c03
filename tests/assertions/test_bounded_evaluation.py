"""Evaluation that cannot run away: a catastrophically backtracking regex ends as an `error` at the step's
deadline, a JSONPath walk over a huge body is refused as an `error`, and JSON Schema `format` is asserted."""

from __future__ import annotations

import json

import pytest
from harness import outcomes, run_suite, suite_of

from litmus.load import load_suites
from support.target import Target

EVIL = "a" * 40 + "!"  # 41 characters: a backtracking engine tries ~2^40 ways to fail
# The `regex` engine answers ^(a+)+$ at once (it fails, correctly); (a|aa)+ still backtracks there.
BACKTRACKING = "^(a|aa)+$"


@pytest.mark.timing  # a 1 s step deadline
def test_a_backtracking_regex_is_an_error_within_the_steps_deadline(tmp_path):
    step = {"name": "evil", "request": {"url": "/evil", "timeout_ms": 1000},
            "extract": {"caught": {"regex": BACKTRACKING}},
            "assertions": [
                {"name": "nested quantifier", "type": "json_path", "path": "$.value", "matches": "^(a+)+$"},
                {"name": "json", "type": "json_path", "path": "$.value", "matches": BACKTRACKING},
                {"name": "header", "type": "header", "header": "X-Value", "matches": BACKTRACKING},
                {"name": "extraction", "type": "extract_match", "variable": "caught", "exists": True},
                {"name": "after", "type": "json_path", "path": "$.value", "length": 41},
            ]}
    with Target() as target:
        target.route("/evil", lambda req: (200, {"Content-Type": "application/json", "X-Value": EVIL},
                                           json.dumps({"value": EVIL}).encode()))
        done, results = run_suite(tmp_path, suite_of([step]), target.base_url, timeout=60)
    found = outcomes(results)
    assert found["nested quantifier"]["status"] == "failed"
    for name in ("json", "header"):
        assert found[name]["status"] == "error", found[name]
        assert "did not finish within the step's deadline" in found[name]["reason"]
    assert found["extraction"]["status"] == "failed"  # the regex extraction gave up: the variable is unset
    assert found["after"]["status"] == "passed"  # one assertion's error never changes another's outcome
    assert done.returncode == 0


def test_a_jsonpath_walk_over_a_million_nodes_is_an_error_naming_the_assertion(tmp_path):
    body = json.dumps({"items": list(range(1_000_000)), "total": 5}).encode()
    step = {"name": "huge", "request": {"url": "/huge"},
            "extract": {"every": {"json_path": "$.items[*]"}},
            "assertions": [
                {"name": "descendants", "type": "json_path", "path": "$..total", "expected": 5},
                {"name": "direct", "type": "json_path", "path": "$.total", "expected": 5},
                {"name": "extracted", "type": "extract_match", "variable": "every", "exists": False},
            ]}
    with Target() as target:
        target.route("/huge", lambda req: (200, {"Content-Type": "application/json"}, body))
        done, results = run_suite(tmp_path, suite_of([step]), target.base_url, timeout=120)
    found = outcomes(results)
    assert found["descendants"]["status"] == "error"
    assert "JSONPath $..total would visit more than 200,000 nodes" in found["descendants"]["reason"]
    assert found["direct"]["status"] == "passed"
    assert found["extracted"]["status"] == "passed"  # refused, so never extracted
    assert "json_path (descendants)" in done.stdout  # the terminal line names the assertion


def test_json_schema_format_is_asserted(tmp_path):
    schema = {"type": "object", "properties": {"email": {"format": "email"}, "at": {"format": "date-time"},
                                               "id": {"format": "uuid"}}}
    step = {"name": "formats", "request": {"url": "/user"},
            "assertions": [{"name": "formats", "type": "schema", "schema": schema}]}
    with Target() as target:
        target.json("/user", {"email": "not-an-address", "at": "yesterday", "id": "6f1c0e4e-3c8a-4f5e-9f0e-2a4b"})
        _, results = run_suite(tmp_path, suite_of([step]), target.base_url)
    outcome = outcomes(results)["formats"]
    assert outcome["status"] == "failed"
    assert [m["path"] for m in outcome["mismatches"]] == ["$.at", "$.email", "$.id"]


def test_a_format_no_checker_asserts_is_a_load_warning(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "s.yaml").write_text(
        "version: 1\nsuite: S\nflows:\n  - name: f\n    steps:\n      - name: s\n        request: {url: /x}\n"
        "        assertions:\n          - type: schema\n            schema: {properties: {home: {format: uri}}}\n")
    warnings = load_suites([tmp_path / "s.yaml"], root=tmp_path, environ={}).warnings
    assert [(w.position.line, w.message) for w in warnings] == [
        (10, "format uri is not asserted (no checker for it): any string passes it")]
