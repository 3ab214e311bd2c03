"""Conversation flows end to end: `litmus run` against a chat server on 127.0.0.1 that enforces each API's
message-order rules and sees only the history it is sent; what was sent is read from the server's log."""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

from litmus.results import load_results
from support.chat_server import ChatServer
from support.cli import litmus

OPENAI = "/openai/v1/chat/completions"
ANTHROPIC = "/anthropic/v1/messages"
TURNS = ("Hi, my order is 1042.", "When does it arrive?", "Can I change the address?", "Thanks!")


def run(tmp_path, suite: str, base_url: str, env: dict[str, str] | None = None,
        ) -> tuple[subprocess.CompletedProcess, object]:
    probes = tmp_path / "probes"
    probes.mkdir(exist_ok=True)
    (probes / "chat.yaml").write_text(textwrap.dedent(suite))
    proc = litmus(tmp_path, "run", "probes", "--base-url", base_url, "--out", "out", "--format", "markdown,html,junit",
                  env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return proc, load_results(tmp_path / "out" / "results.json")


def four_turns(conversation: str) -> str:
    steps = "".join(f"""
              - name: turn {n}
                user: "{text}"
                assertions: [{{type: contains, value: "turn {n}: you said"}}]""" for n, text in enumerate(TURNS, 1))
    return f"""\
        version: 1
        suite: Chat
        flows:
          - name: remembers
            conversation:
{textwrap.indent(textwrap.dedent(conversation), " " * 14)}
            steps:{steps}
        """


def replies(n: int, forget_at: int | None = None) -> list[str]:
    """What the chat server answers at each of the first n turns of TURNS."""
    return [f"turn {k}: you said {TURNS[k - 1]!r}; order {'unknown' if k == forget_at else '1042'}"
            for k in range(1, n + 1)]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_openai_history_each_turn(tmp_path, stream):
    request = {"method": "POST", "url": OPENAI, "json": {"model": "shop", "stream": stream}}
    if stream:
        request["stream"] = "openai"
    with ChatServer(forget_at=3) as chat:
        proc, result = run(tmp_path, four_turns(f"""\
            request: {json.dumps(request)}
            format: openai
            system: "You are Shop's assistant."
            """), chat.base_url)
        sent = chat.sent(OPENAI)
    assert proc.returncode == 0, proc.stdout
    said = replies(4, forget_at=3)
    for k, body in enumerate(sent):
        expected = [{"role": "system", "content": "You are Shop's assistant."}]
        for j in range(k):
            expected += [{"role": "user", "content": TURNS[j]}, {"role": "assistant", "content": said[j]}]
        assert body["messages"] == [*expected, {"role": "user", "content": TURNS[k]}]
        assert body["model"] == "shop"
    assert len(sent) == 4
    flow_run = result.suites[0].flow_runs[0]
    assert [(s.turn, s.user, s.status) for s in flow_run.steps] == [(k, TURNS[k - 1], "passed") for k in range(1, 5)]
    assert flow_run.transcript == [{"role": "system", "content": "You are Shop's assistant."}] + [
        message for k in range(4) for message in ({"role": "user", "content": TURNS[k]},
                                                  {"role": "assistant", "content": said[k]})]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_anthropic_history_each_turn(tmp_path, stream):
    request = {"method": "POST", "url": ANTHROPIC, "json": {"model": "claude", "max_tokens": 100, "stream": stream}}
    if stream:
        request["stream"] = "anthropic"
    with ChatServer() as chat:
        proc, result = run(tmp_path, four_turns(f"""\
            request: {json.dumps(request)}
            format: anthropic
            system: "Be brief."
            """), chat.base_url)
        sent = chat.sent(ANTHROPIC)
    assert proc.returncode == 0, proc.stdout
    said = replies(4)
    assert len(sent) == 4
    for k, body in enumerate(sent):
        assert body["system"] == "Be brief."
        expected = []
        for j in range(k):
            expected += [{"role": "user", "content": TURNS[j]},
                         {"role": "assistant", "content": [{"type": "text", "text": said[j]}]}]
        assert body["messages"] == [*expected, {"role": "user", "content": TURNS[k]}]
    assert [s.status for s in result.suites[0].flow_runs[0].steps] == ["passed"] * 4


def test_mapping_form_puts_history_at_its_path_and_reads_the_reply(tmp_path):
    with ChatServer() as chat:
        proc, result = run(tmp_path, four_turns("""\
            request: {method: POST, url: /mapping, json: {input: {channel: web}}}
            format: {history_path: $.input.history, reply_path: $.data.reply}
            """), chat.base_url)
        sent = chat.sent("/mapping")
    assert proc.returncode == 0, proc.stdout
    said = replies(4)
    for k, body in enumerate(sent):
        earlier = [m for j in range(k) for m in ({"role": "user", "content": TURNS[j]},
                                                 {"role": "assistant", "content": said[j]})]
        assert body == {"input": {"channel": "web", "history": [*earlier, {"role": "user", "content": TURNS[k]}]}}
    steps = result.suites[0].flow_runs[0].steps
    assert [s.response.status for s in steps] == [200] * 4


def test_history_none_sends_only_the_new_message_with_the_extracted_id(tmp_path):
    suite = """\
        version: 1
        suite: Chat
        flows:
          - name: server side
            conversation:
              request: {method: POST, url: /session, json: {channel: web}}
              format: {history_path: $.input, reply_path: $.reply, history: none}
            steps:
              - name: open
                user: "Hi, my order is 1042."
                extract: {conversation_id: {json_path: $.conversation_id}}
              - name: ask
                user: "When does it arrive?"
                request: {json: {conversation_id: "{{ conversation_id }}"}}
                assertions: [{type: contains, value: "order 1042"}]
        """
    with ChatServer() as chat:
        proc, result = run(tmp_path, suite, chat.base_url)
        sent = chat.sent("/session")
        session = next(iter(chat.sessions))
    assert proc.returncode == 0, proc.stdout
    assert sent == [{"channel": "web", "input": [{"role": "user", "content": "Hi, my order is 1042."}]},
                    {"channel": "web", "conversation_id": session,
                     "input": [{"role": "user", "content": "When does it arrive?"}]}]
    assert result.suites[0].flow_runs[0].steps[1].status == "passed"


TOOLS = """\
    version: 1
    suite: Agent
    flows:
      - name: looks it up
        conversation:
          request: {request}
          format: {api}
        steps:
          - name: ask
            user: "Please lookup my order."
            assertions: [{{type: tool_calls, expected: [{{name: lookup_order, arguments: {{order_id: 1042}}}}]}}]
{answer}
          - name: then
            user: "And when does it arrive?"
            assertions: [{{type: contains, value: "tool said"}}]
    """


@pytest.mark.parametrize("api,path", [("openai", OPENAI), ("anthropic", ANTHROPIC)])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_tool_results_answer_the_call_and_the_conversation_continues(tmp_path, api, path, stream):
    request = {"method": "POST", "url": path, "json": {"model": "m", "stream": stream}}
    if stream:
        request["stream"] = api
    answer = '            tool_results: {lookup_order: {eta: "3 December"}}'
    with ChatServer() as chat:
        proc, result = run(tmp_path, TOOLS.format(request=json.dumps(request), api=api, answer=answer), chat.base_url)
        sent = chat.sent(path)
    assert proc.returncode == 0, proc.stdout
    second = sent[1]["messages"]
    if api == "openai":
        call = second[1]["tool_calls"][0]
        assert call["function"]["name"] == "lookup_order"
        assert second[2] == {"role": "tool", "tool_call_id": call["id"], "content": '{"eta": "3 December"}'}
        assert second[3] == {"role": "user", "content": "And when does it arrive?"}
    else:
        use = next(b for b in second[1]["content"] if b["type"] == "tool_use")
        assert use["name"] == "lookup_order" and use["input"] == {"order_id": 1042}
        assert second[2] == {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use["id"], "content": '{"eta": "3 December"}'},
            {"type": "text", "text": "And when does it arrive?"}]}
    flow_run = result.suites[0].flow_runs[0]
    assert [s.status for s in flow_run.steps] == ["passed", "passed"]
    assert flow_run.steps[0].assertions[0].status == "passed"  # tool_calls reads the API's reply
    assert {"role": "tool", "content": 'lookup_order: {"eta": "3 December"}'} in flow_run.transcript


