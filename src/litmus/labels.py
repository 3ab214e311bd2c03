"""Labelled replies for `litmus calibrate` (and the demo's calibration): label files read with positioned errors,
each label made into the assertion and context the judge service judges like a run's, the judging, and the
calibration document built from the outcomes with the statistics of `litmus.calibration`.

A labels file is JSONL (one object a line) or CSV (a header row), with the columns `type`, `text`, `verdict`
(`pass`/`fail`), the type's fields, for scenario-aware types `scenario_data` and `reference_response`, and an
optional `id`. Files are read through the one resolver (`litmus.files.resolve_named`): a FIFO, a file in
version-control metadata or one over the size cap is refused.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from litmus import files
from litmus.assertions.base import EvalContext
from litmus.assertions.judged import SPECS
from litmus.calibration import BOOTSTRAP_ROUNDS, MIN_LABELS, Labelled, by_kind, summarize, warnings
from litmus.errors import Diagnostic, Position
from litmus.files import MAX_FILE_BYTES
from litmus.model import Assertion, Scenario, Suite
from litmus.response import Response
from litmus.results import write_text_atomic
from litmus.text import clip, count, did_you_mean

# The types a label can have: those judged on one reply (not on a conversation's transcript).
CALIBRATED = {name: spec for name, spec in SPECS.items() if spec.family in ("qualitative", "scenario")}
SCENARIO_COLUMNS = ("scenario_data", "reference_response")
REASON_CHARS = 300


class CalibrateError(Exception):
    """Bad input: the message says what and how to fix it (exit status 2)."""


@dataclass(frozen=True)
class Label:
    """One labelled reply, ready to be judged as the run would judge it."""

    source: str
    where: str
    id: str
    assertion: Assertion
    context: EvalContext
    human_passed: bool


def judge_labels(service, labels: list[Label]) -> list:
    """Each label's outcome, judged by `service` as a run judges an assertion (its pool, cache and budget)."""
    futures = [service.executor.submit(service.evaluate_assertion, label.assertion, label.context) for label in labels]
    return [future.result() for future in futures]


