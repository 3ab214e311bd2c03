"""Shared helpers of the report tests: the fixed results document and a generator of huge runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    Mismatch,
    RequestExcerpt,
    ResponseExcerpt,
    RunInfo,
    RunResult,
    StepResult,
    SuiteResult,
)
from support.cli import litmus, litmus_env

HERE = Path(__file__).parent
RESULTS = HERE / "results.json"
GOLDEN = HERE / "golden"
SCHEMAS = HERE.parent / "schemas"


def litmus_run(project: Path, base_url: str, secrets: dict[str, str],
               *args: str) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """`litmus run --base-url URL --out out` in `project` (a subprocess, as a user runs it), with
    the secrets in its environment; returns the finished process and the environment it had."""
    return litmus(project, "run", "--base-url", base_url, "--out", "out", *args, env=secrets), litmus_env(**secrets)


def many_failures(count: int, per_step: int = 10) -> RunResult:
    """A run with `count` distinct failing json_path outcomes, each with a mismatch."""
    steps = []
    for s in range(count // per_step):
        assertions = [
            AssertionOutcome("json_path", "failed", f"value {s}-{a} differs", 10 + a, 7,
                             name=f"check {s}-{a}",
                             mismatches=[Mismatch(f"$.items[{a}].price", a, a + 1, f"expected {a}, got {a + 1}")])
            for a in range(per_step)
        ]
        steps.append(StepResult(f"step {s}", 9, "failed", request=RequestExcerpt("GET", f"https://t.example/items/{s}"),
                                response=ResponseExcerpt(200, 3.0), assertions=assertions))
    flow_run = FlowRunResult("big flow", 5, 0, IntentEvaluation("failed", "deterministic", "assertions failed"),
                             steps=steps)
    suite = SuiteResult("Huge", "probes/huge.yaml", 1, 100, 0.0, "failed", flow_runs=[flow_run])
    return RunResult(run=RunInfo("https://t.example", "2026-11-30T10:00:00Z", "2026-11-30T10:01:00Z"),
                     verdict="failed", suites=[suite])


def replay_curl(command: str, env: dict, cwd: Path) -> tuple[int, str]:
    """A report's curl command run by real curl in `cwd` (its `#` note lines aside): the final status and body."""
    first, *notes = command.splitlines()
    assert all(note.startswith("#") for note in notes)
    done = subprocess.run(f"{first} -s -o body.out -w '%{{http_code}}'", shell=True, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return int(done.stdout), (cwd / "body.out").read_text("utf-8")
