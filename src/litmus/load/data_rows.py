"""Rows of a `context.scenarios_file`: CSV, JSONL, YAML or JSON, one scenario per row.

Each row has `id` (required, unique), optional `reference_response`, and every other column (or
key) goes under `scenario.data`. CSV values are strings; a CSV column whose header ends in `:json`
holds JSON (`items:json` gives `data.items`, parsed). CSV and JSONL files are read row by row, at
load (to check them) and again as the run plans its flow runs, so their rows are never all in
memory at once; YAML and JSON files are documents, read whole, and capped like every data file.
Every problem is a `RowError` naming the row's line and, where there is one, the column.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from litmus import files
from litmus.errors import Position
from litmus.files import MAX_FILE_BYTES
from litmus.load.diagnostics import Collector
from litmus.load.source import MAX_DEPTH, SourceError, parse_yaml
from litmus.model import Context, Scenario

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".yaml": "yaml", ".yml": "yaml", ".json": "json"}
# Streamed formats may be larger than a document, but not without end.
MAX_STREAMED_BYTES = 256 * 1024 * 1024
MAX_ROWS = 100_000


class RowError(ValueError):
    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Row:
    line: int
    id: str
    data: dict[str, Any]
    reference_response: str | None


def rows(path: Path, display: str) -> Iterator[Row]:
    """The rows of `path` (the real path the loader resolved) in order; raises RowError at the first
    bad one, FileRefused (`litmus.files`) when the file may not be read."""
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise RowError(1, 1, f"'{display}': unknown data format {path.suffix!r} (use .csv, .jsonl, .yaml or .json)")
    what = f"{kind} scenario files"
    if kind in ("csv", "jsonl"):
        records = _streamed_rows(files.open_file(path, MAX_STREAMED_BYTES, shown=display, what=what), kind)
    else:
        records = _document_rows(files.read_bytes(path, MAX_FILE_BYTES, shown=display, what=what), kind, display)
    count = 0
    for line, record in records:
        count += 1
        if count > MAX_ROWS:
            raise RowError(line, 1, f"more than {MAX_ROWS} rows")
        yield _row(line, record)


def _streamed_rows(handle: BinaryIO, kind: str) -> Iterator[tuple[int, dict[str, Any]]]:
    with handle:
        if kind == "csv":
            yield from _csv_rows(io.TextIOWrapper(handle, encoding="utf-8", newline=""))
        else:
            yield from _jsonl_rows(handle)


def _row(line: int, record: dict[str, Any]) -> Row:
    if "id" not in record:
        raise RowError(line, 1, "the row has no 'id'")
    scenario_id = record["id"]
    if isinstance(scenario_id, bool) or not isinstance(scenario_id, (str, int)) or str(scenario_id) == "":
        raise RowError(line, 1, f"'id' must be non-empty text, not {scenario_id!r}")
    reference = record.get("reference_response")
    if reference is not None and not isinstance(reference, str):
        raise RowError(line, 1, "'reference_response' must be text")
    data = {k: v for k, v in record.items() if k not in ("id", "reference_response")}
    return Row(line, str(scenario_id), data, reference)


def _csv_rows(text: TextIO) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.reader(text, strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise RowError(1, 1, "the file is empty: a CSV scenarios file starts with a header row") from None
    except csv.Error as exc:
        raise RowError(reader.line_num, 1, f"invalid CSV: {exc}") from None
    columns = _columns(header)
    start = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise RowError(start, 1, f"invalid CSV: {exc}") from None
        except UnicodeDecodeError:
            raise RowError(start, 1, "not UTF-8 text") from None
        line, start = start, reader.line_num + 1
        if not cells:
            continue  # a blank line
        if len(cells) != len(columns):
            raise RowError(line, min(len(cells), len(columns)) + 1,
                           f"the row has {len(cells)} cells; the header has {len(columns)} columns")
        record = {}
        for index, ((name, is_json), cell) in enumerate(zip(columns, cells, strict=True)):
            record[name] = _json_cell(cell, line, index + 1, header[index]) if is_json else cell
        yield line, record


def _columns(header: list[str]) -> list[tuple[str, bool]]:
    columns, seen = [], set()
    for index, raw in enumerate(header):
        is_json = raw.endswith(":json")
        name = raw.removesuffix(":json").strip()
        if not name:
            raise RowError(1, index + 1, f"column {index + 1} of the header has no name")
        if name in seen:
            raise RowError(1, index + 1, f"column '{name}' appears twice in the header")
        if is_json and name in ("id", "reference_response"):
            raise RowError(1, index + 1, f"'{name}' is text; only data columns take ':json'")
        seen.add(name)
        columns.append((name, is_json))
    if "id" not in seen:
        raise RowError(1, 1, "the header has no 'id' column (every scenario needs a unique id)")
    return columns


def _json_cell(cell: str, line: int, column: int, header: str) -> Any:
    try:
        value = json.loads(cell)
    except (ValueError, RecursionError) as exc:
        raise RowError(line, column, f"column {column} ('{header}') is not JSON: {exc}") from None
    _check_depth(value, line, column)
    return value


def _jsonl_rows(handle: BinaryIO) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, raw in enumerate(handle, start=1):
        if len(raw) > MAX_FILE_BYTES:
            raise RowError(line, 1, f"the line is longer than {MAX_FILE_BYTES // 1048576} MiB")
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise RowError(line, exc.colno, f"invalid JSON: {exc.msg}") from None
        except (UnicodeDecodeError, RecursionError):
            raise RowError(line, 1, "invalid JSON (not UTF-8, or nested too deeply)") from None
        if not isinstance(record, dict):
            raise RowError(line, 1, "each line must be a JSON object with 'id'")
        _check_depth(record, line, 1)
        yield line, record


def _document_rows(data: bytes, kind: str, display: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """YAML through the loader's safe parser (positions per row); JSON is YAML enough for it, but
    is parsed as JSON so that JSON's own rules hold, rows then numbered by their list index."""
    if kind == "json":
        try:
            document = json.loads(data)
        except json.JSONDecodeError as exc:
            raise RowError(exc.lineno, exc.colno, f"invalid JSON: {exc.msg}") from None
        except (UnicodeDecodeError, RecursionError):
            raise RowError(1, 1, "invalid JSON (not UTF-8, or nested too deeply)") from None
        _check_depth(document, 1, 1)
        if not isinstance(document, list):
            raise RowError(1, 1, "a JSON scenarios file is a list of objects, each with 'id'")
        for index, record in enumerate(document, start=1):
            if not isinstance(record, dict):
                raise RowError(1, 1, f"row {index} is not an object with 'id'")
            yield index, record
        return
    try:
        item = parse_yaml(data, display, Collector())
    except SourceError as exc:
        raise RowError(exc.span.pos.line, exc.span.pos.column, exc.message) from None
    if item is None or not isinstance(item.value, list):
        raise RowError(1, 1, "a YAML scenarios file is a list of mappings, each with 'id'")
    for entry in item.value:
        if not isinstance(entry.value, dict):
            raise RowError(entry.pos.line, entry.pos.column, "each row must be a mapping with 'id'")
        yield entry.pos.line, entry.plain()


def _check_depth(value: Any, line: int, column: int) -> None:
    if too_deep(value):
        raise RowError(line, column, f"the value nests deeper than {MAX_DEPTH} levels")


def too_deep(value: Any) -> bool:
    """Whether parsed JSON nests deeper than the loader allows YAML to (`MAX_DEPTH`)."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(current, dict):
            stack.extend((v, depth + 1) for v in current.values())
        elif isinstance(current, list):
            stack.extend((v, depth + 1) for v in current)
    return False


def scenarios(context: Context) -> Iterator[Scenario]:
    """The context's inline scenarios, then its file's rows as scenarios (read as they are needed)."""
    yield from context.scenarios
    if context.scenarios_file is None:
        return
    display = context.scenarios_file_display
    for row in rows(context.scenarios_file, display):
        yield Scenario(Position(display, row.line, 1), id=row.id, data=row.data,
                       reference_response=row.reference_response, data_file=display)
