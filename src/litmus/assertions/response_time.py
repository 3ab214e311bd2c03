"""`response_time`: the response completed within max_ms milliseconds."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="response_time",
    family="deterministic",
    doc="The response completed within max_ms milliseconds.",
    fields={
        "max_ms": FieldSpec("number", "the limit in milliseconds", required=True, minimum=0),
    },
)


def evaluate(assertion, ctx):
    from litmus.assertions._common import failed, mismatch, passed

    limit = assertion.params["max_ms"]
    elapsed = round(ctx.response.elapsed_ms, 1)
    if ctx.response.elapsed_ms <= limit:
        return passed(assertion, f"{elapsed} ms within {limit} ms")
    return failed(assertion, [mismatch("elapsed_ms", limit, elapsed, f"took {elapsed} ms, limit {limit} ms")])
