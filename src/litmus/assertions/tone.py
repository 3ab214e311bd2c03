"""`tone`: the response matches the tone."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="tone",
    family="qualitative",
    doc="The response matches the tone.",
    fields={
        "tone": FieldSpec("string", "the expected tone, e.g. \"polite, empathetic\"", required=True, templated=True),
    },
)


def evaluate(assertion, ctx):
    from litmus.judges.assertion import evaluate_with_judge

    return evaluate_with_judge(assertion, ctx)
