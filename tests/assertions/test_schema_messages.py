"""A failed `schema` check reads as a JSON path and a sentence with JSON values, in results.json, the
terminal and the PR comment's headline; never as jsonschema's Python reprs."""

from __future__ import annotations

from harness import outcomes, run_suite, suite_of

from support.target import Target

SCHEMA = {
    "type": "object",
    "required": ["title", "total", "currency"],
    "additionalProperties": False,
    "properties": {
        "items": {"type": "array", "minItems": 1},
        "tags": {"type": "array", "uniqueItems": True, "items": {"type": "string", "maxLength": 5}},
        "total": {"type": "number", "minimum": 0},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "flag": {"not": {"const": True}},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
}
BODY = {"total": -1, "items": [], "tags": ["gift", "gift", "fragile"], "code": "usd", "flag": True, "note": 3,
        "extra": None, "more": {"a": [1]}}


def test_schema_failures_are_json_paths_and_sentences_with_json_values(tmp_path):
    step = {"name": "order", "request": {"url": "/order"},
            "assertions": [{"name": "shape", "type": "schema", "schema": SCHEMA}]}
    with Target() as target:
        target.json("/order", BODY)
        done, results = run_suite(tmp_path, suite_of([step]), target.base_url)
    outcome = outcomes(results)["shape"]
    assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == [
        ("$", 'unexpected properties "extra", "more"'),
        ("$", 'missing required properties "title", "currency"'),
        ("$.code", 'expected a string matching "^[A-Z]{3}$", got string "usd"'),
        ("$.flag", "must not match {\"const\": true}, got boolean true"),
        ("$.items", "expected at least 1 item, got 0"),
        ("$.note", "matches none of the 2 schemas of anyOf, got integer 3"),
        ("$.tags", 'expected unique items, got array of 3 items with repeats'),
        ("$.tags[2]", "expected at most 5 characters, got 7"),
        ("$.total", "expected at least 0, got integer -1"),
    ]
    assert outcome["reason"] == '$: unexpected properties "extra", "more" (and 8 more)'
    comment = (tmp_path / "out" / "comment.md").read_text()
    for text in (done.stdout, comment):
        assert 'unexpected properties "extra", "more"' in text
        assert "were unexpected" not in text and "'extra'" not in text and "None" not in text


def test_a_long_reason_is_clipped(tmp_path):
    names = [f"property_{i:03}" for i in range(60)]
    step = {"name": "wide", "request": {"url": "/wide"},
            "assertions": [{"name": "closed", "type": "schema", "schema": {"additionalProperties": False}}]}
    with Target() as target:
        target.json("/wide", dict.fromkeys(names, 1))
        _, results = run_suite(tmp_path, suite_of([step]), target.base_url)
    (mismatch,) = outcomes(results)["closed"]["mismatches"]
    assert mismatch["reason"].startswith('unexpected properties "property_000", "property_001"')
    assert len(mismatch["reason"]) == 300 and mismatch["reason"].endswith("…")
    assert mismatch["actual"].startswith('{"property_000": 1, ')  # JSON, bounded as every mismatch value is
