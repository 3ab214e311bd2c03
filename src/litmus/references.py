"""Accepted references: the replies of a run written as its scenarios' new reference answers.

    plan = plan_reference_updates(result, suites, root)   # pure: reads files, writes none
    plan.refusals or apply_edits(plan.edits, root)         # all or nothing
    patch(plan.edits)                                      # the same change as a unified diff

A scenario's reply is the text its `accurate_with_scenario_context` assertion judged (results.json keeps
it whole, `AssertionOutcome.reply`). It becomes the scenario's reference:

- an inline scenario with `reference_response_file`: that file is rewritten;
- an inline scenario with `reference_response` (or none yet): the reply goes to a new file under
  `probes/references/<suite>/<scenario>.txt` (names derived from the suite name and scenario id, never
  a path from results.json), and the scenario's `reference_response:` becomes `reference_response_file:`
  (or that line is added after its `id`);
- a row of a CSV or JSONL `scenarios_file`: that row's `reference_response` cell or key is set, every
  other row left byte for byte (a YAML or JSON scenarios file is refused, naming the file and row).

Refused, naming them: a reply cut at the body cap, a reply redaction masked, runs of one scenario whose
replies differ, an empty reply, a scenario no run judged. One refusal and nothing is written.

The suite is edited in its text, at the marks of the YAML parser the loader reads it with, so the diff
is exactly the reference lines. A round-trip library (ruamel.yaml) was tried and rejected: dumping even an
unchanged suite re-spaces `key:   value`, drops an unused `&anchor` and re-indents sequences that do not
follow one global indent, so it cannot promise that diff. Each edited suite is parsed again and its data
compared with the intended change: an edit that would mean anything else (an anchor others alias, a
merged `<<` reference) is refused.
"""

from __future__ import annotations

import copy
import csv
import difflib
import hashlib
import io
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from litmus import files
from litmus.files import MAX_FILE_BYTES
from litmus.load import data_rows
from litmus.load.data_rows import FORMATS, MAX_STREAMED_BYTES, RowError
from litmus.load.diagnostics import Collector
from litmus.load.source import SourceError, parse_yaml
from litmus.model import Context, Scenario, Suite
from litmus.results import AssertionOutcome, FlowRunResult, RunResult, run_label, runs_per_flow, write_bytes_atomic

ASSERTION_TYPE = "accurate_with_scenario_context"
# Where new reference files go, under the repository root.
REFERENCES_DIR = Path("probes", "references")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NAME_LIMIT = 60


@dataclass(frozen=True)
class FileEdit:
    """One file's change: its real path, its repository-relative name, its bytes before (None: created) and after."""

    path: Path
    display: str
    old: bytes | None
    new: bytes


