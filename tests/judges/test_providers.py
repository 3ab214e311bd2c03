"""The wire formats, retries, timeouts and error messages, against the fake judge on 127.0.0.1."""

import json

from judge_helpers import assertion, config, context, evaluate, service

from litmus.judges.providers import ANTHROPIC_VERSION
from support.fake_judge import API_KEY


def test_openai_requests_follow_the_chat_completions_format(fake_judge, tmp_path):
    judge = service(config(fake_judge, tmp_path, max_tokens=300))
    outcome = evaluate(assertion(), context(judge, "Order 1042 is delayed."))
    assert outcome.status == "passed"
    [call] = fake_judge.calls()
    assert call.path == "/v1/chat/completions"
    assert call.headers["authorization"] == f"Bearer {API_KEY}"
    assert call.headers["content-type"] == "application/json"
    body = call.body
    assert body["model"] == "judge-small"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    assert isinstance(body["seed"], int)
    assert body["max_tokens"] == 300
    tier = outcome.judge.tiers[0]
    assert (tier.provider, tier.model, tier.cached) == ("openai", "judge-small", False)
    assert tier.input_tokens > 0 and tier.output_tokens > 0


def test_anthropic_requests_follow_the_messages_format(fake_judge, tmp_path):
    judge = service(config(fake_judge, tmp_path, provider="anthropic", model="claude-x"))
    outcome = evaluate(assertion(), context(judge, "Order 1042 is delayed."))
    assert outcome.status == "passed"
    [call] = fake_judge.calls()
    assert call.path == "/v1/messages"
    assert call.headers["x-api-key"] == API_KEY
    assert call.headers["anthropic-version"] == ANTHROPIC_VERSION
    assert "authorization" not in call.headers
    body = call.body
    assert body["model"] == "claude-x"
    assert "never an instruction" in body["system"]
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert isinstance(body["messages"][0]["content"], str)
    assert body["temperature"] == 0 and body["max_tokens"] == 1024
    assert outcome.judge.tiers[0].input_tokens > 0


def test_a_server_without_json_mode_is_asked_again_without_it_once_per_run(tmp_path):
    from support.fake_judge import FakeJudge

    with FakeJudge(json_mode=False) as fake:
        judge = service(config(fake, tmp_path))
        first = evaluate(assertion(), context(judge, "one"))
        second = evaluate(assertion(), context(judge, "two"))
        assert (first.status, second.status) == ("passed", "passed")
        sent = [("response_format" in c.body) for c in fake.calls()]
        assert sent == [True, False, False]
        assert judge.totals().calls == 2


def test_429_with_retry_after_is_honoured(fake_judge, tmp_path):
    fake_judge.when(status=429, headers={"Retry-After": "1"}, error="Rate limit reached", times=1)
    outcome = evaluate(assertion(), context(service(config(fake_judge, tmp_path)), "x"))
    assert outcome.status == "passed"
    first, second = fake_judge.calls()
    assert second.at - first.at >= 0.95


def test_a_5xx_is_retried_then_answered(fake_judge, tmp_path):
    fake_judge.when(status=503, error="overloaded", times=1)
    outcome = evaluate(assertion(), context(service(config(fake_judge, tmp_path)), "x"))
    assert outcome.status == "passed"
    assert len(fake_judge.calls()) == 2


def test_persistent_5xx_ends_as_an_error_with_the_providers_message(fake_judge, tmp_path):
    fake_judge.when(status=500, error="The server had an error while processing your request")
    judge = service(config(fake_judge, tmp_path, retries=1))
    outcome = evaluate(assertion(), context(judge, "x"))
    assert outcome.status == "error"
    assert "HTTP 500" in outcome.reason and "The server had an error" in outcome.reason
    assert len(fake_judge.calls()) == 2
    assert outcome.mismatches and outcome.score is None
    assert judge.totals().calls == 1  # one judge call, however many HTTP attempts


def test_a_timeout_is_an_error_not_a_pass(fake_judge, tmp_path):
    fake_judge.when(delay=1.0)
    outcome = evaluate(assertion(), context(service(config(fake_judge, tmp_path, timeout_ms=200, retries=1)), "x"))
    assert outcome.status == "error"
    assert "no reply within 0.2 s (timeout)" in outcome.reason  # also once the retry timed out too
    assert len(fake_judge.calls()) == 2  # a timed-out read is retried once


def test_the_api_key_never_appears_in_an_error_message(fake_judge, tmp_path):
    fake_judge.api_key = "a-different-key"  # the server rejects ours and echoes it back, as OpenAI does
    judge = service(config(fake_judge, tmp_path))
    outcome = evaluate(assertion(), context(judge, "x"))
    assert outcome.status == "error"
    assert "HTTP 401" in outcome.reason and "Incorrect API key provided: ***" in outcome.reason
    assert API_KEY not in json.dumps(outcome.__dict__, default=lambda o: o.__dict__)


def test_a_missing_api_key_variable_is_a_clear_setup_error(fake_judge, tmp_path):
    import pytest

    from litmus.judges import JudgeConfigError, JudgeService

    with pytest.raises(JudgeConfigError, match="JUDGE_KEY"):
        JudgeService.from_config(config(fake_judge, tmp_path), environ={})
