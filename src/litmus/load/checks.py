"""Checks of values that must mean something: regexes, JSONPaths, JSON Schemas.

Each returns an error message (None when fine). jsonpath-ng and jsonschema are imported only here,
on first use, so files that need neither load without paying for them, and values found valid
before (`known_valid`, kept across processes) are not checked again.
"""

from __future__ import annotations

import json
from typing import Any

from litmus.assertions._common import regex
from litmus.assertions._jsonpaths import compile_path  # the runner's dialect and cache
from litmus.load.known_valid import known_valid
from litmus.templating import TEMPLATE


def regex_error(pattern: str) -> str | None:
    """Why `pattern` is not a valid regex.

    The runner inserts a template's value into the regex as it is; the check lets each template
    stand for a plain word, so the regex around the templates must be valid on its own.
    """
    import regex  # lazy: regex: ~30 ms, only for a suite that uses a regex

    try:
        compile_regex(TEMPLATE.sub("x", pattern))
    except regex.error as exc:
        return f"invalid regular expression: {exc}"
    return None


def compile_regex(pattern: str):
    """`pattern` compiled by the engine the runner searches with (`litmus.assertions._common.regex`)."""
    return regex(pattern)


def xpath_error(expr: str, namespaces_item) -> str | None:
    """Why `expr` is not an XPath 1.0 expression lxml can compile (with the assertion's namespaces)."""
    if TEMPLATE.search(expr):
        return "templates are not allowed in an XPath (filter on the value with a predicate instead)"
    from lxml import etree  # lazy: lxml: ~35 ms, only for a suite that uses XPath

    namespaces = namespaces_item.plain() if namespaces_item is not None else None
    if namespaces is not None and not (isinstance(namespaces, dict)
                                       and all(isinstance(v, str) for v in namespaces.values())):
        return None  # 'namespaces' reports its own type error
    try:
        etree.XPath(expr, namespaces=namespaces)
    except etree.XPathSyntaxError as exc:
        return f"invalid XPath {expr!r}: {exc}"
    return None


def jsonpath_error(expr: str) -> str | None:
    if TEMPLATE.search(expr):
        return "templates are not allowed in a JSONPath (filter on the value with an assertion instead)"
    if ("jsonpath", expr) in known_valid:
        return None

    try:
        compile_path(expr)
    except Exception as exc:  # jsonpath-ng raises bare Exception (and its own) for syntax errors
        return f"invalid JSONPath {expr!r}: {exc}"
    known_valid.add("jsonpath", expr)
    return None


def json_schema_error(schema: Any) -> str | None:
    if not isinstance(schema, (dict, bool)):
        return "a JSON Schema must be a mapping (or true/false)"
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return _check_schema(schema)
    # Checking against the 2020-12 meta-schema costs ~6 ms per schema ($dynamicRef lookups), and
    # suites repeat the same inline schema in many steps: check each distinct schema once.
    if key not in _SCHEMA_ERRORS:
        if ("json_schema", key) in known_valid:
            _SCHEMA_ERRORS[key] = None
        else:
            _SCHEMA_ERRORS[key] = error = _check_schema(schema)
            if error is None:
                known_valid.add("json_schema", key)
    return _SCHEMA_ERRORS[key]


# Canonical JSON of a schema -> its error (None: valid). Schemas are plain data, so the text is the identity.
_SCHEMA_ERRORS: dict[str, str | None] = {}


def _check_schema(schema: Any) -> str | None:
    from jsonschema import exceptions, validators  # lazy: jsonschema: ~115 ms, only when a schema is checked

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        where = "".join(f"[{p!r}]" for p in exc.absolute_path)
        return f"invalid JSON Schema{' at ' + where if where else ''}: {exc.message}"
    return None


def unchecked_formats(schema: Any) -> list[str]:
    """The `format` values in `schema` that no installed checker asserts (they would pass anything)."""
    formats: set[str] = set()
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if isinstance(value.get("format"), str):
                formats.add(value["format"])
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    if not formats:
        return []  # most schemas: no need to import jsonschema to know
    from jsonschema import Draft202012Validator  # lazy: jsonschema: ~115 ms, only when a schema is checked

    return sorted(formats - set(Draft202012Validator.FORMAT_CHECKER.checkers))
