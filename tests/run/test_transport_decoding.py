"""Text decoding: JSON is read as RFC 8259 says whatever its charset parameter claims, and a charset
that misreads the body cannot hide text from `not_contains`. Through the CLI, against 127.0.0.1."""

from __future__ import annotations

import codecs
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))

from pipeline import run_litmus, write_suite  # noqa: E402

from support.target import Target  # noqa: E402

BODIES = {
    # path: (content type, body)
    "/json-utf16-lie": ("application/json; charset=utf-16", b'{"password": "hunter2"}'),
    "/json-bom": ("application/json", codecs.BOM_UTF8 + '{"a": "é"}'.encode()),
    "/json-utf16-bom": ("application/json", '{"a": "é"}'.encode("utf-16")),
    "/problem-latin1-lie": ("application/problem+json; charset=iso-8859-1", '{"detail": "pässword"}'.encode()),
    "/text-utf16-lie": ("text/plain; charset=utf-16", b"the key is hunter2!"),
    "/text-latin1-lie": ("text/plain; charset=iso-8859-1", "the word is pässword".encode()),
    "/text-latin1": ("text/plain; charset=iso-8859-1", "un café".encode("latin-1")),
}

CHECKS = {
    "/json-utf16-lie": [("not_contains", "hunter2"), ("contains", "hunter2"), ("json_path", "hunter2")],
    "/json-bom": [("contains", "é"), ("json_path", "é")],
    "/json-utf16-bom": [("contains", "é"), ("json_path", "é")],
    "/problem-latin1-lie": [("not_contains", "pässword")],
    "/text-utf16-lie": [("not_contains", "hunter2"), ("contains", "hunter2")],
    "/text-latin1-lie": [("not_contains", "pässword")],
    "/text-latin1": [("contains", "café"), ("not_contains", "hunter2")],
}


def _assertion(kind: str, value: str) -> str:
    if kind == "json_path":
        field = "password" if value == "hunter2" else "a"
        return f'{{type: json_path, path: "$.{field}", expected: "{value}"}}'
    return f'{{type: {kind}, value: "{value}"}}'


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    root = tmp_path_factory.mktemp("decoding")
    flows = "".join(
        f"  - name: {path.strip('/')}\n    steps:\n      - name: get\n        request: {{url: {path}}}\n"
        f"        assertions:\n" + "".join(f"          - {_assertion(k, v)}\n" for k, v in CHECKS[path])
        for path in BODIES)
    write_suite(root, "decoding.yaml", "version: 1\nsuite: Decoding\nflows:\n" + flows)
    with Target() as target:
        for path, (content_type, body) in BODIES.items():
            target.text(path, body, content_type=content_type)
        ran = run_litmus(["run", "--base-url", target.base_url, "--out", "out"], cwd=root)
    assert "Traceback" not in ran.output
    document = json.loads((root / "out" / "results.json").read_text("utf-8"))
    return {f["flow"]: f["steps"][0]["assertions"] for f in document["suites"][0]["flow_runs"]}


def test_json_ignores_a_charset_lie(outcomes):
    not_contains, contains, json_path = outcomes["json-utf16-lie"]
    assert not_contains["status"] == "failed" and "hunter2" in not_contains["reason"]
    assert "UTF-8" not in not_contains["reason"]  # the JSON reading itself is UTF-8: no mismatch to note
    assert contains["status"] == "passed" and json_path["status"] == "passed"


@pytest.mark.parametrize("name", ["json-bom", "json-utf16-bom"])
def test_json_with_a_byte_order_mark_is_read_by_it(outcomes, name):
    assert [o["status"] for o in outcomes[name]] == ["passed", "passed"]


def test_a_plus_json_type_is_json(outcomes):
    [not_contains] = outcomes["problem-latin1-lie"]
    assert not_contains["status"] == "failed"


@pytest.mark.parametrize("name, value", [("text-utf16-lie", "hunter2"), ("text-latin1-lie", "pässword")])
def test_text_a_declared_charset_misreads_is_also_checked_as_utf8(outcomes, name, value):
    not_contains = outcomes[name][0]
    assert not_contains["status"] == "failed"
    assert value in not_contains["mismatches"][0]["actual"]
    assert "read as UTF-8" in not_contains["reason"] and "declared" in not_contains["reason"]


def test_contains_found_only_in_the_utf8_reading_passes_and_says_so(outcomes):
    contains = outcomes["text-utf16-lie"][1]
    assert contains["status"] == "passed" and "read as UTF-8" in contains["reason"]


def test_a_truthful_charset_is_honoured_alone(outcomes):
    contains, not_contains = outcomes["text-latin1"]
    assert contains["status"] == "passed" and "UTF-8" not in contains["reason"]
    assert not_contains["status"] == "passed"
