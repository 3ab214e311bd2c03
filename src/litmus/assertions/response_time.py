"""`response_time`: the response completed (or, for a stream, sent its first event) within max_ms."""

from litmus.assertions._common import errored, failed, mismatch, passed
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="response_time",
    family="deterministic",
    doc="The response completed (until: end) or sent its first event (until: first_event) within max_ms.",
    fields={
        "max_ms": FieldSpec("number", "the limit in milliseconds", required=True, minimum=0),
        "until": FieldSpec("choice", "end (default): the whole response; first_event: a streamed step's first "
                           "event (time to first token)", choices=("end", "first_event")),
    },
)


def evaluate(assertion, ctx):
    limit = assertion.params["max_ms"]
    if assertion.params.get("until") == "first_event":
        measured = getattr(ctx.response, "first_event_ms", None)
        if measured is None:
            streamed = hasattr(ctx.response, "first_event_ms")
            return errored(assertion, "the stream had no event to time" if streamed else
                           "until: first_event needs a streamed step (the request has no 'stream:')",
                           "first_event_ms")
        what, path = "first event after", "first_event_ms"
    else:
        measured, what, path = ctx.response.elapsed_ms, "took", "elapsed_ms"
    taken = round(measured, 1)
    if measured <= limit:
        head = f"first event after {taken} ms," if path == "first_event_ms" else f"{taken} ms"
        return passed(assertion, f"{head} within {limit} ms")
    return failed(assertion, [mismatch(path, limit, taken, f"{what} {taken} ms, limit {limit} ms")])
