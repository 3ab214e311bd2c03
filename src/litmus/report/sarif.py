"""SARIF 2.1.0 (`litmus.sarif`) for GitHub code scanning: findings as alerts on the probe lines.

- One run, of one tool. Given a category (`--sarif-category`, the action's `sarif-category`),
  `automationDetails.id` is "<category>/", as `upload-sarif` makes it of its own `category:`; without
  one the run has no `automationDetails`, so the uploader's category applies (`upload-sarif` only
  fills an id the file lacks). Either way several Litmus runs, e.g. per environment, can be uploaded
  for one commit without replacing each other.
- One rule per assertion type, plus `transport_error`, `intent_evaluation`, `needs_review` and
  `request_nonconforming` (step warnings, below); the `id` is the type (stable, what GitHub filters
  by), the `name` says what went wrong (SARIF §3.49.7: a name for people, so never the id again).
- One result per finding (see `litmus.report.findings`: runs of one flow and scenario failing the
  same assertion are one result listing the runs). Level: `error` for a failure or no response,
  `warning` for an outcome that could not be evaluated or that needs human review; `note` is used
  only for the notification saying results were cut.
- Exactly one location: the probe file, repository-relative with `uriBaseId: %SRCROOT%`, at the
  assertion's line and column (a step's line for a transport error, a flow's for its Intent
  Evaluation).
- `partialFingerprints["litmusFinding/v1"]`: a hash of suite, flow, step, assertion and scenario,
  never line numbers, so the identity survives edits above it. `primaryLocationLineHash` is left to
  `upload-sarif`, which computes it from the checked-out file.
- A step warning (`StepResult.warnings`: a probe request that does not conform to its OpenAPI operation)
  is a `warning` result of its own rule, `request_nonconforming`, on the step's line: never a finding,
  it decides nothing. The same text on one step in several runs is one result listing the runs.
- GitHub keeps only the 5,000 most severe results of a run (and rejects more than 25,000): past
  `MAX_RESULTS` results are dropped deterministically (errors before warnings, findings before step
  warnings, then file order) and
  a `note` notification in `invocations[0]` plus `properties.litmus.omittedResults` say how many.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from litmus import HOMEPAGE
from litmus.assertions import REGISTRY, spec
from litmus.report import findings as fd
from litmus.report.options import Options
from litmus.results import RunResult
from litmus.text import clip

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
MAX_RESULTS = 5_000  # GitHub displays at most this many per run
MESSAGE_LIMIT = 2_000
MISMATCHES_IN_PROPERTIES = 20
DESCRIPTION_LIMIT = 1_024  # GitHub's cap for short and full descriptions

# rule id -> its name: what a failed check means, in PascalCase (a code-scanning filter shows it).
_RULE_NAMES = {
    "status_code": "UnexpectedStatusCode",
    "response_time": "ResponseTooSlow",
    "json_path": "JsonPathMismatch",
    "contains": "MissingExpectedText",
    "not_contains": "ForbiddenTextPresent",
    "schema": "JsonSchemaViolation",
    "openapi": "OpenApiContractViolation",
    "extract_match": "ExtractedValueMismatch",
    "header": "HeaderMismatch",
    "cookie": "CookieMismatch",
    "body": "BodyMismatch",
    "xpath": "XPathMismatch",
    "url": "UnexpectedFinalUrl",
    "redirects": "UnexpectedRedirectCount",
    "python": "PythonCheckFailed",
    "tool_calls": "ToolCallMismatch",
    "tokens": "TooManyTokens",
    "cost": "CostTooHigh",
    "llm_rubric": "RubricNotMet",
    "tone": "WrongTone",
    "factual": "FactualError",
    "no_hallucination": "ContradictsGivenContext",
    "answers_question": "QuestionNotAnswered",
    "similar": "NotSimilarToReference",
    "consistent_with_scenario_data": "ContradictsScenarioData",
    "accurate_with_scenario_context": "DeviatesFromReferenceResponse",
    "no_hallucination_vs_scenario": "InventsFactsBeyondScenario",
    "contextual_evaluation": "ScenarioRubricNotMet",
    "knowledge_retention": "ForgetsEarlierFacts",
    "role_adherence": "LeavesItsRole",
    "conversation_completeness": "GoalNotMet",
    fd.TRANSPORT_ERROR: "NoResponse",
    fd.INTENT_EVALUATION: "IntentNotAchieved",
    fd.NEEDS_REVIEW: "NeedsHumanReview",
    fd.WARNING_RULE: "RequestDoesNotConformToOpenApi",
}

_SPECIAL_RULES = {
    fd.TRANSPORT_ERROR: (
        "A request got no response",
        "The step's request got no response at all: connection refused or reset, DNS failure, TLS error or "
        "timeout. The step's assertions are skipped and the flow run stops.",
        "Check that the target is up and reachable from the runner at the base URL the run used, and that "
        "the step's timeout_ms leaves it enough time. Reproduce with the curl command in the PR comment.",
        "error",
    ),
    fd.INTENT_EVALUATION: (
        "A flow run did not achieve the suite's intent",
        "A judge read the suite's intent and the flow run's transcript (requests, responses, assertion "
        "outcomes) and scored the run below the judge threshold.",
        "Read the judge's reason in the PR comment or report.html; the transcript excerpts show what the "
        "target answered. Fix the target, or the intent if it no longer says what users need.",
        "error",
    ),
    fd.NEEDS_REVIEW: (
        "The judges could not decide: a human must review",
        "An LLM judge's score fell inside the escalation band around the threshold (or its verdict could not "
        "be parsed) and no further tier decided. The outcome counts as not passed and is never silently passed.",
        "Read the response and every judge tier's score and reason in report.html and decide. A clearer rubric "
        "or a second judge tier (judge.escalation) makes such outcomes rarer.",
        "warning",
    ),
    fd.WARNING_RULE: (
        "A probe request does not conform to its OpenAPI operation",
        "The request a probe step sent does not conform to the operation of the suite's `openapi:` description "
        "that its method and path match: a required parameter missing, a parameter or body against its schema, "
        "an undeclared request content type. It is a warning on the step: it never changes the verdict.",
        "Fix the probe's request (or the description, if the API accepts what it sent). The message names the "
        "operation and each problem; report.html shows the request the step sent.",
        "warning",
    ),
}


def _rule(rule_id: str) -> dict:
    if rule_id in _SPECIAL_RULES:
        short, full, help_text, level = _SPECIAL_RULES[rule_id]
        tags = ["litmus"]
    else:
        assertion = spec(rule_id)
        short = f"{rule_id} assertion failed: {assertion.doc.rstrip('.')}"
        fields = "; ".join(f"{name}: {field.doc}" for name, field in assertion.fields.items()) or "none"
        kind = "an LLM judge" if assertion.llm_based else "a deterministic check (same input, same result)"
        full = f"A `{rule_id}` assertion of a probe step did not pass. It is {kind}. {assertion.doc} Fields: {fields}."
        help_text = (
            f"{assertion.doc} The alert's message lists each mismatch: the path in the response (or scenario data), "
            "what was expected, what came back and why. Fix the target, or the assertion at this line if the "
            "expectation is wrong. The PR comment has a curl command reproducing the request."
        )
        level = "error"
        tags = ["litmus", assertion.family]
    return {
        "id": rule_id,
        "name": _RULE_NAMES[rule_id],
        "shortDescription": {"text": clip(short, DESCRIPTION_LIMIT)},
        "fullDescription": {"text": clip(full, DESCRIPTION_LIMIT)},
        "help": {"text": help_text, "markdown": help_text},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": tags, "precision": "high", "problem.severity": level},
    }


RULE_IDS = [*REGISTRY, *_SPECIAL_RULES]


def automation_id(category: str) -> str:
    """The run's `automationDetails.id` for `category`, made as `upload-sarif` makes it of its own
    `category:` input (a `/` appended unless there is one), so both name the same category."""
    return category if category.endswith("/") else category + "/"


def _message(finding: fd.Finding) -> str:
    lines = [fd.summary_sentence(finding).rstrip(".") + "."]
    if finding.outcome is not None:
        for mismatch in finding.outcome.mismatches[1:MISMATCHES_IN_PROPERTIES]:
            lines.append(f"{mismatch.path}: expected {fd.show(mismatch.expected, 80)}, "
                         f"got {fd.show(mismatch.actual, 80)} ({clip(mismatch.reason, 120)}).")
    judge = fd.judge_text(finding)
    if judge:
        reason = fd.judge_reason(finding)
        lines.append(f"Judge: {judge}." + (f" {clip(reason, 400)}" if reason else ""))
    lines.append(f"In {fd.context_text(finding)}.")
    return clip(" ".join(lines), MESSAGE_LIMIT)


def _properties(finding: fd.Finding) -> dict:
    data = {
        "suite": finding.suite.name,
        "flow": finding.flow_run.flow,
        "step": finding.step.name if finding.step else None,
        "scenario": finding.scenario,
        "status": finding.kind,
        "runs": finding.runs,
        "totalRuns": finding.total_runs,
        "reason": clip(finding.reason, 1_000),
    }
    step = finding.step
    if step is not None and step.request is not None:
        data["request"] = {"method": step.request.method, "url": step.request.url}
    if step is not None and step.response is not None:
        data["response"] = {"status": step.response.status, "elapsedMs": step.response.elapsed_ms}
    if finding.outcome is not None and finding.outcome.mismatches:
        data["mismatches"] = [
            {"path": m.path, "expected": fd.show(m.expected), "actual": fd.show(m.actual),
             "reason": clip(m.reason, 300)}
            for m in finding.outcome.mismatches[:MISMATCHES_IN_PROPERTIES]
        ]
    if finding.score is not None:
        data["score"] = finding.score
        data["threshold"] = finding.threshold
    judge = fd.judge_text(finding)
    if judge:
        data["judge"] = judge
    return {"litmus": data}


def _location(file: str, line: int, column: int) -> list[dict]:
    return [{
        "physicalLocation": {
            "artifactLocation": {"uri": quote(file), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": line, "startColumn": column, "endLine": line},
        },
    }]


def _warning_result(warning: fd.StepWarning, rule_index: dict[str, int]) -> dict:
    runs = warning.runs_text()
    return {
        "ruleId": fd.WARNING_RULE,
        "ruleIndex": rule_index[fd.WARNING_RULE],
        "level": "warning",
        "message": {"text": clip(f"{warning.text[:1].upper()}{warning.text[1:]}. In {warning.where}"
                                 f"{f', {runs}' if runs else ''}.", MESSAGE_LIMIT)},
        "locations": _location(warning.suite.file, warning.step.line, 1),
        "partialFingerprints": {"litmusFinding/v1": warning.fingerprint},
        "properties": {"litmus": {"suite": warning.suite.name, "flow": warning.flow_run.flow,
                                  "step": warning.step.name, "scenario": warning.flow_run.scenario,
                                  "status": "warning", "runs": warning.runs, "totalRuns": warning.total_runs}},
    }


def _result(finding: fd.Finding, rule_index: dict[str, int], compared: bool) -> dict:
    result = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index[finding.rule],
        "level": finding.level,
        "message": {"text": _message(finding)},
        "locations": _location(finding.suite.file, finding.line, finding.column),
        "partialFingerprints": {"litmusFinding/v1": finding.fingerprint},
        "properties": _properties(finding),
    }
    if compared and finding.baseline in ("new", "unchanged"):
        result["baselineState"] = finding.baseline
    return result


def render(result: RunResult, *, max_results: int = MAX_RESULTS, **options) -> str:
    opts = Options(**options)
    findings = fd.collect(result)
    warnings = fd.step_warnings(result.suites)
    reported: list[fd.Finding | fd.StepWarning] = [*findings, *warnings]
    kept = reported
    if len(reported) > max_results:
        def severity(i: int) -> tuple:
            item = reported[i]
            return (isinstance(item, fd.StepWarning) or item.level != "error", isinstance(item, fd.StepWarning), i)
        kept = [reported[i] for i in sorted(sorted(range(len(reported)), key=severity)[:max_results])]
    omitted = len(reported) - len(kept)
    compared = result.baseline is not None
    rule_index = {rule_id: index for index, rule_id in enumerate(RULE_IDS)}
    driver = {"name": "Litmus", "informationUri": HOMEPAGE, "rules": [_rule(rule_id) for rule_id in RULE_IDS]}
    if result.tool.version:
        driver["semanticVersion"] = result.tool.version
    invocation = {"executionSuccessful": not result.run.interrupted,
                  "startTimeUtc": result.run.started_at, "endTimeUtc": result.run.finished_at}
    if omitted:
        invocation["toolExecutionNotifications"] = [{
            "level": "note",
            "message": {"text": f"{omitted} of {len(reported)} results were left out: GitHub code scanning shows "
                                f"at most {max_results:,} results per run. Every finding is in report.html and "
                                "results.json, every warning in results.json."},
        }]
    run = {"tool": {"driver": driver}}
    if opts.sarif_category is not None:
        run["automationDetails"] = {"id": automation_id(opts.sarif_category)}
    run |= {
        "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The repository root."}}},
        "columnKind": "utf16CodeUnits",
        "invocations": [invocation],
        "results": [_warning_result(item, rule_index) if isinstance(item, fd.StepWarning)
                    else _result(item, rule_index, compared) for item in kept],
        "properties": {"litmus": {"verdict": result.verdict, "findings": len(findings), "warnings": len(warnings),
                                  "omittedResults": omitted}},
    }
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
