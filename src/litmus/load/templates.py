"""Static checks of templates: everything knowable before a run is checked at load.

The syntax, filters and generators are `litmus.templating`'s; here are the rules of which names a
place in a suite may use. A bare name must be a suite variable or extracted by an earlier step of
the same flow (an assertion may also use its own step's extractions); `scenario.*` needs a suite
`context` (`scenario.data.<path>` must exist in every inline scenario's data; for a
`scenarios_file`, its first key must be a column or key of every row); `env.`/`secrets.` must be set
in the environment and `vars.` given with `--var`/`--vars-file` (errors for `litmus run`, warnings
for `litmus validate`), and be names the run's `Trust` lets them read (an error everywhere: the
action's credentials never resolve); `setup.NAME` must be extracted by the suite's setup. A name with
a `default(VALUE)` filter may be missing, but not refused. A string whose expansion is provably longer than
`MAX_RENDERED_CHARS` is an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from litmus.load.diagnostics import Collector
from litmus.load.source import Item
from litmus.templating import FILTERS, MAX_RENDERED_CHARS, Reference, references
from litmus.text import did_you_mean
from litmus.trust import Trust


@dataclass(frozen=True)
class FileScenarios:
    """What the load-time check needs of a `scenarios_file`, without keeping its rows."""

    display: str
    # Top-level keys of `data` present in every row.
    common_keys: frozenset[str]
    # The id of a row without reference_response, if any.
    missing_reference: str | None = None


@dataclass
class Scope:
    """What a template may refer to at one place in a suite."""

    variables: frozenset[str]
    environ: Mapping[str, str]
    strict_env: bool
    # (id, data, reference_response) of each inline scenario; None when the suite has no context.
    scenarios: list[tuple[str, Any, str | None]] | None
    extracted: set[str] = field(default_factory=set)
    # `--var` / `--vars-file` values (names are what the check needs; values give sizes).
    run_vars: Mapping[str, Any] = field(default_factory=dict)
    # Names the suite's setup extracts; None where `setup.*` cannot be used (no setup, or in it).
    setup: frozenset[str] | None = None
    scenario_file: FileScenarios | None = None
    # Lower bounds of each suite variable's rendered length (see `variable_sizes`).
    sizes: Mapping[str, int] = field(default_factory=dict)
    # Which names `env.`/`secrets.` may read in this run.
    trust: Trust = field(default_factory=Trust.local)

    def with_extracted(self, names: set[str]) -> Scope:
        return Scope(self.variables, self.environ, self.strict_env, self.scenarios, self.extracted | names,
                     self.run_vars, self.setup, self.scenario_file, self.sizes, self.trust)


def check_templates(item: Item, scope: Scope, collector: Collector) -> None:
    """Check every template in every string inside `item` (mappings and lists are walked)."""
    if isinstance(item.value, dict):
        for child in item.value.values():
            check_templates(child, scope, collector)
    elif isinstance(item.value, list):
        for child in item.value:
            check_templates(child, scope, collector)
    elif isinstance(item.value, str):
        text = item.value
        for ref in references(text):
            problem = _problem(ref, scope)
            if problem:
                severity, message = problem
                # Point at the template itself when it is written as is on the value's first line.
                collector.add(severity, collector.narrow(item.span, text[ref.start:ref.end]), message,
                              group=_variable(ref))
        size = min_text_size(text, scope)
        if size > MAX_RENDERED_CHARS:
            collector.error(item.span, f"this string expands to at least {size} characters, more than the "
                                       f"{MAX_RENDERED_CHARS} a rendered string may have")


def _variable(ref: Reference) -> tuple[str, str] | None:
    """The environment or run variable a reference reads (`env.X` and `secrets.X` read the same one): its
    problems are reported once, for all its uses."""
    if ref.namespace not in ("env", "secrets", "vars"):
        return None
    return ("vars" if ref.namespace == "vars" else "env", ref.name.split(".", 1)[1])


def _problem(ref: Reference, scope: Scope) -> tuple[str, str] | None:
    syntax = ref.problem()
    if syntax:
        return "error", syntax
    problem = _name_problem(ref.name, ref.namespace, scope)
    if problem and any(call.name == "default" for call in ref.filters) and not problem[1].startswith("!"):
        return None
    return (problem[0], problem[1].lstrip("!")) if problem else None


def _name_problem(name: str, namespace: str | None, scope: Scope) -> tuple[str, str] | None:
    """(severity, message) when `name` cannot be resolved here; a message starting with "!" is a
    mistake that no `default` excuses (a namespace used wrongly, rather than a name left unset)."""
    rest = name.split(".", 1)[1] if namespace else ""
    severity = "error" if scope.strict_env else "warning"
    if namespace in ("env", "secrets"):
        refused = scope.trust.refusal(rest)
        if refused:
            return "error", f"!'{{{{ {name} }}}}': {refused}"
        return None if rest in scope.environ else (severity, f"environment variable {rest} (for '{name}') is not set")
    if namespace == "vars":
        if rest in scope.run_vars:
            return None
        return severity, (f"run variable '{rest}' (for '{name}') is not given: pass --var {rest}=VALUE or "
                          f"--vars-file{did_you_mean(rest, sorted(scope.run_vars))}")
    if namespace == "setup":
        if scope.setup is None:
            return "error", f"!'{name}': only flows and teardown see setup values, and this suite has no setup here"
        if rest in scope.setup:
            return None
        return "error", (f"'{name}': the suite's setup extracts no '{rest}'"
                         f"{did_you_mean(rest, sorted(scope.setup))}")
    if namespace == "gen":
        return None  # which generators exist is part of the syntax check
    if namespace == "run":
        return None if rest == "index" else ("error", f"!unknown template name '{name}' (only run.index exists)")
    if namespace == "scenario":
        return _scenario_problem(name, rest, scope)
    if name in scope.variables or name in scope.extracted:
        return None
    if name in ("scenario", "run", "env", "secrets", "vars", "setup", "gen"):
        return "error", f"!'{name}' alone is not a value: use {name}.<name> (see the templating rules)"
    known = sorted(scope.variables | scope.extracted)
    return "error", (f"unknown template name '{name}': not a suite variable nor extracted by an earlier step"
                     f"{did_you_mean(name, known)}")


def _scenario_problem(name: str, rest: str, scope: Scope) -> tuple[str, str] | None:
    if scope.scenarios is None:
        return "error", f"!'{name}' needs scenarios, but the suite has no 'context'"
    if rest in ("id", "data"):
        return None
    if rest == "reference_response":
        missing = [sid for sid, _, reference in scope.scenarios if reference is None]
        if not missing and scope.scenario_file and scope.scenario_file.missing_reference:
            missing = [scope.scenario_file.missing_reference]
        return ("error", f"'{name}': scenario '{missing[0]}' has no reference_response") if missing else None
    if not rest.startswith("data."):
        return "error", (f"!unknown template name '{name}' "
                         "(use scenario.id, scenario.data.<path> or scenario.reference_response)")
    path = rest.split(".")[1:]
    for scenario_id, data, _ in scope.scenarios:
        if not _has_path(data, path):
            return "error", f"'{name}': scenario '{scenario_id}' has no data.{'.'.join(path)}"
    shape = scope.scenario_file
    if shape is not None and path[0] not in shape.common_keys:
        return "error", f"'{name}': not every row of {shape.display} has '{path[0]}'"
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


# -- provable expansion size -------------------------------------------------------------------


def min_text_size(text: str, scope: Scope) -> int:
    """A lower bound of `text`'s rendered length (0 for what is unknown before the run)."""
    size = len(text)
    for ref in references(text):
        size += _min_ref_size(ref, scope) - (ref.end - ref.start)
    return size


