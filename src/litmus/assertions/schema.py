"""`schema`: the JSON body validates against the JSON Schema."""

import json
import os
from urllib.parse import unquote, urlsplit

from litmus.assertions._common import (
    PATTERN_DEADLINE,
    EvaluationTimeout,
    bounded_keywords,
    describe,
    errored,
    failed,
    mismatch,
    passed,
    patterns_bounded_by,
    search,
    show,
)
from litmus.assertions._jsonpaths import format_path
from litmus.assertions.base import AssertionSpec, FieldSpec
from litmus.response import BodyNotJSON
from litmus.text import clip, count, noun_for

SPEC = AssertionSpec(
    type="schema",
    family="deterministic",
    doc="The JSON body validates against the JSON Schema.",
    fields={
        "schema": FieldSpec("json_schema", "an inline JSON Schema (default draft 2020-12; $schema honoured)"),
        "schema_file": FieldSpec("file", "a JSON or YAML schema file, relative to the suite file"),
    },
    exactly_one_of=(("schema", "schema_file"),),
)


def evaluate(assertion, ctx):
    from referencing.exceptions import Unresolvable  # lazy: referencing: ~50 ms, only when a schema is checked


    try:
        document = ctx.response.json()
    except BodyNotJSON as exc:
        return errored(assertion, str(exc))
    try:
        with patterns_bounded_by(ctx.deadline):
            found = violations(_validator(assertion, ctx.suite), document)
    except Unresolvable as exc:
        return errored(assertion, f"schema $ref cannot be resolved: {exc}")
    except EvaluationTimeout as exc:
        return errored(assertion, str(exc))
    if not found:
        return passed(assertion, "body validates against the schema")
    return failed(assertion, [mismatch(format_path(parts), e.validator_value, e.instance, reason)
                              for parts, reason, e in found])


def violations(validator, instance) -> list[tuple[list, str, object]]:
    """`(instance path parts, reason, error)` of each way `instance` fails, sorted by path: one per path and
    reason (`required` fails once per missing name, and the reason names them all). Raises
    `referencing.exceptions.Unresolvable` for a `$ref` that cannot be resolved."""
    # Sorted by instance path; (is-a-key, part) keeps array indexes numeric and comparable.
    errors = sorted(validator.iter_errors(instance),
                    key=lambda e: ([(isinstance(p, str), p) for p in e.absolute_path], e.validator))
    found = {(format_path(e.absolute_path), _reason(e)): e for e in errors}
    return [(list(e.absolute_path), reason, e) for (_, reason), e in found.items()]


def _reason(error) -> str:
    """What the value at the error's path fails, in words, with JSON values (jsonschema's own messages
    show Python reprs: `[{'title': 'x'}] is too short`), cut to one line."""
    return clip(_sentence(error), REASON_LIMIT)


def _sentence(error) -> str:
    keyword, wanted, value = error.validator, error.validator_value, error.instance
    got = describe(value)
    if keyword == "type":
        return f"expected {' or '.join(wanted) if isinstance(wanted, list) else wanted}, got {got}"
    if keyword == "enum":
        return f"expected one of {show(wanted)}, got {got}"
    if keyword == "const":
        return f"expected {show(wanted)}, got {got}"
    if keyword == "required":
        missing = [name for name in wanted if isinstance(value, dict) and name not in value]
        return f"missing required {noun_for(len(missing), 'property', 'properties')} {', '.join(map(show, missing))}"
    if keyword in ("additionalProperties", "unevaluatedProperties") and wanted is False:
        extra = [name for name in value if name not in error.schema.get("properties", {})
                 and not any(search(pattern, name, PATTERN_DEADLINE.get())
                             for pattern in error.schema.get("patternProperties", {}))]
        return f"unexpected {noun_for(len(extra), 'property', 'properties')} {', '.join(map(show, extra))}"
    if keyword in _SIZES:
        bound, noun, plural = _SIZES[keyword]
        return f"expected {bound} {count(wanted, noun, plural)}, got {len(value)}"
    if keyword in _BOUNDS:
        return f"expected {_BOUNDS[keyword]} {show(wanted)}, got {got}"
    if keyword == "multipleOf":
        return f"expected a multiple of {show(wanted)}, got {got}"
    if keyword == "pattern":
        return f"expected a string matching {show(wanted)}, got {got}"
    if keyword == "format":
        return f"expected a valid {wanted}, got {got}"
    if keyword == "uniqueItems":
        return f"expected unique items, got {got} with repeats"
    if keyword in ("anyOf", "oneOf") and error.context:
        return f"matches none of the {len(wanted)} schemas of {keyword}, got {got}"
    if keyword == "oneOf":
        return f"matches more than one of the {len(wanted)} schemas of oneOf, got {got}"
    if keyword == "contains":
        return f"expected an item matching {show(wanted)}, got {got}"
    if keyword == "not":
        return f"must not match {show(wanted)}, got {got}"
    if keyword == "writeOnly":  # OpenAPI 3.0, checking a response
        return "a write-only property must not be in a response"
    if keyword == "readOnly":  # OpenAPI 3.0, checking a request
        return "a read-only property must not be in a request"
    if keyword is None or wanted is False:
        return f"no value is allowed here, got {got}"
    return f"fails {keyword} {show(wanted)}, got {got}"


