"""The assertion types: one module each, or one row of the judged table, registered here by type name."""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

from litmus.assertions import judged
from litmus.assertions.base import AssertionSpec

_JUDGED = judged.__name__
# type name -> module exposing SPEC (a table: SPECS) and evaluate(). Adding a type = one module + one line
# here; adding a judged type that differs only in data = one row of litmus.assertions.judged.
REGISTRY: dict[str, str] = {
    "status_code": "litmus.assertions.status_code",
    "response_time": "litmus.assertions.response_time",
    "json_path": "litmus.assertions.json_path",
    "contains": "litmus.assertions.contains",
    "not_contains": "litmus.assertions.not_contains",
    "schema": "litmus.assertions.schema",
    "openapi": "litmus.assertions.openapi",
    "extract_match": "litmus.assertions.extract_match",
    "header": "litmus.assertions.header",
    "cookie": "litmus.assertions.cookie",
    "body": "litmus.assertions.body",
    "xpath": "litmus.assertions.xpath",
    "url": "litmus.assertions.url",
    "redirects": "litmus.assertions.redirects",
    "python": "litmus.assertions.python",
    "tool_calls": "litmus.assertions.tool_calls",
    "tokens": "litmus.assertions.tokens",
    "cost": "litmus.assertions.cost",
    # The judged types that differ only in data: one row each in litmus.assertions.judged, listed by family.
    **{name: _JUDGED for name, row in judged.SPECS.items() if row.family == "qualitative"},
    "similar": "litmus.assertions.similar",
    **{name: _JUDGED for name, row in judged.SPECS.items() if row.family == "scenario"},
    **{name: _JUDGED for name, row in judged.SPECS.items() if row.family == "conversation"},
}


@cache
def module(type_name: str) -> ModuleType:
    return importlib.import_module(REGISTRY[type_name])


def spec(type_name: str) -> AssertionSpec:
    found = module(type_name)
    return found.SPECS[type_name] if hasattr(found, "SPECS") else found.SPEC


def all_specs() -> dict[str, AssertionSpec]:
    return {name: spec(name) for name in REGISTRY}
