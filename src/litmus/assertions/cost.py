"""`cost`: the step's response cost at most `lte` USD: its reported tokens priced by litmus.yaml's `pricing:`
(`litmus.usage`). No usage, or no price for its model, is an `error` naming what is missing, never a pass."""

from litmus.assertions._common import errored, failed, mismatch, passed
from litmus.assertions.base import AssertionSpec, FieldSpec
from litmus.usage import unpriced_reason

SPEC = AssertionSpec(
    type="cost",
    family="deterministic",
    doc="The step's tokens, priced by litmus.yaml's pricing: (USD per million tokens), cost at most lte USD.",
    fields={
        "lte": FieldSpec("number", "the most the step may cost, in USD", required=True, minimum=0),
    },
)


def evaluate(assertion, ctx):
    usage = ctx.metered.usage if ctx.metered else None
    if usage is None:
        return errored(assertion, ctx.metered.missing if ctx.metered else "the step has no response", "usage")
    if usage.cost_usd is None:
        return errored(assertion, unpriced_reason(usage, ctx.pricing), "usage.cost_usd")
    limit = assertion.params["lte"]
    spent = f"${usage.cost_usd:.6f} ({usage.input_tokens} input + {usage.output_tokens} output tokens of " \
            f"{usage.model}, priced as {usage.price_key})"
    if usage.cost_usd > limit:
        return failed(assertion, [mismatch("usage.cost_usd", f"<= {limit}", usage.cost_usd,
                                           f"cost {spent}, limit ${limit}")])
    return passed(assertion, f"cost {spent}, limit ${limit}")
