"""`extract_match`: a previously extracted variable satisfies the predicate."""

from litmus.assertions import predicates
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="extract_match",
    family="deterministic",
    doc="A previously extracted variable satisfies the predicate.",
    fields={
        "variable": FieldSpec("variable", "the extracted variable's name", required=True),
        **predicates.fields("the variable's value"),
    },
    exactly_one_of=(predicates.KEYS,),
)


def evaluate(assertion, ctx):
    name = assertion.params["variable"]
    # Extracted values are often text (headers, regex groups): numeric strings compare as numbers.
    nodes = [(name, ctx.variables[name])] if name in ctx.variables else []
    return predicates.evaluate(assertion, ctx, nodes, where=name, missing=f"variable '{name}' was never extracted",
                               text_values=True, noun="variable")
