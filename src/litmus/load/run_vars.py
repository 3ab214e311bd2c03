"""Values given from outside the suites: `--var NAME=VALUE`, `--vars-file FILE`, the action's `vars:`
input (one `NAME=VALUE` a line), and `--base-url [SUITE=]URL`.

Later values win: the files in the order given, then each `--var`. A `--var` value is text; a
vars file (YAML or JSON, a mapping) keeps its values' types.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from litmus import files
from litmus.errors import Diagnostic, Position, ProbeError
from litmus.load.diagnostics import Collector, Span
from litmus.load.source import SourceError, read_yaml

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def assignment(text: str) -> tuple[str, str]:
    """`NAME=VALUE` as (name, value); ValueError saying why it is not one."""
    name, equals, value = text.partition("=")
    name = name.strip()
    if not equals:
        raise ValueError(f"{text!r} is not NAME=VALUE")
    if not NAME.fullmatch(name):
        raise ValueError(f"variable name {name!r} must be letters, digits and _ (not starting with a digit)")
    return name, value


def assignment_lines(text: str) -> list[tuple[str, str]]:
    """The action's multi-line input: one NAME=VALUE a line; blank lines and `#` comments ignored."""
    lines = (line.strip() for line in text.splitlines())
    return [assignment(line) for line in lines if line and not line.startswith("#")]


def read_vars_file(path: str) -> dict[str, Any]:
    """A YAML or JSON mapping of variable names to values; ProbeError with positions otherwise."""
    collector = Collector()
    start = Span(Position(path, 1, 1))
    try:
        item = read_yaml(files.resolve_named(Path(path), shown=path), path, collector)
    except files.FileRefused as exc:
        raise ProbeError([Diagnostic("error", str(exc), start.pos)]) from None
    except SourceError as exc:
        raise ProbeError([Diagnostic("error", exc.message, exc.span.pos)]) from None
    if item is None or not isinstance(item.value, dict):
        collector.error(item.span if item else start, "a vars file is a mapping of variable names to values")
    else:
        for key, key_item in item.keys.items():
            if not NAME.fullmatch(key):
                collector.error(key_item.span, f"variable name '{key}' must be letters, digits and _")
    if collector.errors:
        raise ProbeError(collector.errors)
    return item.plain()


def run_vars(files: Iterable[str], assignments: Iterable[str]) -> dict[str, Any]:
    """The run variables: every vars file in order, then every NAME=VALUE (later ones win)."""
    values: dict[str, Any] = {}
    for path in files:
        values.update(read_vars_file(path))
    values.update(assignment(text) for text in assignments)
    return values


def base_url_override(text: str) -> tuple[str | None, str]:
    """`--base-url` as (suite name or None for every suite, URL): `URL` or `SUITE=URL`.

    A value starting with a scheme is a URL whatever it holds (`https://x/?a=b` has an `=`).
    """
    if _SCHEME.match(text):
        return None, text
    suite, equals, url = text.partition("=")
    if not equals or not _SCHEME.match(url) or not suite.strip():
        raise ValueError(f"{text!r} is neither an absolute URL nor SUITE=URL")
    return suite.strip(), url
