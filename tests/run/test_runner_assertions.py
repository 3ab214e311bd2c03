"""Every deterministic assertion type: pass and fail, with exact mismatch paths and reasons."""

from __future__ import annotations

import json

import pytest
from build import check, suite

from litmus import assertions
from litmus.assertions.base import EvalContext
from litmus.response import Response
from litmus.run.redact import Redactor
from litmus.templating import Renderer


def evaluate(assertion, body=b"", *, status=200, content_type="application/json", elapsed_ms=5.0,
             variables=None, suite_=None):
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    response = Response(status=status, headers={"Content-Type": content_type}, body=body, elapsed_ms=elapsed_ms)
    suite_ = suite_ or suite("S", variables={"want": "delayed"})
    renderer = Renderer(suite_, scenario=None, run_index=0, variables=variables or {}, environ={},
                        redactor=Redactor())
    ctx = EvalContext(response=response, suite=suite_, variables=variables or {}, scenario=None,
                      render=renderer.render)
    return assertions.module(assertion.type).evaluate(assertion, ctx)


def mismatches(outcome):
    return [(m.path, m.reason) for m in outcome.mismatches]


ORDER = {"order": {"status": "shipped", "id": 1042, "tags": ["a", "b"], "note": None},
         "items": [{"price": 10}, {"price": 5.5}, {"price": 3}, {"price": "12.50"}],
         "content-type": {"x y": True}}


def test_status_code_int_list_and_class():
    assert evaluate(check("status_code", expected=200)).status == "passed"
    assert evaluate(check("status_code", expected=[201, 204]), status=204).status == "passed"
    assert evaluate(check("status_code", expected="2xx"), status=299).status == "passed"
    out = evaluate(check("status_code", expected="2xx"), status=503)
    assert out.status == "failed"
    assert mismatches(out) == [("status", "expected status 2xx, got 503")]
    assert (out.line, out.column) == (40, 13)


def test_response_time():
    assert evaluate(check("response_time", max_ms=100), elapsed_ms=99.9).status == "passed"
    out = evaluate(check("response_time", max_ms=100), elapsed_ms=250.04)
    assert mismatches(out) == [("elapsed_ms", "took 250.0 ms, limit 100 ms")]


@pytest.mark.parametrize("params, path, reason", [
    ({"path": "$.order.status", "expected": "delayed"}, "$.order.status", 'expected "delayed", got "shipped"'),
    ({"path": "$.order.status", "expected": "{{ want }}"}, "$.order.status", 'expected "delayed", got "shipped"'),
    ({"path": "$.order.id", "expected": "1042"}, "$.order.id", 'expected string "1042", got integer 1042'),
    ({"path": "$.order.status", "matches": "^del"}, "$.order.status", 'expected to match /^del/, got "shipped"'),
    ({"path": "$.order.tags", "contains": "c"}, "$.order.tags", 'expected to contain "c", got ["a", "b"]'),
    ({"path": "$.order.tags", "length": 3}, "$.order.tags", "expected length 3, got length 2"),
    ({"path": "$.order.id", "gt": 2000}, "$.order.id", "expected > 2000, got 1042"),
    ({"path": "$.order.id", "lte": 1000}, "$.order.id", "expected <= 1000, got 1042"),
    ({"path": "$.order.status", "one_of": ["a", "b"]}, "$.order.status", 'expected one of ["a", "b"], got "shipped"'),
    ({"path": "$.order.note", "json_type": "string"}, "$.order.note", "expected string, got null"),
    ({"path": "$.order.missing", "exists": True}, "$.order.missing", "no node matches"),
    ({"path": "$.order.note", "exists": False}, "$.order.note", "expected no node here, found null"),
    ({"path": "$.nothing", "expected": 1}, "$.nothing", "no node matches"),
    ({"path": "$['content-type']['x y']", "expected": 1}, "$['content-type']['x y']",
     "expected integer 1, got boolean true"),
])
def test_json_path_failures(params, path, reason):
    out = evaluate(check("json_path", **params), ORDER)
    assert out.status == "failed"
    assert mismatches(out) == [(path, reason)]
    assert out.reason == f"{path}: {reason}"


@pytest.mark.parametrize("params", [
    {"path": "$.order.status", "expected": "shipped"},
    {"path": "$.order.id", "expected": 1042.0},
    {"path": "$.order", "contains": "status"},
    {"path": "$.order.status", "contains": "hip"},
    {"path": "$.order.tags", "contains": "a"},
    {"path": "$.order.status", "matches": "ship"},
    {"path": "$.order.tags", "length": 2},
    {"path": "$.order.id", "gte": 1042},
    {"path": "$.order.id", "lt": 1043},
    {"path": "$.order.id", "json_type": "integer"},
    {"path": "$.order.id", "json_type": "number"},
    {"path": "$.order.note", "json_type": "null"},
    {"path": "$.order.note", "exists": True},
    {"path": "$.order.gone", "exists": False},
    {"path": "$.order.status", "one_of": ["delayed", "shipped"]},
])
def test_json_path_passes(params):
    out = evaluate(check("json_path", **params), ORDER)
    assert out.status == "passed", out.reason
    assert out.mismatches == []


