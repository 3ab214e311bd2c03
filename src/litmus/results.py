"""The results model: one versioned JSON document, the only contract between running and reporting.

`RunResult.to_dict()` gives exactly what `results.json` holds (see `schemas/results.schema.json`);
`RunResult.from_dict()` reads it back for the reporters, which never see anything else.
Everything here is already redacted by the runner: reporters may trust it not to hold secrets.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

SCHEMA_VERSION = 1

AssertionStatus = Literal["passed", "failed", "error", "skipped", "needs_review"]
StepStatus = Literal["passed", "failed", "error", "skipped"]
IntentStatus = Literal["passed", "failed", "needs_review", "error"]
# How a finding relates to the baseline run (see `litmus.compare`): "none" when no baseline was given.
BaselineState = Literal["new", "unchanged", "none"]


@dataclass
class Mismatch:
    path: str
    expected: Any
    actual: Any
    reason: str
    # Set by a baseline comparison: whether this path failed in the baseline's same assertion too.
    baseline: BaselineState | None = None


@dataclass
class JudgeTier:
    provider: str
    model: str
    score: float | None
    reason: str
    latency_ms: float
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False


@dataclass
class JudgeRecord:
    escalated: bool
    tiers: list[JudgeTier] = field(default_factory=list)


@dataclass
class AssertionOutcome:
    type: str
    status: AssertionStatus
    reason: str
    line: int
    column: int
    name: str | None = None
    mismatches: list[Mismatch] = field(default_factory=list)
    score: float | None = None
    threshold: float | None = None
    judge: JudgeRecord | None = None
    # Stable identity (`litmus.identity`), and for a failing outcome its baseline state.
    id: str | None = None
    baseline: BaselineState | None = None


@dataclass
class RequestExcerpt:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    body_truncated: bool = False


@dataclass
class ResponseExcerpt:
    status: int
    elapsed_ms: float
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    # Bytes read from the wire (up to the size cap).
    size: int = 0
    # The body hit the run's size cap; `body` is an excerpt either way.
    truncated: bool = False
    body_excerpt_truncated: bool = False


@dataclass
class StepResult:
    name: str
    line: int
    status: StepStatus
    request: RequestExcerpt | None = None
    response: ResponseExcerpt | None = None
    error: str | None = None
    attempts: int = 1
    extracted: dict[str, Any] = field(default_factory=dict)
    assertions: list[AssertionOutcome] = field(default_factory=list)
    # Identity of the step's "no response" finding, and its baseline state when it has one.
    id: str | None = None
    baseline: BaselineState | None = None


@dataclass
class IntentEvaluation:
    status: IntentStatus
    method: Literal["judge", "deterministic"]
    reason: str
    score: float | None = None
    threshold: float | None = None
    judge: JudgeRecord | None = None
    id: str | None = None
    baseline: BaselineState | None = None


@dataclass
class FlowRunResult:
    flow: str
    line: int
    run_index: int
    intent_evaluation: IntentEvaluation
    scenario: str | None = None
    duration_ms: float = 0.0
    steps: list[StepResult] = field(default_factory=list)
    # The flow's identity across runs and scenarios (pass rates are compared per flow).
    flow_id: str | None = None


@dataclass
class SuiteResult:
    name: str
    file: str
    line: int
    pass_threshold: float
    pass_rate: float
    verdict: Literal["passed", "failed"]
    intent: str | None = None
    flow_runs: list[FlowRunResult] = field(default_factory=list)


@dataclass
class JudgeTotals:
    calls: int = 0
    cached: int = 0
    escalated: int = 0
    needs_review: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    wall_ms: float = 0.0


@dataclass
class RunInfo:
    base_url: str | None
    started_at: str
    finished_at: str
    interrupted: bool = False
    git_sha: str | None = None
    # "K/N" when the run was one shard of several.
    shard: str | None = None
    # "owner/name" and e.g. "https://github.com", when known: reports link probe lines with them.
    repository: str | None = None
    server_url: str | None = None


@dataclass
class Tool:
    name: str = "litmus"
    version: str = ""


@dataclass
class PassRate:
    """Flow runs passed of total, with the 95% Wilson score interval (percent)."""
    passed: int
    total: int
    rate: float
    low: float
    high: float


@dataclass
class FlowComparison:
    flow_id: str
    suite: str
    flow: str
    # "regressed", "improved", "within noise", "new flow" (not in the baseline), "not run here".
    verdict: str
    here: PassRate | None = None
    baseline: PassRate | None = None


@dataclass
class ScoreStats:
    """Judge scores of one assertion over its runs."""
    n: int
    mean: float
    spread: float  # population standard deviation
    values: list[float] = field(default_factory=list)


@dataclass
class ScoreComparison:
    id: str
    suite: str
    flow: str
    scenario: str | None
    step: str
    assertion: str
    here: ScoreStats | None = None
    baseline: ScoreStats | None = None


@dataclass
class FixedFinding:
    """A finding of the baseline whose check ran here and held in every run."""
    id: str
    suite: str
    flow: str
    scenario: str | None
    step: str | None
    label: str  # the assertion's name or type, "no response" or "Intent Evaluation"
    line: int
    reason: str  # the baseline's reason


@dataclass
class BaselineSummary:
    source: str
    new: int = 0
    unchanged: int = 0
    fixed: int = 0
    regressed: int = 0
    fixed_findings: list[FixedFinding] = field(default_factory=list)
    flows: list[FlowComparison] = field(default_factory=list)
    scores: list[ScoreComparison] = field(default_factory=list)


@dataclass
class RunResult:
    run: RunInfo
    verdict: Literal["passed", "failed"]
    tool: Tool = field(default_factory=Tool)
    judge: JudgeTotals = field(default_factory=JudgeTotals)
    suites: list[SuiteResult] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION
    baseline: BaselineSummary | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        return _build(cls, data)

    def iter_outcomes(self):
        """(suite, flow_run, step, assertion) for every assertion outcome, in document order."""
        for suite in self.suites:
            for flow_run in suite.flow_runs:
                for step in flow_run.steps:
                    for outcome in step.assertions:
                        yield suite, flow_run, step, outcome


# Field types that hold nested result dataclasses, for `from_dict`.
_NESTED: dict[tuple[type, str], tuple[type, bool]] = {
    (RunResult, "run"): (RunInfo, False),
    (RunResult, "tool"): (Tool, False),
    (RunResult, "judge"): (JudgeTotals, False),
    (RunResult, "suites"): (SuiteResult, True),
    (SuiteResult, "flow_runs"): (FlowRunResult, True),
    (FlowRunResult, "intent_evaluation"): (IntentEvaluation, False),
    (FlowRunResult, "steps"): (StepResult, True),
    (StepResult, "request"): (RequestExcerpt, False),
    (StepResult, "response"): (ResponseExcerpt, False),
    (StepResult, "assertions"): (AssertionOutcome, True),
    (AssertionOutcome, "mismatches"): (Mismatch, True),
    (AssertionOutcome, "judge"): (JudgeRecord, False),
    (IntentEvaluation, "judge"): (JudgeRecord, False),
    (JudgeRecord, "tiers"): (JudgeTier, True),
    (RunResult, "baseline"): (BaselineSummary, False),
    (BaselineSummary, "fixed_findings"): (FixedFinding, True),
    (BaselineSummary, "flows"): (FlowComparison, True),
    (BaselineSummary, "scores"): (ScoreComparison, True),
    (FlowComparison, "here"): (PassRate, False),
    (FlowComparison, "baseline"): (PassRate, False),
    (ScoreComparison, "here"): (ScoreStats, False),
    (ScoreComparison, "baseline"): (ScoreStats, False),
}


def _fields_of(value: Any) -> dict[str, Any]:
    """A result dataclass as the (shallow) dict `json` encodes, for `json.dumps(default=...)`: the
    document is encoded straight from the dataclasses, with no `to_dict()` copy of the whole tree."""
    names = _FIELD_NAMES.get(type(value))
    if names is None:
        if not hasattr(type(value), "__dataclass_fields__"):
            raise TypeError(f"{type(value).__name__} is not JSON serializable")
        names = _FIELD_NAMES[type(value)] = tuple(f.name for f in fields(value))
    return {name: getattr(value, name) for name in names}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _build(cls: type, data: dict[str, Any]):
    known = {f.name for f in fields(cls)}
    kwargs = {}
    for key, value in data.items():
        if key not in known:
            continue  # newer documents may add keys; readers ignore what they do not know
        nested = _NESTED.get((cls, key))
        if nested and value is not None:
            inner, is_list = nested
            value = [_build(inner, v) for v in value] if is_list else _build(inner, value)
        kwargs[key] = value
    return cls(**kwargs)


def schema() -> dict[str, Any]:
    from importlib.resources import files

    return json.loads(files("litmus.schemas").joinpath("results.schema.json").read_text("utf-8"))


def validate(data: dict[str, Any]) -> list[str]:
    """Schema violations of a results document, as 'path: message' lines (empty when valid)."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema())
    return [
        f"{error.json_path}: {error.message}"
        for error in sorted(validator.iter_errors(data), key=lambda e: e.json_path)
    ]