# A reason is one line of the terminal and the PR comment; the values stay whole in the mismatch.
REASON_LIMIT = 300
# Size keywords: (bound, noun, plural), as in "expected at least 1 item, got 0".
_SIZES = {
    "minItems": ("at least", "item", None), "maxItems": ("at most", "item", None),
    "minLength": ("at least", "character", None), "maxLength": ("at most", "character", None),
    "minProperties": ("at least", "property", "properties"), "maxProperties": ("at most", "property", "properties"),
}
_BOUNDS = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than",
           "exclusiveMaximum": "less than"}


# Validators built once per distinct schema of a loaded suite: a file by its resolved path, an inline schema by
# its canonical JSON; each with the documents its `$ref`s resolve to (the suite's, kept in the entry so that
# their id is never reused while it is a key). Suites repeat the same inline schema in many steps, and building
# (and warming) a validator costs more than using one.
_VALIDATORS: dict = {}


# id(assertion params) -> (those params, their validator): the canonical JSON of an inline schema is computed
# once per assertion, not on every step it checks (the params are kept so that their id stays theirs).
_BY_PARAMS: dict[int, tuple] = {}


def _validator(assertion, suite):
    params = assertion.params
    known = _BY_PARAMS.get(id(params))
    if known is not None and known[1] is suite.schema_documents:
        return known[2]
    documents = suite.schema_documents
    if "schema_file" in params:
        path = assertion.files["schema_file"]  # resolved, read and parsed (with its $refs) when the suite loaded
        validator = cached_validator((path,), lambda: documents[str(path)], path, documents)
    else:
        key = (suite.abs_path, json.dumps(params["schema"], sort_keys=True, default=repr))
        validator = cached_validator(key, lambda: params["schema"], suite.abs_path, documents)
    _BY_PARAMS[id(params)] = (params, documents, validator)
    return validator


def cached_validator(key: tuple, schema, path, documents):
    """The validator of the schema `schema()` gives, read from `path`, its `$ref`s resolved to `documents`
    (`Suite.schema_documents`): built once per suite and `key`."""
    full_key = (id(documents), *key)
    cached = _VALIDATORS.get(full_key)
    if cached is None:
        cached = _VALIDATORS[full_key] = (documents, _build_validator(schema(), path, documents))
    return cached[1]


def _build_validator(schema, path, documents):
    """A validator for `schema` whose `$ref`s to other files resolve against `path`, to the documents the
    loader read for them (`Suite.schema_documents`): no file is read here, and a URL is never fetched."""
    from jsonschema import Draft202012Validator  # lazy: jsonschema: ~115 ms, only when a schema is checked
    from jsonschema.validators import extend, validator_for  # lazy: jsonschema: ~115 ms, only when a schema is checked
    from referencing import Registry, Resource  # lazy: referencing: ~50 ms, only when a schema is checked
    from referencing.jsonschema import DRAFT202012  # lazy: referencing: ~50 ms, only when a schema is checked

    def retrieve(uri: str):
        parts = urlsplit(uri)
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            raise ValueError(f"only files inside the repository are resolved, not {uri}")
        document = documents.get(os.path.normpath(unquote(parts.path)))
        if document is None:
            raise ValueError(f"{uri} was not read when the suite loaded")
        return Resource.from_contents(document, default_specification=DRAFT202012)

    # A pull request writes the schema's patterns, and the server the values and names: a search ends at the step's
    # deadline.
    draft = validator_for(schema, default=Draft202012Validator)
    cls = extend(draft, bounded_keywords(draft))
    if not _names_documents(schema):
        # Nothing to resolve: validated as it is, not through a `$ref` to it (a lookup on every validation).
        return cls(schema, format_checker=cls.FORMAT_CHECKER)
    base = path.as_uri()
    resource = Resource.from_contents(schema, default_specification=DRAFT202012)
    registry = Registry(retrieve=retrieve).with_resource(base, resource)
    # `format` is asserted, not just annotated: "email": "nope" is a violation (formats: docs/probe-format.md).
    return cls({"$ref": base}, registry=registry, format_checker=cls.FORMAT_CHECKER)


def _names_documents(schema) -> bool:
    """Whether the schema has a `$ref`, `$dynamicRef` or `$id` anywhere: then it needs its base URI."""
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if any(key in value for key in ("$ref", "$dynamicRef", "$id", "$anchor", "$dynamicAnchor")):
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def file_refs(document):
    """`(ref, relative path)` for each `$ref` of `document` that names another document: the path is None
    when the reference is not a relative file path (a URL, `file:`, an absolute path). Fragments
    (`#/$defs/x`) and the document's own `$id`s are not listed: they need nothing read."""
    refs, ids, stack = [], set(), [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, child in value.items():
                if key == "$ref" and isinstance(child, str):
                    refs.append(child)
                elif key == "$id" and isinstance(child, str):
                    ids.add(child.split("#", 1)[0])
                else:
                    stack.append(child)
        elif isinstance(value, list):
            stack.extend(value)
    for ref in refs:
        target = ref.split("#", 1)[0]
        if not target or target in ids:
            continue
        parts = urlsplit(target)
        relative = unquote(parts.path)
        plain = not parts.scheme and not parts.netloc and not parts.query and not relative.startswith("/")
        yield ref, relative if plain else None