def test_json_path_reports_every_failing_node_at_its_concrete_path():
    out = evaluate(check("json_path", path="$.items[*].price", json_type="number"), ORDER)
    assert mismatches(out) == [("$.items[3].price", 'expected number, got string "12.50"')]
    out = evaluate(check("json_path", path="$.items[*].price", gt=4), ORDER)
    assert mismatches(out) == [("$.items[2].price", "expected > 4, got 3"),
                               ("$.items[3].price", 'expected a number > 4, got string "12.50"')]
    assert out.reason == "$.items[2].price: expected > 4, got 3 (and 1 more)"
    out = evaluate(check("json_path", path="$.items[-1].price", json_type="number"), ORDER)
    assert mismatches(out)[0][0] == "$.items[3].price"


def test_json_path_on_a_non_json_body_is_an_error_saying_what_the_body_was():
    out = evaluate(check("json_path", path="$.a", exists=True), b"<html>oops</html>", content_type="text/html")
    assert out.status == "error"
    assert "text/html" in out.reason and "<html>oops" in out.reason
    out = evaluate(check("json_path", path="$.a", exists=True), b"\xff\xfe{", content_type="application/json")
    assert out.status == "error" and "\\xff" in out.reason


def test_contains_and_not_contains():
    body = b"Your order 1042 is Delayed."
    assert evaluate(check("contains", value="1042"), body).status == "passed"
    assert evaluate(check("contains", value="delayed", ignore_case=True), body).status == "passed"
    out = evaluate(check("contains", value="delayed"), body)
    assert mismatches(out) == [("$", 'body does not contain "delayed"')]
    assert evaluate(check("not_contains", value="error"), body).status == "passed"
    out = evaluate(check("not_contains", value="DELAYED", ignore_case=True), body)
    assert out.status == "failed"
    assert mismatches(out) == [("$", 'body contains "DELAYED" at character 19: "Your order 1042 is Delayed."')]


SCHEMA = {
    "type": "object", "required": ["items", "total"],
    "properties": {"items": {"type": "array", "items": {"type": "object",
                                                         "properties": {"price": {"type": "number"}}}},
                   "total": {"type": "number"}},
}


def test_schema_reports_every_violation_sorted_by_path():
    out = evaluate(check("schema", schema=SCHEMA), {"items": [{"price": "1"}, {"price": 2}, {"price": None}] * 4})
    assert out.status == "failed"
    assert mismatches(out) == [
        ("$", 'missing required property "total"'),
        ("$.items[0].price", 'expected number, got string "1"'),
        ("$.items[2].price", "expected number, got null"),
        ("$.items[3].price", 'expected number, got string "1"'),
        ("$.items[5].price", "expected number, got null"),
        ("$.items[6].price", 'expected number, got string "1"'),
        ("$.items[8].price", "expected number, got null"),
        ("$.items[9].price", 'expected number, got string "1"'),
        ("$.items[11].price", "expected number, got null"),
    ]
    assert evaluate(check("schema", schema=SCHEMA), {"items": [], "total": 1}).status == "passed"


def test_schema_honours_dollar_schema_and_local_refs(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "defs.json").write_text(json.dumps({"$defs": {"price": {"type": "number"}}}))
    (tmp_path / "probes" / "order.yaml").write_text(
        "type: object\nproperties:\n  price: {$ref: 'defs.json#/$defs/price'}\n")
    (tmp_path / "probes" / "suite.yaml").write_text(
        "version: 1\nsuite: S\nflows: [{name: f, steps: [{name: s, request: {url: /x},\n"
        "  assertions: [{type: schema, schema_file: order.yaml}]}]}]\n")
    # The loader reads the schema_file and its $refs once; the run validates with what it read.
    from litmus.load import load_suites

    (s,) = load_suites([tmp_path / "probes"], root=tmp_path, environ={}).suites
    (from_file,) = s.flows[0].steps[0].assertions
    out = evaluate(from_file, {"price": "x"}, suite_=s)
    assert mismatches(out) == [("$.price", 'expected number, got string "x"')]
    # draft-04: exclusiveMaximum is a boolean there
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 5, "exclusiveMaximum": True}
    assert evaluate(check("schema", schema=draft4), 5).status == "failed"
    assert evaluate(check("schema", schema=draft4), 4).status == "passed"
    outside = {"$ref": "file:///etc/passwd"}
    assert evaluate(check("schema", schema=outside), 4, suite_=s).status == "error"


def test_schema_on_non_json_is_an_error():
    out = evaluate(check("schema", schema=SCHEMA), b"not json", content_type="text/plain")
    assert out.status == "error" and "text/plain" in out.reason


def test_extract_match():
    variables = {"reply": "Order 1042 is delayed", "code": 200}
    assert evaluate(check("extract_match", variable="code", expected=200), variables=variables).status == "passed"
    assert evaluate(check("extract_match", variable="reply", matches=r"\d{4}"), variables=variables).status == "passed"
    out = evaluate(check("extract_match", variable="code", expected=201), variables=variables)
    assert mismatches(out) == [("code", "expected 201, got 200")]
    out = evaluate(check("extract_match", variable="ticket", expected="x"), variables=variables)
    assert mismatches(out) == [("ticket", "variable 'ticket' was never extracted")]
