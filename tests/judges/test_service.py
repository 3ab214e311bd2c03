"""Cache, escalation, budget, replay, secrets and concurrency, with exact call counts."""

import json
import threading
import time
from dataclasses import replace

import pytest
from judge_helpers import SECRET, assertion, config, context, escalation, evaluate, service, suite

from litmus.errors import Position
from litmus.judges import JudgeService
from litmus.model import Scenario
from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    RequestExcerpt,
    ResponseExcerpt,
    StepResult,
)


def _run(judge, bodies, kind="llm_rubric", **params):
    return [evaluate(assertion(kind, **params), context(judge, body)) for body in bodies]


def test_a_warm_cache_rerun_makes_no_call_and_gives_the_same_outcomes(fake_judge, tmp_path):
    fake_judge.when("response two", score=30, reason="does not mention the status",
                    mismatches=[{"path": "$.reply", "expected": "a status", "actual": "nothing", "reason": "absent"}])
    bodies = ["response one", "response two", "response three"]
    cold_service = service(config(fake_judge, tmp_path))
    cold = _run(cold_service, bodies)
    assert [o.status for o in cold] == ["passed", "failed", "passed"]
    assert len(fake_judge.calls()) == 3
    assert cold_service.totals().calls == 3 and cold_service.totals().cached == 0

    warm_service = service(config(fake_judge, tmp_path))
    warm = _run(warm_service, bodies)
    assert len(fake_judge.calls()) == 3  # nothing new
    assert [(o.status, o.score, o.reason) for o in warm] == [(o.status, o.score, o.reason) for o in cold]
    assert all(o.judge.tiers[0].cached for o in warm)
    totals = warm_service.totals()
    assert (totals.calls, totals.cached, totals.input_tokens) == (0, 3, 0)
    # The failed outcome keeps the judge's mismatch, placed on the judged text.
    assert cold[1].mismatches[0].path == "$" and cold[1].mismatches[0].reason == "absent"


def test_cache_files_are_readable_and_no_cache_bypasses_them(fake_judge, tmp_path):
    _run(service(config(fake_judge, tmp_path)), ["hello"])
    [entry] = (tmp_path / "verdicts").glob("*.json")
    data = json.loads(entry.read_text())
    assert data["prompt"]["summary"] == "llm_rubric: Mentions the order status"
    assert data["verdict"]["score"] == 90 and data["judge"] == {"provider": "openai", "model": "judge-small"}
    _run(service(config(fake_judge, tmp_path, use_cache=False)), ["hello"])
    assert len(fake_judge.calls()) == 2


def test_a_different_model_or_prompt_misses_the_cache(fake_judge, tmp_path):
    _run(service(config(fake_judge, tmp_path)), ["hello"])
    _run(service(config(fake_judge, tmp_path, model="other-model")), ["hello"])
    _run(service(config(fake_judge, tmp_path)), ["hello"], rubric="A different rubric")
    assert len(fake_judge.calls()) == 3


def test_an_unparseable_verdict_is_not_cached(fake_judge, tmp_path):
    fake_judge.when(text="I think it is fine.", times=1)
    first = _run(service(config(fake_judge, tmp_path)), ["hello"])[0]
    assert first.status == "needs_review"  # no tier 2: an unparseable tier 1 goes to a human
    assert "unparseable verdict" in first.reason
    second = _run(service(config(fake_judge, tmp_path)), ["hello"])[0]
    assert second.status == "passed" and len(fake_judge.calls()) == 2


def test_only_in_band_verdicts_escalate(fake_judge, second_judge, tmp_path):
    fake_judge.when("clear pass", score=95).when("clear fail", score=20).when("close call", score=78)
    second_judge.when(score=40, reason="the strong judge says no")
    cfg = replace(config(fake_judge, tmp_path), escalation=escalation(second_judge, band=10))
    judge = service(cfg)
    clear_pass, clear_fail, close = _run(judge, ["clear pass", "clear fail", "close call"])
    assert (clear_pass.status, clear_fail.status) == ("passed", "failed")
    assert not clear_pass.judge.escalated and len(clear_pass.judge.tiers) == 1
    assert close.status == "failed" and close.score == 40 and close.judge.escalated
    assert [(t.provider, t.model, t.score) for t in close.judge.tiers] == [
        ("openai", "judge-small", 78), ("anthropic", "judge-strong", 40)]
    assert "after escalation from openai:judge-small" in close.reason
    assert len(fake_judge.calls()) == 3 and len(second_judge.calls()) == 1
    totals = judge.totals()
    assert (totals.calls, totals.escalated, totals.needs_review) == (4, 1, 0)


def test_an_unparseable_tier_1_escalates_and_tier_2_decides(fake_judge, second_judge, tmp_path):
    fake_judge.when(text='{"score": 250, "reason": "very good", "mismatches": []}')
    second_judge.when(text='```json\n{"score": 88, "reason": "fine", "mismatches": []}\n```')
    cfg = replace(config(fake_judge, tmp_path), escalation=escalation(second_judge))
    [outcome] = _run(service(cfg), ["x"])
    assert outcome.status == "passed" and outcome.score == 88
    assert outcome.judge.tiers[0].score is None and "outside 0-100" in outcome.judge.tiers[0].reason


