"""Collecting positioned diagnostics while loading: every problem of every file, not only the first."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from litmus.errors import Diagnostic, Position, Severity


@dataclass(frozen=True, slots=True)
class Span:
    """Where something is in a source file: its start and how many characters to underline."""

    pos: Position
    length: int = 0


class Collector:
    """Gathers diagnostics for all files of a load; knows each file's lines to show the source."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        # Each file's text, split into lines the first time a diagnostic shows one (a 1 MB suite is
        # 3.4 MB as a list of lines, and most loads show none).
        self._texts: dict[str, str] = {}
        self._lines: dict[str, list[str]] = {}
        self._seen: set[tuple[Severity, Position, str]] = set()
        # Per group (one unset variable): the index of its one diagnostic, its message and where it is used.
        self._groups: dict[object, tuple[int, str, list[Position]]] = {}

    def add_source(self, path: str, text: str) -> None:
        self._texts[path] = text
        self._lines.pop(path, None)

    def _lines_of(self, path: str) -> list[str] | None:
        lines = self._lines.get(path)
        if lines is None and path in self._texts:
            lines = self._lines[path] = self._texts[path].splitlines()
        return lines

    def narrow(self, span: Span, needle: str) -> Span:
        """The span of `needle` where it appears on the span's line at or after its start, else `span`."""
        lines = self._lines_of(span.pos.path)
        if not lines or not 0 < span.pos.line <= len(lines):
            return span
        column = lines[span.pos.line - 1].find(needle, span.pos.column - 1)
        if column < 0:
            return span
        return Span(Position(span.pos.path, span.pos.line, column + 1), len(needle))

    def error(self, span: Span, message: str) -> None:
        self.add("error", span, message)

    def warning(self, span: Span, message: str) -> None:
        self.add("warning", span, message)

    def add(self, severity: Severity, span: Span, message: str, group: object = None) -> None:
        """Record a problem. Problems of one `group` (the uses of one unset variable) are one diagnostic, at
        the first use, saying how many uses there are: three variables unset are three messages, not nine."""
        # The same request template can be checked once per step it is merged into (defaults):
        # report each problem once.
        key = (severity, span.pos, message)
        if key in self._seen:
            return
        self._seen.add(key)
        if group is not None and group in self._groups:
            index, first_message, uses = self._groups[group]
            if span.pos not in uses:
                uses.append(span.pos)
                first = uses[0]
                self.diagnostics[index] = dataclasses.replace(
                    self.diagnostics[index],
                    message=f"{first_message} ({len(uses)} uses; the first at {first.path}:{first.line})")
            return
        if group is not None:
            self._groups[group] = (len(self.diagnostics), message, [span.pos])
        lines = self._lines_of(span.pos.path)
        line = lines[span.pos.line - 1] if lines and 0 < span.pos.line <= len(lines) else None
        self.diagnostics.append(Diagnostic(severity, message, span.pos, span.length, line))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def count_errors(self) -> int:
        return len(self.errors)
