"""Positioned diagnostics: the one error type the loader (and the CLI) report.

Every problem with user input ends up as a `Diagnostic` with a file, line and column, rendered
like a compiler's message. Several diagnostics of one file are collected and raised together as a
`ProbeError`, so users see all of a file's problems at once.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Literal

from litmus.text import MARK

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True, slots=True)  # slots: the loader keeps one per YAML value
class Position:
    """A place in a source file; line and column are 1-based, `path` is as the user gave it."""

    path: str
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    message: str
    position: Position
    # How many characters to underline at the position (0 = a single caret).
    length: int = 0
    # The source line, kept so the message can be rendered without rereading the file.
    source_line: str | None = None

    def render(self) -> str:
        head = f"{self.position}: {self.severity}: {self.message}"
        if self.source_line is None:
            return head
        number = str(self.position.line)
        gutter = " " * len(number)
        text, caret = _window(self.source_line.rstrip("\n"), self.position.column - 1)
        indent = "".join(c if c == "\t" else " " for c in text[:caret])
        marks = "^" * max(1, min(self.length, max(1, len(text) - caret)))
        return f"{head}\n {number} | {text}\n {gutter} | {indent}{marks}"

    def to_json(self) -> dict:
        data = asdict(self)
        data.pop("source_line")
        data.update(data.pop("position"))
        return data


# Source lines longer than this are shown as a window of this many characters around the column
# (a minified 10,000-character line would bury the message).
SOURCE_WINDOW = 100


def _window(text: str, offset: int) -> tuple[str, int]:
    """The part of `text` to show around character `offset`, and the offset's place in it."""
    if len(text) <= SOURCE_WINDOW:
        return text, offset
    start = max(0, min(offset - SOURCE_WINDOW // 3, len(text) - SOURCE_WINDOW))
    end = start + SOURCE_WINDOW
    before = MARK if start > 0 else ""
    after = MARK if end < len(text) else ""
    return before + text[start:end] + after, len(before) + offset - start


@dataclass
class ProbeError(Exception):
    """One or more diagnostics that make a probe file (or a run's input) unusable."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


def render_diagnostics(diagnostics: list[Diagnostic], fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps([d.to_json() for d in diagnostics], indent=2)
    return "\n".join(d.render() for d in diagnostics)
