"""The judged types that differ only in data: one row each, one evaluator for all.

Each row is the type's spec; the run's judge service (`ctx.judge`, litmus.judges) decides every one of
them. Adding such a type = one row here; a type with logic of its own (`similar`) keeps its own module.
"""

from litmus.assertions._common import not_judged
from litmus.assertions.base import AssertionSpec, FieldSpec

_ROWS = (
    AssertionSpec(
        type="llm_rubric", family="qualitative", doc="The response satisfies the free-text rubric.",
        fields={"rubric": FieldSpec("string", "what a good response does", required=True, templated=True)},
    ),
    AssertionSpec(
        type="tone", family="qualitative", doc="The response matches the tone.",
        fields={
            "tone": FieldSpec("string", "the expected tone, e.g. \"polite, empathetic\"", required=True,
                              templated=True),
        },
    ),
    AssertionSpec(
        type="factual", family="qualitative", doc="The response agrees with the ground-truth statement.",
        fields={"ground_truth": FieldSpec("string", "the statement taken as true", required=True, templated=True)},
    ),
    AssertionSpec(
        type="no_hallucination", family="qualitative", doc="The response does not contradict the given context.",
        fields={
            "context": FieldSpec("string", "the facts the response must not contradict", required=True,
                                 templated=True),
        },
    ),
    AssertionSpec(
        type="answers_question", family="qualitative", doc="The response adequately answers the question.",
        fields={
            "question": FieldSpec("string", "the question the response must answer", required=True, templated=True),
        },
    ),
    AssertionSpec(
        type="consistent_with_scenario_data", family="scenario",
        doc="Nothing in the response contradicts the scenario data.",
    ),
    AssertionSpec(
        type="accurate_with_scenario_context", family="scenario",
        doc="The response aligns with the scenario's approved reference_response.",
    ),
    AssertionSpec(
        type="no_hallucination_vs_scenario", family="scenario",
        doc="The response invents no facts beyond the scenario data.",
    ),
    AssertionSpec(
        type="contextual_evaluation", family="scenario",
        doc="The response meets the rubric, with the scenario data as context.",
        fields={
            "rubric": FieldSpec("string", "what a good response does, given the scenario", required=True,
                                templated=True),
        },
    ),
    # Judged on a conversation's whole transcript (`conversation_assertions`), never on one response.
    AssertionSpec(
        type="knowledge_retention", family="conversation",
        doc="Later answers stay consistent with facts the user gave or the assistant stated earlier.",
    ),
    AssertionSpec(
        type="role_adherence", family="conversation", doc="The assistant keeps to its role in every turn.",
        fields={"role": FieldSpec("string", "the role the assistant must keep", required=True, templated=True)},
    ),
    AssertionSpec(
        type="conversation_completeness", family="conversation",
        doc="The user's goal was met by the end of the conversation.",
        fields={
            "goal": FieldSpec("string", "the user's goal (default: the suite's intent)", templated=True),
        },
    ),
)

# type name -> spec, in the table's order (the registry's, so the schema's, docs' and SARIF rules').
SPECS: dict[str, AssertionSpec] = {row.type: row for row in _ROWS}


def evaluate(assertion, ctx):
    # The runner decides these before evaluating; a direct call gets the same one skip outcome.
    if ctx.judge is None:
        return not_judged(assertion, "no_judge")
    if SPECS[assertion.type].family == "scenario" and ctx.scenario is None:
        return not_judged(assertion, "no_scenario")
    return ctx.judge.evaluate_assertion(assertion, ctx)
