"""`schema`: the JSON body validates against the JSON Schema."""

from litmus.assertions.base import AssertionSpec, FieldSpec

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
    from referencing.exceptions import Unresolvable

    from litmus.assertions._common import errored, failed, mismatch, passed
    from litmus.assertions._jsonpaths import format_path
    from litmus.run.response import BodyNotJSON

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
    from litmus.assertions._common import describe, show

    if error.validator == "type":
        kinds = error.validator_value
        wanted = " or ".join(kinds) if isinstance(kinds, list) else kinds
        return f"expected {wanted}, got {describe(error.instance)}"
    if error.validator == "enum":
        return f"expected one of {show(error.validator_value)}, got {describe(error.instance)}"
    if error.validator == "const":
        return f"expected {show(error.validator_value)}, got {describe(error.instance)}"
    return error.message


# Validators built once per distinct schema: an inline schema by its canonical JSON, a file by its
# reference; each with the suite file its relative `$ref`s resolve against. Suites repeat the same
# inline schema in many steps, and building (and warming) a validator costs more than using one.
_VALIDATORS: dict = {}


def _validator(assertion, suite):
    import json
    from pathlib import Path

    params = assertion.params
    if "schema_file" in params:
        key = (suite.abs_path, "file", params["schema_file"])
    else:
        key = (suite.abs_path, "inline", json.dumps(params["schema"], sort_keys=True, default=repr))
    validator = _VALIDATORS.get(key)
    if validator is None:
        if "schema_file" in params:
            path = (Path(suite.abs_path).parent / params["schema_file"]).resolve()
            schema = _load_schema(path)
        else:
            path, schema = Path(suite.abs_path).resolve(), params["schema"]
        validator = _VALIDATORS[key] = _build_validator(schema, path)
    return validator


def _build_validator(schema, path):
    """A validator for `schema` whose relative `$ref`s resolve against `path`, inside the repository."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    root = _repo_root(path)

    def retrieve(uri: str):
        from pathlib import Path
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(uri)
        target = Path(unquote(parts.path)).resolve()
        if parts.scheme != "file" or not target.is_relative_to(root):
            raise ValueError(f"only files inside the repository are resolved, not {uri}")
        return Resource.from_contents(_load_schema(target), default_specification=DRAFT202012)

    cls = validator_for(schema, default=Draft202012Validator)
    base = path.as_uri()
    resource = Resource.from_contents(schema, default_specification=DRAFT202012)
    registry = Registry(retrieve=retrieve).with_resource(base, resource)
    # `format` is asserted, not just annotated: "email": "nope" is a violation (formats: docs/probe-format.md).
    return cls({"$ref": base}, registry=registry, format_checker=cls.FORMAT_CHECKER)


def _load_schema(path):
    import json

    text = path.read_text("utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    import yaml

    return yaml.safe_load(text)


def _repo_root(path):
    """The enclosing git work tree of `path`, else the current directory (as the contract says)."""
    from pathlib import Path

    for parent in path.parents:
        if (parent / ".git").exists():
            return parent
    return Path.cwd().resolve()
