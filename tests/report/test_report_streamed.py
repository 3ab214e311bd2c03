"""A streamed step in the reports: its assembled text (bounded) and time to first event are shown."""

from __future__ import annotations

from litmus.report import render
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
    StreamRecord,
    SuiteResult,
)

ANSWER = "Order 1042 is delayed and should arrive on 3 December. " * 20


def streamed_run() -> RunResult:
    stream = StreamRecord(format="openai", events_count=42, first_byte_ms=80.5, first_event_ms=95.25, done=True,
                          text=ANSWER)
    outcome = AssertionOutcome("contains", "failed", "body does not contain \"refund\"", 20, 13,
                               mismatches=[Mismatch("$", "refund", ANSWER[:200], "body does not contain \"refund\"")])
    step = StepResult("ask", 12, "failed", request=RequestExcerpt("POST", "https://chat.example/v1/chat/completions"),
                      response=ResponseExcerpt(200, 812.0, body=ANSWER, size=9000), assertions=[outcome],
                      stream=stream)
    flow_run = FlowRunResult("chat", 5, 0, IntentEvaluation("failed", "deterministic", "1 failed"), steps=[step])
    suite = SuiteResult("Streams", "probes/chat.yaml", 1, 100, 0.0, "failed", flow_runs=[flow_run])
    return RunResult(RunInfo(None, "2026-12-01T09:00:00Z", "2026-12-01T09:00:01Z"), "failed", suites=[suite])


def test_the_comment_and_the_html_report_show_time_to_first_event_and_the_assembled_text():
    result = streamed_run()
    for name in ("markdown", "html"):
        text = render(name, result)
        assert "streamed: 42 events, first at 95.25 ms" in text.replace("\\", ""), name
        assert "Order 1042 is delayed" in text


def test_the_quoted_text_is_bounded():
    comment = render("markdown", streamed_run()).replace("\\", "")
    line = next(line for line in comment.splitlines() if "streamed: 42 events" in line)
    assert len(line) < 450 and "…" in line