class ResultsError(ValueError):
    """A results file that cannot be read: not JSON, wrong schema version, or invalid."""


def load_results(path: str | os.PathLike) -> RunResult:
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: cannot read results: {exc}") from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        found = data.get("schema_version") if isinstance(data, dict) else None
        raise ResultsError(f"{path}: schema_version {found!r} is not {SCHEMA_VERSION}")
    problems = validate(data)
    if problems:
        raise ResultsError(f"{path}: not a valid results document: " + "; ".join(problems[:5]))
    return RunResult.from_dict(data)


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once, at import (single-threaded): setting and restoring it later would briefly give files
# that other threads create (judge cache entries) mode 0666.
_UMASK = _read_umask()


def write_json_atomic(path: str | os.PathLike, data: Any, *, indent: int | None = 2) -> None:
    """Write JSON so readers see the old file or the new one, never half of one.

    `indent=None` writes one compact ASCII line (other characters as \\u escapes), four times faster:
    only then does `json` use its C encoder, and ASCII text takes a byte a character in memory.
    Result dataclasses in `data` are encoded as their fields.
    """
    # dumps, not dump: json.dump never uses the C encoder.
    text = json.dumps(data, indent=indent, ensure_ascii=indent is None, default=_fields_of)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates the file 0600; give it the mode any other file we write gets (0666 & ~umask).
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.write("\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_results(path: str | os.PathLike, result: RunResult) -> None:
    """results.json, compact: 1000 steps make 4 MB indented, and indenting took longer than all the
    reports together (pretty-print it with `python -m json.tool` or `jq .`)."""
    write_json_atomic(path, result, indent=None)
