"""`response_time`: the response took at most `max_ms` and/or at least `min_ms` milliseconds, timed
until its end, its first byte (the status line: time to first byte) or, for a stream, its first event.

Every time is counted from sending the first request, redirects included, as `elapsed_ms` is.
"""

from litmus.assertions._common import errored, failed, mismatch, passed
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="response_time",
    family="deterministic",
    doc="The response completed (until: end), sent its first byte (until: first_byte) or its first event "
        "(until: first_event) within max_ms and/or after at least min_ms.",
    fields={
        "max_ms": FieldSpec("number", "the upper limit in milliseconds", minimum=0),
        "min_ms": FieldSpec("number", "the lower limit in milliseconds (an answer from a cache or a stub "
                            "is suspiciously fast)", minimum=0),
        "until": FieldSpec("choice", "end (default): the whole response; first_byte: its first byte (time to "
                           "first byte); first_event: a streamed step's first event (time to first token)",
                           choices=("end", "first_byte", "first_event")),
    },
    at_least_one_of=(("max_ms", "min_ms"),),
)

# until -> (the response attribute timed, the mismatch path, how a time reads)
_MEASURES = {
    "end": ("elapsed_ms", "elapsed_ms", "took {} ms"),
    "first_byte": ("first_byte_ms", "first_byte_ms", "first byte after {} ms"),
    "first_event": ("first_event_ms", "first_event_ms", "first event after {} ms"),
}


def evaluate(assertion, ctx):
    params = assertion.params
    until = params.get("until", "end")
    attribute, path, reads = _MEASURES[until]
    measured = getattr(ctx.response, attribute, None)
    if measured is None:
        if until == "first_event":
            streamed = hasattr(ctx.response, "first_event_ms")
            return errored(assertion, "the stream had no event to time" if streamed else
                           "until: first_event needs a streamed step (the request has no 'stream:')", path)
        return errored(assertion, "the response was not read from the target: it has no first byte to time", path)
    taken = round(measured, 1)
    what = reads.format(taken)
    upper, lower = params.get("max_ms"), params.get("min_ms")
    mismatches = []
    if upper is not None and measured > upper:
        mismatches.append(mismatch(path, upper, taken, f"{what}, limit {upper} ms"))
    if lower is not None and measured < lower:
        mismatches.append(mismatch(path, f">= {lower}", taken, f"{what}, expected at least {lower} ms"))
    if mismatches:
        return failed(assertion, mismatches)
    bounds = [f"within {upper} ms"] * (upper is not None) + [f"at least {lower} ms"] * (lower is not None)
    return passed(assertion, f"{what}, {' and '.join(bounds)}")