@dataclass(frozen=True)
class Refusal:
    """Why one scenario's reply is not accepted; `where` is file:line[:column] of what to look at."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


@dataclass
class ReferencePlan:
    edits: list[FileEdit] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    # (suite, scenario, where its reference now lives), for what the command says it did.
    accepted: list[tuple[str, str, str]] = field(default_factory=list)
    # (suite, scenario) whose reply already is their reference.
    unchanged: list[tuple[str, str]] = field(default_factory=list)


class ApplyError(Exception):
    """The edits could not be written; none of them is left written."""


# ---- the plan


def plan_reference_updates(result: RunResult, suites: Sequence[Suite], root: Path,
                           suite_names: Iterable[str] = ()) -> ReferencePlan:
    """The edits that make each judged scenario's reply its reference (all suites, or those named), and the
    refusals; with any refusal there are no edits. Reads the probe files, writes nothing."""
    plan = ReferencePlan()
    if result.run.interrupted:
        plan.refusals.append(Refusal("", "the run was interrupted: its replies are incomplete; run it again"))
        return plan
    root = Path(root)
    wanted = set(suite_names)
    loaded = {suite.name: suite for suite in suites}
    writer = _Writer(root)
    for (suite_name, scenario_id), judged in _judged_replies(result, wanted).items():
        suite = loaded.get(suite_name)
        label = f"suite '{suite_name}', scenario '{scenario_id}'"
        if suite is None:
            plan.refusals.append(Refusal("", f"{label}: no loaded probe file has this suite"))
            continue
        reply = _one_reply(suite, label, judged, plan.refusals)
        if reply is None:
            continue
        writer.accept(suite, scenario_id, reply, plan)
    writer.finish(plan)
    if plan.refusals:
        plan.edits, plan.accepted = [], []
    return plan


def _judged_replies(result: RunResult, wanted: set[str]) -> dict[tuple[str, str], list[tuple[str, AssertionOutcome]]]:
    """(suite, scenario) -> [(which run, outcome)] of every accurate_with_scenario_context outcome, in order."""
    found: dict[tuple[str, str], list[tuple[str, AssertionOutcome]]] = {}
    for suite in result.suites:
        if wanted and suite.name not in wanted:
            continue
        runs = runs_per_flow(suite)
        for flow_run in suite.flow_runs:
            if flow_run.scenario is None:
                continue
            for step in flow_run.steps:
                for outcome in step.assertions:
                    if outcome.type == ASSERTION_TYPE:
                        found.setdefault((suite.name, flow_run.scenario), []).append(
                            (_run_name(flow_run, runs, step.name), outcome))
    return found


def _run_name(flow_run: FlowRunResult, runs, step: str) -> str:
    count = runs[flow_run.flow, flow_run.scenario]
    which = f" {run_label(flow_run.run_index, count)}" if count > 1 else ""
    return f"flow '{flow_run.flow}'{which}, step '{step}'"


def _one_reply(suite: Suite, label: str, judged: list[tuple[str, AssertionOutcome]],
               refusals: list[Refusal]) -> str | None:
    """The one reply every run of the scenario judged, or None with the refusals said."""
    problems = []
    by_text: dict[str, list[str]] = {}
    for run, outcome in judged:
        where = f"{suite.file}:{outcome.line}:{outcome.column}"
        reply = outcome.reply
        if reply is None:
            problems.append(Refusal(where, f"{label}: {run}: no reply was recorded "
                                           f"({outcome.status}: {outcome.reason})"))
        elif reply.truncated:
            problems.append(Refusal(where, f"{label}: {run}: the reply was cut at the body cap (--max-body-bytes): "
                                           "it is not the whole reply"))
        elif reply.masked:
            problems.append(Refusal(where, f"{label}: {run}: redaction masked part of the reply (a secret's value "
                                           "is in it): it is not the reply as sent"))
        elif not reply.text.strip():
            problems.append(Refusal(where, f"{label}: {run}: the reply is empty: nothing can be judged against "
                                           "an empty reference"))
        else:
            by_text.setdefault(reply.text, []).append(run)
    if len(by_text) > 1:
        groups = "; ".join(f"reply {number} from {', '.join(runs)}" for number, runs in enumerate(by_text.values(), 1))
        first = judged[0][1]
        problems.append(Refusal(f"{suite.file}:{first.line}:{first.column}",
                                f"{label}: the runs disagree, {len(by_text)} different replies ({groups}): "
                                "a reference must be the one reply every run gives"))
    refusals.extend(problems)
    return None if problems else next(iter(by_text))


# ---- where each reply goes


class _Writer:
    """Collects the accepted replies by the file each one changes, then builds one edit per file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # suite real path -> (suite, [(scenario, its new reference_response_file as written in the suite)])
        self.suite_edits: dict[Path, tuple[Suite, list[tuple[Scenario, str]]]] = {}
        # reference file real path -> (display, new bytes, who, new file?)
        self.reference_files: dict[Path, tuple[str, bytes, str, bool]] = {}
        # scenarios file real path -> (suite, display, {scenario id: reply})
        self.row_edits: dict[Path, tuple[Suite, str, dict[str, str]]] = {}
        # scenarios file real path -> {scenario id: (its reference, its line)}, as the loader reads the rows
        self.rows: dict[Path, dict[str, tuple[str | None, int]]] = {}
        self.inline_by_suite: dict[str, dict[str, Scenario]] = {}

    def accept(self, suite: Suite, scenario_id: str, reply: str, plan: ReferencePlan) -> None:
        label = f"suite '{suite.name}', scenario '{scenario_id}'"
        context = suite.context
        inline = self.inline_scenarios(suite).get(scenario_id)
        if inline is not None:
            self.inline(suite, inline, reply, label, plan)
        elif context is not None and context.scenarios_file is not None:
            try:
                row = self.rows_of(context).get(scenario_id)
            except (RowError, files.FileRefused) as exc:
                where = f"{context.scenarios_file_display}:{getattr(exc, 'line', 1)}"
                plan.refusals.append(Refusal(where, f"{label}: {exc}"))
                return
            if row is None:
                plan.refusals.append(Refusal(str(suite.pos), f"{label}: the suite has no such scenario any more"))
            elif reply == row[0]:
                plan.unchanged.append((suite.name, scenario_id))
            else:
                _, _, rows = self.row_edits.setdefault(context.scenarios_file,
                                                       (suite, context.scenarios_file_display, {}))
                rows[scenario_id] = reply
                plan.accepted.append((suite.name, scenario_id, context.scenarios_file_display))
        else:
            plan.refusals.append(Refusal(str(suite.pos), f"{label}: the suite has no such scenario any more"))

    def inline(self, suite: Suite, scenario: Scenario, reply: str, label: str, plan: ReferencePlan) -> None:
        if reply == scenario.reference_response:
            plan.unchanged.append((suite.name, scenario.id))
            return
        base = suite.abs_path.parent
        if scenario.reference_response_file is not None:
            path, written, new = base / scenario.reference_response_file, None, False
        else:
            path = self.new_file(suite.name, scenario.id)
            written, new = Path(os.path.relpath(path, base)).as_posix(), True
        display = _display(path, self.root)
        try:
            real = files.writable(path, self.root, shown=display, new=new)
        except files.FileRefused as exc:
            plan.refusals.append(Refusal(str(scenario.pos), f"{label}: {exc}"))
            return
        data = reply.encode("utf-8") + b"\n"  # the loader takes a file's final newline as the file's
        if real in self.reference_files and self.reference_files[real][1] != data:
            other = self.reference_files[real][2]
            plan.refusals.append(Refusal(str(scenario.pos), f"{label}: shares '{display}' with {other}, whose "
                                                            "reply differs"))
            return
        self.reference_files[real] = (display, data, label, new)
        if written is not None:
            self.suite_edits.setdefault(suite.abs_path, (suite, []))[1].append((scenario, written))
        plan.accepted.append((suite.name, scenario.id, display))

    def inline_scenarios(self, suite: Suite) -> dict[str, Scenario]:
        if suite.name not in self.inline_by_suite:
            scenarios = suite.context.scenarios if suite.context else ()
            self.inline_by_suite[suite.name] = {scenario.id: scenario for scenario in scenarios}
        return self.inline_by_suite[suite.name]

    def new_file(self, suite: str, scenario: str) -> Path:
        """probes/references/<suite>/<scenario>.txt, names made safe (`_slug`); when that file exists or another
        scenario takes it, the same with a hash of both names (the chosen name is then kept in the suite)."""
        folder = self.root / REFERENCES_DIR / (_slug(suite) or _digest(suite))
        slug = _slug(scenario) or "scenario"
        for name in (slug, f"{slug}-{_digest(suite + chr(0) + scenario)}"):
            path = folder / f"{name}.txt"
            if os.path.islink(path) or (not os.path.lexists(path)
                                        and Path(os.path.realpath(path)) not in self.reference_files):
                return path  # a link planted there is not avoided but refused, by `files.writable`
        return path  # taken: `files.writable` refuses it, naming it

    def rows_of(self, context: Context) -> dict[str, tuple[str | None, int]]:
        """The file rows' references and lines, read once per file by the loader's reader (RowError,
        FileRefused)."""
        if context.scenarios_file not in self.rows:
            self.rows[context.scenarios_file] = {
                row.id: (row.reference_response, row.line)
                for row in data_rows.rows(context.scenarios_file, context.scenarios_file_display)}
        return self.rows[context.scenarios_file]

    def finish(self, plan: ReferencePlan) -> None:
        for real, (display, data, label, new) in self.reference_files.items():
            old = None if new else self.read(real, display, MAX_FILE_BYTES, label, plan)
            if new or (old is not None and old != data):
                plan.edits.append(FileEdit(real, display, old, data))
        for path, (suite, edits) in self.suite_edits.items():
            self.suite_file(path, suite, edits, plan)
        for path, (suite, display, rows) in self.row_edits.items():
            self.rows_file(path, suite, display, rows, plan)

    def read(self, path: Path, display: str, cap: int, label: str, plan: ReferencePlan) -> bytes | None:
        try:
            files.writable(path, self.root, shown=display, new=False)
            return files.read_bytes(path, cap, shown=display)
        except files.FileRefused as exc:
            plan.refusals.append(Refusal(display, f"{label}: {exc}"))
            return None

    def suite_file(self, path: Path, suite: Suite, edits: list[tuple[Scenario, str]], plan: ReferencePlan) -> None:
        old = self.read(path, suite.file, MAX_FILE_BYTES, f"suite '{suite.name}'", plan)
        if old is None:
            return
        text = old.decode("utf-8")
        try:
            new = edit_suite_text(text, suite.file, edits)
        except SuiteEditRefused as exc:
            plan.refusals.extend(exc.refusals)
            return
        plan.edits.append(FileEdit(path, suite.file, old, new.encode("utf-8")))

    def rows_file(self, path: Path, suite: Suite, display: str, rows: dict[str, str], plan: ReferencePlan) -> None:
        kind = FORMATS.get(path.suffix.lower())
        if kind not in ("csv", "jsonl"):
            lines = self.rows[path]
            plan.refusals.extend(Refusal(f"{display}:{lines[scenario_id][1]}", (
                f"suite '{suite.name}', scenario '{scenario_id}': references are written into CSV and JSONL scenario "
                f"files only: set this row's reference_response in '{display}' by hand")) for scenario_id in rows)
            return
        old = self.read(path, display, MAX_STREAMED_BYTES, f"suite '{suite.name}'", plan)
        if old is None:
            return
        edit = _csv_edit if kind == "csv" else _jsonl_edit
        try:
            new, found, refusals = edit(old, display, suite.name, rows)
        except (ValueError, csv.Error, StopIteration):
            found, refusals = set(), [Refusal(display, f"suite '{suite.name}': '{display}' changed since it was "
                                                       "loaded and cannot be read any more")]
        refusals += [Refusal(display, f"suite '{suite.name}', scenario '{scenario_id}': its row is not in "
                                      f"'{display}' any more") for scenario_id in rows if scenario_id not in found]
        plan.refusals.extend(refusals)
        if not refusals:
            plan.edits.append(FileEdit(path, display, old, new))


