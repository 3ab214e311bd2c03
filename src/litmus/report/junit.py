"""JUnit XML (`junit.xml`) for test reporters (mikepenz/action-junit-report, EnricoMi, dorny, Jenkins).

- A `<testsuite>` per suite (`file` = the probe file), a `<testcase>` per flow run × step: classname
  `suite.flow`, name `step [scenario S, run 1 of 3]` (runs counted from 1), `file` and `line` = the
  step's line in the probe file (what the annotation reporters read), time = the response time in
  seconds (3 decimals at most; 0.000 without a response).
- Plus one `<testcase>` per flow run for its Intent Evaluation (name `intent evaluation [...]`, at the
  flow's line, time = its judge calls' time): it is what decides the suite verdict. A failed
  *deterministic* Intent Evaluation only restates its run's failing steps, so it is not a second
  failure (its reason goes to system-out): `failures` counts each failure once.
- `<failure type=RULE message=...>` per failed (or needs_review) assertion, the mismatch table as
  text in its body; `<error>` when the step got no (complete) response or an assertion could not be evaluated.
  As in Java's reports (type = the exception's class, message = its message), the message never
  repeats the type, which reporters show before it (dorny/test-reporter: `type: message`); an
  assertion's name leads its message. `<skipped message=...>` for a skipped step, with the reasons.
  The request/response excerpt goes to `<system-out>`.
- Suite counts are junit-xml's: testcases with a failure, with an error, skipped (a testcase with two
  failing assertions counts once in `failures` and carries two `<failure>` elements).

Built with junit-xml; we then drop its `disabled` attribute and write every time (junit-xml leaves out
a zero one) with 3 decimals, which the Jenkins junit-10 XSD requires. Characters XML 1.0 cannot hold
are written as visible escapes (`\\x1b`) before they reach the document.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from junit_xml import TestCase, TestSuite

from litmus import verdict
from litmus.report import findings as fd
from litmus.report.markdown_text import visible
from litmus.report.options import Options
from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    RunResult,
    StepResult,
    SuiteResult,
    run_label,
    runs_per_flow,
)
from litmus.text import clip

BODY_LIMIT = 20_000


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _run_label(flow_run: FlowRunResult, runs: int) -> str:
    scenario = f"scenario {flow_run.scenario}, " if flow_run.scenario else ""
    return f"[{scenario}{run_label(flow_run.run_index, runs)}]"


def _mismatch_table(outcome: AssertionOutcome) -> str:
    rows = [("path", "expected", "actual", "reason")]
    rows += [(m.path, fd.show(m.expected, 80), fd.show(m.actual, 80), clip(m.reason, 200))
             for m in outcome.mismatches]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(" | ".join([*(row[i].ljust(widths[i]) for i in range(3)), row[3]]).rstrip() for row in rows)


def _judge_lines(record, score, threshold) -> list[str]:
    if record is None:
        return []
    lines = [f"judge: score {score} vs threshold {threshold}, escalated: {record.escalated}"]
    for index, tier in enumerate(record.tiers):
        lines.append(f"  tier {index + 1} {tier.provider}/{tier.model} score {tier.score} "
                     f"cached {tier.cached}: {tier.reason}")
    return lines


def _outcome_body(outcome: AssertionOutcome, step: StepResult, suite: SuiteResult, flow_run: FlowRunResult) -> str:
    lines = [f"{suite.file}:{outcome.line}:{outcome.column}: {outcome.type}: {outcome.reason}"]
    if outcome.mismatches:
        lines += ["", _mismatch_table(outcome)]
    judge = _judge_lines(outcome.judge, outcome.score, outcome.threshold)
    if judge:
        lines += ["", *judge]
    if step.request is not None:
        lines += ["", "reproduce:", fd.step_curl(flow_run, step, 2_000)]
    return clip("\n".join(lines), BODY_LIMIT)


def _step_case(suite: SuiteResult, flow_run: FlowRunResult, step: StepResult, runs: int) -> TestCase:
    case = TestCase(
        f"{step.name} {_run_label(flow_run, runs)}", classname=f"{suite.name}.{flow_run.flow}",
        elapsed_sec=(step.response.elapsed_ms / 1000) if step.response else 0.0,
        file=suite.file, line=str(step.line), allow_multiple_subelements=True,
    )
    if step.status == "error" and step.error:
        request = f"{step.request.method} {step.request.url}: " if step.request else ""
        case.add_error_info(f"{fd.transport_label(step)}: {step.error}", f"{request}{step.error}", fd.TRANSPORT_ERROR)
    for outcome in step.assertions:
        named = f"{outcome.name}: " if outcome.name else ""
        if outcome.status == "failed":
            case.add_failure_info(f"{named}{outcome.reason}", _outcome_body(outcome, step, suite, flow_run),
                                  outcome.type)
        elif outcome.status == "needs_review":
            # Typed needs_review, so the assertion's type is said here.
            case.add_failure_info(f"{outcome.name or outcome.type} needs human review: {outcome.reason}",
                                  _outcome_body(outcome, step, suite, flow_run), fd.NEEDS_REVIEW)
        elif outcome.status == "error" or outcome.judge_skip in verdict.UNEVALUATED_REASONS:
            case.add_error_info(f"{named}could not be evaluated: {outcome.reason}",
                                _outcome_body(outcome, step, suite, flow_run), outcome.type)
    if step.status == "skipped":
        reasons = sorted({o.reason for o in step.assertions if o.status == "skipped"}) or [step.error or "skipped"]
        case.add_skipped_info("; ".join(reasons))
    if step.request is not None:
        case.stdout = f"{step.request.method} {step.request.url} -> {fd.response_text(step)}"
        if step.response is not None and step.response.body:
            case.stdout += "\n\n" + clip(step.response.body, 4_000)
    return case


def _conversation_case(suite: SuiteResult, flow_run: FlowRunResult, outcome: AssertionOutcome,
                       runs: int) -> TestCase:
    """A conversation assertion, judged on the flow run's transcript: the numbered transcript in its body."""
    case = TestCase(f"conversation › {outcome.name or outcome.type} {_run_label(flow_run, runs)}",
                    classname=f"{suite.name}.{flow_run.flow}", elapsed_sec=0.0, file=suite.file,
                    line=str(outcome.line), allow_multiple_subelements=True)
    lines = [f"{suite.file}:{outcome.line}:{outcome.column}: {outcome.type}: {outcome.reason}"]
    if outcome.mismatches:
        lines += ["", _mismatch_table(outcome)]
    lines += ["", *_judge_lines(outcome.judge, outcome.score, outcome.threshold)]
    lines += ["", fd.transcript_text(flow_run.transcript or [], fd.blamed_turns(outcome))]
    body = clip("\n".join(lines), BODY_LIMIT)
    named = f"{outcome.name}: " if outcome.name else ""
    if outcome.status == "failed":
        case.add_failure_info(f"{named}{outcome.reason}", body, outcome.type)
    elif outcome.status == "needs_review":
        case.add_failure_info(f"{outcome.name or outcome.type} needs human review: {outcome.reason}", body,
                              fd.NEEDS_REVIEW)
    elif outcome.status == "error" or outcome.judge_skip in verdict.UNEVALUATED_REASONS:
        case.add_error_info(f"{named}could not be evaluated: {outcome.reason}", body, outcome.type)
    elif outcome.status == "skipped":
        case.add_skipped_info(outcome.reason)
    return case


