"""What an assertion type is: a spec the loader validates against, and an evaluator.

An assertion type is one module exposing `SPEC: AssertionSpec` and
`evaluate(assertion, ctx) -> AssertionOutcome`, plus one entry in `litmus.assertions.REGISTRY`; a judged
type that differs from the others only in data is one row of `litmus.assertions.judged`.
Modules keep heavy imports inside functions: the loader imports every spec at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from litmus.deadline import Deadline
from litmus.trust import Trust

if TYPE_CHECKING:
    from litmus.errors import Position
    from litmus.model import Assertion, Scenario, Suite
    from litmus.response import Response
    from litmus.results import AssertionOutcome
    from litmus.usage import Metered, Price

Family = Literal["deterministic", "qualitative", "scenario", "conversation"]

# How the loader checks a field's value:
#   string     a string (may hold {{ templates }})     number / integer / boolean
#   any        any YAML value (deep-compared)          list   a list of any values
#   regex      a string compiled with `re`             jsonpath  compiled with jsonpath-ng
#   json_schema  a mapping checked with jsonschema's check_schema
#   file       a path relative to the suite file that must exist inside the repository
#   status     an int 100-599, a list of them, or a class like "2xx"
#   variable   a template name (letters, digits, _ and .)
#   choice     one of `choices`
#   numeric    a number, or a string holding a template (rendered, then checked, at run time)
#   count      an integer >= 0, or a string holding a template
#   range      [low, high]: two numerics, low <= high
#   options    a list, or a string that is one template (giving a list at run time)
#   nonempty_options  as options, with at least one item
#   tolerance  a numeric (relative), or {abs: numeric} / {rel: numeric}
#   xpath      an XPath 1.0 expression compiled with lxml
#   function   `path/to/file.py:name`, the file relative to the suite file, defining `name`
#   mapping    a mapping of any values
#   calls      a list of expected tool calls, each {name, arguments (a mapping, may hold templates)}
#   tool_definitions  a JSON/YAML file of OpenAI tool definitions, relative to the suite file, inside the
#              repository: a list of {type: function, function: {name, parameters (a JSON Schema)}}
FieldKind = Literal[
    "string", "number", "integer", "boolean", "any", "list", "regex", "jsonpath",
    "json_schema", "file", "status", "variable", "choice", "numeric", "count", "range", "options",
    "nonempty_options", "tolerance", "xpath", "function", "mapping", "calls", "tool_definitions",
]



class BudgetExhausted(Exception):
    """The judge service (`EvalContext.judge`) would need a call past `max_calls`: raised by its calls
    (a verdict, a simulated user turn), here so the run can tell it apart without importing the judges."""


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
    # Each group: at most one of these fields may be given.
    at_most_one_of: tuple[tuple[str, ...], ...] = ()
    # Each group: at least one of these fields must be given.
    at_least_one_of: tuple[tuple[str, ...], ...] = ()

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
    # The flow run's repetition index (`run.index`), for `python` assertions' context.
    run_index: int = 0
    # When the step's evaluation must end (its timeout, counted from the response): bounds regex searches
    # and `python` assertions. None: unbounded.
    deadline: Deadline | None = None
    # The run's trust decision: an untrusted run does not execute the PR's python checks.
    trust: Trust = field(default_factory=Trust.local)
    # The run's process for `python` checks (litmus.assertions.python_worker), started on first use.
    python_worker: Any = None
    # Each of the step's assertions' finding id (`litmus.identity`) by its position: what a human decision
    # names (`litmus.decisions`).
    finding_ids: Mapping[Position, str] = field(default_factory=dict)
    # The request as sent (a `requests.PreparedRequest`: method, url, headers, body); None where no request was
    # sent (transcript assertions).
    request: Any = None
    # Warnings an evaluator records on the step (`StepResult.warnings`): what is worth a look but decides nothing
    # (a request that does not conform to its OpenAPI operation).
    warnings: list[str] = field(default_factory=list)
    # The tokens the response reported, priced, or why it reported none (`tokens` and `cost` checks).
    metered: Metered | None = None
    # litmus.yaml's `pricing:`, for saying why a step's usage has no price.
    pricing: Mapping[str, Price] = field(default_factory=dict)

    def finding_id(self, assertion: Assertion) -> str | None:
        return self.finding_ids.get(assertion.pos)


Evaluator = Callable[["Assertion", EvalContext], "AssertionOutcome"]
