"""Human decisions: the one owner of `.litmus/decisions.yaml` (contract: "Human decisions and accepted references").

A decision is a human's verdict on one judged input: the finding id (`litmus.identity`) and the content hash
of exactly what was judged (`content_sha256`). A judged outcome whose id and hash match a decision takes the
human verdict (`decided_by`) and no judge is called; a different reply has another hash, so it is judged
again. Deterministic outcomes are never decided: nothing about them is a judgement call.

Everything that reads, writes or applies decisions is here: loading with positioned diagnostics (validated
against `schemas/decisions.schema.json`), the content hash, the run-time lookup (`DecisionBook`, which the
judge service asks before calling a judge), applying decisions to a stored results document without running
anything (`apply_decisions`), the notices about decisions that took no effect (`summarize`), and the textual
edits that record or prune a decision while keeping every other byte of the file.

Which files count is the caller's to say (`load_decisions` takes an explicit list of sources): a local run
reads the work tree's file; an untrusted run in the action reads only the base branch's.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from litmus import files, git
from litmus.assertions import REGISTRY, spec
from litmus.errors import Diagnostic, Position
from litmus.files import MAX_FILE_BYTES
from litmus.load.diagnostics import Collector, Span
from litmus.load.source import Item, SourceError, parse_yaml
from litmus.results import (
    AssertionOutcome,
    DecidedBy,
    DecisionNote,
    DecisionsSummary,
    IntentEvaluation,
    Mismatch,
    RunResult,
)
from litmus.trust import Trust
from litmus.verdict import NOT_PASSED, decide_run, decide_suite

# Where the decisions live, relative to the repository root.
DECISIONS_FILE = ".litmus/decisions.yaml"
# What a human-failed outcome's mismatch says was expected.
HUMAN_EXPECTED = "a reply a human accepts"

Verdict = Literal["pass", "fail"]


class DecisionsError(ValueError):
    """The decisions file cannot be edited (it is not a YAML list); the message says why."""


@dataclass(frozen=True)
class Decision:
    finding: str
    content: str
    verdict: Verdict
    by: str
    at: str
    reason: str = ""
    url: str | None = None
    # Where it was read, `path:line` ("" for one made in memory): notices point there.
    where: str = field(default="", compare=False)

    @property
    def key(self) -> tuple[str, str]:
        return self.finding, self.content

    def entry(self) -> dict[str, Any]:
        """The decision as the file holds it (no `url` key when there is none)."""
        data = {"finding": self.finding, "content": self.content, "verdict": self.verdict, "by": self.by,
                "at": self.at, "reason": self.reason}
        if self.url:
            data["url"] = self.url
        return data

    def decided_by(self) -> DecidedBy:
        return DecidedBy(by=self.by, at=self.at, reason=self.reason, verdict=self.verdict, url=self.url)


@dataclass(frozen=True)
class DecisionSource:
    """One decisions file's bytes, and the name its diagnostics and notices show (e.g. the path, or the path at
    the base commit)."""

    name: str
    data: bytes


@dataclass
class LoadedDecisions:
    decisions: list[Decision] = field(default_factory=list)
    # Positioned problems; an error leaves that entry out (callers refuse to run on errors).
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


def read_source(root: Path, name: str = DECISIONS_FILE) -> DecisionSource | None:
    """The work tree's decisions file as a source (None when there is none), read through the one file
    resolver: a link out of the repository, a FIFO or a file over the size cap is refused (FileRefused)."""
    path = root / name
    if not path.exists() and not path.is_symlink():
        return None
    real = files.resolve(name, root, root)
    return DecisionSource(name, files.read_bytes(real, MAX_FILE_BYTES, shown=name, what="decisions files"))


def workspace_decisions(root: Path) -> LoadedDecisions:
    """The work tree's decisions (what a local run and a trusted run read), or the positioned reason the file
    cannot be read."""
    try:
        source = read_source(root)
    except files.FileRefused as exc:
        return LoadedDecisions(diagnostics=[Diagnostic("error", str(exc), Position(DECISIONS_FILE))],
                               sources=[DECISIONS_FILE])
    return load_decisions([source] if source else [])


@dataclass
class RunDecisions:
    """The decisions that count in a run, and those it refuses before running (the pull request's own, in an
    untrusted run): each refused one becomes a notice, never a failure."""

    loaded: LoadedDecisions
    ignored: list[DecisionNote] = field(default_factory=list)

    def book(self) -> DecisionBook:
        return DecisionBook(self.loaded.decisions)

    def summary(self) -> DecisionsSummary:
        return DecisionsSummary(sources=list(self.loaded.sources), ignored=list(self.ignored))


def decisions_for_run(root: Path, trust: Trust, trusted_sources: Sequence[DecisionSource] = ()) -> RunDecisions:
    """Which decisions count (the contract's provenance rule). A run that trusts its checkout reads the work
    tree's file. An untrusted one reads the base commit's copy, plus `trusted_sources` (decisions the action
    itself recorded); a decision that is only in the work tree's copy (the pull request added or changed it)
    is ignored, each listed with why: a pull request cannot pass its own checks by writing "pass"."""
    if trust.runs_pr_code:
        return RunDecisions(workspace_decisions(root))
    base = _base_source(root, trust.base_sha)
    loaded = load_decisions([*([base] if base else []), *trusted_sources])
    counted = {decision.key: decision for decision in loaded.decisions}
    ignored = []
    why = ("added or changed by this pull request: in an untrusted run only the base branch's decisions count"
           + ("" if base else " (the base commit is unknown or has no decisions file)"))
    for decision in workspace_decisions(root).decisions:
        if counted.get(decision.key) != decision:
            ignored.append(DecisionNote(decision.finding, decision.content, decision.by, decision.where, why))
    return RunDecisions(loaded, ignored)


def _base_source(root: Path, base_sha: str | None) -> DecisionSource | None:
    """The decisions file as the base commit has it (None when the commit or the file is not there)."""
    if not base_sha or not git.has_commit(root, base_sha):
        return None
    size = git.file_size_at(root, base_sha, DECISIONS_FILE)
    data = git.file_at(root, base_sha, DECISIONS_FILE) if size is not None and size <= MAX_FILE_BYTES else None
    return None if data is None else DecisionSource(f"{base_sha[:12]}:{DECISIONS_FILE}", data)


def load_decisions(sources: Sequence[DecisionSource]) -> LoadedDecisions:
    """The decisions of every source, in order, validated against the shipped schema, each problem with its
    file:line:col. Two decisions on the same finding and content are an error (which one would win?)."""
    loaded = LoadedDecisions(sources=[source.name for source in sources])
    collector = Collector()
    seen: dict[tuple[str, str], Position] = {}
    for source in sources:
        try:
            root = parse_yaml(source.data, source.name, collector)
        except SourceError as exc:
            collector.error(exc.span, exc.message)
            continue
        for item in _valid_entries(root, source.name, collector):
            decision = _decision(item, source.name)
            first = seen.get(decision.key)
            if first is not None:
                collector.error(item.span, f"a second decision on finding {decision.finding} with the same content "
                                           f"(first at {first}): keep one")
                continue
            seen[decision.key] = item.pos
            loaded.decisions.append(decision)
    loaded.diagnostics = sorted(collector.diagnostics, key=lambda d: d.position)
    return loaded


def schema() -> dict[str, Any]:
    from importlib.resources import files as package_files  # lazy: only loading a decisions file needs it

    return json.loads(package_files("litmus.schemas").joinpath("decisions.schema.json").read_text("utf-8"))


def _valid_entries(root: Item | None, name: str, collector: Collector) -> Iterator[Item]:
    """The entries that satisfy the schema; a positioned error for each violation."""
    if root is None:
        return  # an empty file: no decisions
    from jsonschema import Draft202012Validator  # lazy: jsonschema: ~115 ms, only when there is a file to check

    validator = Draft202012Validator(schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)
    bad: set[int] = set()
    for error in sorted(validator.iter_errors(root.plain()), key=lambda e: list(map(str, e.absolute_path))):
        path = list(error.absolute_path)
        span = _span_at(root, path, error)
        if not path:
            collector.error(span, "the decisions file is a list of decisions ({finding, content, verdict, by, at, "
                                  "reason}); " + error.message)
            return
        bad.add(path[0])
        where = ".".join(str(p) for p in path[1:])
        collector.error(span, f"decision {path[0] + 1}{': ' + where if where else ''}: {_message(error)}")
    yield from (item for index, item in enumerate(root.value) if index not in bad)


def _message(error) -> str:
    if error.validator == "pattern" and error.absolute_path[-1] == "finding":
        return "a finding id is the 32 hex digits of a finding's `id` in results.json"
    if error.validator == "pattern" and error.absolute_path[-1] == "content":
        return "a content hash is the 64 hex digits of an outcome's `content_sha256` in results.json"
    if error.validator == "format":
        return f"{error.instance!r} is not an ISO-8601 date-time with a time zone (e.g. 2026-05-04T12:00:00Z)"
    return error.message


def _span_at(root: Item, path: list, error) -> Span:
    """Where a schema violation is: the value at `path`, or for an unknown key the key itself."""
    item = root
    for part in path:
        value = item.value
        if isinstance(value, dict) and part in value:
            item = value[part]
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            item = value[part]
        else:
            break
    if error.validator == "additionalProperties" and isinstance(item.value, dict):
        extra = next((key for key in item.value if key not in error.schema.get("properties", {})), None)
        if extra is not None:
            return item.keys[extra].span
    return item.span


def _decision(item: Item, name: str) -> Decision:
    data = item.plain()
    return Decision(finding=data["finding"], content=data["content"], verdict=data["verdict"], by=data["by"],
                    at=data["at"], reason=data.get("reason") or "", url=data.get("url"),
                    where=f"{name}:{item.pos.line}")


# ---- the content hash

def content_sha256(kind: str, fields: Mapping[str, Any], text: str, scenario: Mapping[str, Any] | None = None) -> str:
    """The contract's content hash: sha256 of canonical JSON (sorted keys, no spaces) over the assertion type,
    its rendered fields, the judged text after `select` and, for scenario-aware types, `scenario` (its data
    and reference). Never the prompt's wording or the model: a decision outlives a new judge. Computed on the
    unmasked values, so two replies that differ only in a secret do not share a decision."""
    document: dict[str, Any] = {"type": kind, "fields": dict(fields), "text": text}
    if scenario is not None:
        document["scenario"] = {"data": scenario.get("data"), "reference": scenario.get("reference")}
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# ---- using decisions

class DecisionBook:
    """The decisions of one run, looked up by (finding, content) from the judge's threads."""

    def __init__(self, decisions: Iterable[Decision]) -> None:
        self._by_key = {decision.key: decision for decision in decisions}
        self._lock = threading.Lock()
        self._used: set[tuple[str, str]] = set()

    def __len__(self) -> int:
        return len(self._by_key)

    @property
    def decisions(self) -> list[Decision]:
        return list(self._by_key.values())

    def lookup(self, finding: str | None, content: str | None) -> Decision | None:
        decision = self._by_key.get((finding, content)) if finding and content else None
        if decision is not None:
            with self._lock:
                self._used.add(decision.key)
        return decision


def human_reason(decision: Decision, critical: bool = False) -> str:
    """The outcome's reason once a human decided it: who, when, and why (a critical check says so)."""
    verb = "accepted" if decision.verdict == "pass" else "rejected"
    what = "critical check " if critical else ""
    why = f": {decision.reason}" if decision.reason else ""
    return f"{what}{verb} by {decision.by} at {decision.at} (human decision, no judge called){why}"


def decide_outcome(outcome: AssertionOutcome | IntentEvaluation, decision: Decision, where: str = "$") -> None:
    """Give a judged outcome the human verdict, in place: status, reason, `decided_by`, and for a rejection the
    one mismatch a failed outcome carries."""
    critical = getattr(outcome, "critical", False)
    outcome.status = "passed" if decision.verdict == "pass" else "failed"
    outcome.reason = " ".join(human_reason(decision, critical).split())
    outcome.decided_by = decision.decided_by()
    outcome.content_sha256 = decision.content
    if isinstance(outcome, AssertionOutcome):
        path = outcome.mismatches[0].path if outcome.mismatches else where
        outcome.mismatches = [] if decision.verdict == "pass" else [
            Mismatch(path, HUMAN_EXPECTED, "rejected by a human", outcome.reason)]


def judged_outcomes(result: RunResult) -> Iterator[AssertionOutcome | IntentEvaluation]:
    """Every outcome of the document that a judge decided or could have decided (it has a content hash)."""
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            if flow_run.intent_evaluation.content_sha256:
                yield flow_run.intent_evaluation
            for step in flow_run.steps:
                yield from (o for o in step.assertions if o.content_sha256)
        for step in [*suite.setup, *suite.teardown]:
            yield from (o for o in step.assertions if o.content_sha256)


def apply_decisions(result: RunResult, decisions: Iterable[Decision]) -> RunResult:
    """A copy of a stored results document with the decisions applied and every verdict decided again, without
    running anything (what the action's comment commands do with the PR's latest results). The judge's record
    of an outcome stays, so the report can show what the human overruled."""
    from litmus.run.flow import deterministic_intent  # lazy: the run's modules import this one (a cycle)

    book = DecisionBook(decisions)
    decided = copy.deepcopy(result)
    for outcome in judged_outcomes(decided):
        decision = book.lookup(outcome.id, outcome.content_sha256)
        if decision is not None:
            decide_outcome(outcome, decision)
    for suite in decided.suites:
        for step in [*suite.setup, *(step for run in suite.flow_runs for step in run.steps), *suite.teardown]:
            if step.status in ("passed", "failed") and not step.error:
                step.status = "failed" if any(o.status in NOT_PASSED for o in step.assertions) else "passed"
        for flow_run in suite.flow_runs:
            # A deterministic Intent Evaluation restates the outcomes: said again from the decided ones. A
            # judge's stays what the judge said (a human decides it on its own finding id).
            if flow_run.intent_evaluation.method == "deterministic" and not flow_run.skipped:
                fresh = deterministic_intent(flow_run)
                flow_run.intent_evaluation.status, flow_run.intent_evaluation.reason = fresh.status, fresh.reason
        decide_suite(suite)
    decide_run(decided)
    decided.decisions = summarize(decided, book.decisions, DecisionsSummary(
        sources=list(result.decisions.sources) if result.decisions else [],
        ignored=list(result.decisions.ignored) if result.decisions else []))
    return decided


def summarize(result: RunResult, decisions: Iterable[Decision], summary: DecisionsSummary,
              complete: bool = False) -> DecisionsSummary:
    """`summary` with the count of outcomes a human decided and the decisions that are stale: their finding was
    judged here with other content only (the reply changed), or, in a `complete` run (no filter, no shard), it
    is not in the document at all (the check is gone). A finding that is here but was not judged this time (its
    step got no response) says nothing either way. Deterministic findings are `ignored`, saying why."""
    judged: dict[str, set[str]] = {}
    for outcome in judged_outcomes(result):
        judged.setdefault(outcome.id, set()).add(outcome.content_sha256)
    present, deterministic = _ids(result)
    summary.applied = sum(o.decided_by is not None for o in judged_outcomes(result))
    for decision in decisions:
        note = DecisionNote(decision.finding, decision.content, decision.by, decision.where, "")
        if decision.finding in deterministic:
            note.why = "names a deterministic check: only judged outcomes can be decided by a human"
            summary.ignored.append(note)
        elif decision.content in judged.get(decision.finding, ()):
            continue
        elif decision.finding in judged:
            note.why = "the reply changed: this finding was judged with other content (decisions match exact replies)"
            summary.stale.append(note)
        elif decision.finding not in present and complete:
            note.why = "no check of this run has this finding id (renamed or removed)"
            summary.stale.append(note)
    return summary


def merge_summaries(summaries: Iterable[DecisionsSummary | None], merged: RunResult) -> DecisionsSummary | None:
    """The decisions summary of shards merged into `merged` (`litmus merge`): sources, stale and ignored notes
    united without repeats, and the counts taken from the merged document. A decision one shard found stale
    (its finding judged there with other content) that matches an outcome another shard judged is not stale:
    by `summarize`'s rule, a decision whose content was judged anywhere in the run took effect."""
    present = [summary for summary in summaries if summary is not None]
    if not present:
        return None
    judged = {(outcome.id, outcome.content_sha256) for outcome in judged_outcomes(merged)}
    united = DecisionsSummary(applied=sum(o.decided_by is not None for o in judged_outcomes(merged)))
    seen: set[tuple] = set()
    for summary in present:
        united.sources.extend(source for source in summary.sources if source not in united.sources)
        for kind, notes in (("stale", summary.stale), ("ignored", summary.ignored)):
            for note in notes:
                key = (kind, note.finding, note.content, note.where)
                if key in seen or (kind == "stale" and (note.finding, note.content) in judged):
                    continue
                seen.add(key)
                getattr(united, kind).append(note)
    return united


def _ids(result: RunResult) -> tuple[set[str], set[str]]:
    """The finding ids of the document, and those of deterministic assertion outcomes."""
    present: set[str] = set()
    deterministic: set[str] = set()
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            present.add(flow_run.intent_evaluation.id)
            for step in flow_run.steps:
                present.add(step.id)
                for outcome in step.assertions:
                    present.add(outcome.id)
                    if outcome.type in REGISTRY and not is_judged_type(outcome.type):
                        deterministic.add(outcome.id)
    present.discard(None)
    return present, deterministic


def is_judged_type(kind: str) -> bool:
    """The registry's one answer to "is this type LLM-based"."""
    return spec(kind).llm_based


# ---- editing the file: one decision recorded, stale ones pruned; every other byte kept

def record_decision(text: str, decision: Decision) -> str:
    """`text` (a decisions file, possibly empty) with `decision` recorded: it replaces the decision on the same
    finding and content in place, or is appended. Comments, order and every other entry stay byte for byte."""
    root = _compose(text)
    if root is None:
        head = text if not text or text.endswith("\n") else text + "\n"
        return head + _dump([decision.entry()])
    if root.flow_style:
        # `[]` (or a one-line list): rewritten as a block list, with everything around it kept.
        entries = [_plain(node) for node in root.value]
        entries = [e for e in entries if (e.get("finding"), e.get("content")) != decision.key] + [decision.entry()]
        start, end = root.start_mark.index, root.end_mark.index
        return text[:start] + _dump(entries).rstrip("\n") + text[end:]
    for node in root.value:
        if _key(node) == decision.key:
            start, end = node.start_mark.index, _last_value(node).end_mark.index
            block = _dump(decision.entry()).rstrip("\n").replace("\n", "\n" + " " * node.start_mark.column)
            return text[:start] + block + text[end:]
    indent = " " * root.start_mark.column
    block = "".join(indent + line + "\n" for line in _dump([decision.entry()]).splitlines())
    return (text if text.endswith("\n") else text + "\n") + block


def remove_decisions(text: str, keys: Iterable[tuple[str, str]]) -> str:
    """`text` without the decisions on these (finding, content) keys: each entry's lines are removed whole,
    everything else stays byte for byte."""
    doomed = set(keys)
    root = _compose(text)
    if root is None or not doomed:
        return text
    if root.flow_style:
        entries = [_plain(node) for node in root.value if _key(node) not in doomed]
        start, end = root.start_mark.index, root.end_mark.index
        return text[:start] + (_dump(entries).rstrip("\n") if entries else "[]") + text[end:]
    cuts = []
    for node in root.value:
        if _key(node) in doomed:
            dash = text.rfind("-", 0, node.start_mark.index)
            start = text.rfind("\n", 0, dash) + 1
            end = text.find("\n", _last_value(node).end_mark.index)
            cuts.append((start, len(text) if end < 0 else end + 1))
    for start, end in reversed(cuts):
        text = text[:start] + text[end:]
    return text


def _compose(text: str) -> yaml.SequenceNode | None:
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise DecisionsError(f"the decisions file is not valid YAML: {exc}") from None
    if root is None or (isinstance(root, yaml.ScalarNode) and root.value in ("", "~", "null")):
        return None
    if not isinstance(root, yaml.SequenceNode):
        raise DecisionsError("the decisions file is not a list of decisions")
    return root


def _key(node: yaml.Node) -> tuple[str | None, str | None]:
    entry = _plain(node)
    return entry.get("finding"), entry.get("content")


def _plain(node: yaml.Node) -> dict[str, Any]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {key.value: value.value for key, value in node.value if isinstance(value, yaml.ScalarNode)}


def _last_value(node: yaml.Node) -> yaml.Node:
    return node.value[-1][1] if isinstance(node, yaml.MappingNode) and node.value else node


def _dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=False)