def _slug(name: str) -> str:
    """A suite name or scenario id as one safe path component: lower case, each run of anything but a-z, 0-9,
    `.`, `_` and `-` one `-`, no leading or trailing `.` or `-` (so never `..`, `/` or a hidden file), bounded."""
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")[:_NAME_LIMIT].rstrip("-.")


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]


def _display(path: Path, root: Path) -> str:
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(root))).as_posix()


# ---- the suite's YAML, edited in its text


class SuiteEditRefused(Exception):
    def __init__(self, refusals: list[Refusal]) -> None:
        super().__init__("; ".join(map(str, refusals)))
        self.refusals = refusals


@dataclass
class _Entry:
    """One key: value of a mapping, as the parser marked it (character offsets)."""

    key: str | None
    key_start: int
    key_style: str | None
    value_start: int
    value_end: int
    value: yaml.Event


@dataclass
class _Mapping:
    flow: bool
    entries: list[_Entry] = field(default_factory=list)

    def get(self, key: str) -> _Entry | None:
        return next((entry for entry in self.entries if entry.key == key), None)


def edit_suite_text(text: str, display: str, changes: list[tuple[Scenario, str]]) -> str:
    """`text` (a suite) with each scenario's reference pointing at its file (`reference_response_file: PATH`
    in place of `reference_response: ...`, or added after its `id`); SuiteEditRefused when one cannot be made
    by position with exactly that meaning."""
    body = text.removeprefix("\ufeff")
    offset = len(text) - len(body)
    mappings, aliased = _scan(body)
    spans, refusals = [], []
    for scenario, written in changes:
        where = f"{display}:{scenario.pos.line}:{scenario.pos.column}"
        span = _reference_span(body, mappings.get((scenario.pos.line, scenario.pos.column)), aliased, written)
        if isinstance(span, str):
            refusals.append(Refusal(where, f"scenario '{scenario.id}': {span}; set "
                                           f"`reference_response_file: {written}` by hand"))
        else:
            spans.append((span, scenario, written, where))
    if refusals:
        raise SuiteEditRefused(refusals)
    edited = body
    for (start, end, replacement), *_ in sorted(spans, key=lambda s: s[0][0], reverse=True):
        edited = edited[:start] + replacement + edited[end:]
    wrong = _unintended(body, edited, display, [(s.id, w) for _, s, w, _ in spans])
    if wrong:
        raise SuiteEditRefused([Refusal(where, f"scenario '{s.id}': {wrong}; set `reference_response_file: {w}` "
                                               "by hand") for _, s, w, where in spans])
    return text[:offset] + edited


