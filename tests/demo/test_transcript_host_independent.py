"""The Intent Evaluation transcript holds nothing that changes between an unchanged recording and its replay:
not the target's address (the demo target gets a new port every run), not which judge gave a verdict.
Otherwise recorded intent verdicts (cassettes, keyed by the exact prompt) would never replay."""

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


def test_judged_outcomes_appear_without_the_judge_labels():
    from litmus.results import AssertionOutcome, JudgeRecord, JudgeTier

    def judged(provider: str) -> FlowRunResult:
        run = flow_run("http://127.0.0.1:1/chat")
        tier = JudgeTier(provider, "m", 12, "claims free delivery from 40 EUR", 3.0)
        run.steps[0].assertions.append(AssertionOutcome(
            type="no_hallucination", status="failed", reason=f"score 12 < 70 ({provider}:m): claims ...", line=9,
            column=11, score=12, threshold=70, judge=JudgeRecord(False, [tier])))
        return run

    recorded, replayed = transcript(judged("openai")), transcript(judged("replay"))
    assert recorded == replayed
    assert "failed (score 12 / 70): claims free delivery from 40 EUR" in recorded