def _intent_case(suite: SuiteResult, flow_run: FlowRunResult, runs: int) -> TestCase:
    intent: IntentEvaluation = flow_run.intent_evaluation
    judge_ms = sum(tier.latency_ms for tier in intent.judge.tiers) if intent.judge else 0.0
    case = TestCase(f"intent evaluation {_run_label(flow_run, runs)}", classname=f"{suite.name}.{flow_run.flow}",
                    elapsed_sec=judge_ms / 1000, file=suite.file, line=str(flow_run.line),
                    allow_multiple_subelements=True)
    body = "\n".join([f"{suite.file}:{flow_run.line}: {intent.method} intent evaluation: {intent.reason}",
                      *_judge_lines(intent.judge, intent.score, intent.threshold)])
    if flow_run.skipped:
        case.add_skipped_info(f"not run: {flow_run.skipped}")
    elif intent.status == "failed" and intent.method == "deterministic":
        # It restates the failures of this run's steps, already failing testcases: counted once.
        case.stdout = f"intent not achieved (deterministic): {intent.reason}"
    elif intent.status == "failed":
        case.add_failure_info(f"intent not achieved: {intent.reason}", body, fd.INTENT_EVALUATION)
    elif intent.status == "needs_review":
        case.add_failure_info(f"intent evaluation needs human review: {intent.reason}", body, fd.NEEDS_REVIEW)
    elif intent.status == "error":
        case.add_error_info(f"intent could not be evaluated: {intent.reason}", body, fd.INTENT_EVALUATION)
    return case


def _clean(element: ET.Element) -> None:
    """XML-safe text everywhere; junit-10 XSD: no `disabled`, times with at most 3 decimals."""
    element.attrib.pop("disabled", None)
    for key, value in element.attrib.items():
        element.set(key, visible(value))
    if element.text:
        element.text = visible(element.text)
    for child in element:
        _clean(child)


def render(result: RunResult, **options) -> str:
    Options(**options)  # same options as every reporter; JUnit needs none of them
    root = ET.Element("testsuites", {"name": "litmus"})
    totals = dict.fromkeys(("tests", "failures", "errors"), 0)
    time = 0.0
    for suite in result.suites:
        runs = runs_per_flow(suite)
        # A failed setup fails the suite, so its steps are testcases; teardown outcomes never change the
        # verdict (litmus.verdict: warnings), and a test report has no warning: they are not testcases.
        setup = [run for run in verdict.phase_runs(suite) if run.flow == verdict.SETUP]
        cases = [_step_case(suite, run, step, 1) for run in setup for step in run.steps]
        for flow_run in suite.flow_runs:
            count = runs[flow_run.flow, flow_run.scenario]
            cases += [_step_case(suite, flow_run, step, count) for step in flow_run.steps]
            cases += [_conversation_case(suite, flow_run, outcome, count)
                      for outcome in flow_run.conversation_assertions]
            cases.append(_intent_case(suite, flow_run, count))
        element = TestSuite(suite.name, cases, timestamp=result.run.started_at, file=suite.file).build_xml_doc()
        _clean(element)
        # junit-xml leaves out a zero time; reporters then show no duration, and Ant's XSD requires one.
        suite_time = sum(case.elapsed_sec for case in cases)
        element.set("time", _seconds(suite_time))
        for testcase, case in zip(element.iter("testcase"), cases, strict=True):
            testcase.set("time", _seconds(case.elapsed_sec))
        root.append(element)
        for key in totals:
            totals[key] += int(element.get(key))
        time += suite_time
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", _seconds(time))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
