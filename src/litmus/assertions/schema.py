"""`schema`: the JSON body validates against the JSON Schema."""

import json
import os
from urllib.parse import unquote, urlsplit

from litmus.assertions._common import describe, errored, failed, mismatch, passed, show
from litmus.assertions._jsonpaths import format_path
from litmus.assertions.base import AssertionSpec, FieldSpec
from litmus.response import BodyNotJSON

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
    validator = _validator(assertion, ctx.suite)
    try:
        # Sorted by instance path; (is-a-key, part) keeps array indexes numeric and comparable.
        errors = sorted(
            validator.iter_errors(document),
            key=lambda e: ([(isinstance(p, str), p) for p in e.absolute_path], e.validator),
        )
    except Unresolvable as exc:
        return errored(assertion, f"schema $ref cannot be resolved: {exc}")
    if not errors:
        return passed(assertion, "body validates against the schema")
    return failed(assertion, [
        mismatch(format_path(e.absolute_path), e.validator_value, e.instance, _reason(e)) for e in errors
    ])


def _reason(error) -> str:
    if error.validator == "type":
        kinds = error.validator_value
        wanted = " or ".join(kinds) if isinstance(kinds, list) else kinds
        return f"expected {wanted}, got {describe(error.instance)}"
    if error.validator == "enum":
        return f"expected one of {show(error.validator_value)}, got {describe(error.instance)}"
    if error.validator == "const":
        return f"expected {show(error.validator_value)}, got {describe(error.instance)}"
    return error.message


# Validators built once per distinct schema of a loaded suite: a file by its resolved path, an inline schema by
# its canonical JSON; each with the documents its `$ref`s resolve to (the suite's, kept in the entry so that
# their id is never reused while it is a key). Suites repeat the same inline schema in many steps, and building
# (and warming) a validator costs more than using one.
_VALIDATORS: dict = {}


def _validator(assertion, suite):
    params = assertion.params
    documents = suite.schema_documents
    if "schema_file" in params:
        path = assertion.files["schema_file"]  # resolved, read and parsed (with its $refs) when the suite loaded
        key = (id(documents), path)
    else:
        path = suite.abs_path
        key = (id(documents), path, json.dumps(params["schema"], sort_keys=True, default=repr))
    cached = _VALIDATORS.get(key)
    if cached is None:
        schema = documents[str(path)] if "schema_file" in params else params["schema"]
        cached = _VALIDATORS[key] = (documents, _build_validator(schema, path, documents))
    return cached[1]


def _build_validator(schema, path, documents):
    """A validator for `schema` whose `$ref`s to other files resolve against `path`, to the documents the
    loader read for them (`Suite.schema_documents`): no file is read here, and a URL is never fetched."""
    from jsonschema import Draft202012Validator  # lazy: jsonschema: ~115 ms, only when a schema is checked
    from jsonschema.validators import validator_for  # lazy: jsonschema: ~115 ms, only when a schema is checked
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

    cls = validator_for(schema, default=Draft202012Validator)
    base = path.as_uri()
    resource = Resource.from_contents(schema, default_specification=DRAFT202012)
    registry = Registry(retrieve=retrieve).with_resource(base, resource)
    # `format` is asserted, not just annotated: "email": "nope" is a violation (formats: docs/probe-format.md).
    return cls({"$ref": base}, registry=registry, format_checker=cls.FORMAT_CHECKER)


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
