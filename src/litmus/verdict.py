"""The verdict: what a finding is, whether each flow run, suite and the run passed, the exit code under
`--fail-on`, and the check run's conclusion. docs/verdict.md is its truth table.

Everything that says "failed", "passed" or "N findings" reads this module: the runner and `merge`
(verdicts), identity stamping and the baseline comparison (findings), every report, the console, the
check run and annotations (findings, levels), `litmus run`, `litmus compare` and the action (exit code).
The functions read results only, and findings are yielded one at a time from any iterable of suites,
so a results writer that streams suites can use them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from litmus.identity import (
    INTENT,
    TRANSPORT,
    conversation_outcome_keys,
    finding_key,
    fingerprint,
    flow_key,
    outcome_keys,
)
from litmus.results import (
    AssertionOutcome,
    FlowComparison,
    FlowRunResult,
    IntentEvaluation,
    RunResult,
    StepResult,
    SuiteResult,
)
from litmus.text import count

FailOn = Literal["suite", "assertion", "new", "never"]
Level = Literal["error", "warning"]
Conclusion = Literal["success", "failure", "neutral", "cancelled"]

# An outcome that did not pass: it fails a deterministic Intent Evaluation, triggers on_failure, and
# (when `critical`) fails its flow run.
NOT_PASSED = frozenset({"failed", "error", "needs_review"})
# Why an LLM-based check was not put to a judge, for the causes that fail its suite (the contract's "When
# nothing was checked, nothing passes"); `disabled` (--no-judge) is a choice and fails nothing.
UNEVALUATED_REASONS: dict[str, str] = {
    # With the ways to a judge: a run without one is most often a first run, or a forgotten setting.
    "no_judge": "no judge configured: add a judge: block to litmus.yaml (or --judge-provider / LITMUS_JUDGE_PROVIDER) "
                "and set its API key variable, or replay recorded verdicts with --judge-provider replay; --no-judge "
                "runs deterministic checks only (docs/judges.md)",
    "budget": "the judge budget (max_calls) ran out",
}
# A finding's kind decides its level: a failure claims the target is wrong; an outcome that could not
# be evaluated (or that no judge could decide) asks a human to look without claiming that.
LEVELS: dict[str, Level] = {
    "failed": "error", "transport_error": "error", "error": "warning", "needs_review": "warning",
}
SETUP, TEARDOWN = "setup", "teardown"


@dataclass(frozen=True)
class Checked:
    """One checked thing of one flow run (or of the suite's setup or teardown): an assertion, a step's
    exchange, or an Intent Evaluation. `record` carries its `id` and `baseline` in results.json."""

    key: str  # litmus.identity.finding_key
    part: str  # an assertion key, TRANSPORT or INTENT
    status: str
    suite: SuiteResult
    flow_run: FlowRunResult
    step: StepResult | None
    record: AssertionOutcome | StepResult | IntentEvaluation
    phase: str | None = None  # SETUP or TEARDOWN for the suite's own steps

    @property
    def kind(self) -> str | None:
        """"failed", "error", "needs_review" or "transport_error" when this is a finding, else None."""
        if self.part == TRANSPORT:
            return "transport_error" if self.status == "error" else None
        if self.status in NOT_PASSED:
            return self.status
        if self.status == "skipped" and getattr(self.record, "judge_skip", None) in UNEVALUATED_REASONS:
            return "error"  # an LLM-based check no judge evaluated: it could not be evaluated
        return None

    @property
    def is_finding(self) -> bool:
        return self.kind is not None

    @property
    def level(self) -> Level:
        # The contract: teardown outcomes are reported but never change the verdict, so they are warnings.
        return "warning" if self.phase == TEARDOWN else LEVELS[self.kind]

    @property
    def blocks(self) -> bool:
        """A finding that fails the run under `--fail-on assertion` and (when new) `--fail-on new`."""
        return self.is_finding and self.phase != TEARDOWN


def phase_runs(suite: SuiteResult) -> list[FlowRunResult]:
    """The suite's setup and teardown, each read as a flow run of its own named `setup` / `teardown`
    (so their steps have identities and findings like any flow's)."""
    return [FlowRunResult(flow=phase, line=steps[0].line, run_index=0, steps=steps,
                          intent_evaluation=IntentEvaluation("passed", "deterministic", phase))
            for phase, steps in ((SETUP, suite.setup), (TEARDOWN, suite.teardown)) if steps]


def checked(suites: Iterable[SuiteResult]) -> Iterator[Checked]:
    """Everything the suites checked, in document order (flow runs, then setup, then teardown).

    A failed *deterministic* Intent Evaluation only restates its run's failed assertions, so only a
    judge's Intent Evaluation (or one that errored or needs review) is a thing of its own; a flow run a
    failed setup skipped checked nothing (the setup step's failure is the finding)."""
    for suite in suites:
        runs = [*((run, None) for run in suite.flow_runs), *((run, run.flow) for run in phase_runs(suite))]
        for flow_run, phase in runs:
            intent = flow_run.intent_evaluation
            if not flow_run.skipped and (intent.method == "judge" or intent.status in ("error", "needs_review")):
                key = finding_key(suite.name, flow_run.flow, flow_run.scenario, "", INTENT)
                yield Checked(key, INTENT, intent.status, suite, flow_run, None, intent, phase)
            for step in flow_run.steps:
                key = finding_key(suite.name, flow_run.flow, flow_run.scenario, step.name, TRANSPORT)
                got_no_response = step.status == "error" and bool(step.error)
                status = "error" if got_no_response else "skipped" if step.response is None else "passed"
                yield Checked(key, TRANSPORT, status, suite, flow_run, step, step, phase)
                for outcome, part, key in outcome_keys(suite, flow_run, step):
                    yield Checked(key, part, outcome.status, suite, flow_run, step, outcome, phase)
            # Judged on the whole transcript: findings of the flow run, like its Intent Evaluation.
            for outcome, part, key in conversation_outcome_keys(suite, flow_run):
                yield Checked(key, part, outcome.status, suite, flow_run, None, outcome, phase)


def findings(suites: Iterable[SuiteResult]) -> Iterator[Checked]:
    return (item for item in checked(suites) if item.is_finding)


def stamp(result: RunResult) -> RunResult:
    """Write the identities into the results document: `id` on every flow run, step, Intent Evaluation
    and assertion outcome (fingerprints of their keys), so scripts and later comparisons need not
    rebuild them; a finding not compared with any baseline gets `baseline: "none"`."""
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            flow_run.flow_id = fingerprint(flow_key(suite.name, flow_run.flow))
            flow_run.intent_evaluation.id = fingerprint(
                finding_key(suite.name, flow_run.flow, flow_run.scenario, "", INTENT))
    for item in checked(result.suites):
        item.record.id = fingerprint(item.key)
        if item.is_finding and item.record.baseline is None:
            item.record.baseline = "none"
    return result


# ---- verdicts

def decide_flow_run(flow_run: FlowRunResult) -> None:
    """Set the flow run's verdict from its Intent Evaluation and its critical assertions."""
    intent = flow_run.intent_evaluation
    critical = [(step.name, o) for step in flow_run.steps for o in step.assertions
                if o.critical and o.status in NOT_PASSED]
    critical += [("conversation", o) for o in flow_run.conversation_assertions if o.critical and o.status in NOT_PASSED]
    flow_run.status, flow_run.reason, flow_run.overruled_failures = intent.status, None, 0
    if critical:
        where, first = critical[0]
        more = f" and {len(critical) - 1} more" if len(critical) > 1 else ""
        flow_run.status = "failed"
        flow_run.reason = (f"critical assertion {first.name or first.type} (line {first.line}, step '{where}') "
                           f"{first.status}{more}; the Intent Evaluation ({intent.status}) cannot overrule it")
    elif intent.status == "passed" and intent.method == "judge":
        flow_run.overruled_failures = sum(
            (step.status == "error") + sum(o.status in NOT_PASSED for o in step.assertions)
            for step in flow_run.steps) + sum(o.status in NOT_PASSED for o in flow_run.conversation_assertions)


def decide_suite(suite: SuiteResult) -> None:
    """Set the suite's pass rate, verdict and reason from its flow runs, each decided again from its own
    data first (the runner and `merge` both use it, so merged shards get the runner's verdicts).

    The pass rate is the percentage of the flow runs that ran (skipped ones are left out) that passed;
    100 when none is here at all (another shard has them). The suite passes at `pass_threshold` or above,
    unless its setup failed, every flow run was skipped ("nothing checked"), or LLM-based checks went
    unevaluated.
    """
    ran = [run for run in suite.flow_runs if not run.skipped]
    for run in ran:
        decide_flow_run(run)
    passed = sum(run.status == "passed" for run in ran)
    suite.pass_rate = round(100 * passed / len(ran), 2) if ran else (0.0 if suite.flow_runs else 100.0)
    suite.verdict = "passed" if suite.pass_rate >= suite.pass_threshold else "failed"
    notes = []
    failed_setup = next((step for step in suite.setup if step.status in ("failed", "error")), None)
    if failed_setup is not None:
        suite.verdict = "failed"
        notes.append(f"setup step '{failed_setup.name}' {failed_setup.status}: the flow runs were skipped")
    elif suite.flow_runs and not ran:
        suite.verdict = "failed"
        notes.append("nothing checked: every flow run was skipped")
    causes = [item.record.judge_skip for item in checked([suite]) if item.is_finding and item.status == "skipped"]
    intents = [run.intent_evaluation.judge_skip for run in ran if run.intent_evaluation.judge_skip]
    # A simulated user turn the budget did not allow: the conversation was cut short, so it proves nothing.
    turns = [step.judge_skip for run in ran for step in run.steps if step.judge_skip]
    for cause, why in UNEVALUATED_REASONS.items():
        parts = [count(n, noun) for n, noun in ((causes.count(cause), "LLM-based assertion"),
                                                (intents.count(cause), "Intent Evaluation"),
                                                (turns.count(cause), "simulated user turn")) if n]
        if parts:
            suite.verdict = "failed"
            verb = "was" if causes.count(cause) + intents.count(cause) + turns.count(cause) == 1 else "were"
            notes.append(f"{' and '.join(parts)} {verb} not evaluated: {why}")
    turned_off = sum(o.judge_skip == "disabled" for run in ran
                     for o in [*(o for step in run.steps for o in step.assertions), *run.conversation_assertions])
    if turned_off:
        notes.append(f"{count(turned_off, 'LLM-based assertion')} skipped: judging turned off "
                     "(--no-judge or judge.provider none)")
    suite.reason = "; ".join(notes) or None


def skipped_note(suites: Iterable[SuiteResult]) -> str | None:
    """What every headline says was not checked: flow runs skipped (`skip:`, a failed setup) and steps
    skipped in the flow runs that ran ("1 flow run and 2 steps skipped"); None when nothing was skipped."""
    runs = steps = 0
    for suite in suites:
        for flow_run in suite.flow_runs:
            if flow_run.skipped:
                runs += 1
            else:
                steps += sum(step.status == "skipped" for step in flow_run.steps)
    parts = [count(n, noun) for n, noun in ((runs, "flow run"), (steps, "step")) if n]
    return f"{' and '.join(parts)} skipped" if parts else None


def decide_run(result: RunResult) -> None:
    """The run passes when it has suites, every one passed, and it was not interrupted (an incomplete run
    proves nothing; a run of no suite checked nothing)."""
    passed = bool(result.suites) and all(s.verdict == "passed" for s in result.suites) and not result.run.interrupted
    result.verdict = "passed" if passed else "failed"


# ---- what the run's verdict does: the exit code and the check run

def nothing_checked(result: RunResult) -> bool:
    """No suite was selected (changed-only touched none): the run says nothing, neither passed nor failed."""
    return not result.suites and not result.run.interrupted


def over_cost_limit(result: RunResult) -> list[FlowComparison]:
    """The flows whose tokens or cost per run rose beyond --max-cost-increase against the baseline
    (`litmus.compare`): regressed flows that fail the run under every --fail-on but `never`, as the limit is a
    gate the operator set on purpose."""
    summary = result.baseline
    return [flow for flow in summary.flows if flow.usage is not None and flow.usage.over_limit] if summary else []


def over_cost_limit_text(result: RunResult) -> str | None:
    """'1 flow over --max-cost-increase 20%', or None."""
    flows = over_cost_limit(result)
    if not flows:
        return None
    return f"{count(len(flows), 'flow')} over --max-cost-increase {result.baseline.max_cost_increase:g}%"


def fails(result: RunResult, fail_on: FailOn) -> bool:
    """Whether the run fails under `--fail-on`:
    - every mode but never: a flow's tokens or cost rose beyond --max-cost-increase (`over_cost_limit`);
    - suite: a suite failed (or the run was interrupted);
    - assertion: that, or any finding outside the teardown (a flow run its pass_threshold let pass);
    - new: a finding outside the teardown that is not already failing in the baseline (without a baseline
      every finding is new), a regressed flow, a failed suite without such a finding to compare (nothing
      checked), or an interrupted run;
    - never: nothing fails it."""
    if fail_on == "never" or nothing_checked(result):
        return False
    if result.run.interrupted or over_cost_limit(result):
        return True
    if fail_on == "suite":
        return result.verdict == "failed"
    blocking = [item for item in findings(result.suites) if item.blocks]
    if fail_on == "assertion":
        return result.verdict == "failed" or bool(blocking)
    unexplained = {id(s) for s in result.suites if s.verdict == "failed"} - {id(item.suite) for item in blocking}
    regressed = result.baseline is not None and result.baseline.regressed > 0
    return regressed or bool(unexplained) or any(item.record.baseline != "unchanged" for item in blocking)


def exit_code(result: RunResult, fail_on: FailOn) -> int:
    return 1 if fails(result, fail_on) else 0


def conclusion(result: RunResult, fail_on: FailOn, *, unproven: bool = False) -> Conclusion:
    """The check run's conclusion: it agrees with the exit code (under `never`, with `suite`'s, so the check
    still shows the verdict while the job goes on); `neutral` when nothing was checked or the merged results
    are of unproven provenance, `cancelled` when the run was interrupted."""
    if unproven or nothing_checked(result):
        return "neutral"
    if result.run.interrupted:
        return "cancelled"
    return "failure" if fails(result, "suite" if fail_on == "never" else fail_on) else "success"
