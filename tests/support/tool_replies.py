"""Chat replies with tool calls, shaped as the APIs' own documentation shows them (OpenAI function calling,
Anthropic tool use), non-streamed as JSON and streamed as SSE frames for `support.stream_target`."""

from __future__ import annotations

import json
from typing import Any

from support.stream_target import sse


def openai_completion(*calls: tuple[str, str, str], content: str | None = None) -> dict[str, Any]:
    """A chat completion whose message makes these (id, name, arguments JSON text) calls."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if calls:
        message["tool_calls"] = [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
                                 for call_id, name, args in calls]
    return {
        "id": "chatcmpl-abc123", "object": "chat.completion", "created": 1699896916, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99},
    }


def openai_stream(*calls: tuple[str, str, str], content: str | None = None, piece: int = 7) -> list[bytes]:
    """The same calls streamed: per call a first fragment with id and name, then its arguments in pieces."""
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse({"id": "chatcmpl-abc123", "object": "chat.completion.chunk", "created": 1699896916,
                    "model": "gpt-4o-mini",
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    frames = [chunk({"role": "assistant", "content": content})]
    for index, (call_id, name, args) in enumerate(calls):
        frames.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}))
        frames += [chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i:i + piece]}}]})
                   for i in range(0, len(args), piece)]
    frames.append(chunk({}, "tool_calls" if calls else "stop"))
    frames.append(sse("[DONE]"))
    return frames


def anthropic_message(*calls: tuple[str, str, Any], text: str | None = None) -> dict[str, Any]:
    """A Messages API reply: an optional text block, then one tool_use block per (id, name, input)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
                for call_id, name, tool_input in calls]
    return {"id": "msg_01Aq9w938a90dw8q", "type": "message", "role": "assistant",
            "model": "claude-3-5-sonnet-20241022", "content": content,
            "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 472, "output_tokens": 89}}


def anthropic_stream(*calls: tuple[str, str, str], text: str | None = None, piece: int = 9) -> list[bytes]:
    """The same streamed: `content_block_start` per block, `input_json_delta` pieces of each call's input
    (the JSON text given), `content_block_stop`, then `message_delta` and `message_stop`."""
    def event(name: str, data: dict[str, Any]) -> bytes:
        return sse({"type": name, **data}, event=name)

    frames = [event("message_start", {"message": {
        "id": "msg_014p7gG3wDgGV9EUtLvnow3U", "type": "message", "role": "assistant",
        "model": "claude-3-haiku-20240307", "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 472, "output_tokens": 2}}})]
    index = 0
    if text:
        frames.append(event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}))
        frames.append(event("ping", {}))
        frames += [event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text[i:i + 4]}})
                   for i in range(0, len(text), 4)]
        frames.append(event("content_block_stop", {"index": 0}))
        index = 1
    for offset, (call_id, name, args) in enumerate(calls):
        at = index + offset
        frames.append(event("content_block_start", {"index": at, "content_block": {
            "type": "tool_use", "id": call_id, "name": name, "input": {}}}))
        frames.append(event("content_block_delta", {"index": at, "delta": {"type": "input_json_delta",
                                                                           "partial_json": ""}}))
        frames += [event("content_block_delta", {"index": at, "delta": {"type": "input_json_delta",
                                                                        "partial_json": args[i:i + piece]}})
                   for i in range(0, len(args), piece)]
        frames.append(event("content_block_stop", {"index": at}))
    frames.append(event("message_delta", {"delta": {"stop_reason": "tool_use" if calls else "end_turn",
                                                    "stop_sequence": None}, "usage": {"output_tokens": 89}}))
    frames.append(event("message_stop", {}))
    return frames


def arguments(value: Any) -> str:
    return json.dumps(value)