def _scan(text: str) -> tuple[dict[tuple[int, int], _Mapping], set[str]]:
    """Every mapping of the document by its 1-based (line, column), and the anchors aliases use."""
    mappings: dict[tuple[int, int], _Mapping] = {}
    aliased: set[str] = set()
    # One frame per open collection: [its mapping or None, the key event, the value's first event].
    stack: list[list] = []

    def begin(event: yaml.Event) -> None:
        if stack and stack[-1][0] is not None:
            frame = stack[-1]
            if frame[1] is None:
                frame[1] = event
            else:
                frame[2] = event

    def end(end_index: int) -> None:
        if stack and stack[-1][0] is not None and stack[-1][2] is not None:
            mapping, key, value = stack[-1]
            name = key.value if isinstance(key, yaml.ScalarEvent) else None
            mapping.entries.append(_Entry(name, key.start_mark.index, getattr(key, "style", None),
                                          value.start_mark.index, end_index, value))
            stack[-1][1] = stack[-1][2] = None

    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
            if isinstance(event, yaml.AliasEvent):
                aliased.add(event.anchor)
            begin(event)
            end(event.end_mark.index)
        elif isinstance(event, yaml.CollectionStartEvent):
            begin(event)
            mapping = None
            if isinstance(event, yaml.MappingStartEvent):
                mapping = _Mapping(bool(event.flow_style))
                mappings[event.start_mark.line + 1, event.start_mark.column + 1] = mapping
            stack.append([mapping, None, None])
        elif isinstance(event, yaml.CollectionEndEvent):
            stack.pop()
            end(event.end_mark.index)
    return mappings, aliased


