"""The stream reader on its own: SSE framing by the WHATWG rules, NDJSON, assembly, end markers.

Bytes go in as the transport would feed them (in chunks, split anywhere); the tests through real
servers and `litmus run` are in test_streaming.py.
"""

from __future__ import annotations

import json
import time

import pytest

from litmus.errors import Position
from litmus.model import Stream
from litmus.response import Response
from litmus.run.stream import StreamError, StreamReader

WHERE = Position("probes/chat.yaml", 12, 11)


def read(body: bytes, fmt: str = "sse", *, chunk: int | None = None, text_path: str | None = None,
         done: str | None = None, content_type: str = "text/event-stream"):
    """The streamed response for `body` fed in chunks of `chunk` bytes (None: all at once)."""
    reader = StreamReader(Stream(WHERE, format=fmt, text_path=text_path, done=done), time.perf_counter(),
                          content_type)
    size = chunk or len(body) or 1
    for start in range(0, len(body), size):
        if reader.feed(body[start:start + size]):
            break
    raw = Response(status=200, headers={"Content-Type": content_type}, body=body, elapsed_ms=5.0)
    return reader.finish(raw, None)


def error_of(body: bytes, fmt: str = "sse", **kwargs) -> StreamError:
    with pytest.raises(StreamError) as caught:
        read(body, fmt, **kwargs)
    return caught.value


@pytest.mark.parametrize("chunk", [None, 1, 2, 3, 7])
def test_multi_line_data_comments_event_and_id_follow_the_standard(chunk):
    body = (b": this is a comment\n"
            b"event: greeting\nid: 7\ndata: first line\ndata:second line\ndata\n\n"
            b"retry: 1500\n: keep-alive\n\n"
            b"data: {\"n\": 2}\n\n")
    response = read(body, chunk=chunk)
    events = response.json()["events"]
    assert events == [
        {"event": "greeting", "data": "first line\nsecond line\n", "id": "7"},
        # The last event ID persists, and the event type resets to "message".
        {"event": "message", "data": {"n": 2}, "id": "7"},
    ]
    assert response.text == "first line\nsecond line\n" + '{"n": 2}'
    assert response.json()["done"] is True


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("chunk", [None, 1, 5])
def test_every_line_ending_frames_the_same_events(newline, chunk):
    body = newline.join([b"data: a", b"data: b", b"", b"data: c", b"", b""])
    response = read(body, chunk=chunk)
    assert [e["data"] for e in response.json()["events"]] == ["a\nb", "c"]


def test_a_crlf_split_across_two_chunks_is_one_line_break():
    reader = StreamReader(Stream(WHERE), time.perf_counter())
    for piece in (b"data: x\r", b"\ndata: y\r", b"\n\r", b"\n"):
        reader.feed(piece)
    response = reader.finish(Response(200, {}, b"", 1.0), None)
    assert [e["data"] for e in response.json()["events"]] == ["x\ny"]


def test_a_leading_byte_order_mark_is_dropped():
    assert read("\ufeffdata: hi\n\n".encode()).text == "hi"


def test_a_multibyte_character_split_between_chunks_is_decoded_whole():
    assert read("data: café ☕\n\n".encode(), chunk=1).text == "café ☕"


def test_text_path_takes_each_events_piece():
    body = b'data: {"delta": {"text": "Hel"}}\n\ndata: {"other": 1}\n\ndata: {"delta": {"text": "lo"}}\n\n'
    assert read(body, text_path="$.delta.text").text == "Hello"


def test_a_custom_done_marker_must_arrive():
    body = b"data: a\n\ndata: END\n\n"
    assert read(body, done="END").json()["done"] is True
    error = error_of(b"data: a\n\n", done="END")
    assert str(error).startswith("stream cut after 1 event: the connection closed before 'END'")


def test_a_done_jsonpath_ends_an_ndjson_stream():
    body = b'{"message": {"content": "Hi"}, "done": false}\n{"message": {"content": "!"}, "done": true}\n'
    response = read(body, "ndjson", text_path="$.message.content", done="$.done", content_type="application/x-ndjson")
    assert response.text == "Hi!"
    assert response.json()["done"] is True
    error = error_of(body.split(b"\n")[0] + b"\n", "ndjson", text_path="$.message.content", done="$.done")
    assert "stream cut after 1 event" in str(error)


def test_ndjson_lines_are_events_and_the_last_line_may_lack_a_newline():
    response = read(b'{"a": 1}\r\n\n{"a": 2}', "ndjson", text_path="$.a", content_type="application/x-ndjson")
    assert [e["data"] for e in response.json()["events"]] == [{"a": 1}, {"a": 2}]
    assert response.json()["events"][0]["event"] is None


def test_a_bad_ndjson_line_is_named_by_its_number():
    error = error_of(b'{"a": 1}\n{"a": 2}\nnot json\n{"a": 3}\n', "ndjson")
    assert str(error).startswith("malformed ndjson stream: line 3: line is not JSON: 'not json'")


