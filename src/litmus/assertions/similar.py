"""`similar`: the response means what the reference text says, by the cosine similarity of embeddings."""

from litmus.assertions._common import not_judged
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="similar",
    family="qualitative",
    doc="The response is close in meaning to the reference text: the cosine similarity of their embeddings "
        "(judge.embeddings) is at least threshold.",
    fields={
        "value": FieldSpec("string", "the reference text", required=True, templated=True),
        "threshold": FieldSpec("number", "cosine similarity from 0 to 1 (default 0.8)", minimum=0, maximum=1),
    },
)


def evaluate(assertion, ctx):
    if ctx.judge is None:  # the runner decides this before evaluating; a direct call gets the same outcome
        return not_judged(assertion, "no_judge")
    return ctx.judge.evaluate_similarity(assertion, ctx)
