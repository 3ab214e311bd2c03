"""A step that waited out 429 / 503 answers: the comment's per-step detail and the HTML report say so."""

from __future__ import annotations

import html

from litmus.report import render
from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    RateLimitWait,
    RequestExcerpt,
    ResponseExcerpt,
    RunInfo,
    RunResult,
    StepResult,
    SuiteResult,
)


def _run(waits: list[RateLimitWait]) -> RunResult:
    outcome = AssertionOutcome("json_path", "failed", "expected \"shipped\", got \"delayed\"", 20, 13)
    step = StepResult("order", 12, "failed", request=RequestExcerpt("GET", "https://shop.example/orders/1042"),
                      response=ResponseExcerpt(200, 35.5, body='{"status": "delayed"}', size=21),
                      assertions=[outcome], rate_limited=waits)
    flow_run = FlowRunResult("track", 5, 0, IntentEvaluation("failed", "deterministic", "1 failed"), steps=[step])
    suite = SuiteResult("Orders", "probes/orders.yaml", 1, 100, 0.0, "failed", flow_runs=[flow_run])
    return RunResult(RunInfo(None, "2026-12-01T09:00:00Z", "2026-12-01T09:00:01Z"), "failed", suites=[suite])


def test_the_comment_and_the_html_report_show_each_wait():
    result = _run([RateLimitWait(429, 1000.4), RateLimitWait(503, 512.0)])
    for name in ("markdown", "summary", "html"):
        text = render(name, result).replace("\\", "")
        assert "aited out 429 for 1,000 ms, 503 for 512 ms, sending the request again after each" in text, name


def test_a_step_that_waited_for_nothing_says_nothing_of_it():
    for name in ("markdown", "html"):
        assert "waited out" not in render(name, _run([])).lower(), name


def test_a_rate_limit_the_step_could_not_wait_out_is_titled_so_not_as_an_incomplete_response():
    error = "429 Too Many Requests: Retry-After 120 s is beyond the step's deadline (29.9 s left)"
    result = _run([])
    step = result.suites[0].flow_runs[0].steps[0]
    step.status, step.error, step.assertions = "error", error, []
    step.response = ResponseExcerpt(429, 3.5, body="slow down", size=9)
    for name in ("markdown", "html", "junit"):
        text = html.unescape(render(name, result)).replace("\\", "")
        assert f"a rate limit it could not wait out: {error}" in text, name
