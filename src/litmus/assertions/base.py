"""What an assertion type is: a spec the loader validates against, and an evaluator.

An assertion type is one module exposing `SPEC: AssertionSpec` and
`evaluate(assertion, ctx) -> AssertionOutcome`, plus one entry in `litmus.assertions.REGISTRY`.
Modules keep heavy imports inside functions: the loader imports every spec at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from litmus.model import Assertion, Scenario, Suite
    from litmus.results import AssertionOutcome
    from litmus.run.response import Response

Family = Literal["deterministic", "qualitative", "scenario"]

# How the loader checks a field's value:
#   string     a string (may hold {{ templates }})     number / integer / boolean
#   any        any YAML value (deep-compared)          list   a list of any values
#   regex      a string compiled with `re`             jsonpath  compiled with jsonpath-ng
#   json_schema  a mapping checked with jsonschema's check_schema
#   file       a path relative to the suite file that must exist inside the repository
#   status     an int 100-599, a list of them, or a class like "2xx"
#   variable   a template name (letters, digits, _ and .)
#   choice     one of `choices`
FieldKind = Literal[
    "string", "number", "integer", "boolean", "any", "list", "regex", "jsonpath",
    "json_schema", "file", "status", "variable", "choice",
]


@dataclass(frozen=True)
class FieldSpec:
    kind: FieldKind
    doc: str
    required: bool = False
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    # Text rendered with {{ templates }} before evaluation.
    templated: bool = False


@dataclass(frozen=True)
class AssertionSpec:
    type: str
    family: Family
    doc: str
    fields: dict[str, FieldSpec] = field(default_factory=dict)
    # Each group: exactly one of these fields must be given.
    exactly_one_of: tuple[tuple[str, ...], ...] = ()

    @property
    def llm_based(self) -> bool:
        return self.family != "deterministic"


@dataclass
class EvalContext:
    """Everything an evaluator may look at for one assertion of one step attempt."""

    response: Response
    suite: Suite
    # Variables extracted so far in this flow run, this step's extractions included.
    variables: Mapping[str, Any]
    scenario: Scenario | None
    # Renders {{ templates }} in an assertion's text fields (secrets stay registered for redaction).
    render: Callable[[Any], Any]
    # Replaces every registered secret value by `***`: applied to anything leaving the run
    # (results, prompts sent to a judge, cassettes, terminal).
    redact: Callable[[str], str] = str
    # The judge service for LLM-based types (`litmus.judges`); None when no judge is configured.
    judge: Any = None


Evaluator = Callable[["Assertion", EvalContext], "AssertionOutcome"]
