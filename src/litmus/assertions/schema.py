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
