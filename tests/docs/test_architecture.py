"""The package's shape: no cycle between subpackages, an import inside a function says why, and every
library imported is a declared dependency.

The graph counts every import of a litmus module, at module level, under TYPE_CHECKING and inside
functions alike: an import hidden in a function is still a dependency.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import files, packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "litmus"
# Declared dependencies that are never imported, and what uses them.
USED_WITHOUT_IMPORT = {"rfc3339-validator": "jsonschema's format checker, for `format: date-time`"}


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        yield path, ast.parse(path.read_text("utf-8"))


def _subpackage(path: Path) -> str | None:
    """`run` for src/litmus/run/flow.py; None for a top-level module (litmus/trust.py)."""
    parts = path.relative_to(SRC).parts
    return parts[0] if len(parts) > 1 else None


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("litmus."):
        return [node.module]
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.startswith("litmus.")]
    return []


def subpackage_graph() -> dict[str, set[str]]:
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    graph: dict[str, set[str]] = {name: set() for name in packages}
    for path, tree in _modules():
        source = _subpackage(path)
        if source is None:
            continue
        for node in ast.walk(tree):
            for module in _imported(node):
                target = module.split(".")[1]
                if target in packages and target != source:
                    graph[source].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_cycle_between_subpackages():
    graph = subpackage_graph()
    assert cycles(graph) == [], {name: sorted(targets) for name, targets in graph.items()}


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_import_inside_a_function_says_why_it_is_lazy():
    unexplained = []
    for path, tree in _modules():
        lines = path.read_text("utf-8").splitlines()
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    text = "\n".join(lines[node.lineno - 1:node.end_lineno])
                    if "# lazy: " not in text:
                        unexplained.append(f"{path.relative_to(SRC)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert sorted(set(unexplained)) == []


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_distributions() -> dict[str, set[str]]:
    """Each distribution a module under src/ imports (stdlib and litmus aside), with the files importing it."""
    module_owners = packages_distributions()
    found: dict[str, set[str]] = {}
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "litmus":
                    continue
                for distribution in _owners(name, module_owners.get(top, [f"<no installed distribution has {top}>"])):
                    found.setdefault(_normalized(distribution), set()).add(str(path.relative_to(SRC)))
    return found


def _owners(module: str, owners: list[str]) -> list[str]:
    """The distributions that hold `module`: of a namespace package's several owners (`google`: google-auth,
    google-genai...), those with its second-level package."""
    if len(owners) < 2 or "." not in module:
        return owners
    package = "/".join(module.split(".")[:2])  # google/auth
    held = [owner for owner in owners
            if any(str(file).startswith((f"{package}/", f"{package}.py")) for file in files(owner) or [])]
    return held or owners


def test_every_imported_library_is_declared_and_every_declared_one_is_used():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    # The runtime dependencies and the judge providers' extras (imported lazily, for their tier only).
    requirements = project["dependencies"] + [requirement for extra in ("bedrock", "vertex")
                                              for requirement in project["optional-dependencies"][extra]]
    declared = {_normalized(re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]) for requirement in requirements}
    imported = imported_distributions()
    assert {name: sorted(files) for name, files in imported.items() if name not in declared} == {}
    assert declared - set(imported) == set(USED_WITHOUT_IMPORT)


def test_rfc3339_validator_is_what_checks_date_time():
    from jsonschema import Draft202012Validator

    assert "date-time" in Draft202012Validator.FORMAT_CHECKER.checkers
