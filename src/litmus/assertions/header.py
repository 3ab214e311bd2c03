"""`header`: a response header satisfies the predicate (name case-insensitive; a repeated header is a list)."""

from litmus.assertions import predicates
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="header",
    family="deterministic",
    doc="A response header satisfies the predicate; a repeated header is the list of its values.",
    fields={
        "header": FieldSpec("string", "the header's name (case-insensitive)", required=True),
        **predicates.fields("the header's value"),
    },
    exactly_one_of=(predicates.KEYS,),
)

# On a repeated header these look at the list itself; every other predicate must hold for each value.
LIST_PREDICATES = ("contains", "contains_any", "contains_all", "length", "exists")


def evaluate(assertion, ctx):
    name = assertion.params["header"]
    where = path(name)
    values = ctx.response.header_values(name)
    if len(values) > 1 and predicates.given(assertion.params) in LIST_PREDICATES:
        nodes = [(where, values)]
    elif len(values) > 1:
        nodes = [(f"{where}[{i}]", value) for i, value in enumerate(values)]
    else:
        nodes = [(where, value) for value in values]
    return predicates.evaluate(assertion, ctx, nodes, where=where, missing=f"no header {name} in the response",
                               text_values=True, noun="header")


def path(name: str) -> str:
    """Where a header's mismatches are recorded: `headers['content-type']` (names are case-insensitive;
    a header name is an HTTP token, which never holds a quote)."""
    return f"headers['{name.lower()}']"
