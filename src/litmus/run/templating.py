"""Rendering `{{ name }}` templates at run time (syntax: `litmus.templating`).

A string that is exactly one template takes the value with its type (`"{{ scenario.data.order_id }}"`
gives the number 1042); templates inside a longer string are replaced by their text (strings as
they are, other values as JSON). Resolving `secrets.NAME` registers the value for redaction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from litmus.model import Scenario, Suite
from litmus.run.redact import Redactor
from litmus.templating import TEMPLATE, references, whole_template


class TemplateError(ValueError):
    """A template names something that does not exist (the message names it)."""


# Suite variables may themselves hold templates; this bounds a variable that refers to itself.
_MAX_DEPTH = 8


class Renderer:
    """Resolves the names one flow run can see: variables, env, secrets, scenario, run index."""

    def __init__(
        self,
        suite: Suite,
        *,
        scenario: Scenario | None,
        run_index: int,
        variables: Mapping[str, Any],
        environ: Mapping[str, str],
        redactor: Redactor,
    ) -> None:
        self.suite = suite
        self.scenario = scenario
        self.run_index = run_index
        # Extracted so far in this flow run; the caller keeps adding to it.
        self.variables = variables
        self.environ = environ
        self.redactor = redactor

    def seeing(self, variables: Mapping[str, Any]) -> Renderer:
        """This renderer with `variables` as the extracted variables (a step's own, for its assertions)."""
        return Renderer(self.suite, scenario=self.scenario, run_index=self.run_index, variables=variables,
                        environ=self.environ, redactor=self.redactor)

    def render(self, value: Any, _depth: int = 0) -> Any:
        """`value` with every template in its strings (and nested lists/mappings) resolved."""
        if isinstance(value, str):
            return self._render_text(value, _depth) if "{{" in value else value
        if isinstance(value, Mapping):
            # A key is text whatever its template gives (`{{ scenario.data.items }}` may be a list).
            return {_key(self.render(k, _depth)): self.render(v, _depth) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.render(v, _depth) for v in value]
        return value

    def _render_text(self, text: str, depth: int) -> Any:
        whole = whole_template(text)
        if whole is not None:
            return self.lookup(whole.name, depth)
        if not any(True for _ in references(text)):
            return text
        return TEMPLATE.sub(lambda m: _as_text(self.lookup(m.group(1).strip(), depth)), text)

    def lookup(self, name: str, depth: int = 0) -> Any:
        head, _, rest = name.partition(".")
        if head in ("env", "secrets") and rest:
            if rest not in self.environ:
                raise TemplateError(f"environment variable {rest} is not set (template '{{{{ {name} }}}}')")
            value = self.environ[rest]
            if head == "secrets":
                self.redactor.register(value)
            return value
        if head == "scenario" and rest:
            return self._scenario_value(name, rest)
        if head == "run" and rest == "index":
            return self.run_index
        if name in self.variables:
            return self.variables[name]
        if name in self.suite.variables:
            if depth >= _MAX_DEPTH:
                raise TemplateError(f"variable '{name}' refers to itself through templates")
            return self.render(self.suite.variables[name], depth + 1)
        raise TemplateError(f"unknown template name '{name}' (not a suite variable, nor extracted by an earlier step)")

    def _scenario_value(self, name: str, rest: str) -> Any:
        if self.scenario is None:
            raise TemplateError(f"'{{{{ {name} }}}}' needs a scenario, and this flow run has none")
        field, _, path = rest.partition(".")
        if field == "id" and not path:
            return self.scenario.id
        if field == "reference_response" and not path:
            if self.scenario.reference_response is None:
                raise TemplateError(f"scenario '{self.scenario.id}' has no reference_response")
            return self.scenario.reference_response
        if field != "data":
            raise TemplateError(f"unknown scenario field in '{name}' (id, data.<path>, reference_response)")
        value = self.scenario.data
        for key in path.split(".") if path else ():
            if isinstance(value, Mapping) and key in value:
                value = value[key]
            elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
                value = value[int(key)]
            else:
                raise TemplateError(f"scenario '{self.scenario.id}' data has no '{path}' ('{name}')")
        return value


def _key(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else _as_text(value)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