@pytest.mark.parametrize("api,path", [("openai", OPENAI), ("anthropic", ANTHROPIC)])
def test_an_unanswered_tool_call_ends_the_conversation_naming_the_call(tmp_path, api, path):
    request = {"method": "POST", "url": path, "json": {"model": "m"}}
    with ChatServer() as chat:
        proc, result = run(tmp_path, TOOLS.format(request=json.dumps(request), api=api, answer=""), chat.base_url)
        sent = chat.sent(path)
    assert proc.returncode == 1
    assert len(sent) == 1  # the history with the unanswered call is never sent
    ask, then = result.suites[0].flow_runs[0].steps
    assert ask.status == "error" and "the reply calls tool 'lookup_order' (call id " in ask.error
    assert then.status == "skipped"
    assert result.suites[0].verdict == "failed"
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert f"POST {ask.request.url} got a reply that ends the conversation: the reply calls tool" \
        in comment.replace("\\", "")


@pytest.mark.parametrize("status", [500, 200], ids=["non-2xx", "unreadable"])
def test_a_turn_without_a_reply_is_an_error_and_later_steps_are_skipped(tmp_path, status):
    # 200 at the mapping route with a reply_path that finds nothing: a reply that cannot be read.
    with ChatServer(status=status) as chat:
        proc, result = run(tmp_path, four_turns("""\
            request: {method: POST, url: /mapping, json: {input: {}}}
            format: {history_path: $.input.history, reply_path: $.answer}
            """), chat.base_url)
    assert proc.returncode == 1
    steps = result.suites[0].flow_runs[0].steps
    assert [s.status for s in steps] == ["error", "skipped", "skipped", "skipped"]
    expected = "the API answered 500" if status == 500 else "reply_path $.answer must find one string"
    assert steps[0].error.startswith("turn 1: ") and expected in steps[0].error
    assert all("turn 1" in o.reason for s in steps[1:] for o in s.assertions)
    assert result.suites[0].verdict == "failed"


