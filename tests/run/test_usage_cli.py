"""Target tokens and cost end to end: `litmus run` against a chat server on 127.0.0.1 that reports usage as the
OpenAI and Anthropic APIs do (whole replies and streams), and a scripted target for custom usage paths; the
step's `usage`, the `tokens` and `cost` checks and the run's totals are read from results.json."""

from __future__ import annotations

import json
import textwrap

import pytest

from litmus.results import load_results
from support.chat_server import ChatServer
from support.cli import JUDGED_SUITE, litmus, write_judge_config
from support.fake_judge import API_KEY
from support.stream_target import Script, StreamTarget
from support.target import Target

OPENAI = "/openai/v1/chat/completions"
ANTHROPIC = "/anthropic/v1/messages"
QUESTION = "Where is order 1042?"
# What the chat server answers QUESTION (its usage counts words).
REPLY = f"turn 1: you said {QUESTION!r}; order 1042"
INPUT_TOKENS, OUTPUT_TOKENS = len(QUESTION.split()), len(REPLY.split())
PRICING = """\
pricing:
  shop: {input_per_mtok: 1, output_per_mtok: 2}
  shop-mini: {input_per_mtok: 0.5, output_per_mtok: 1}
"""


def run(tmp_path, steps: str, base_url: str, *, pricing: str = PRICING):
    (tmp_path / "probes").mkdir(exist_ok=True)
    (tmp_path / "probes" / "s.yaml").write_text("version: 1\nsuite: S\nflows:\n  - name: f\n    steps:\n"
                                                + textwrap.indent(textwrap.dedent(steps), "      "))
    (tmp_path / "litmus.yaml").write_text(pricing)
    proc = litmus(tmp_path, "run", "probes", "--base-url", base_url, "--out", "out", "--format", "markdown")
    assert proc.returncode in (0, 1), proc.stderr
    return proc, load_results(tmp_path / "out" / "results.json")


def chat_step(url: str, body: dict, stream: str | None, assertions: str) -> str:
    request = {"method": "POST", "url": url, "json": body, **({"stream": stream} if stream else {})}
    return f"- name: ask\n  request: {json.dumps(request)}\n  assertions:\n{textwrap.indent(assertions, '    ')}"


CASES = {
    "openai whole": (OPENAI, {}, None, "openai"),
    "openai stream with include_usage": (OPENAI, {"stream": True, "stream_options": {"include_usage": True}},
                                         "openai", "openai"),
    "anthropic whole": (ANTHROPIC, {"max_tokens": 100}, None, "anthropic"),
    "anthropic stream": (ANTHROPIC, {"max_tokens": 100, "stream": True}, "anthropic", "anthropic"),
}


@pytest.mark.parametrize("case", CASES)
def test_usage_is_recorded_and_priced_by_the_longest_prefix(tmp_path, case):
    url, extra, stream, source = CASES[case]
    body = {"model": "shop-mini-2025-01", "messages": [{"role": "user", "content": QUESTION}], **extra}
    checks = (f"- {{type: tokens, input_lte: {INPUT_TOKENS}, output_lte: {OUTPUT_TOKENS}, "
              f"total_lte: {INPUT_TOKENS + OUTPUT_TOKENS}}}\n"
              f"- {{type: tokens, output_lte: {OUTPUT_TOKENS - 1}}}\n"
              "- {type: cost, lte: 0.001}\n- {type: cost, lte: 0.000001}\n")
    with ChatServer() as chat:
        proc, result = run(tmp_path, chat_step(url, body, stream, checks), chat.base_url)
    step = result.suites[0].flow_runs[0].steps[0]
    expected_cost = round((INPUT_TOKENS * 0.5 + OUTPUT_TOKENS * 1) / 1e6, 8)
    assert (step.usage.input_tokens, step.usage.output_tokens, step.usage.source) == (
        INPUT_TOKENS, OUTPUT_TOKENS, source)
    # `shop` is a prefix too: the longest entry that the model starts with prices it.
    assert (step.usage.model, step.usage.price_key, step.usage.cost_usd) == (
        "shop-mini-2025-01", "shop-mini", expected_cost)
    assert [a.status for a in step.assertions] == ["passed", "failed", "passed", "failed"]
    assert step.assertions[1].reason == (f"usage.output_tokens: {OUTPUT_TOKENS} output tokens, "
                                         f"limit {OUTPUT_TOKENS - 1}")
    target = result.totals.target
    assert (target.input_tokens, target.output_tokens, target.cost_usd, target.count, target.unpriced) == (
        INPUT_TOKENS, OUTPUT_TOKENS, expected_cost, 1, 0)
    assert result.suites[0].flow_runs[0].usage == target
    assert (f"Tokens and cost: target {INPUT_TOKENS + OUTPUT_TOKENS} tokens ({INPUT_TOKENS} input + "
            f"{OUTPUT_TOKENS} output), ${expected_cost:.6f}".rstrip("0")) in proc.stdout