def write_calibration(document: dict[str, Any], out: Path) -> None:
    """calibration.json and calibration.html into `out` (CalibrateError when they cannot be written)."""
    from litmus.report.calibration import html_page  # lazy: only writing the page needs the report's markup

    try:
        write_text_atomic(out / "calibration.json", json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        write_text_atomic(out / "calibration.html", html_page(document))
    except OSError as exc:
        raise CalibrateError(f"cannot write to {out}: {exc}") from None


def calibration_document(labels: list[Label], outcomes: list, judge, unmatched: list[dict], max_false_fail: float,
                         seed: int) -> dict[str, Any]:
    """calibration.json (its fields: docs/judges.md and schemas/calibration.schema.json)."""
    items, listed = [], []
    for label, outcome in zip(labels, outcomes, strict=True):
        tiers = outcome.judge.tiers if outcome.judge else []
        first = tiers[0].score if tiers else None
        items.append(Labelled(label.assertion.type, label.source, label.human_passed, outcome.status, first))
        listed.append({"source": label.source, "where": label.where, "id": label.id, "type": label.assertion.type,
                       "human": "pass" if label.human_passed else "fail", "status": outcome.status,
                       "score": first, "final_score": outcome.score, "escalated": bool(outcome.judge and
                                                                                       outcome.judge.escalated),
                       "reason": clip(outcome.reason, REASON_CHARS), "content_sha256": outcome.content_sha256})
    types = {kind: summarize(group, max_false_fail=max_false_fail, seed=seed) for kind, group in by_kind(items).items()}
    sources: dict[str, list[Labelled]] = {}
    for item in items:
        sources.setdefault(item.source, []).append(item)
    by_source = {source: {kind: summarize(group, max_false_fail=max_false_fail, seed=seed, with_sweep=False)
                          for kind, group in by_kind(group_items).items()}
                 for source, group_items in sources.items()}
    said = [warning for kind, figures in types.items() for warning in warnings(kind, figures)]
    said += _disagreeing_labels(listed)
    if unmatched:
        said.append(f"{count(len(unmatched), 'decision')} not used (no rebuildable reply in the --results files): "
                    "see `unmatched`")
    escalation = judge.escalation
    return {
        "schema_version": 1,
        "judge": {"provider": judge.provider, "model": judge.model, "threshold": judge.threshold,
                  "escalation": None if escalation is None else {
                      "band": escalation.band, "provider": escalation.to.provider, "model": escalation.to.model}},
        "settings": {"max_false_fail": max_false_fail, "min_labels": MIN_LABELS,
                     "bootstrap": {"rounds": BOOTSTRAP_ROUNDS, "seed": seed, "level": 0.95}},
        "sources": [{"name": source, "labels": len(group)} for source, group in sources.items()],
        "types": types,
        "by_source": by_source,
        "unmatched": unmatched,
        "warnings": said,
        "items": listed,
    }


def _disagreeing_labels(listed: list[dict[str, Any]]) -> list[str]:
    """A warning per judged input labelled both pass and fail (by content hash): one of the labels is wrong,
    and both are counted."""
    labels: dict[str, list[dict[str, Any]]] = {}
    for item in listed:
        if item["content_sha256"]:
            labels.setdefault(item["content_sha256"], []).append(item)
    said = []
    for same in labels.values():
        where = {verdict: ", ".join(item["where"] for item in same if item["human"] == verdict)
                 for verdict in ("pass", "fail")}
        if all(where.values()):
            said.append(f"{same[0]['type']}: the same reply is labelled pass ({where['pass']}) and fail "
                        f"({where['fail']}); both labels are counted")
    return said


def read_text(name: str, what: str, root: Path | None = None) -> str:
    """The text of a file the operator named (`root` None: wherever it is), or of one found in a directory of the
    repository `root` (it must resolve inside it: a link a pull request committed leads nowhere else)."""
    try:
        real = files.resolve_named(Path(name), shown=name) if root is None else \
            files.resolve_found(Path(name), root, shown=name)
        data = files.read_bytes(real, MAX_FILE_BYTES, shown=name, what=what)
        return data.decode("utf-8-sig")
    except FileNotFoundError:
        raise CalibrateError(f"{name}: no such file") from None
    except OSError as exc:
        raise CalibrateError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise CalibrateError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def label_files(directory: Path) -> list[str]:
    """The JSONL and CSV label files directly in `directory`, sorted (none when it is not a directory)."""
    if not directory.is_dir():
        return []
    return sorted(str(path) for path in directory.iterdir() if path.suffix.lower() in (".jsonl", ".ndjson", ".csv"))


def read_labels(name: str, root: Path | None = None) -> tuple[list[Label], list[Diagnostic]]:
    """The labels of a JSONL or CSV file, and a positioned error for each malformed row; `root`: as `read_text`."""
    lower = name.lower()
    if not lower.endswith((".jsonl", ".ndjson", ".csv")):
        raise CalibrateError(f"{name}: a labels file is .jsonl (one JSON object a line) or .csv (a header row); "
                             "a decisions file is .yaml")
    text = read_text(name, "label files", root)
    rows = _csv_rows(name, text) if lower.endswith(".csv") else _jsonl_rows(name, text)
    labels, problems = [], []
    for line, row in rows:
        where = Position(name, line)
        if isinstance(row, str):
            problems.append(Diagnostic("error", row, where))
            continue
        try:
            labels.append(_label(row, name, where))
        except CalibrateError as exc:
            problems.append(Diagnostic("error", str(exc), where))
    return labels, problems


def _jsonl_rows(name: str, text: str) -> list[tuple[int, dict | str]]:
    rows: list[tuple[int, dict | str]] = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except ValueError as exc:
            rows.append((line, f"not a JSON object: {exc}"))
            continue
        if not isinstance(row, dict):
            rows.append((line, f"a label is a JSON object ({{\"type\", \"text\", \"verdict\", ...}}), not "
                               f"{type(row).__name__}"))
            continue
        rows.append((line, {key: value for key, value in row.items() if value is not None}))
    return rows


def _csv_rows(name: str, text: str) -> list[tuple[int, dict | str]]:
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, dict | str]] = []
    start = 2
    try:
        for row in reader:
            if None in row:
                rows.append((start, f"{len(row[None])} more cells than the header has columns"))
            else:
                rows.append((start, {key: value for key, value in row.items() if value not in (None, "")}))
            start = reader.line_num + 1
    except csv.Error as exc:
        rows.append((reader.line_num, f"not CSV: {exc}"))
    return rows


