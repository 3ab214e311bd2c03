"""Workflow commands: the `::name key=value,...::message` lines a GitHub runner reads from the log.

Escaping follows the actions toolkit (`command.ts`): `%`, CR and LF in the message; those plus `:`
and `,` in property values. Untrusted text (HTTP response bodies, API errors) is echoed only inside
`untrusted()`, which suspends command parsing with a random token, so a body can never issue a
command such as `::add-mask::` or `::error::` of its own.

Under GITHUB_ACTIONS=true every `litmus` command writes stdout and stderr through `CommandSafeStream`
(`command_safe_output()`): any line that would read as a command (`reads_as_command`) is printed that
way, so a suite, flow or step name cannot issue one either; only `WorkflowCommands` issues commands.
"""

from __future__ import annotations

import io
import re
import secrets
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO

# Property names in the order the toolkit writes them; all optional.
ANNOTATION_PROPERTIES = ("title", "file", "line", "endLine", "col", "endColumn")


# `::` after what the runner trims from a line: Unicode whitespace as .NET trims it (NBSP, U+2028 and the
# rest; `\s` is a superset) and the zero-width characters older runtimes trimmed too.
_COMMAND_START = re.compile(r"[\s\u200b-\u200d\u2060\ufeff]*::")


def reads_as_command(text: str) -> bool:
    """Whether a line of `text` reads as a workflow command, lines split as a runner splits them and as a
    log viewer may (at U+2028, U+2029, U+0085 and the other line breaks `str.splitlines` knows)."""
    return any(_COMMAND_START.match(line) for line in text.splitlines())


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
        stream = stream or sys.stdout
        # The one writer of commands: past the guard that keeps every other line from issuing one.
        self.stream = stream.unguarded if isinstance(stream, CommandSafeStream) else stream
        self._masked: set[str] = set()

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def log(self, text: str) -> None:
        """Plain log lines. Text that could read as a command (`reads_as_command`) is printed with
        command parsing suspended."""
        if reads_as_command(text):
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


class CommandSafeStream(io.TextIOBase):
    """A runner's log stream on which no line issues a workflow command: each complete line is written
    through `WorkflowCommands.log`. `WorkflowCommands` on this stream writes to `unguarded`."""

    def __init__(self, unguarded: TextIO) -> None:
        self.unguarded = unguarded
        self._log = WorkflowCommands(unguarded).log
        self._partial = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            self._log(line)
        return len(text)

    def flush(self) -> None:
        self.unguarded.flush()

    def finish(self) -> None:
        """The last line, when it had no newline: held until now, since its end could make it a command."""
        if self._partial:
            self._log(self._partial)
            self._partial = ""
        self.flush()


@contextmanager
def command_safe_output() -> Iterator[None]:
    """sys.stdout and sys.stderr through `CommandSafeStream` within the block."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = CommandSafeStream(sys.stdout), CommandSafeStream(sys.stderr)
    try:
        yield
    finally:
        guarded = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = saved
        for stream in guarded:
            if isinstance(stream, CommandSafeStream):
                stream.finish()
