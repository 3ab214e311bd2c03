"""Reading tool calls and the assistant message from replies shaped as the OpenAI and Anthropic docs show them,
non-streamed and streamed (split into small chunks, as a server sends them)."""

from __future__ import annotations

import json
import time

import pytest

from litmus.errors import Position
from litmus.model import Stream
from litmus.response import Response
from litmus.run.stream import StreamReader
from litmus.toolcalls import NotAReply, ToolCall, assistant_message, detect_api, read_tool_calls
from support.tool_replies import anthropic_message, anthropic_stream, openai_completion, openai_stream

WEATHER = '{\n"location": "Boston, MA"\n}'
ORDER = '{"order_id": 1042, "items": [{"sku": "A-1", "qty": 2}]}'


def body(document) -> Response:
    return Response(200, {"Content-Type": "application/json"}, json.dumps(document).encode(), 3.0)


def streamed(frames: list[bytes], fmt: str, chunk: int = 5):
    reader = StreamReader(Stream(Position("probes/chat.yaml", 1, 1), format=fmt), time.perf_counter(),
                          "text/event-stream")
    raw = b"".join(frames)
    for start in range(0, len(raw), chunk):
        reader.feed(raw[start:start + chunk])
    return reader.finish(Response(200, {"Content-Type": "text/event-stream"}, raw, 3.0), None)


OPENAI_CALLS = (("call_abc123", "get_current_weather", WEATHER), ("call_def456", "lookup_order", ORDER))
EXPECTED = [ToolCall("call_abc123", "get_current_weather", {"location": "Boston, MA"}),
            ToolCall("call_def456", "lookup_order", {"order_id": 1042, "items": [{"sku": "A-1", "qty": 2}]})]


@pytest.mark.parametrize("response", [
    pytest.param(body(openai_completion(*OPENAI_CALLS)), id="non-streamed"),
    pytest.param(streamed(openai_stream(*OPENAI_CALLS), "openai"), id="streamed"),
])
def test_openai_tool_calls_are_read_with_arguments_parsed(response):
    assert read_tool_calls(response, "openai") == EXPECTED
    assert detect_api(response) == "openai"


def test_openai_assistant_message_keeps_the_calls_as_returned():
    expected = {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
        for call_id, name, args in OPENAI_CALLS]}
    assert assistant_message(body(openai_completion(*OPENAI_CALLS)), "openai") == expected
    # Streamed: the same message, the arguments the exact text the fragments concatenate to.
    assert assistant_message(streamed(openai_stream(*OPENAI_CALLS), "openai"), "openai") == expected


def test_openai_text_reply_has_no_calls_and_its_content():
    for response in (body(openai_completion(content="It is sunny.")),
                     streamed(openai_stream(content="It is sunny."), "openai")):
        assert read_tool_calls(response, "openai") == []
        assert assistant_message(response, "openai") == {"role": "assistant", "content": "It is sunny."}


ANTHROPIC_INPUT = {"location": "San Francisco, CA", "unit": "fahrenheit"}