def _label(row: dict, source: str, where: Position) -> Label:
    kind = row.get("type")
    if kind not in CALIBRATED:
        known = sorted(CALIBRATED)
        raise CalibrateError(f"type {kind!r} is not a judged type calibrate can judge on one reply"
                             f"{did_you_mean(str(kind), known)} (one of {', '.join(known)})")
    verdict = row.get("verdict")
    if not isinstance(verdict, str) or verdict.strip().lower() not in ("pass", "fail"):
        raise CalibrateError(f"verdict {verdict!r}: the human label is `pass` or `fail`")
    text = row.get("text")
    if not isinstance(text, str):
        raise CalibrateError("text (the reply the judge reads) is required, as a string")
    spec = CALIBRATED[kind]
    scenario_columns = SCENARIO_COLUMNS if spec.family == "scenario" else ()
    known = {"id", "type", "text", "verdict", *spec.fields, *scenario_columns}
    extra = sorted(set(row) - known)
    if extra:
        raise CalibrateError(f"unknown column {extra[0]!r} for type {kind}{did_you_mean(extra[0], sorted(known))} "
                             f"(a {kind} label takes {', '.join(sorted(known))})")
    params = {}
    for field, field_spec in spec.fields.items():
        value = row.get(field)
        if value is None and field_spec.required:
            raise CalibrateError(f"{kind} needs its field {field!r} ({field_spec.doc})")
        if value is not None:
            if not isinstance(value, str):
                raise CalibrateError(f"{field} is text, not {type(value).__name__}")
            params[field] = value
    scenario = _scenario(kind, row, where) if spec.family == "scenario" else None
    assertion = Assertion(pos=where, type=kind, params=params)
    label_id = str(row.get("id", f"{where.path}:{where.line}"))
    return Label(source, f"{where.path}:{where.line}", label_id, assertion,
                 label_context(text.encode("utf-8"), Suite(pos=where, name=source), scenario),
                 verdict.strip().lower() == "pass")


def _scenario(kind: str, row: dict, where: Position) -> Scenario:
    data = row.get("scenario_data")
    if data is None:
        raise CalibrateError(f"{kind} is judged against scenario data: give scenario_data (JSON)")
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise CalibrateError(f"scenario_data is not JSON: {exc}") from None
    reference = row.get("reference_response")
    if kind == "accurate_with_scenario_context" and not isinstance(reference, str):
        raise CalibrateError(f"{kind} compares with the approved reply: give reference_response (text)")
    return Scenario(pos=where, id=str(row.get("id", where.line)), data=data, reference_response=reference)


def label_context(body: bytes, suite: Suite, scenario: Scenario | None) -> EvalContext:
    """What the judge service reads of a labelled reply: its body as a response, the suite for its intent, the
    scenario; rendering is identity (a label's fields are literal text)."""
    response = Response(status=200, headers={}, body=body, elapsed_ms=0.0)
    return EvalContext(response=response, suite=suite, variables={}, scenario=scenario, render=lambda value: value)