def test_tier_2_in_band_or_unparseable_needs_review(fake_judge, second_judge, tmp_path):
    fake_judge.when(score=70)
    second_judge.when("first", score=80).when("second", text="garbage")
    cfg = replace(config(fake_judge, tmp_path), escalation=escalation(second_judge, band=10))
    judge = service(cfg)
    in_band, garbage = _run(judge, ["first", "second"])
    assert in_band.status == garbage.status == "needs_review"
    assert "within ±10 of the threshold 75" in in_band.reason
    assert "gave no usable verdict" in garbage.reason
    assert in_band.mismatches and in_band.mismatches[0].expected == "a judge verdict"
    assert judge.totals().needs_review == 2


def test_without_tier_2_an_in_band_score_decides(fake_judge, tmp_path):
    fake_judge.when(score=74)
    [outcome] = _run(service(config(fake_judge, tmp_path)), ["x"])
    assert outcome.status == "failed" and outcome.threshold == 75


def test_a_failing_verdict_without_mismatches_fails_with_one_at_the_judged_text(fake_judge, tmp_path):
    fake_judge.when(text='{"score": 20, "reason": "does not say when the order arrives"}')
    [outcome] = _run(service(config(fake_judge, tmp_path)), ["Your order is on its way."])
    assert (outcome.status, outcome.score) == ("failed", 20)
    assert [(m.path, m.actual) for m in outcome.mismatches] == [("$", 20)]


def test_thresholds_come_from_assertion_then_suite_then_config(fake_judge, tmp_path):
    fake_judge.when(score=70)
    judge = service(config(fake_judge, tmp_path, threshold=60))
    assert evaluate(assertion(), context(judge, "x")).status == "passed"
    assert evaluate(assertion(), context(judge, "x", suite_=suite(threshold=72))).status == "failed"
    assert evaluate(assertion(threshold=65), context(judge, "x", suite_=suite(threshold=72))).status == "passed"


def test_the_budget_guard_skips_past_max_calls_saying_why(fake_judge, tmp_path):
    judge = service(config(fake_judge, tmp_path, max_calls=2))
    outcomes = _run(judge, ["a", "b", "c", "d"])
    assert [o.status for o in outcomes] == ["passed", "passed", "skipped", "skipped"]
    assert "max_calls 2" in outcomes[2].reason
    assert len(fake_judge.calls()) == 2
    # Cached verdicts cost nothing: a rerun judges the first two from the cache and still stops at two calls.
    rerun = _run(service(config(fake_judge, tmp_path, max_calls=2)), ["a", "b", "c", "d", "e"])
    assert [o.status for o in rerun] == ["passed"] * 4 + ["skipped"]
    assert len(fake_judge.calls()) == 4


def test_record_then_replay_with_another_model_offline(fake_judge, tmp_path):
    fake_judge.when("bad", score=10, reason="wrong ETA")
    _run(service(config(fake_judge, tmp_path, record=True)), ["good", "bad"])
    assert len(list((tmp_path / "cassettes").glob("*.json"))) == 2
    replay = JudgeService.from_config(replace(config(fake_judge, tmp_path), provider="replay", model="anything"),
                                      environ={})
    good, bad, unknown = _run(replay, ["good", "bad", "never recorded"])
    assert (good.status, bad.status) == ("passed", "failed") and bad.reason.endswith("wrong ETA")
    assert good.judge.tiers[0].provider == "replay" and good.judge.tiers[0].cached
    assert unknown.status == "error" and "no cassette" in unknown.reason
    key = unknown.reason.split("no cassette ")[1].split()[0]
    assert len(key) == 64
    assert len(fake_judge.calls()) == 2
    assert replay.totals().calls == 0


def test_the_canary_secret_never_reaches_a_prompt_cache_or_cassette(fake_judge, tmp_path):
    body = json.dumps({"reply": f"Order 1042 is delayed. Debug token: {SECRET}"})
    judge = service(config(fake_judge, tmp_path, record=True))
    outcome = evaluate(assertion(rubric=f"Never reveals {SECRET}"), context(judge, body))
    assert outcome.status == "passed"
    sent = json.dumps([c.body for c in fake_judge.calls()])
    assert SECRET not in sent and "Debug token: ***" in sent
    for path in tmp_path.rglob("*.json"):
        assert SECRET not in path.read_text()


def test_scenario_aware_mismatches_are_keyed_by_scenario_data_path(fake_judge, tmp_path):
    fake_judge.when(score=15, reason="wrong date", mismatches=[
        {"path": "eta", "expected": "2026-12-03", "actual": "5 December", "reason": "different date"},
        {"path": "$.status", "expected": "delayed", "actual": "on time", "reason": "different status"},
        {"path": "scenario.data.order_id", "expected": 1042, "actual": 1043, "reason": "other order"},
    ])
    judge = service(config(fake_judge, tmp_path))
    outcome = evaluate(assertion("consistent_with_scenario_data"), context(judge, "Arrives on 5 December"))
    assert outcome.status == "failed"
    assert [m.path for m in outcome.mismatches] == ["scenario.data.eta", "scenario.data.status",
                                                    "scenario.data.order_id"]


