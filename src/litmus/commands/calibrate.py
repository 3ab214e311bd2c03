"""Measure how far to trust your judge: run it over replies humans labelled pass or fail, and compare.

  litmus calibrate probes/calibration/support.jsonl          # labels in a JSONL (or CSV) file
  litmus calibrate --results litmus-report/results.json      # the decisions of `litmus review`, with their replies
  litmus calibrate labels.csv --max-false-fail 0.05 --min-kappa 0.6 --out calibration/

Labels. A JSONL file has one JSON object a line, a CSV file a header row; both have the columns
  type      the judged assertion type (llm_rubric, tone, factual, no_hallucination, answers_question, or a
            scenario-aware one: consistent_with_scenario_data, accurate_with_scenario_context,
            no_hallucination_vs_scenario, contextual_evaluation)
  text      the reply the judge reads
  verdict   pass or fail: what a human says of that reply
  the type's fields (rubric, tone, ground_truth, context, question), for scenario-aware types scenario_data (JSON;
  in CSV a JSON text) and reference_response; optionally id (default: file:line). In CSV an empty cell is no value.
A YAML file among LABELS is a decisions file; without one, the decisions file (.litmus/decisions.yaml) is read
when no LABELS are given or when --results is.
Decisions hold no text: --results names the results.json files of the runs they were made on, and each decision
is paired with the outcome of the same finding id and content hash there; its reply is read from results.json and
its fields from the probe file, and it counts only when they give the same content hash again (a reply masked or
cut in results.json, or a probe changed since, cannot be rebuilt: such decisions are counted and named, as are
decisions no results file has). To label judge-passed replies too, use `litmus review --sample N`.

The judge is the configured one (litmus.yaml, LITMUS_* variables, the --judge-* flags, as for `litmus run`): the
same prompts, the same verdict cache (a label judged before costs no call), escalation and max_calls budget. Every
label is judged at the configured threshold (judge.threshold), whatever threshold a probe sets.

Per assertion type, and per label source: n; agreement and Cohen's kappa (kappa with a 95% bootstrap interval of
1000 resamples, seeded by --seed); the false-pass rate (of the replies a human failed, the share the judge passed:
what a merge gate lets through) and the false-fail rate (of those a human passed, the share the judge failed), with
95% Wilson intervals; all over the replies the judge decided. The needs_review rate is its own figure. A threshold
sweep (0-100, over the first tier's score) gives the suggested threshold: the fewest false passes among thresholds
whose false-fail rate is at most --max-false-fail, ties to the lowest; and the suggested escalation.band: the
smallest that sends every disagreement at that threshold to escalation. Below 30 labels of a type nothing is
suggested. Calibration only reports: it changes no verdict and writes no setting.

Writes --out/calibration.json (docs/judges.md, schema src/litmus/schemas/calibration.schema.json) and
--out/calibration.html (the sweep plotted; no external assets), and prints a Markdown table.

Exit status: 0 done, 1 a type's kappa is below --min-kappa (or undefined), 2 bad input (a malformed label, with its
file:line; no labels; no judge configured; unreadable files), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from litmus.calibration import DEFAULT_MAX_FALSE_FAIL, DEFAULT_SEED
from litmus.config import add_config_arguments
from litmus.decisions import DECISIONS_FILE, Decision, DecisionSource, load_decisions
from litmus.errors import Diagnostic, Position, ProbeError, render_diagnostics
from litmus.judges.assertion import NotJudgeable, build_prompt
from litmus.labels import (
    CALIBRATED,
    CalibrateError,
    Label,
    calibration_document,
    judge_labels,
    label_context,
    read_labels,
    read_text,
    write_calibration,
)
from litmus.load import repo_root
from litmus.model import Assertion, Suite
from litmus.numbers import number_argument
from litmus.results import OutputError, ResultsError, RunResult, check_output_dir, load_results
from litmus.text import count

DEFAULT_OUT = "litmus-calibration"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("labels", nargs="*", metavar="LABELS",
                        help="JSONL or CSV label files, or a decisions file (.yaml); default: the decisions file "
                             f"{DECISIONS_FILE}")
    parser.add_argument("--results", nargs="+", action="extend", default=[], metavar="FILE",
                        help="results.json files whose judged outcomes the decisions were made on (needed with "
                             "decisions: they hold the replies)")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                        help=f"where calibration.json and calibration.html go (default: {DEFAULT_OUT}/)")
    parser.add_argument("--max-false-fail", type=number_argument(whole=False, low=0, high=1),
                        default=DEFAULT_MAX_FALSE_FAIL, metavar="RATE",
                        help="the highest false-fail rate (0-1) the suggested threshold may have "
                             f"(default: {DEFAULT_MAX_FALSE_FAIL})")
    parser.add_argument("--min-kappa", type=number_argument(whole=False, low=-1, high=1), metavar="K",
                        help="exit 1 when any type's kappa is below K (or undefined), e.g. 0.6")
    parser.add_argument("--seed", type=number_argument(whole=True, low=0, high=2**63), default=DEFAULT_SEED,
                        metavar="N", help=f"seed of the kappa bootstrap (default: {DEFAULT_SEED})")
    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    try:
        return _calibrate(args, os.environ)
    except CalibrateError as exc:
        print(f"litmus calibrate: error: {exc}", file=sys.stderr)
        return 2
    except ProbeError as exc:
        print(render_diagnostics(exc.diagnostics), file=sys.stderr)
        return 2


def _calibrate(args: argparse.Namespace, environ) -> int:
    from litmus.config import resolve_config  # lazy: only a calibration that got this far needs the judge
    from litmus.judges.service import JudgeConfigError, JudgeService  # lazy: as above
    from litmus.report.calibration import markdown  # lazy: as above

    root = repo_root()
    label_files = [name for name in args.labels if not _is_decisions(name)]
    # The work tree's decisions file when no LABELS are given, or when --results asks for decisions to pair.
    decision_files = [name for name in args.labels if _is_decisions(name)] or (
        [None] if args.results or not args.labels else [])
    labels, problems = [], []
    for name in label_files:
        found, wrong = read_labels(name)
        labels += found
        problems += wrong
    decided, unmatched = [], []
    for name in decision_files:
        found, missed, wrong = decision_labels(root, name, args.results)
        decided += found
        unmatched += missed
        problems += wrong
    if problems:
        raise ProbeError(problems)
    labels += decided
    if not labels:
        missed = "".join(f"\n  {note['where']}: finding {note['finding']}: {note['why']}" for note in unmatched)
        raise CalibrateError("no labelled reply to judge" + (f": {count(len(unmatched), 'decision')} matched no "
                             "rebuildable outcome" if unmatched else "") + "; give a JSONL or CSV labels file, or "
                             "record decisions with `litmus review` and name their runs with --results" + missed)
    config = resolve_config(args, environ, root)
    if config.judge is None:
        raise CalibrateError("calibrate needs a judge: set `judge` in litmus.yaml, or --judge-provider and "
                             "--judge-model")
    try:
        out = check_output_dir(args.out, root)
    except OutputError as exc:
        raise CalibrateError(f"--out: {exc}") from None
    try:
        service = JudgeService.from_config(config.judge, environ)
    except JudgeConfigError as exc:
        raise CalibrateError(f"judge configuration: {exc}") from None
    try:
        outcomes = judge_labels(service, labels)
    finally:
        service.close()
    document = calibration_document(labels, outcomes, config.judge, unmatched, args.max_false_fail, args.seed)
    write_calibration(document, out)
    print(markdown(document))
    print(f"\nwritten: {out / 'calibration.json'}, {out / 'calibration.html'}")
    if args.min_kappa is not None:
        below = [kind for kind, figures in document["types"].items()
                 if figures["kappa"]["value"] is None or figures["kappa"]["value"] < args.min_kappa]
        if below:
            print(f"kappa below --min-kappa {args.min_kappa:g}: {', '.join(below)}", file=sys.stderr)
            return 1
    return 0


def _is_decisions(name: str) -> bool:
    return name.lower().endswith((".yaml", ".yml"))


# ---- decisions, paired with results.json

def decision_labels(root: Path, name: str | None, results: list[str]) -> tuple[list[Label], list[dict],
                                                                                list[Diagnostic]]:
    """The decisions of `name` (None: the work tree's decisions file) as labels, with the replies of the
    `results` files; the decisions that could not be paired (each with why); the file's positioned errors."""
    shown = name or DECISIONS_FILE
    path = Path(name) if name else root / DECISIONS_FILE
    if name is None and not path.exists():
        raise CalibrateError(f"no labels: name JSONL or CSV label files, or record decisions in {DECISIONS_FILE} "
                             "with `litmus review` (there is none)")
    loaded = load_decisions([DecisionSource(shown, read_text(str(path), "decisions files").encode("utf-8"))])
    if loaded.errors:
        return [], [], loaded.errors
    if not results:
        raise CalibrateError(f"{shown}: decisions hold no text: name the results.json files of the runs they were "
                             "made on with --results")
    outcomes: dict[tuple[str, str], tuple[str, Any, Any, Any]] = {}
    intents: set[tuple[str, str]] = set()
    for results_name in results:
        try:
            result = load_results(results_name)
        except ResultsError as exc:
            raise CalibrateError(str(exc)) from None
        _index(results_name, result, outcomes, intents)
    labels, unmatched = [], []
    for decision in loaded.decisions:
        found = outcomes.get(decision.key)
        why = None
        if found is None:
            why = ("an Intent Evaluation: calibrate judges assertions" if decision.key in intents else
                   "no judged outcome with this finding id and content hash in the --results files")
        else:
            label_or_why = _decided_label(root, shown, decision, *found)
            if isinstance(label_or_why, str):
                why = label_or_why
            else:
                labels.append(label_or_why)
        if why:
            unmatched.append({"finding": decision.finding, "content": decision.content, "where": decision.where,
                              "why": why})
    return labels, unmatched, []


def _index(name: str, result: RunResult, outcomes: dict, intents: set) -> None:
    for suite in result.suites:
        steps = [*suite.setup, *(step for run in suite.flow_runs for step in run.steps), *suite.teardown]
        for step in steps:
            for outcome in step.assertions:
                if outcome.content_sha256:
                    outcomes.setdefault((outcome.id, outcome.content_sha256), (name, suite, step, outcome))
        intents.update((run.intent_evaluation.id, run.intent_evaluation.content_sha256) for run in suite.flow_runs)


def _decided_label(root: Path, source: str, decision: Decision, results_name: str, suite, step,
                   outcome) -> Label | str:
    """The decision's reply rebuilt from results.json and the probe file, or why it cannot be."""
    from litmus.commands.review import probe_fields  # lazy: review's reader of an assertion in its probe file

    spec = CALIBRATED.get(outcome.type)
    if spec is None:
        return f"a {outcome.type} check: calibrate judges assertions on one reply ({', '.join(sorted(CALIBRATED))})"
    if spec.family == "scenario":
        return (f"a {outcome.type} check: results.json does not keep the scenario data; label such replies in a "
                "JSONL or CSV file (scenario_data, reference_response)")
    if step.response is None or step.response.body is None:
        return f"{results_name} holds no reply for this outcome"
    fields = probe_fields(root, suite.file, outcome.line, outcome.column)
    if fields.get("type") != outcome.type:
        return (f"{suite.file}:{outcome.line}:{outcome.column} holds no {outcome.type} check (the probe changed, or "
                "the file cannot be read inside the repository)")
    where = Position(suite.file, outcome.line, outcome.column)
    assertion = Assertion(pos=where, type=outcome.type, select=fields.get("select"),
                          params={name: fields[name] for name in spec.fields if name in fields})
    context = label_context(step.response.body.encode("utf-8"), Suite(pos=where, name=suite.name, intent=suite.intent),
                       None)
    try:
        content = build_prompt(assertion, context).content_sha256
    except NotJudgeable as exc:
        return f"the reply in {results_name} cannot be judged again: {exc}"
    if content != decision.content:
        return (f"the reply and fields rebuilt from {results_name} and {suite.file} hash differently: the reply was "
                "masked or cut in results.json, or the check's fields use templates or changed")
    return Label(source, decision.where, decision.finding, assertion, context, decision.verdict == "pass")
