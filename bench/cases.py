"""One list of benchmark cases, written out as a Litmus suite, a Step CI workflow and a Newman collection.

Every case is one GET of a static JSON document with the same five checks in all three tools:
status 200, a JSON-path equality (`$.id`), a body substring, a JSON Schema and response time
under MAX_MS. Generating all three from the same list is what keeps the comparison honest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

MAX_MS = 1000
SCHEMA_FILE = "item.schema.json"

# What every served document must look like: the "schema" check of each case.
SCHEMA = {
    "type": "object",
    "required": ["id", "name", "price", "in_stock", "tags", "description"],
    "properties": {
        "id": {"type": "integer", "minimum": 0},
        "name": {"type": "string", "minLength": 1},
        "price": {"type": "number", "minimum": 0},
        "in_stock": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
        "description": {"type": "string"},
    },
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Case:
    index: int
    # URL path of the document nginx serves for this case.
    path: str
    # The document served there.
    document: dict
    # What the json_path check expects at $.id: the document's id, or a wrong value in a failing case.
    expected_id: int
    # What the contains check looks for in the body text.
    substring: str

    @property
    def name(self) -> str:
        return f"probe-{self.index:05d}"


def make_cases(count: int, fail_every: int = 0) -> list[Case]:
    """`count` cases; with `fail_every` = k, every k-th case (k-1, 2k-1, ...) expects a wrong id."""
    cases = []
    for index in range(count):
        document = {
            "id": index,
            "name": f"item-{index:05d}",
            "price": round(1 + index * 0.25, 2),
            "in_stock": index % 3 != 0,
            "tags": ["bench", f"group-{index % 7}"],
            "description": f"Benchmark item {index}: a small JSON document like an API's product record. " * 3,
        }
        failing = fail_every > 0 and index % fail_every == fail_every - 1
        cases.append(
            Case(
                index=index,
                path=f"/items/{index:05d}.json",
                document=document,
                expected_id=-1 if failing else index,
                substring=document["name"],
            )
        )
    return cases


def expected_failures(cases: list[Case]) -> int:
    return sum(case.expected_id != case.document["id"] for case in cases)


def write_documents(cases: list[Case], root: Path) -> None:
    """The static files nginx serves, under `root`."""
    for case in cases:
        target = root / case.path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(case.document))


class _PlainDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    # The shared SCHEMA object would otherwise be written once with &anchors and *aliases after.
    # libyaml's emitter when PyYAML has it: the pure one takes ~30 s for the N = 10,000 suite.
    def ignore_aliases(self, data):
        return True


def _dump_yaml(data: dict, path: Path) -> None:
    path.write_text(yaml.dump(data, Dumper=_PlainDumper, sort_keys=False, width=1000))


def write_litmus_suite(cases: list[Case], path: Path, shared_schema: bool = False) -> None:
    """One suite, one flow per case (flows are Litmus' unit of concurrency), one step per flow.

    With `shared_schema` the schema is one file next to the suite (`schema_file`), else inline in every step.
    """
    if shared_schema:
        (path.parent / SCHEMA_FILE).write_text(json.dumps(SCHEMA, indent=2))
    schema_check = {"type": "schema", **({"schema_file": SCHEMA_FILE} if shared_schema else {"schema": SCHEMA})}
    flows = [
        {
            "name": case.name,
            "steps": [
                {
                    "name": "get",
                    "request": {"method": "GET", "url": case.path},
                    "assertions": [
                        {"type": "status_code", "expected": 200},
                        {"type": "json_path", "path": "$.id", "expected": case.expected_id},
                        {"type": "contains", "value": case.substring},
                        schema_check,
                        {"type": "response_time", "max_ms": MAX_MS},
                    ],
                }
            ],
        }
        for case in cases
    ]
    _dump_yaml({"version": 1, "suite": f"bench-{path.stem}", "flows": flows}, path)


def write_stepci_workflow(cases: list[Case], path: Path, base_url: str, shared_schema: bool = False) -> None:
    """One workflow, one test per case (Step CI's unit of concurrency), one step per test.

    With `shared_schema` the schema is a workflow component every step `$ref`s, else inline in every step.
    """
    schema_check = {"$ref": "#/components/schemas/Item"} if shared_schema else SCHEMA
    tests = {
        case.name: {
            "steps": [
                {
                    "name": "get",
                    "http": {
                        "url": case.path,
                        "method": "GET",
                        "check": {
                            "status": 200,
                            "jsonpath": {"$.id": case.expected_id},
                            # `in` on a string given is a substring test (String.prototype.includes).
                            "body": [{"in": case.substring}],
                            "schema": schema_check,
                            "performance": {"total": [{"lt": MAX_MS}]},
                        },
                    },
                }
            ]
        }
        for case in cases
    }
    workflow = {"version": "1.1", "name": f"bench-{len(cases)}", "config": {"http": {"baseURL": base_url}}}
    if shared_schema:
        workflow["components"] = {"schemas": {"Item": SCHEMA}}
    workflow["tests"] = tests
    _dump_yaml(workflow, path)


def _newman_test_script(case: Case, shared_schema: bool) -> list[str]:
    # Newman has no shared-schema mechanism; the idiomatic stand-in is a collection variable.
    schema = 'JSON.parse(pm.collectionVariables.get("schema"))' if shared_schema else json.dumps(SCHEMA)
    return [
        'pm.test("status_code", () => pm.response.to.have.status(200));',
        f'pm.test("json_path", () => pm.expect(pm.response.json().id).to.eql({case.expected_id}));',
        f'pm.test("contains", () => pm.expect(pm.response.text()).to.include({json.dumps(case.substring)}));',
        f'pm.test("schema", () => pm.response.to.have.jsonSchema({schema}));',
        f'pm.test("response_time", () => pm.expect(pm.response.responseTime).to.be.below({MAX_MS}));',
    ]


def write_newman_collection(cases: list[Case], path: Path, base_url: str, shared_schema: bool = False) -> None:
    """One Postman v2.1 collection, one request item per case, checks in each item's test script.

    With `shared_schema` the schema is a collection variable, else a literal in every test script.
    """
    items = [
        {
            "name": case.name,
            "request": {"method": "GET", "url": "{{base}}" + case.path},
            "event": [{
                "listen": "test",
                "script": {"type": "text/javascript", "exec": _newman_test_script(case, shared_schema)},
            }],
        }
        for case in cases
    ]
    collection = {
        "info": {
            "name": f"bench-{len(cases)}",
            "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
        },
        "variable": [{"key": "base", "value": base_url}, {"key": "schema", "value": json.dumps(SCHEMA)}],
        "item": items,
    }
    path.write_text(json.dumps(collection))
