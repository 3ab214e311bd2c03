"""`tokens`: the step's response used at most `input_lte` input, `output_lte` output and/or `total_lte` tokens
in all, as its own usage report says (`litmus.usage`). A response that reports none is an `error`, never a pass."""

from litmus.assertions._common import errored, failed, mismatch, passed
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="tokens",
    family="deterministic",
    doc="The response's reported token usage is within the limits (see docs/cost.md for where usage is read).",
    fields={
        "input_lte": FieldSpec("integer", "the most input (prompt) tokens", minimum=0),
        "output_lte": FieldSpec("integer", "the most output (completion) tokens", minimum=0),
        "total_lte": FieldSpec("integer", "the most input and output tokens together", minimum=0),
    },
    at_least_one_of=(("input_lte", "output_lte", "total_lte"),),
)

# limit field -> (the mismatch path, what is counted)
_LIMITS = {"input_lte": ("usage.input_tokens", "input"), "output_lte": ("usage.output_tokens", "output"),
           "total_lte": ("usage.total_tokens", "total")}


def evaluate(assertion, ctx):
    usage = ctx.metered.usage if ctx.metered else None
    if usage is None:
        return errored(assertion, ctx.metered.missing if ctx.metered else "the step has no response", "usage")
    counts = {"input": usage.input_tokens, "output": usage.output_tokens,
              "total": None if usage.input_tokens is None or usage.output_tokens is None
              else usage.input_tokens + usage.output_tokens}
    mismatches, within = [], []
    for field, (path, what) in _LIMITS.items():
        limit = assertion.params.get(field)
        if limit is None:
            continue
        used = counts[what]
        if used is None:
            side = "input" if usage.input_tokens is None else "output"
            return errored(assertion, f"the response reports no {side} tokens, so its {what} tokens are unknown",
                           path)
        if used > limit:
            mismatches.append(mismatch(path, f"<= {limit}", used, f"{used} {what} tokens, limit {limit}"))
        else:
            within.append(f"{used} {what} tokens (limit {limit})")
    if mismatches:
        return failed(assertion, mismatches)
    return passed(assertion, ", ".join(within))
