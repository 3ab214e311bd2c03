"""A chat API on 127.0.0.1 for conversation tests: OpenAI chat completions, Anthropic messages, a mapping-form
API and one that keeps the conversation itself.

    with ChatServer(forget_at=3) as chat:
        ... chat.url("/openai/v1/chat/completions") ...
        chat.log  # every request: {"path", "json", "headers"}

It sees only the history it is sent (the session route excepted) and refuses, with a 400 as the real APIs
do, a history that breaks its API's order rules: OpenAI — the system message only first, user and assistant
alternating, an assistant message with `tool_calls` followed by one `role: tool` message per call id before
anything else; Anthropic — no system role in `messages`, user first, roles alternating, an assistant
`tool_use` answered by `tool_result` blocks at the head of the next user message. Both end on the user.

The assistant says which turn it is, repeats the user's message and the order number (the first 4-digit
number the user gave): "turn 2: you said 'When?'; order 1042". At `forget_at` it forgets the order
("order unknown"). A user message containing "lookup" is answered with a `lookup_order` tool call; the reply
after a tool result quotes it ("; tool said ..."). `"stream": true` in the body streams the reply (OpenAI
SSE chunks, Anthropic events).

Both APIs report token usage as the real ones do, counting words (`usage_of`): OpenAI's `usage` in a
non-streamed reply, and in a last chunk of its own only when the body sets `stream_options.include_usage`;
Anthropic's `usage`, and in a stream `message_start`'s (the input, one output token so far) then
`message_delta`'s (the final output count). Each reply names the model the body asked for.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from support.server import LocalServer
from support.stream_target import sse

ORDER = re.compile(r"\b\d{4}\b")


class HistoryRefused(Exception):
    """The history breaks the API's rules: answered with a 400 naming the rule."""


