"""`json_path`: the JSONPath's matches satisfy the predicate, node by node."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="json_path",
    family="deterministic",
    doc="The JSONPath's matches satisfy the predicate, node by node.",
    fields={
        "path": FieldSpec("jsonpath", "a JSONPath expression, e.g. $.items[*].price", required=True),
        "expected": FieldSpec("any", "deep equality", templated=True),
        "matches": FieldSpec("regex", "a regular expression the (string) value matches", templated=True),
        "exists": FieldSpec("boolean", "true: at least one node matches; false: none does"),
        "contains": FieldSpec("any", "a substring, an array element or an object key", templated=True),
        "length": FieldSpec("integer", "the length of a string, array or object", minimum=0),
        "gt": FieldSpec("number", "greater than"),
        "gte": FieldSpec("number", "greater than or equal to"),
        "lt": FieldSpec("number", "less than"),
        "lte": FieldSpec("number", "less than or equal to"),
        "one_of": FieldSpec("list", "the value equals one of these", templated=True),
        "type": FieldSpec(
            "choice", "the JSON type of the value",
            choices=("string", "number", "integer", "boolean", "object", "array", "null"),
        ),
    },
    exactly_one_of=(
        ("expected", "matches", "exists", "contains", "length", "gt", "gte", "lt", "lte", "one_of", "type"),
    ),
)
