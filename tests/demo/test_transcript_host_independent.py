"""The Intent Evaluation transcript does not depend on the target's address: the demo target gets a new
port every run, and its recorded intent verdicts (cassettes, keyed by prompt) must still replay."""

from litmus.judges.intent import transcript
from litmus.results import FlowRunResult, IntentEvaluation, RequestExcerpt, ResponseExcerpt, StepResult


def flow_run(url: str) -> FlowRunResult:
    step = StepResult(name="ask", line=3, status="passed", request=RequestExcerpt("POST", url, body='{"q": 1}'),
                      response=ResponseExcerpt(status=200, elapsed_ms=12.0, body='{"a": 2}'))
    return FlowRunResult(flow="f", line=1, run_index=0, steps=[step],
                         intent_evaluation=IntentEvaluation("passed", "deterministic", "ok"))


def test_same_story_on_another_port_gives_the_same_transcript():
    first = transcript(flow_run("http://127.0.0.1:41001/support/ask?lang=en"))
    assert first == transcript(flow_run("https://pr-12.preview.example.com/support/ask?lang=en"))
    assert "POST /support/ask?lang=en" in first
    assert "41001" not in first
