"""A spec split over files (a path item and its schemas `$ref`d from other files, relative to the file that
names them) is checked as one: the response's schema, its nested `$ref`s and a recursive schema."""

import json

from litmus.assertions._openapi import check_response
from litmus.openapi.document import load_document

SPEC = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "paths": {"/nodes/{id}": {"$ref": "paths/nodes.yaml"}}}
NODES = """\
get:
  responses:
    "200":
      description: a node
      content:
        application/json:
          schema: {$ref: "../schemas/node.yaml#/Node"}
"""
NODE = """\
Node:
  type: object
  required: [name]
  properties:
    name: {type: string}
    children: {type: array, items: {$ref: "#/Node"}}
"""


def _check(document, body, strict=False):
    operation, _ = document.find("GET", "/nodes/1")
    raw = json.dumps(body).encode()
    return [(p.path, p.reason) for p in check_response(document, operation, 200, {}, "application/json", raw,
                                                        lambda: body, strict=strict)]


def test_a_spec_split_over_files_checks_nested_and_recursive_refs_relative_to_each_file(tmp_path):
    (tmp_path / "api" / "paths").mkdir(parents=True)
    (tmp_path / "api" / "schemas").mkdir()
    (tmp_path / "api" / "spec.json").write_text(json.dumps(SPEC))
    (tmp_path / "api" / "paths" / "nodes.yaml").write_text(NODES)
    (tmp_path / "api" / "schemas" / "node.yaml").write_text(NODE)
    document = load_document("api/spec.json", tmp_path)
    assert set(document.documents) == {"api/spec.json", "api/paths/nodes.yaml", "api/schemas/node.yaml"}
    assert _check(document, {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}) == []
    assert _check(document, {"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]}) == [
        ("$.children[0].children[0].name", "expected string, got integer 3")]
    assert _check(document, {"name": "a", "children": [{"name": "b", "extra": 1}]}, strict=True) == [
        ("$.children[0].extra", "property 'extra' is not declared in the schema (strict)")]