def _reference_span(text: str, mapping: _Mapping | None, aliased: set[str],
                    written: str) -> tuple[int, int, str] | str:
    """(start, end, replacement) setting the scenario's reference file, or why it cannot be done by position."""
    if mapping is None:
        return "its mapping is not where the loader found it"
    new_key = "reference_response_file"
    current = mapping.get("reference_response")
    if current is not None:
        # An alias (`*name`) names the anchor it uses; only a value that carries the anchor (`&name`) matters.
        anchor = None if isinstance(current.value, yaml.AliasEvent) else current.value.anchor
        if anchor is not None and anchor in aliased:
            return f"its reference_response carries the anchor &{anchor}, which aliases elsewhere use"
        if not isinstance(current.value, (yaml.ScalarEvent, yaml.AliasEvent)):
            return "its reference_response is not text"
        quote = current.key_style if current.key_style in ("'", '"') else ""
        # Up to the value's last character: a block scalar's trailing blank lines stay the file's.
        end = current.value_start + len(text[current.value_start:current.value_end].rstrip())
        return current.key_start, end, f"{quote}{new_key}{quote}: {written}"
    if mapping.get("<<") is not None:
        return "it takes keys from a merge key (<<)"
    scenario_id = mapping.get("id")
    if scenario_id is None:
        return "its id comes from elsewhere (an alias or merge)"
    if mapping.flow:
        return scenario_id.value_end, scenario_id.value_end, f", {new_key}: {written}"
    # A new line after the id's, at the column of the id key, ended like the id's line.
    column = scenario_id.key_start - (text.rfind("\n", 0, scenario_id.key_start) + 1)
    line_end = text.find("\n", scenario_id.value_end - 1 if text[scenario_id.value_end - 1] == "\n"
                         else scenario_id.value_end)
    line = f"{' ' * column}{new_key}: {written}"
    if line_end < 0:
        return len(text), len(text), ("\r\n" if "\r\n" in text else "\n") + line
    return line_end + 1, line_end + 1, line + ("\r\n" if text[line_end - 1:line_end] == "\r" else "\n")


