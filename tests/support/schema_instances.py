"""The smallest instance a JSON Schema accepts, with chosen values laid over it: for fake API responses
that must be shaped like GitHub's own (validated against its schemas) without hand-writing 200 fields.

Only what GitHub's REST schemas use is covered: types (and type unions, taking the first non-null),
enum/const, required properties, items, allOf/anyOf/oneOf, string formats. The result is validated by
the caller's tests, so a schema construct this misses fails loudly rather than passing a bad fixture.
"""

from __future__ import annotations

import copy
from typing import Any

_FORMATS = {"date-time": "2026-12-01T09:00:00Z", "uri": "https://github.test/x", "email": "octo@github.test",
            "date": "2026-12-01", "uri-template": "https://github.test/{x}"}


def minimal(schema: dict, overrides: dict | None = None) -> Any:
    value = _minimal(schema)
    if overrides:
        value = _overlay(value, overrides)
    return value


def _overlay(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for key, value in over.items():
            merged[key] = _overlay(base.get(key), value) if key in base else copy.deepcopy(value)
        return merged
    return copy.deepcopy(over)


def _minimal(schema: dict) -> Any:
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
    if "allOf" in schema:
        merged: dict = {}
        for part in schema["allOf"]:
            value = _minimal(part)
            if isinstance(value, dict):
                merged.update(value)
            else:
                return value
        return merged
    for key in ("oneOf", "anyOf"):
        if key in schema:
            options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
            return _minimal(options[0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: _minimal(properties.get(name, {})) for name in schema.get("required", [])}
    if kind == "array":
        count = schema.get("minItems", 0)
        return [_minimal(schema.get("items", {})) for _ in range(count)]
    if kind == "string":
        if "format" in schema and schema["format"] in _FORMATS:
            return _FORMATS[schema["format"]]
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    return None
