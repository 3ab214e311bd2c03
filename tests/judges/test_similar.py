"""`similar`: embeddings from the fake judge's /v1/embeddings, cosine against threshold, cache, replay."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from judge_helpers import SECRET, config, context, evaluate, service

from litmus.config import ProviderConfig, resolve_config
from litmus.errors import Position, ProbeError
from litmus.model import Assertion
from support.fake_judge import embedding

REFERENCE = "Order 1042 is delayed and should arrive on 3 December."


def similar(value: str = REFERENCE, threshold: float | None = None, select: str | None = None) -> Assertion:
    params = {"value": value} | ({"threshold": threshold} if threshold is not None else {})
    return Assertion(pos=Position("probes/chat.yaml", 30, 11), type="similar", params=params, select=select)


def live(fake_judge, tmp_path, **fields):
    embeddings = ProviderConfig("openai", "embed-small", fake_judge.openai_base_url, "JUDGE_KEY")
    return service(config(fake_judge, tmp_path, embeddings=embeddings, **fields))


def expected_cosine(a: str, b: str) -> float:
    x, y = embedding(a), embedding(b)
    return sum(p * q for p, q in zip(x, y, strict=True)) / math.sqrt(sum(p * p for p in x) * sum(q * q for q in y))


def test_close_text_passes_and_unrelated_text_fails_with_the_similarity(fake_judge, tmp_path):
    judge = live(fake_judge, tmp_path)
    close = "Order 1042 is delayed and should now arrive on 3 December."
    far = "Our opening hours are nine to five on weekdays."
    ok = evaluate(similar(), context(judge, close))
    bad = evaluate(similar(), context(judge, far))
    assert (ok.status, ok.threshold) == ("passed", 0.8)
    assert ok.score == pytest.approx(expected_cosine(REFERENCE, close), abs=1e-4)
    assert bad.status == "failed"
    assert bad.score == pytest.approx(expected_cosine(REFERENCE, far), abs=1e-4) and bad.score < 0.8
    assert (bad.mismatches[0].path, bad.mismatches[0].expected, bad.mismatches[0].actual) == ("$", REFERENCE, far)
    assert bad.judge.tiers[0].provider == "openai" and bad.judge.tiers[0].model == "embed-small"
    sent = [json.loads(json.dumps(c.body)) for c in fake_judge.calls("/v1/embeddings")]
    assert {c["input"] for c in sent} == {REFERENCE, close, far}  # the reference once: then cached
    assert all(c["model"] == "embed-small" for c in sent)


def test_threshold_and_select_are_honoured(fake_judge, tmp_path):
    judge = live(fake_judge, tmp_path)
    body = json.dumps({"reply": "Order 1042 is delayed and should arrive on 3 December, sorry.", "id": 7})
    outcome = evaluate(similar(threshold=0.99, select="$.reply"), context(judge, body))
    assert outcome.status == "failed" and outcome.threshold == 0.99
    assert outcome.mismatches[0].path == "$.reply"


def test_a_warm_cache_makes_no_call_and_an_empty_response_makes_none_at_all(fake_judge, tmp_path):
    evaluate(similar(), context(live(fake_judge, tmp_path), "Order 1042 is late."))
    calls = len(fake_judge.calls("/v1/embeddings"))
    again = evaluate(similar(), context(live(fake_judge, tmp_path), "Order 1042 is late."))
    assert len(fake_judge.calls("/v1/embeddings")) == calls == 2
    assert again.judge.tiers[0].cached is True
    empty = evaluate(similar(), context(live(fake_judge, tmp_path), ""))
    assert (empty.status, empty.score) == ("failed", 0.0)
    assert len(fake_judge.calls("/v1/embeddings")) == 2


def test_recorded_embeddings_replay_offline(fake_judge, tmp_path):
    cassettes = tmp_path / "cassettes-home"
    recorded = evaluate(similar(), context(live(fake_judge, cassettes, record=True, use_cache=False), "It is late."))
    fake_judge.__exit__()  # offline from here on
    replayed_service = service(replace(config(fake_judge, cassettes), provider="replay", model="replay",
                                       embeddings=ProviderConfig("replay", "recorded")))
    replayed = evaluate(similar(), context(replayed_service, "It is late."))
    assert (replayed.status, replayed.score) == (recorded.status, recorded.score)
    assert replayed.judge.tiers[0].cached is True
    missing = evaluate(similar(), context(replayed_service, "Something never recorded."))
    assert missing.status == "error" and "no embedding cassette" in missing.reason


def test_without_an_embeddings_model_similar_is_an_error_saying_so(fake_judge, tmp_path):
    outcome = evaluate(similar(), context(service(config(fake_judge, tmp_path)), "text"))
    assert outcome.status == "error"
    assert "judge.embeddings" in outcome.reason


def test_secrets_never_reach_the_embeddings_endpoint(fake_judge, tmp_path):
    evaluate(similar(f"token {SECRET}"), context(live(fake_judge, tmp_path), f"reply with {SECRET}"))
    sent = " ".join(c.body["input"] for c in fake_judge.calls("/v1/embeddings"))
    assert SECRET not in sent and "***" in sent
    assert not any(SECRET in p.read_text() for p in tmp_path.rglob("*.json"))


def test_the_embeddings_endpoint_failing_is_an_error_never_a_pass(fake_judge, tmp_path):
    judge = live(fake_judge, tmp_path, retries=0)
    fake_judge.api_key = "another-key"  # every call is now refused with a 401
    outcome = evaluate(similar(), context(judge, "Order 1042 is delayed."))
    assert outcome.status == "error" and "HTTP 401" in outcome.reason


@pytest.fixture
def args():
    import argparse

    return argparse.Namespace()


def test_judge_embeddings_is_read_from_litmus_yaml(tmp_path, args):
    (tmp_path / "litmus.yaml").write_text(
        "judge:\n  provider: openai\n  model: gpt-4o-mini\n  base_url: http://127.0.0.1:9/v1\n"
        "  embeddings: {provider: openai, model: text-embedding-3-small}\n")
    embeddings = resolve_config(args, {}, tmp_path).judge.embeddings
    # Same provider as the judge: its endpoint and key variable carry over.
    assert embeddings == ProviderConfig("openai", "text-embedding-3-small", "http://127.0.0.1:9/v1", "OPENAI_API_KEY")


def test_a_replayed_judge_replays_embeddings_too(tmp_path, args):
    (tmp_path / "litmus.yaml").write_text("judge:\n  provider: replay\n")
    assert resolve_config(args, {}, tmp_path).judge.embeddings.provider == "replay"


@pytest.mark.parametrize(("embeddings", "message"), [
    ("{provider: anthropic, model: m}", "not one of openai, azure_openai, bedrock, vertex, gemini, replay"),
    ("{provider: openai}", "judge.embeddings.model is required"),
    ("{model: m, dimensions: 256}", "judge.embeddings takes provider"),
])
def test_a_bad_embeddings_section_is_an_error_at_its_position(tmp_path, args, embeddings, message):
    (tmp_path / "litmus.yaml").write_text(f"judge:\n  provider: openai\n  model: m\n  embeddings: {embeddings}\n")
    with pytest.raises(ProbeError) as caught:
        resolve_config(args, {}, tmp_path)
    (diagnostic,) = caught.value.diagnostics
    assert message in diagnostic.message
    assert (diagnostic.position.line, diagnostic.position.column) == (4, 15)