def _unintended(old: str, new: str, display: str, changes: list[tuple[str, str]]) -> str | None:
    """None when `new` reads as `old` with exactly these scenarios' references moved to their files,
    else what differs."""
    try:
        before = parse_yaml(old.encode("utf-8"), display, Collector())
        after = parse_yaml(new.encode("utf-8"), display, Collector())
    except SourceError as exc:
        return f"the edited file would not be valid YAML ({exc.message})"
    expected = copy.deepcopy(before.plain() if before else None)
    scenarios = ((expected or {}).get("context") or {}).get("scenarios") or []
    by_id = {scenario.get("id"): scenario for scenario in scenarios if isinstance(scenario, dict)}
    for scenario_id, written in changes:
        if scenario_id not in by_id:
            return "the scenario is not where the loader found it"
        by_id[scenario_id].pop("reference_response", None)
        by_id[scenario_id]["reference_response_file"] = written
    if (after.plain() if after else None) != expected:
        return "editing it by position would change more than its reference (an anchor, alias or merge key is involved)"
    return None


# ---- rows of a scenarios file


def _csv_edit(data: bytes, display: str, suite: str,
              rows: dict[str, str]) -> tuple[bytes, set[str], list[Refusal]]:
    """The CSV with each row's `reference_response` cell set: that cell alone rewritten, quoted as it was (or as
    the csv module quotes when it was not and must be), every other byte kept; and the ids found."""
    lines = io.StringIO(data.decode("utf-8"), newline="").readlines()
    reader = csv.reader(iter(lines), strict=True)
    header = [name.removesuffix(":json").strip() for name in next(reader)]
    out, start, refusals, found = lines[:reader.line_num], reader.line_num, [], set()
    column = header.index("reference_response") if "reference_response" in header else None
    id_column = header.index("id")
    for cells in reader:
        line, raw = start + 1, "".join(lines[start:reader.line_num])
        start = reader.line_num
        scenario_id = cells[id_column] if len(cells) > id_column else None
        if scenario_id in rows:
            found.add(scenario_id)
            label = f"suite '{suite}', scenario '{scenario_id}'"
            if column is None:
                refusals.append(Refusal(f"{display}:{line}", f"{label}: '{display}' has no reference_response "
                                                             "column: add one (empty cells) and accept again"))
            else:
                edited = _csv_row_with(raw, cells, column, rows[scenario_id])
                if edited is None:
                    refusals.append(Refusal(f"{display}:{line}", f"{label}: the row cannot be edited cell by cell; "
                                                                 "set its reference_response by hand"))
                else:
                    raw = edited
        out.append(raw)
    out.extend(lines[start:])
    return "".join(out).encode("utf-8"), found, refusals