def test_an_openai_stream_without_include_usage_has_no_usage_and_its_checks_are_errors(tmp_path):
    body = {"model": "shop", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
    with ChatServer() as chat:
        _, result = run(tmp_path, chat_step(OPENAI, body, "openai", "- {type: tokens, output_lte: 400}\n"
                                                                    "- {type: cost, lte: 1}\n"), chat.base_url)
    step = result.suites[0].flow_runs[0].steps[0]
    assert step.usage is None
    assert [a.status for a in step.assertions] == ["error", "error"]
    assert "stream_options: {include_usage: true}" in step.assertions[0].reason
    assert result.suites[0].verdict == "failed"
    assert result.totals.target.count == 0


def test_a_cost_check_without_a_price_is_an_error_naming_the_model(tmp_path):
    body = {"model": "other-model", "messages": [{"role": "user", "content": QUESTION}]}
    with ChatServer() as chat:
        _, result = run(tmp_path, chat_step(OPENAI, body, None, "- {type: cost, lte: 1}\n"
                                                                "- {type: tokens, total_lte: 1000}\n"), chat.base_url)
    step = result.suites[0].flow_runs[0].steps[0]
    assert [a.status for a in step.assertions] == ["error", "passed"]
    assert "no price for model 'other-model'" in step.assertions[0].reason
    assert (step.usage.price_key, step.usage.cost_usd) == (None, None)
    assert (result.totals.target.cost_usd, result.totals.target.unpriced) == (None, 1)


def test_pricing_model_on_the_request_prices_a_reply_that_names_no_model(tmp_path):
    with Target() as target:
        target.json("/gen", {"out": "hi", "meta": {"in": 1000, "out": 3000}})
        steps = """\
            - name: priced
              request: {url: /gen, usage: {input_path: $.meta.in, output_path: $.meta.out}, pricing_model: shop}
              assertions: [{type: cost, lte: 0.01}]
            - name: unnamed
              request: {url: /gen, usage: {input_path: $.meta.in, output_path: $.meta.out}}
              assertions: [{type: cost, lte: 0.01}]
            """
        _, result = run(tmp_path, steps, target.base_url)
    priced, unnamed = result.suites[0].flow_runs[0].steps
    assert (priced.usage.source, priced.usage.model, priced.usage.price_key, priced.usage.cost_usd) == (
        "paths", "shop", "shop", 0.007)
    assert priced.assertions[0].status == "passed"
    assert unnamed.assertions[0].status == "error"
    assert "names no model: set pricing_model" in unnamed.assertions[0].reason


def test_usage_paths_into_a_stream_take_the_last_count(tmp_path):
    events = [json.dumps({"text": "a", "usage": {"in": 7, "out": n}}).encode() + b"\n" for n in (1, 2, 5)]
    with StreamTarget() as target:
        target.script("/gen", Script(events, content_type="application/x-ndjson"))
        steps = """\
            - name: streamed
              request:
                url: /gen
                stream: {format: ndjson, text_path: $.text}
                usage: {input_path: "$.events[*].data.usage.in", output_path: "$.events[*].data.usage.out"}
              assertions: [{type: tokens, output_lte: 5, input_lte: 6}]
            """
        _, result = run(tmp_path, steps, target.base_url)
    step = result.suites[0].flow_runs[0].steps[0]
    assert (step.usage.input_tokens, step.usage.output_tokens) == (7, 5)
    assert step.assertions[0].status == "failed"
    assert step.assertions[0].mismatches[0].path == "usage.input_tokens"


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_conversation_records_each_turns_usage_and_the_flow_total(tmp_path, api):
    url = OPENAI if api == "openai" else ANTHROPIC
    body = {"model": "shop", "stream": True, **({"stream_options": {"include_usage": True}} if api == "openai"
                                                 else {"max_tokens": 100})}
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "chat.yaml").write_text(textwrap.dedent(f"""\
        version: 1
        suite: Chat
        flows:
          - name: talk
            conversation:
              request: {json.dumps({"method": "POST", "url": url, "json": body, "stream": api})}
              format: {api}
            steps:
              - {{name: one, user: "Hi, my order is 1042.", assertions: [{{type: tokens, input_lte: 100}}]}}
              - {{name: two, user: "When does it arrive?", assertions: [{{type: tokens, input_lte: 100}}]}}
        """))
    (tmp_path / "litmus.yaml").write_text(PRICING)
    with ChatServer() as chat:
        proc = litmus(tmp_path, "run", "probes", "--base-url", chat.base_url, "--out", "out")
        sent = chat.sent(url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flow_run = load_results(tmp_path / "out" / "results.json").suites[0].flow_runs[0]
    # Each turn's input is the whole history it sent, as the API counts it.
    first_reply = "turn 1: you said 'Hi, my order is 1042.'; order 1042"
    second_reply = "turn 2: you said 'When does it arrive?'; order 1042"
    expected = [ChatServer.usage_of(sent[0], first_reply), ChatServer.usage_of(sent[1], second_reply)]
    assert [(s.usage.input_tokens, s.usage.output_tokens) for s in flow_run.steps] == expected
    assert expected[1][0] > expected[0][0]
    assert (flow_run.usage.input_tokens, flow_run.usage.output_tokens, flow_run.usage.count) == (
        expected[0][0] + expected[1][0], expected[0][1] + expected[1][1], 2)
    assert flow_run.usage.cost_usd == round(sum(i * 1 + o * 2 for i, o in expected) / 1e6, 8)


def test_pricing_model_cannot_reprice_a_model_the_table_prices(tmp_path):
    """A probe's pricing_model names a free entry, but the reply says it came from the priced model: the price is
    the priced model's, as litmus.yaml (the operator's) sets it."""
    with Target() as target:
        target.json("/gen", {"model": "shop-large", "usage": {"prompt_tokens": 1000, "completion_tokens": 1000}})
        steps = """\
            - name: repriced
              request: {url: /gen, pricing_model: free}
              assertions: [{type: cost, lte: 0.0001}]
            """
        _, result = run(tmp_path, steps, target.base_url, pricing=(
            "pricing:\n  shop-large: {input_per_mtok: 5, output_per_mtok: 15}\n"
            "  free: {input_per_mtok: 0, output_per_mtok: 0}\n"))
    step = result.suites[0].flow_runs[0].steps[0]
    assert (step.usage.model, step.usage.price_key, step.usage.cost_usd) == ("shop-large", "shop-large", 0.02)
    assert step.assertions[0].status == "failed"


def test_judge_calls_are_totalled_and_priced_and_cached_verdicts_cost_nothing(tmp_path, target, fake_judge):
    target.text("/answer", "Your order 1042 arrives on Monday.")
    fake_judge.when("order", score=90, reason="says Monday")
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "judged.yaml").write_text(JUDGED_SUITE)
    write_judge_config(tmp_path, fake_judge.openai_base_url)
    with (tmp_path / "litmus.yaml").open("a") as config:
        config.write("pricing:\n  judge-small: {input_per_mtok: 1000, output_per_mtok: 2000}\n")
    totals = []
    for out in ("first", "again"):
        done = litmus(tmp_path, "run", "probes", "--base-url", target.base_url, "--out", out,
                      env={"JUDGE_KEY": API_KEY})
        assert done.returncode == 0, done.stdout + done.stderr
        totals.append(load_results(tmp_path / out / "results.json"))
    first, again = totals
    judge = first.totals.judge
    assert (judge.count, judge.unpriced) == (1, 0) and judge.input_tokens > 0 and judge.output_tokens > 0
    assert (judge.input_tokens, judge.output_tokens) == (first.judge.input_tokens, first.judge.output_tokens)
    assert judge.cost_usd == round((judge.input_tokens * 1000 + judge.output_tokens * 2000) / 1e6, 8)
    # The second run's verdict comes from the cache: no call, no tokens, no cost.
    assert again.judge.cached == 1
    assert (again.totals.judge.count, again.totals.judge.cost_usd, again.totals.judge.input_tokens) == (0, None, 0)
    assert first.totals.target.count == 0  # the target's text reply reports no usage


