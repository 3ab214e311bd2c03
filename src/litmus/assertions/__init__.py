"""The assertion types: one module each, registered here by type name."""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

from litmus.assertions.base import AssertionSpec

# type name -> module exposing SPEC and evaluate(). Adding a type = one module + one line here.
REGISTRY: dict[str, str] = {
    "status_code": "litmus.assertions.status_code",
    "response_time": "litmus.assertions.response_time",
    "json_path": "litmus.assertions.json_path",
    "contains": "litmus.assertions.contains",
    "not_contains": "litmus.assertions.not_contains",
    "schema": "litmus.assertions.schema",
    "extract_match": "litmus.assertions.extract_match",
    "header": "litmus.assertions.header",
    "cookie": "litmus.assertions.cookie",
    "body": "litmus.assertions.body",
    "xpath": "litmus.assertions.xpath",
    "python": "litmus.assertions.python",
    "llm_rubric": "litmus.assertions.llm_rubric",
    "tone": "litmus.assertions.tone",
    "factual": "litmus.assertions.factual",
    "no_hallucination": "litmus.assertions.no_hallucination",
    "answers_question": "litmus.assertions.answers_question",
    "similar": "litmus.assertions.similar",
    "consistent_with_scenario_data": "litmus.assertions.consistent_with_scenario_data",
    "accurate_with_scenario_context": "litmus.assertions.accurate_with_scenario_context",
    "no_hallucination_vs_scenario": "litmus.assertions.no_hallucination_vs_scenario",
    "contextual_evaluation": "litmus.assertions.contextual_evaluation",
}


@cache
def module(type_name: str) -> ModuleType:
    return importlib.import_module(REGISTRY[type_name])


def spec(type_name: str) -> AssertionSpec:
    return module(type_name).SPEC


def all_specs() -> dict[str, AssertionSpec]:
    return {name: spec(name) for name in REGISTRY}