def _csv_row_with(raw: str, cells: list[str], column: int, text: str) -> str | None:
    """`raw` (one record's text, its line end included) with cell `column` set to `text`; None when the
    cells cannot be found in it one after the other."""
    at, spans = 0, []
    for value in cells:
        quoted = raw.startswith('"', at)
        form = '"' + value.replace('"', '""') + '"' if quoted else value
        if not raw.startswith(form, at):
            return None
        spans.append((at, at + len(form), quoted))
        at += len(form) + 1
    start, end, quoted = spans[column]
    if quoted:
        cell = '"' + text.replace('"', '""') + '"'
    else:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="").writerow([text, ""])  # two cells: a lone empty one is quoted
        cell = buffer.getvalue()[:-1]
    edited = raw[:start] + cell + raw[end:]
    expected = cells[:column] + [text] + cells[column + 1:]
    return edited if next(csv.reader(io.StringIO(edited, newline=""), strict=True)) == expected else None


def _jsonl_edit(data: bytes, display: str, suite: str,
                rows: dict[str, str]) -> tuple[bytes, set[str], list[Refusal]]:
    """The JSONL with each row's line replaced by the same object with `reference_response` set, written in the
    line's own JSON style where it has one of json's; every other line kept; and the ids found."""
    found = set()
    pieces = data.split(b"\n")
    lines = [piece + b"\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    styles = [{"ensure_ascii": ascii_only, "separators": separators}
              for ascii_only in (False, True) for separators in ((", ", ": "), (",", ":"))]
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        record = json.loads(raw)
        if not isinstance(record, dict) or str(record.get("id")) not in rows:
            continue
        body = raw.rstrip(b"\r\n")
        style = next((s for s in styles if json.dumps(record, **s).encode("utf-8") == body), styles[0])
        found.add(str(record["id"]))
        record["reference_response"] = rows[str(record["id"])]
        lines[index] = json.dumps(record, **style).encode("utf-8") + raw[len(body):]
    return b"".join(lines), found, []


# ---- writing, or showing


def apply_edits(edits: Sequence[FileEdit], root: Path) -> None:
    """Write every edit, or none: each file is checked to be as planned first (and still writable by the rule
    of `files.writable`), and the files written are put back when a later one fails. ApplyError says why."""
    for edit in edits:
        try:
            files.writable(edit.path, root, shown=edit.display, new=edit.old is None)
            if edit.old is not None and files.read_bytes(edit.path, MAX_STREAMED_BYTES, shown=edit.display) != edit.old:
                raise ApplyError(f"{edit.display} changed since the references were planned; nothing was written")
        except files.FileRefused as exc:
            raise ApplyError(f"{exc}; nothing was written") from None
    done: list[FileEdit] = []
    for edit in edits:
        try:
            write_bytes_atomic(edit.path, edit.new)
        except OSError as exc:
            for written in reversed(done):
                if written.old is None:
                    written.path.unlink(missing_ok=True)
                else:
                    write_bytes_atomic(written.path, written.old)
            raise ApplyError(f"cannot write {edit.display}: {exc.strerror or exc}; nothing was written") from None
        done.append(edit)


def patch(edits: Sequence[FileEdit]) -> str:
    """The edits as one unified diff, `git apply`-able from the repository root."""
    out = []
    for edit in edits:
        old = edit.old.decode("utf-8") if edit.old is not None else ""
        out.append(f"diff --git a/{edit.display} b/{edit.display}\n")
        if edit.old is None:
            out.append("new file mode 100644\n")
        lines = difflib.unified_diff(_lines(old), _lines(edit.new.decode("utf-8")),
                                     "/dev/null" if edit.old is None else f"a/{edit.display}", f"b/{edit.display}")
        out.extend(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines as git counts them: ended by \\n only (a \\r stays part of its line)."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)