def _min_ref_size(ref: Reference, scope: Scope) -> int:
    rest = ref.name.split(".", 1)[1] if ref.namespace else ""
    if ref.namespace in ("env", "secrets"):
        size = len(scope.environ.get(rest, ""))
    elif ref.namespace == "vars":
        size = len(_as_text(scope.run_vars.get(rest, "")))
    elif ref.namespace is None and ref.name not in scope.extracted:
        size = scope.sizes.get(ref.name, 0)
    else:
        size = 0
    for call in ref.filters:
        spec = FILTERS.get(call.name)
        if spec is None or spec.grows is None:
            return 0
        size = spec.grows(size)
    return size


def variable_sizes(variables: Mapping[str, Any], scope: Scope) -> dict[str, int]:
    """Lower bounds of the rendered length of each suite variable (a reference back to a variable
    being sized counts 0: it may be shadowed by an extracted variable of the same name)."""
    sizes: dict[str, int] = {}
    visiting: set[str] = set()

    def size_of(name: str) -> int:
        if name in sizes:
            return sizes[name]
        if name in visiting:
            return 0
        visiting.add(name)
        sizes[name] = _value_size(variables[name], size_of, scope)
        visiting.discard(name)
        return sizes[name]

    for name in variables:
        size_of(name)
    return sizes


def _value_size(value: Any, size_of, scope: Scope) -> int:
    if isinstance(value, str):
        total = len(value)
        for ref in references(value):
            inner = 0
            if ref.namespace is None and ref.name in scope.variables and ref.name not in scope.extracted:
                inner = size_of(ref.name)
                for call in ref.filters:
                    spec = FILTERS.get(call.name)
                    inner = spec.grows(inner) if spec and spec.grows else 0
                    if not inner:
                        break
            total += inner - (ref.end - ref.start)
        return min(total, MAX_RENDERED_CHARS * 1024)  # bounded: the exact excess does not matter
    if isinstance(value, dict):
        return sum(_value_size(v, size_of, scope) + len(str(k)) for k, v in value.items())
    if isinstance(value, list):
        return sum(_value_size(v, size_of, scope) for v in value)
    return len(_as_text(value))


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