def test_scenario_aware_types_skip_without_a_scenario_and_error_without_a_reference(fake_judge, tmp_path):
    judge = service(config(fake_judge, tmp_path))
    skipped = evaluate(assertion("no_hallucination_vs_scenario"), context(judge, "x", scenario=None))
    assert skipped.status == "skipped" and "no scenario" in skipped.reason
    bare = Scenario(pos=Position("probes/orders.yaml", 30, 7), id="bare", data={"a": 1})
    errored = evaluate(assertion("accurate_with_scenario_context"), context(judge, "x", scenario=bare))
    assert errored.status == "error" and "no reference_response" in errored.reason
    assert fake_judge.calls() == []


def test_a_select_matching_nothing_is_an_error_without_a_call(fake_judge, tmp_path):
    judge = service(config(fake_judge, tmp_path))
    outcome = evaluate(assertion(select="$.missing"), context(judge, '{"reply": "x"}'))
    assert outcome.status == "error" and "matches no node" in outcome.reason
    not_json = evaluate(assertion(select="$.reply"), context(judge, "plain text"))
    assert not_json.status == "error" and "not JSON" in not_json.reason
    assert fake_judge.calls() == []


@pytest.mark.timing  # calls of 150 ms must overlap
def test_calls_run_in_a_bounded_pool(fake_judge, tmp_path):
    fake_judge.when(delay=0.15)
    judge = service(config(fake_judge, tmp_path, concurrency=3))
    in_flight, peak, lock = [0], [0], threading.Lock()

    def job(i):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        try:
            return evaluate(assertion(), context(judge, f"body {i}"))
        finally:
            with lock:
                in_flight[0] -= 1

    outcomes = list(judge.executor.map(job, range(9)))
    judge.close()
    assert all(o.status == "passed" for o in outcomes)
    assert peak[0] == 3
    assert len(fake_judge.calls()) == 9
    assert judge.totals().wall_ms >= 3 * 150 * 0.9


def _flow_run(reply: str) -> FlowRunResult:
    outcome = AssertionOutcome(type="status_code", status="passed", reason="200 is 2xx", line=14, column=9)
    step = StepResult(
        name="ask", line=10, status="passed", request=RequestExcerpt("POST", "http://shop.test/chat",
                                                                     body='{"message": "Where is order 1042?"}'),
        response=ResponseExcerpt(200, 12.0, body=json.dumps({"reply": reply})), assertions=[outcome],
    )
    return FlowRunResult(flow="Ask about an order", line=8, run_index=0, scenario="delayed-order", steps=[step],
                         intent_evaluation=IntentEvaluation("passed", "deterministic", "pending"))


def test_intent_evaluation_reads_intent_transcript_and_scenario(fake_judge, tmp_path):
    from judge_helpers import SCENARIO

    fake_judge.when("arrives tomorrow", score=20, reason="the ETA is wrong")
    judge = service(config(fake_judge, tmp_path))
    good = judge.evaluate_intent(suite(), _flow_run("Order 1042 is delayed until 3 December."), SCENARIO)
    bad = judge.evaluate_intent(suite(), _flow_run("Order 1042 arrives tomorrow."), SCENARIO)
    assert (good.status, good.method, good.score, good.threshold) == ("passed", "judge", 90, 75)
    assert bad.status == "failed" and bad.reason.endswith("the ETA is wrong")
    prompt = fake_judge.calls()[0].prompt
    for expected in ("Customers get accurate answers", "POST /chat", "Response: HTTP 200\n",
                     "Where is order 1042?", "assertion status_code: passed\n", '"eta": "2026-12-03"'):
        assert expected in prompt


def test_intent_evaluation_without_an_intent_is_deterministic(fake_judge, tmp_path):
    judge = service(config(fake_judge, tmp_path))
    result = judge.evaluate_intent(suite(intent=None), _flow_run("fine"), None)
    assert (result.status, result.method) == ("passed", "deterministic")
    assert fake_judge.calls() == []


def test_intent_transcripts_are_bounded(fake_judge, tmp_path):
    judge = service(config(fake_judge, tmp_path))
    judge.evaluate_intent(suite(), _flow_run("x" * 100_000), None)
    assert len(fake_judge.calls()[0].prompt) < 8_000


def test_totals_wall_time_is_measured(fake_judge, tmp_path):
    fake_judge.when(delay=0.05)
    judge = service(config(fake_judge, tmp_path))
    started = time.monotonic()
    _run(judge, ["a", "b"])
    assert 100 * 0.9 <= judge.totals().wall_ms <= (time.monotonic() - started) * 1000 + 1
