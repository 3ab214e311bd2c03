"""Static checks of `{{ name }}` references: everything knowable before a run is checked at load.

The rules follow what the runner (`litmus.run.templating`) resolves. A bare name must be a suite
variable or extracted by an earlier step of the same flow (an assertion may also use its own
step's extractions); `scenario.*` needs a suite `context` (`scenario.data.<path>` must exist in
every scenario's data, `scenario.reference_response` in every scenario); `env.`/`secrets.` must be
set in the environment (an error for `litmus run`, a warning for `litmus validate`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from litmus.load.diagnostics import Collector, did_you_mean
from litmus.load.source import Item
from litmus.templating import references


@dataclass
class Scope:
    """What a template may refer to at one place in a suite."""

    variables: frozenset[str]
    environ: Mapping[str, str]
    strict_env: bool
    # (id, data, reference_response) of each scenario; None when the suite has no context.
    scenarios: list[tuple[str, Any, str | None]] | None
    extracted: set[str] = field(default_factory=set)

    def with_extracted(self, names: set[str]) -> Scope:
        return Scope(self.variables, self.environ, self.strict_env, self.scenarios, self.extracted | names)


def check_templates(item: Item, scope: Scope, collector: Collector) -> None:
    """Check every template in every string inside `item` (mappings and lists are walked)."""
    if isinstance(item.value, dict):
        for child in item.value.values():
            check_templates(child, scope, collector)
    elif isinstance(item.value, list):
        for child in item.value:
            check_templates(child, scope, collector)
    elif isinstance(item.value, str):
        for ref in references(item.value):
            problem = _problem(ref.name, ref.valid, ref.namespace, scope)
            if problem:
                severity, message = problem
                # Point at the template itself when it is written as is on the value's first line.
                needle = item.value[ref.start:ref.end]
                collector.add(severity, collector.narrow(item.span, needle), message)


def _problem(name: str, valid: bool, namespace: str | None, scope: Scope) -> tuple[str, str] | None:
    if not valid:
        return "error", f"'{{{{ {name} }}}}' is not a valid template name (letters, digits, _ and dots)"
    rest = name.split(".", 1)[1] if namespace else ""
    if namespace in ("env", "secrets"):
        if rest in scope.environ:
            return None
        severity = "error" if scope.strict_env else "warning"
        return severity, f"environment variable {rest} (for '{name}') is not set"
    if namespace == "run":
        return None if rest == "index" else ("error", f"unknown template name '{name}' (only run.index exists)")
    if namespace == "scenario":
        return _scenario_problem(name, rest, scope)
    if name in scope.variables or name in scope.extracted:
        return None
    if name in ("scenario", "run", "env", "secrets"):
        return "error", f"'{name}' alone is not a value: use {name}.<name> (see the templating rules)"
    known = sorted(scope.variables | scope.extracted)
    return "error", (f"unknown template name '{name}': not a suite variable nor extracted by an earlier step"
                     f"{did_you_mean(name, known)}")


def _scenario_problem(name: str, rest: str, scope: Scope) -> tuple[str, str] | None:
    if scope.scenarios is None:
        return "error", f"'{name}' needs scenarios, but the suite has no 'context'"
    if rest in ("id", "data"):
        return None
    if rest == "reference_response":
        missing = [sid for sid, _, reference in scope.scenarios if reference is None]
        return ("error", f"'{name}': scenario '{missing[0]}' has no reference_response") if missing else None
    if not rest.startswith("data."):
        return "error", (f"unknown template name '{name}' "
                         "(use scenario.id, scenario.data.<path> or scenario.reference_response)")
    path = rest.split(".")[1:]
    for scenario_id, data, _ in scope.scenarios:
        if not _has_path(data, path):
            return "error", f"'{name}': scenario '{scenario_id}' has no data.{'.'.join(path)}"
    return None


def _has_path(data: Any, path: list[str]) -> bool:
    for part in path:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return False
    return True