def test_each_apis_usage_shape_is_read_and_what_is_not_a_count_is_not(tmp_path):
    replies = {
        # Anthropic: cache reads and writes are input too (OpenAI's prompt_tokens include its cached tokens).
        "/anthropic-cached": {"model": "shop", "usage": {"input_tokens": 5, "cache_read_input_tokens": 100,
                                                         "cache_creation_input_tokens": 20, "output_tokens": 7}},
        # OpenAI's Responses API names them like Anthropic does.
        "/responses": {"model": "shop", "usage": {"input_tokens": 11, "output_tokens": 13, "total_tokens": 24}},
        "/float-counts": {"usage": {"prompt_tokens": 3.0, "completion_tokens": 4}},
        "/not-counts": {"usage": {"prompt_tokens": -1, "completion_tokens": True}},
        "/no-usage": {"text": "usage is a word in this reply"},
    }
    with Target() as target:
        for path, reply in replies.items():
            target.json(path, reply)
        steps = "".join(f"- {{name: '{path}', request: {{url: '{path}'}}}}\n" for path in replies)
        _, result = run(tmp_path, steps, target.base_url)
    usage = {step.name: step.usage for step in result.suites[0].flow_runs[0].steps}
    assert (usage["/anthropic-cached"].input_tokens, usage["/anthropic-cached"].output_tokens,
            usage["/anthropic-cached"].source) == (125, 7, "anthropic")
    assert (usage["/responses"].input_tokens, usage["/responses"].output_tokens) == (11, 13)
    assert (usage["/float-counts"].input_tokens, usage["/float-counts"].output_tokens) == (3, 4)
    assert usage["/float-counts"].model is None and usage["/float-counts"].cost_usd is None
    assert usage["/not-counts"] is None and usage["/no-usage"] is None