def test_openai_chunks_assemble_content_until_done():
    frames = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]},
              {"choices": [{"index": 0, "delta": {"content": "Order 1042 "}}]},
              {"choices": [{"index": 0, "delta": {"content": "is delayed."}}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
    body = b"".join(b"data: " + json.dumps(f).encode() + b"\n\n" for f in frames) + b"data: [DONE]\n\n"
    response = read(body, "openai", chunk=9)
    assert response.text == "Order 1042 is delayed."
    assert response.body == b"Order 1042 is delayed."
    assert response.json()["done"] is True
    assert response.json()["events"][-1]["data"] == "[DONE]"


def test_openai_without_done_is_cut_even_when_the_connection_closed_cleanly():
    body = b'data: {"choices": [{"delta": {"content": "Hi"}}]}\n\n'
    error = error_of(body, "openai")
    assert str(error) == "stream cut after 1 event: the connection closed before data: [DONE]"
    assert error.partial.text == "Hi"  # what arrived is kept for the report


def test_openai_tool_calls_are_assembled_across_chunks_with_arguments_parsed():
    def tool(**delta):
        return b"data: " + json.dumps({"choices": [{"index": 0, "delta": delta}]}).encode() + b"\n\n"

    body = (tool(role="assistant", content=None,
                 tool_calls=[{"index": 0, "id": "call_1", "type": "function",
                              "function": {"name": "get_order_status", "arguments": ""}}])
            + tool(tool_calls=[{"index": 0, "function": {"arguments": "{\"order_"}}])
            + tool(tool_calls=[{"index": 0, "function": {"arguments": "id\": 1042}"}}])
            + tool(tool_calls=[{"index": 1, "id": "call_2", "function": {"name": "ping", "arguments": ""}}])
            + b"data: [DONE]\n\n")
    document = read(body, "openai", chunk=16).json()
    assert document["tool_calls"] == [
        {"id": "call_1", "name": "get_order_status", "arguments": {"order_id": 1042}},
        {"id": "call_2", "name": "ping", "arguments": {}},
    ]
    assert document["text"] == ""


def test_an_error_object_inside_an_openai_stream_is_reported():
    body = b'data: {"choices": [{"delta": {"content": "Hi"}}]}\n\ndata: {"error": {"message": "overloaded"}}\n\n'
    assert str(error_of(body, "openai")) == "the stream reported an error after 1 event: 'overloaded'"


def test_anthropic_text_deltas_and_message_stop():
    events = [("message_start", {"type": "message_start", "message": {}}),
              ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": "Hello"}}),
              ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": " there"}}),
              ("message_stop", {"type": "message_stop"})]
    body = b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)
    response = read(body, "anthropic", chunk=4)
    assert response.text == "Hello there"
    assert response.json()["events"][1]["event"] == "content_block_delta"
    assert response.json()["done"] is True
    assert "message_stop" in str(error_of(body.rsplit(b"event: message_stop", 1)[0], "anthropic"))


def test_anthropic_tool_use_blocks_become_tool_calls():
    events = [{"type": "content_block_start", "index": 1,
               "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}},
              {"type": "content_block_delta", "index": 1,
               "delta": {"type": "input_json_delta", "partial_json": "{\"q\":"}},
              {"type": "content_block_delta", "index": 1,
               "delta": {"type": "input_json_delta", "partial_json": " \"x\"}"}},
              {"type": "message_stop"}]
    body = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events)
    expected = [{"id": "toolu_1", "name": "lookup", "arguments": {"q": "x"}}]
    assert read(body, "anthropic").json()["tool_calls"] == expected


def test_a_non_json_event_in_a_json_format_names_its_line():
    body = b'data: {"choices": []}\n\n: comment\nevent: x\ndata: {"choices": [\ndata: oops\n\n'
    error = error_of(body, "openai")
    assert str(error).startswith("malformed openai stream: line 5: event data is not JSON")


def test_an_event_without_its_blank_line_at_the_end_is_a_cut_stream():
    error = error_of(b"data: a\n\ndata: b\n")
    assert str(error).startswith("stream cut after 1 event: the connection closed in the middle of an event")


def test_a_stream_with_no_events_is_an_error_naming_the_content_type():
    error = error_of(b'{"reply": "not streamed"}', content_type="application/json")
    assert str(error) == "the stream ended with no events (Content-Type is application/json, not text/event-stream)"


def test_reading_stops_at_the_end_marker():
    reader = StreamReader(Stream(WHERE, format="openai"), time.perf_counter())
    assert reader.feed(b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n') is False
    assert reader.feed(b"data: [DONE]\n\ndata: ignored\n\n") is True
    response = reader.finish(Response(200, {}, b"", 1.0), None)
    assert len(response.json()["events"]) == 2


def test_a_transport_failure_is_a_cut_stream_with_the_count_so_far():
    reader = StreamReader(Stream(WHERE, format="openai"), time.perf_counter())
    reader.feed(b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n' * 3)
    with pytest.raises(StreamError) as caught:
        reader.finish(Response(200, {}, b"", 1.0), "timed out after 500 ms reading the body (150 bytes received)")
    assert str(caught.value) == ("stream cut after 3 events: "
                                 "timed out after 500 ms reading the body (150 bytes received)")
    assert caught.value.partial.stream.done is False