def test_a_reply_is_never_rendered_as_a_template(tmp_path):
    # A reply holding `{{ env.HOME }}` goes back in the history verbatim: replies are data, not probe text.
    with ChatServer(signature=" {{ env.HOME }}") as chat:
        proc, _ = run(tmp_path, four_turns("""\
            request: {method: POST, url: /openai/v1/chat/completions, json: {model: m}}
            """), chat.base_url)
        sent = chat.sent(OPENAI)
    assert proc.returncode == 0, proc.stdout
    assert sent[3]["messages"][-2]["content"] == replies(3)[2] + " {{ env.HOME }}"


def test_a_secret_the_user_says_is_masked_in_the_transcript_and_every_report(tmp_path):
    suite = four_turns("""\
        request: {method: POST, url: /openai/v1/chat/completions, json: {model: m}}
        """).replace("When does it arrive?", "My code is {{ secrets.SHOP_CODE }}.")
    with ChatServer() as chat:
        proc, result = run(tmp_path, suite, chat.base_url, env={"SHOP_CODE": "s3cr3t-4242"})
        sent = chat.sent(OPENAI)
    assert proc.returncode == 0, proc.stdout
    assert sent[1]["messages"][-1]["content"] == "My code is s3cr3t-4242."  # the API got it
    flow_run = result.suites[0].flow_runs[0]
    assert flow_run.steps[1].user == "My code is ***."
    assert {"role": "user", "content": "My code is ***."} in flow_run.transcript
    second = flow_run.steps[1].request
    assert second.secrets == ["SHOP_CODE"]  # the curl says which secret stands behind its ***
    for path in (tmp_path / "out").iterdir():
        assert "s3cr3t-4242" not in path.read_text(), path.name
    assert "s3cr3t-4242" not in proc.stdout + proc.stderr


def test_each_turn_keeps_the_whole_history_it_sent_for_its_curl(tmp_path):
    long = "x" * 1500
    with ChatServer() as chat:
        proc, result = run(tmp_path, four_turns("""\
            request: {method: POST, url: /openai/v1/chat/completions, json: {model: m}}
            """).replace("Thanks!", long).replace("When does it arrive?", long), chat.base_url)
        sent = chat.sent(OPENAI)
    assert proc.returncode == 0, proc.stdout
    last = result.suites[0].flow_runs[0].steps[3].request
    assert len(last.body) > 4096 and not last.body_truncated  # beyond a plain step's excerpt
    assert json.loads(last.body) == sent[3]
