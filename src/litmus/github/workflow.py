"""Workflow commands: the `::name key=value,...::message` lines a GitHub runner reads from the log.

Escaping follows the actions toolkit (`command.ts`): `%`, CR and LF in the message; those plus `:`
and `,` in property values. Untrusted text (HTTP response bodies, API errors) is echoed only inside
`untrusted()`, which suspends command parsing with a random token, so a body can never issue a
command such as `::add-mask::` or `::error::` of its own.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO

# Property names in the order the toolkit writes them; all optional.
ANNOTATION_PROPERTIES = ("title", "file", "line", "endLine", "col", "endColumn")


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command_line(name: str, message: str = "", properties: dict[str, object] | None = None) -> str:
    props = ",".join(
        f"{key}={escape_property(str(value))}" for key, value in (properties or {}).items() if value not in (None, "")
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


class WorkflowCommands:
    """Writes workflow commands and plain log lines to one stream (stdout on a runner)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self._masked: set[str] = set()

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def log(self, text: str) -> None:
        """Plain log lines. Text that could read as a command (the runner trims leading spaces before
        looking for '::') is printed with command parsing suspended."""
        if any(line.lstrip().startswith("::") for line in text.splitlines()):
            self.echo_untrusted(text)
            return
        for line in text.splitlines() or [""]:
            self._write(line)

    def mask(self, values: Iterable[str | None]) -> None:
        """Register secrets: the runner prints `***` for them from now on.

        A multi-line value is masked line by line too, since the runner matches log lines one at a time.
        Each value is registered once per step, however often it is passed.
        """
        for value in values:
            if not value:
                continue
            for part in [value, *value.splitlines()]:
                part = part.strip()
                if part and part not in self._masked:
                    self._masked.add(part)
                    self._write(command_line("add-mask", part))

    def annotate(
        self, level: str, message: str, *, file: str | None = None, line: int | None = None,
        col: int | None = None, title: str | None = None,
    ) -> None:
        """`level` is error, warning or notice; `file` is repository-relative."""
        properties = {"title": title, "file": file, "line": line, "col": col}
        self._write(command_line(level, message, properties))

    def error(self, message: str, **where) -> None:
        self.annotate("error", message, **where)

    def warning(self, message: str, **where) -> None:
        self.annotate("warning", message, **where)

    def notice(self, message: str, **where) -> None:
        self.annotate("notice", message, **where)

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        self._write(command_line("group", title))
        try:
            yield
        finally:
            self._write("::endgroup::")

    @contextmanager
    def untrusted(self) -> Iterator[None]:
        """Within this block nothing printed is parsed as a command (`::stop-commands::<token>`)."""
        token = secrets.token_hex(16)
        self._write(f"::stop-commands::{token}")
        try:
            yield
        finally:
            self._write(f"::{token}::")

    def echo_untrusted(self, text: str) -> None:
        with self.untrusted():
            for line in text.splitlines():
                self._write(line)
