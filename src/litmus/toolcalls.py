"""The tool calls of a chat API's reply, and the reply as the API's own assistant message.

Two APIs, streamed or not:
- OpenAI chat completions: `choices[0].message.tool_calls[]`, each `{id, type: function, function: {name,
  arguments}}` with `arguments` a JSON string; streamed as `choices[0].delta.tool_calls[]` fragments.
- Anthropic messages: `content[]` blocks `{type: tool_use, id, name, input}` with `input` an object;
  streamed as `content_block_start` + `input_json_delta` pieces.
Streams are assembled where they are parsed (`litmus.run.stream`); this module reads what it kept.
Arguments that are not JSON are kept as sent (`raw_arguments`), never dropped: a check of them fails.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

from litmus.assertions._common import json_type
from litmus.response import BodyNotJSON, Response, json_value
from litmus.run.stream import StreamData, StreamedResponse

API = Literal["openai", "anthropic"]
APIS: tuple[API, ...] = ("openai", "anthropic")


class NotAReply(ValueError):
    """The response is not a reply of the API it is read as; the message says what is missing."""


@dataclass(frozen=True)
class ToolCall:
    # OpenAI's call id / Anthropic's tool_use id.
    id: str | None
    name: str
    # The parsed JSON (a mapping, usually); None when the arguments sent are not JSON.
    arguments: Any
    # The arguments as sent, when they are not JSON.
    raw_arguments: str | None = None


def read_tool_calls(response: Response, api: API) -> list[ToolCall]:
    """The tool calls of the reply, in the order the API gave them; NotAReply when it is not `api`'s reply."""
    stream = _stream(response, api)
    if stream is not None:
        return [ToolCall(call["id"], call["name"], *_arguments(text))
                for call, text in zip(stream.tool_calls, stream.tool_call_texts, strict=True)]
    if api == "openai":
        calls = _openai_message(response).get("tool_calls") or []
        if not isinstance(calls, list):
            raise NotAReply("choices[0].message.tool_calls is not a list")
        return [_openai_call(call, index) for index, call in enumerate(calls)]
    return [_anthropic_call(block, index) for index, block in enumerate(_anthropic_content(response))
            if block.get("type") == "tool_use"]


def assistant_message(response: Response, api: API) -> dict[str, Any]:
    """The reply as the API's own assistant message, tool calls kept as returned: what a conversation
    appends to the history it sends next (OpenAI `{role, content, tool_calls}`, Anthropic `{role, content}`
    with the content blocks)."""
    stream = _stream(response, api)
    if api == "anthropic":
        content = stream.content_blocks if stream is not None else _anthropic_content(response)
        return {"role": "assistant", "content": copy.deepcopy(content)}
    if stream is not None:
        calls = [{"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": text}}
                 for call, text in zip(stream.tool_calls, stream.tool_call_texts, strict=True)]
        message: dict[str, Any] = {"role": "assistant", "content": stream.text or (None if calls else "")}
    else:
        returned = _openai_message(response)
        calls = copy.deepcopy(returned.get("tool_calls") or [])
        message = {"role": "assistant", "content": copy.deepcopy(returned.get("content"))}
    if calls:
        message["tool_calls"] = calls
    return message


def detect_api(response: Response) -> API | None:
    """The API whose reply this is, by the stream format it was read with, else by the body's shape
    (`choices[0].message`: OpenAI; a `content` list with `role: assistant` or `type: message`: Anthropic);
    None when neither."""
    if isinstance(response, StreamedResponse):
        fmt = response.stream.format
        return fmt if fmt in APIS else None
    try:
        body = response.json()
    except BodyNotJSON:
        return None
    if not isinstance(body, dict):
        return None
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
            and isinstance(choices[0].get("message"), dict):
        return "openai"
    if isinstance(body.get("content"), list) and (body.get("type") == "message" or body.get("role") == "assistant"):
        return "anthropic"
    return None


def _stream(response: Response, api: API) -> StreamData | None:
    if not isinstance(response, StreamedResponse):
        return None
    fmt = response.stream.format
    if fmt != api:
        raise NotAReply(f"the reply was streamed as {fmt}, and {api} tool calls are read from a "
                        f"`stream: {api}` response")
    return response.stream


def _arguments(text: str) -> tuple[Any, str | None]:
    """(parsed, None), or (None, text) when `text` is not JSON. No text is a call without arguments."""
    if not text.strip():
        return {}, None
    try:
        return json_value(text), None
    except ValueError:
        return None, text


def _body(response: Response, api: API) -> Any:
    try:
        return response.json()
    except BodyNotJSON as exc:
        raise NotAReply(f"not an {_NAMES[api]} reply: {exc}") from None


def _openai_message(response: Response) -> dict[str, Any]:
    body = _body(response, "openai")
    choices = body.get("choices") if isinstance(body, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise NotAReply(f"not an {_NAMES['openai']} reply: no choices[0].message in {_shape(body)}")
    return message


def _openai_call(call: Any, index: int) -> ToolCall:
    where = f"choices[0].message.tool_calls[{index}]"
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise NotAReply(f"{where} has no function.name")
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        parsed, raw = _arguments(arguments)
    else:  # some OpenAI-compatible servers send the object itself
        parsed, raw = ({} if arguments is None else arguments), None
    return ToolCall(_id(call.get("id")), function["name"], parsed, raw)


def _anthropic_content(response: Response) -> list[dict[str, Any]]:
    body = _body(response, "anthropic")
    content = body.get("content") if isinstance(body, dict) else None
    if not isinstance(content, list) or not all(isinstance(block, dict) for block in content):
        raise NotAReply(f"not an {_NAMES['anthropic']} reply: no content list of blocks in {_shape(body)}")
    return content


def _anthropic_call(block: dict[str, Any], index: int) -> ToolCall:
    if not isinstance(block.get("name"), str):
        raise NotAReply(f"content[{index}] (tool_use) has no name")
    return ToolCall(_id(block.get("id")), block["name"], block.get("input", {}))


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _shape(body: Any) -> str:
    if isinstance(body, dict):
        keys = ", ".join(sorted(map(str, body))[:8])
        return f"an object with keys {keys}" if keys else "an empty object"
    return f"a JSON {json_type(body)}"


_NAMES = {"openai": "OpenAI chat completion", "anthropic": "Anthropic message"}
