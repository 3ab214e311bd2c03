"""`body`: a predicate on the whole body text, its SHA-256, or its size in bytes."""

import hashlib

from litmus.assertions import predicates
from litmus.assertions._common import errored
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="body",
    family="deterministic",
    doc="The whole body: a predicate on its text, its SHA-256, or its size in bytes.",
    fields={
        **predicates.fields("the body text"),
        "sha256": FieldSpec("string", "the hex SHA-256 of the body bytes", templated=True),
        "size_lte": FieldSpec("count", "the body is at most this many bytes", templated=True),
        "size_gte": FieldSpec("count", "the body is at least this many bytes", templated=True),
    },
    exactly_one_of=((*predicates.KEYS, "sha256", "size_lte", "size_gte"),),
)

# Each whole-body measure is a predicate on a derived value, recorded at its own path.
MEASURES = {"sha256": "expected", "size_lte": "lte", "size_gte": "gte"}


def evaluate(assertion, ctx):

    params = assertion.params
    response = ctx.response
    if response.truncated:
        # A cut body is not the body: a verdict on it (equality, hash, "at most N bytes") could be wrong.
        return errored(assertion, f"the body was cut at the size cap ({len(response.body)} bytes kept)")
    measure = next((key for key in MEASURES if key in params), None)
    if measure is None:
        # `exists` asks whether there is a body at all: an empty one is none.
        empty = predicates.given(params) == "exists" and not response.body
        return predicates.evaluate(assertion, ctx, [] if empty else [("$", response.text)], where="$",
                                   missing="the body is empty", text_values=True, noun="body")
    key = MEASURES[measure]
    path = "sha256" if measure == "sha256" else "size"
    value = hashlib.sha256(response.body).hexdigest() if measure == "sha256" else len(response.body)
    # A hex digest compares whatever its case.
    render = (lambda v: _lower(ctx.render(v))) if measure == "sha256" else ctx.render
    try:
        predicate = predicates.build({key: params[measure], "not": params.get("not", False)}, render)
    except predicates.PredicateError as exc:
        return errored(assertion, str(exc).replace(f"'{key}'", f"'{measure}'"), path)
    return predicates.check_nodes(assertion, predicate, [(path, value)], where=path, missing="no body")


def _lower(value):
    return value.strip().lower() if isinstance(value, str) else value
