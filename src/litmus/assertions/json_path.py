"""`json_path`: the JSONPath's matches satisfy the predicate, node by node."""

from litmus.assertions import predicates
from litmus.assertions._common import errored
from litmus.assertions._jsonpaths import EvaluationBound, find
from litmus.assertions.base import AssertionSpec, FieldSpec
from litmus.response import BodyNotJSON

SPEC = AssertionSpec(
    type="json_path",
    family="deterministic",
    doc="The JSONPath's matches satisfy the predicate, node by node.",
    fields={
        "path": FieldSpec("jsonpath", "a JSONPath expression, e.g. $.items[*].price", required=True),
        **predicates.fields("the value"),
    },
    exactly_one_of=(predicates.KEYS,),
)


def evaluate(assertion, ctx):
    expression = assertion.params["path"]
    try:
        nodes = find(expression, ctx.response.json())
    except (BodyNotJSON, EvaluationBound) as exc:
        return errored(assertion, str(exc))
    return predicates.evaluate(assertion, ctx, nodes, where=expression, missing="no node matches")