@pytest.mark.parametrize("response", [
    pytest.param(body(anthropic_message(("toolu_01A09q90qw90lq917835lq9", "get_weather", ANTHROPIC_INPUT),
                                        text="Okay, let me check.")), id="non-streamed"),
    pytest.param(streamed(anthropic_stream(("toolu_01A09q90qw90lq917835lq9", "get_weather",
                                            json.dumps(ANTHROPIC_INPUT)), text="Okay, let me check."),
                          "anthropic"), id="streamed"),
])
def test_anthropic_tool_use_blocks_are_read_and_the_message_keeps_its_blocks(response):
    assert read_tool_calls(response, "anthropic") == [
        ToolCall("toolu_01A09q90qw90lq917835lq9", "get_weather", ANTHROPIC_INPUT)]
    assert assistant_message(response, "anthropic") == {"role": "assistant", "content": [
        {"type": "text", "text": "Okay, let me check."},
        {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": ANTHROPIC_INPUT}]}
    assert detect_api(response) == "anthropic"


def test_anthropic_thinking_block_goes_back_with_its_signature():
    frames = [
        b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
        b'"content_block": {"type": "thinking", "thinking": ""}}\n\n',
        b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
        b'"delta": {"type": "thinking_delta", "thinking": "The user wants"}}\n\n',
        b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
        b'"delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}\n\n',
        b'event: content_block_stop\ndata: {"type": "content_block_stop", "index": 0}\n\n',
        *anthropic_stream(("toolu_2", "lookup_order", '{"order_id": 7}'))[1:],
    ]
    # The tool_use block of anthropic_stream is at index 0 too: move it after the thinking block.
    frames = [frame.replace(b'"index": 0', b'"index": 1') if i >= 4 else frame for i, frame in enumerate(frames)]
    message = assistant_message(streamed(frames, "anthropic"), "anthropic")
    assert message["content"] == [
        {"type": "thinking", "thinking": "The user wants", "signature": "EqQBCgIYAhIM"},
        {"type": "tool_use", "id": "toolu_2", "name": "lookup_order", "input": {"order_id": 7}}]


@pytest.mark.parametrize("fmt, call_id, frames", [
    ("openai", "call_1", openai_stream(("call_1", "lookup_order", '{"order_id": 10'))),
    ("anthropic", "toolu_1", anthropic_stream(("toolu_1", "lookup_order", '{"order_id": 10'))),
])
def test_arguments_that_are_not_json_are_kept_as_sent(fmt, call_id, frames):
    assert read_tool_calls(streamed(frames, fmt), fmt) == [ToolCall(call_id, "lookup_order", None, '{"order_id": 10')]


def test_non_streamed_arguments_not_json_and_arguments_deeper_than_the_limit():
    calls = [("call_1", "a", "{oops"), ("call_2", "b", "[" * 300 + "]" * 300), ("call_3", "c", "")]
    assert read_tool_calls(body(openai_completion(*calls)), "openai") == [
        ToolCall("call_1", "a", None, "{oops"), ToolCall("call_2", "b", None, "[" * 300 + "]" * 300),
        ToolCall("call_3", "c", {})]


@pytest.mark.parametrize("response, api, message", [
    (body({"error": {"message": "overloaded"}}), "openai",
     "not an OpenAI chat completion reply: no choices[0].message in an object with keys error"),
    (body({"type": "error", "error": {}}), "anthropic",
     "not an Anthropic message reply: no content list of blocks in an object with keys error, type"),
    (body(openai_completion(content="hi")), "anthropic",
     "not an Anthropic message reply: no content list of blocks in an object with keys choices, created, id, "
     "model, object, usage"),
    (Response(200, {}, b"<html>", 1.0), "openai", "not an OpenAI chat completion reply: body is not JSON"),
    (body({"choices": [{"message": {"tool_calls": [{"id": "x", "function": {}}]}}]}), "openai",
     "choices[0].message.tool_calls[0] has no function.name"),
    (streamed(openai_stream(content="hi"), "openai"), "anthropic",
     "the reply was streamed as openai, and anthropic tool calls are read from a `stream: anthropic` response"),
])
def test_a_reply_of_another_shape_is_an_error_saying_what_is_missing(response, api, message):
    with pytest.raises(NotAReply) as caught:
        read_tool_calls(response, api)
    assert str(caught.value).startswith(message)


def test_detect_api_is_none_for_other_bodies():
    assert detect_api(body({"reply": "hello"})) is None
    assert detect_api(Response(200, {}, b"plain", 1.0)) is None
    assert detect_api(streamed([b"data: hi\n\n"], "sse")) is None


def test_an_index_that_is_not_a_number_does_not_break_the_reader():
    openai = [b'data: {"choices": [{"delta": {"tool_calls": [{"index": {"x": 1}, "id": "c", '
              b'"function": {"name": "f", "arguments": "{}"}}]}}]}\n\n',
              b"data: [DONE]\n\n"]
    assert read_tool_calls(streamed(openai, "openai"), "openai") == [ToolCall("c", "f", {})]
    anthropic = [b'data: {"type": "content_block_start", "index": [1], '
                 b'"content_block": {"type": "tool_use", "id": "t", "name": "g", "input": {}}}\n\n',
                 b'data: {"type": "content_block_delta", "index": {"a": 1}, '
                 b'"delta": {"type": "input_json_delta", "partial_json": "{"}}\n\n',
                 b'data: {"type": "message_stop"}\n\n']
    assert read_tool_calls(streamed(anthropic, "anthropic"), "anthropic") == [ToolCall("t", "g", {})]


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_streamed_arguments_nested_past_the_limit_are_kept_as_text_not_a_crash(fmt):
    deep = "[" * 100_000 + "]" * 100_000  # past the interpreter's own recursion limit too
    frames = (openai_stream if fmt == "openai" else anthropic_stream)(("call_1", "f", deep), piece=50_000)
    (call,) = read_tool_calls(streamed(frames, fmt, chunk=65_536), fmt)
    assert call.arguments is None and call.raw_arguments == deep
