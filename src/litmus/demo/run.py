"""`litmus demo` end to end: target up, suites run with replayed judge verdicts, results and reports out.

Shared with `bench/record_demo_cassettes.py`, which runs the same suites against the same target
with a live (scripted) judge to re-record the cassettes: both take the judge settings from
`demo_judge_config`, so what is recorded is exactly what the demo replays.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from litmus.calibration import DEFAULT_MAX_FALSE_FAIL, DEFAULT_SEED
from litmus.config import EscalationConfig, JudgeConfig, ProviderConfig
from litmus.console import Console
from litmus.demo.target import DEMO_ENVIRONMENT, DemoCredentials, running_demo_target
from litmus.errors import ProbeError, render_diagnostics
from litmus.judges import JudgeService
from litmus.labels import (
    CalibrateError,
    Label,
    calibration_document,
    judge_labels,
    label_files,
    read_labels,
    write_calibration,
)
from litmus.load import load_suites, repo_root
from litmus.pipeline import ConsoleChannel, RunRequest, execute
from litmus.run.runner import RunOptions
from litmus.trust import Trust
from litmus.usage import Price
from litmus.verdict import FailOn, exit_code

# The demo's judge: two tiers and an escalation band, so the replayed verdicts can show a decided,
# an escalated and a needs_review outcome. The replay provider keys cassettes by prompt and tier only.
ESCALATION_BAND = 10
REPLAY = ProviderConfig("replay", "recorded")
# The login user name is no secret (docs/demo.md): shown in the reports, as `--env-allow` would; the two
# `secrets.` values stay masked.
DEMO_TRUST = Trust.local(env_allow=("LITMUS_DEMO_USER",))
# What litmus.yaml's `pricing:` would say for the demo's assistant (USD per million tokens): the entry is a
# prefix of the model the API names (demo-assistant-1), as a dated model is priced by its family's entry.
DEMO_PRICING = {"demo-assistant": Price(input_per_mtok=0.15, output_per_mtok=0.6)}


def demo_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` plus the documented LITMUS_DEMO_* values for the variables it does not set."""
    return {**DEMO_ENVIRONMENT, **environ}


def cassette_dir(probes: Path) -> Path:
    """The directory whose `cassettes/` folder holds the demo's recorded verdicts: next to the suites."""
    return probes if probes.is_dir() else probes.parent


def demo_judge_config(probes: Path, tier1: ProviderConfig = REPLAY, tier2: ProviderConfig = REPLAY,
                      embeddings: ProviderConfig = REPLAY, record: bool = False) -> JudgeConfig:
    return JudgeConfig(
        provider=tier1.provider, model=tier1.model, base_url=tier1.base_url, api_key_env=tier1.api_key_env,
        cache=cassette_dir(probes), escalation=EscalationConfig(ESCALATION_BAND, tier2), embeddings=embeddings,
        # Replay never reads the verdict cache; recording must not either (every verdict is asked anew).
        use_cache=False, record=record,
        # Recording one call at a time keeps the scripted judge's answers in a fixed order.
        concurrency=1 if record else 8,
    )


def calibration_labels(probes: Path) -> tuple[list[Label], list]:
    """The labelled replies of `calibration/` next to the suites (its JSONL and CSV files), and their errors."""
    labels, problems = [], []
    for name in label_files(cassette_dir(probes) / "calibration"):
        found, wrong = read_labels(name, repo_root())
        labels += found
        problems += wrong
    return labels, problems


def has_cassettes(probes: Path) -> bool:
    return any((cassette_dir(probes) / "cassettes").glob("*.json"))


def run_demo(probes: Path, out: Path, fail_on: FailOn, environ: Mapping[str, str], stdout: TextIO,
             stderr: TextIO, sarif_category: str | None = None) -> int:
    environ = demo_environment(environ)
    console = Console(stdout, stderr, environ=environ)
    try:
        suites = load_suites([probes], environ=environ, trust=DEMO_TRUST, named_anywhere=True).suites
    except ProbeError as exc:
        print(render_diagnostics(exc.diagnostics), file=stderr)
        return 2
    cassettes = cassette_dir(probes) / "cassettes"
    judge = JudgeService.from_config(demo_judge_config(probes), environ) if has_cassettes(probes) else None
    print(f"judge: verdicts replayed from {cassettes}" if judge else
          f"judge: none (no recorded verdicts in {cassettes}): LLM-based assertions are skipped", file=stdout)
    with running_demo_target(DemoCredentials.from_environment(environ)) as base_url:
        print(f"demo target: {base_url} (litmus.demo.target)\n", file=stdout)
        # The one run pipeline, from the run on: the demo's suites and judge are its own, not a config's.
        request = RunRequest(paths=[probes], root=repo_root(), out_dir=out, environ=environ,
                             options=RunOptions(base_url=base_url, fail_on=fail_on, trust=DEMO_TRUST,
                                                pricing=DEMO_PRICING),
                             config_args=argparse.Namespace(), sarif_category=sarif_category)
        output = execute(request, ConsoleChannel(console), suites, judge)
    results_path = output.paths.get("results")
    console.report(output.result, str(results_path) if results_path else None)
    for problem in output.problems:
        print(f"litmus demo: error: {problem}", file=stderr)
    print("reports: " + ", ".join(str(path) for name, path in output.paths.items() if name != "results"), file=stdout)
    calibrated = demo_calibration(probes, out, environ, stdout, stderr) if judge else True
    if output.problems or not calibrated:
        return 2
    return exit_code(output.result, fail_on)


def demo_calibration(probes: Path, out: Path, environ: Mapping[str, str], stdout: TextIO, stderr: TextIO) -> bool:
    """How far to trust the demo's judge: its replayed verdicts on the labelled replies in calibration/, printed
    as `litmus calibrate` prints them and written next to the reports. False when that could not be done."""
    from litmus.report.calibration import markdown  # lazy: only a demo with labels needs it

    try:
        labels, problems = calibration_labels(probes)
    except CalibrateError as exc:
        print(f"litmus demo: error: {exc}", file=stderr)
        return False
    if problems:
        print(render_diagnostics(problems), file=stderr)
        return False
    if not labels:
        return True
    config = demo_judge_config(probes)
    service = JudgeService.from_config(config, environ)
    try:
        outcomes = judge_labels(service, labels)
    finally:
        service.close()
    document = calibration_document(labels, outcomes, config, [], DEFAULT_MAX_FALSE_FAIL, DEFAULT_SEED)
    try:
        write_calibration(document, out)
    except CalibrateError as exc:
        print(f"litmus demo: error: {exc}", file=stderr)
        return False
    print(f"\n{markdown(document)}\ncalibration: {out / 'calibration.json'}, {out / 'calibration.html'} "
          "(docs/judges.md, \"How far to trust your judge\")", file=stdout)
    return True