class ChatServer(LocalServer):
    def __init__(self, *, forget_at: int | None = None, status: int = 200, signature: str = "") -> None:
        self.forget_at = forget_at
        self.status = status
        # Appended to every reply (e.g. text that looks like a template).
        self.signature = signature
        self.log: list[dict[str, Any]] = []
        self.sessions: dict[str, list[dict[str, str]]] = {}
        self._lock = threading.Lock()
        super().__init__(self._handler())

    def sent(self, path: str) -> list[Any]:
        """The JSON bodies sent to `path`, in order."""
        return [entry["json"] for entry in self.log if entry["path"] == path]

    # ---- the assistant

    def answer(self, users: list[str], tool_outputs: list[str]) -> tuple[str, dict[str, Any] | None]:
        """The reply text to a history (its user messages, its tool outputs), and a tool call to make."""
        turn = len(users)
        if "lookup" in users[-1]:
            return "", {"name": "lookup_order", "arguments": {"order_id": 1042}}
        order = next((m.group() for text in users for m in [ORDER.search(text)] if m), None)
        if turn == self.forget_at:
            order = None
        text = f"turn {turn}: you said {users[-1]!r}; order {order or 'unknown'}"
        if tool_outputs:
            text += f"; tool said {tool_outputs[-1]}"
        return text + self.signature, None

    # ---- the APIs

    @staticmethod
    def usage_of(body: dict[str, Any], text: str) -> tuple[int, int]:
        """(input, output) tokens of a reply: the words of every message (and system prompt) sent, of the reply."""
        sent = [body.get("system") or ""] + [_words_of(m.get("content")) for m in body.get("messages") or []]
        return sum(len(part.split()) for part in sent), len(text.split())

    def openai(self, body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise HistoryRefused("'messages' must be a non-empty list")
        pending: list[str] = []
        last_speaker = None
        for index, message in enumerate(messages):
            role = message.get("role")
            if pending and role != "tool":
                raise HistoryRefused(f"messages[{index}]: an assistant message with 'tool_calls' must be followed "
                                     f"by tool messages answering each tool_call_id: {pending} unanswered")
            if role == "system":
                if index != 0:
                    raise HistoryRefused(f"messages[{index}]: the system message comes first")
            elif role == "tool":
                if message.get("tool_call_id") not in pending:
                    raise HistoryRefused(f"messages[{index}]: a tool message must answer a preceding tool call")
                pending.remove(message["tool_call_id"])
            elif role in ("user", "assistant"):
                if role == last_speaker:
                    raise HistoryRefused(f"messages[{index}]: two {role} messages in a row")
                last_speaker = role
                pending = [call["id"] for call in message.get("tool_calls") or []]
            else:
                raise HistoryRefused(f"messages[{index}]: unknown role {role!r}")
        if pending:
            raise HistoryRefused(f"tool calls {pending} are unanswered")
        if messages[-1].get("role") != "user":
            raise HistoryRefused("the last message must be the user's")
        users = [m["content"] for m in messages if m.get("role") == "user"]
        return self.answer(users, [m["content"] for m in messages if m.get("role") == "tool"])

    def anthropic(self, body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise HistoryRefused("'messages' must be a non-empty list")
        if "system" in body and not isinstance(body["system"], str):
            raise HistoryRefused("'system' must be a string")
        pending: list[str] = []
        users, outputs = [], []
        for index, message in enumerate(messages):
            role = message.get("role")
            expected = "user" if index % 2 == 0 else "assistant"
            if role != expected:
                raise HistoryRefused(f"messages[{index}]: roles must alternate starting with user; got {role!r}")
            content = message.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            if role == "user":
                head = blocks[: len(pending)]
                if [b.get("tool_use_id") for b in head if b.get("type") == "tool_result"] != pending:
                    raise HistoryRefused(f"messages[{index}]: tool_use ids {pending} must be answered by "
                                         "tool_result blocks at the head of the next user message")
                outputs += [b.get("content") for b in blocks if b.get("type") == "tool_result"]
                users.append("".join(b.get("text", "") for b in blocks if b.get("type") == "text"))
            else:
                pending = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if messages[-1].get("role") != "user":
            raise HistoryRefused("the last message must be the user's")
        return self.answer(users, outputs)

    # ---- HTTP

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                with server._lock:
                    server.log.append({"path": self.path, "json": body, "headers": dict(self.headers)})
                if server.status != 200:
                    return self._json(server.status, {"error": {"message": "overloaded"}})
                try:
                    if self.path.startswith("/openai"):
                        text, call = server.openai(body)
                        return self._openai(body, text, call)
                    if self.path.startswith("/anthropic"):
                        text, call = server.anthropic(body)
                        return self._anthropic(body, text, call)
                    if self.path == "/mapping":
                        history = body["input"]["history"]
                        text, _ = server.answer([m["content"] for m in history if m["role"] == "user"], [])
                        return self._json(200, {"data": {"reply": text}})
                    if self.path == "/session":
                        return self._session(body)
                except HistoryRefused as exc:
                    return self._json(400, {"error": {"type": "invalid_request_error", "message": str(exc)}})
                self._json(404, {"error": "no such route"})

            def _session(self, body: dict[str, Any]) -> None:
                sent = body["input"]
                if len(sent) != 1 or sent[0]["role"] != "user":
                    raise HistoryRefused("this API keeps the conversation: send only the new user message")
                session = body.get("conversation_id") or str(uuid.uuid4())
                with server._lock:
                    history = server.sessions.setdefault(session, [])
                    history.append(sent[0])
                text, _ = server.answer([m["content"] for m in history], [])
                self._json(200, {"conversation_id": session, "reply": text})

            def _openai(self, body: dict[str, Any], text: str, call: dict[str, Any] | None) -> None:
                tool_calls = [{"id": f"call_{uuid.uuid4().hex[:8]}", "type": "function",
                               "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}
                              ] if call else None
                prompt_tokens, completion_tokens = server.usage_of(body, text)
                usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                         "total_tokens": prompt_tokens + completion_tokens}
                if not body.get("stream"):
                    message = {"role": "assistant", "content": text or None}
                    if tool_calls:
                        message["tool_calls"] = tool_calls
                    return self._json(200, {"id": "chatcmpl-1", "object": "chat.completion", "model": body.get("model"),
                                            "choices": [{"index": 0, "message": message,
                                                         "finish_reason": "tool_calls" if call else "stop"}],
                                            "usage": usage})
                frames = [sse({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})]
                for piece in (text[i:i + 7] for i in range(0, len(text), 7)):
                    frames.append(sse({"choices": [{"index": 0, "delta": {"content": piece}}]}))
                for index, tool in enumerate(tool_calls or []):
                    arguments = tool["function"]["arguments"]
                    frames.append(sse({"choices": [{"index": 0, "delta": {"tool_calls": [
                        {"index": index, "id": tool["id"], "type": "function",
                         "function": {"name": tool["function"]["name"], "arguments": arguments[:5]}}]}}]}))
                    frames.append(sse({"choices": [{"index": 0, "delta": {"tool_calls": [
                        {"index": index, "function": {"arguments": arguments[5:]}}]}}]}))
                frames.append(sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
                if (body.get("stream_options") or {}).get("include_usage"):
                    frames.append(sse({"model": body.get("model"), "choices": [], "usage": usage}))
                self._stream([*frames, sse("[DONE]")])

            def _anthropic(self, body: dict[str, Any], text: str, call: dict[str, Any] | None) -> None:
                blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
                if call:
                    blocks.append({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:8]}", "name": call["name"],
                                   "input": call["arguments"]})
                input_tokens, output_tokens = server.usage_of(body, text)
                if not body.get("stream"):
                    return self._json(200, {
                        "id": "msg_1", "type": "message", "role": "assistant", "content": blocks,
                        "model": body.get("model"), "stop_reason": "tool_use" if call else "end_turn",
                        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}})
                frames = [sse({"type": "message_start", "message": {
                    "id": "msg_1", "role": "assistant", "content": [], "model": body.get("model"),
                    "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}, event="message_start")]
                for index, block in enumerate(blocks):
                    if block["type"] == "text":
                        frames.append(sse({"type": "content_block_start", "index": index,
                                           "content_block": {"type": "text", "text": ""}}, event="content_block_start"))
                        frames += [sse({"type": "content_block_delta", "index": index,
                                        "delta": {"type": "text_delta", "text": text[i:i + 7]}},
                                       event="content_block_delta") for i in range(0, len(text), 7)]
                    else:
                        frames.append(sse({"type": "content_block_start", "index": index, "content_block": {
                            "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}},
                            event="content_block_start"))
                        frames.append(sse({"type": "content_block_delta", "index": index, "delta": {
                            "type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
                            event="content_block_delta"))
                    frames.append(sse({"type": "content_block_stop", "index": index}, event="content_block_stop"))
                frames += [sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                "usage": {"output_tokens": output_tokens}}, event="message_delta"),
                           sse({"type": "message_stop"}, event="message_stop")]
                self._stream(frames)

            def _stream(self, frames: list[bytes]) -> None:
                payload = b"".join(frames)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _json(self, status: int, document: Any) -> None:
                payload = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def _words_of(content: Any) -> str:
    """A message's text: its string content, or its text parts / blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text") or "" for part in content if isinstance(part, dict))
    return ""
