"""Reading a streamed body as events: Server-Sent Events (WHATWG rules) and newline-delimited JSON.

The transport (`litmus.run.http`) feeds each chunk it reads, under the same size cap and deadline as
any body, to a `StreamReader`. The reader splits lines (CRLF, LF or CR), frames events, assembles the
text (and OpenAI or Anthropic tool calls) as they arrive, and times the first byte and the first event.
`finish` turns it all into a `StreamedResponse`, whose text is the assembled text and whose JSON is
the document `{events, text, done, tool_calls}`, or raises `StreamError` for a stream that was cut,
malformed or reported an error itself: a partial stream never looks like a complete one.

Standard library on purpose: the SSE parsers on PyPI read the HTTP response themselves (a second
transport, outside the size cap and the step deadline), and none says on which line a bad frame is.
"""

from __future__ import annotations

import codecs
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from litmus.assertions._jsonpaths import find
from litmus.model import Stream
from litmus.response import Response, json_value
from litmus.text import clip

# How each format marks its end, in messages.
END_MARKERS = {"openai": "data: [DONE]", "anthropic": "the message_stop event"}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_EXCERPT = 80


class StreamError(Exception):
    """The stream was cut, malformed, or reported an error. `partial` holds what was received."""

    def __init__(self, message: str, partial: StreamedResponse) -> None:
        super().__init__(message)
        self.partial = partial


@dataclass
class StreamData:
    """What a streamed body was, as events and as assembled text."""

    format: str
    # (event type, data as received, id) per event. The data is parsed again only when the
    # events are looked at: kept parsed, 10 MB of small chunks take twenty times that in memory.
    received: list[tuple[str | None, str, str | None]] = field(default_factory=list)
    text: str = ""
    done: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    # Each tool call's arguments as streamed (the JSON text), in the order of `tool_calls`: what
    # `litmus.toolcalls` reports when it is not JSON, and what a conversation sends back to OpenAI.
    tool_call_texts: list[str] = field(default_factory=list)
    # `anthropic` only: the message's content blocks as assembled (text, tool_use with its input parsed,
    # thinking with its signature), in index order: the assistant message a conversation sends back.
    content_blocks: list[dict[str, Any]] = field(default_factory=list)
    # From sending the request, like `Response.elapsed_ms`; None when nothing arrived.
    first_byte_ms: float | None = None
    first_event_ms: float | None = None
    # Bytes of the body as it came off the wire (after content decoding), and their beginning.
    wire_bytes: int = 0
    wire_head: bytes = b""
    _events: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def events_count(self) -> int:
        return len(self.received)

    def events(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Each event as `{event, data, id}`, its data parsed as JSON where it is JSON."""
        if self._events is not None:
            return self._events[:limit]
        events = [_event_dict(*item) for item in self.received[:limit]]
        if limit is None or limit >= len(self.received):
            self._events = events
        return events

    def document(self) -> dict[str, Any]:
        """What `json_path` (and `select`) run over."""
        return {"events": self.events(), "text": self.text, "done": self.done, "tool_calls": self.tool_calls}


def _event_dict(event: str | None, raw: str, event_id: str | None) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError:
        data = raw
    return {"event": event, "data": data, "id": event_id}


@dataclass
class StreamedResponse(Response):
    """A response read as a stream: its body and text are the assembled text, its JSON the document."""

    stream: StreamData = field(default_factory=lambda: StreamData("sse"))

    @property
    def text(self) -> str:
        return self.stream.text

    @property
    def first_event_ms(self) -> float | None:
        return self.stream.first_event_ms

    def json(self) -> Any:
        return self.stream.document()


class _SSEFramer:
    """Server-Sent Events framing, per the WHATWG HTML standard's "event stream interpretation"."""

    def __init__(self) -> None:
        self.data: list[str] = []
        self.event_type = ""
        self.last_id = ""
        self.data_line = 0

    def line(self, text: str, number: int) -> tuple[str, str, str | None, int] | None:
        """The event this line dispatches (type, data, id, line of its first data line), if any."""
        if not text:
            if not self.data:
                self.event_type = ""
                return None
            event = (self.event_type or "message", "\n".join(self.data), self.last_id or None, self.data_line)
            self.data, self.event_type = [], ""
            return event
        if text.startswith(":"):
            return None  # a comment (keep-alive)
        name, colon, value = text.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            if not self.data:
                self.data_line = number
            self.data.append(value)
        elif name == "event":
            self.event_type = value
        elif name == "id" and "\0" not in value:
            self.last_id = value
        # `retry` sets the reconnection time and other fields are ignored, as the standard says:
        # Litmus never reconnects (a dropped stream is an error, not something to resume).
        return None

    @property
    def pending(self) -> bool:
        return bool(self.data)


class StreamReader:
    """Incremental reader of one streamed body; `feed` each chunk, then `finish`."""

    def __init__(self, spec: Stream, start: float, content_type: str = "") -> None:
        self.spec = spec
        self.start = start
        self.content_type = content_type
        self.data = StreamData(spec.format)
        self._framer = None if spec.format == "ndjson" else _SSEFramer()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""
        self._lines_seen = 0
        self._pieces: list[str] = []
        # Tool calls by their index: {"id", "name", "arguments" (the JSON text so far)}.
        self._tools: dict[Any, dict[str, Any]] = {}
        # `anthropic`: content blocks by their index, as `content_block_start` gave them, deltas applied.
        self._blocks: dict[Any, dict[str, Any]] = {}
        # Why the stream cannot be trusted (a bad frame, an error event); reading stops there.
        self.problem: str | None = None

    # ---- reading

    def feed(self, chunk: bytes) -> bool:
        """Take one chunk; True when reading should stop (end marker seen, or a bad frame)."""
        if self.data.first_byte_ms is None:
            self.data.first_byte_ms = self._now()
        if len(self.data.wire_head) < 4096:
            self.data.wire_head += chunk[: 4096 - len(self.data.wire_head)]
        self.data.wire_bytes += len(chunk)
        self._take(self._decoder.decode(chunk))
        return self._stopped

    @property
    def _stopped(self) -> bool:
        return self.data.done or self.problem is not None

    def _take(self, text: str, final: bool = False) -> None:
        buffer = self._pending + text
        if not self._lines_seen and not self._pending and buffer.startswith("\ufeff"):
            buffer = buffer[1:]  # a leading byte order mark is not part of the first line
        start = 0
        for match in _LINE_BREAK.finditer(buffer):
            if match.group() == "\r" and match.end() == len(buffer) and not final:
                break  # maybe the first half of a CRLF split across two chunks
            self._line(buffer[start:match.start()])
            start = match.end()
            if self._stopped:
                break
        self._pending = buffer[start:]
        if final and self._pending and not self._stopped:
            # The last line has no line break: a complete NDJSON line, but an SSE event needs the
            # blank line after it (the standard discards an unfinished event).
            if self._framer is None:
                self._line(self._pending)
            else:
                self._framer.line(self._pending, self._lines_seen + 1)
            self._pending = ""

    def _line(self, text: str) -> None:
        self._lines_seen += 1
        number = self._lines_seen
        if self._framer is None:
            if text.strip():
                self._event(None, text, None, number)
            return
        event = self._framer.line(text, number)
        if event is not None:
            self._event(*event)

    def _event(self, event_type: str | None, raw: str, event_id: str | None, line: int) -> None:
        spec, fmt = self.spec, self.spec.format
        is_marker = (fmt == "openai" and spec.done is None and raw.strip() == "[DONE]") or (
            spec.done is not None and not spec.done.startswith("$") and raw == spec.done)
        try:
            data, is_json = json.loads(raw), True
        except ValueError:
            data, is_json = raw, False
        if not is_json and not is_marker and (fmt != "sse" or spec.text_path or _is_path(spec.done)):
            what = "line is not JSON" if fmt == "ndjson" else "event data is not JSON"
            self.problem = f"malformed {fmt} stream: line {line}: {what}: {_excerpt(raw)}"
            return
        self.data.received.append((event_type, raw, event_id))
        if self.data.first_event_ms is None:
            self.data.first_event_ms = self._now()
        if is_marker:
            self.data.done = True
            return
        if fmt == "openai":
            self._openai(data)
        elif fmt == "anthropic":
            self._anthropic(event_type, data)
        if spec.text_path:
            self._pieces.extend(_strings(spec.text_path, data))
        elif fmt == "sse":
            self._pieces.append(raw)
        elif fmt == "ndjson" and isinstance(data, str):
            self._pieces.append(data)
        if _is_path(spec.done) and any(value is True for _, value in _find(spec.done, data)):
            self.data.done = True

    def _openai(self, chunk: Any) -> None:
        if not isinstance(chunk, dict):
            return
        if chunk.get("error"):
            self._reported(chunk["error"])
            return
        choices = chunk.get("choices")
        first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
        delta = first.get("delta") if isinstance(first.get("delta"), dict) else {}
        if isinstance(delta.get("content"), str) and not self.spec.text_path:
            self._pieces.append(delta["content"])
        for call in delta.get("tool_calls") or ():
            if not isinstance(call, dict):
                continue
            index = _index(call.get("index"), len(self._tools))
            tool = self._tools.setdefault(index, {"id": None, "name": "", "arguments": ""})
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            tool["id"] = tool["id"] or call.get("id")
            tool["name"] = tool["name"] or function.get("name") or ""
            tool["arguments"] += function.get("arguments") or ""

    def _anthropic(self, event_type: str | None, message: Any) -> None:
        if not isinstance(message, dict):
            return
        kind = message.get("type") or event_type
        if kind == "error":
            self._reported(message.get("error", message))
        elif kind == "message_stop":
            self.data.done = True
        elif kind == "content_block_start":
            block = message.get("content_block") or {}
            index = _index(message.get("index"), len(self._blocks))
            if not isinstance(block, dict):
                return
            self._blocks[index] = dict(block)
            if block.get("type") == "tool_use":
                self._tools[index] = {"id": block.get("id"), "name": block.get("name") or "", "arguments": ""}
        elif kind == "content_block_delta":
            delta = message.get("delta") or {}
            if not isinstance(delta, dict):
                return
            index = _index(message.get("index"), None)
            block = self._blocks.setdefault(index, {"type": "text", "text": ""}) if index is not None else {}
            text = delta.get("text")
            if delta.get("type") == "text_delta" and isinstance(text, str):
                if not self.spec.text_path:
                    self._pieces.append(text)
                block["text"] = _joined(block.get("text"), text)
            elif delta.get("type") == "input_json_delta" and index in self._tools:
                self._tools[index]["arguments"] += delta.get("partial_json") or ""
            elif delta.get("type") in _BLOCK_DELTAS:
                key = _BLOCK_DELTAS[delta["type"]]
                block[key] = _joined(block.get(key), delta.get(key))

    def _reported(self, error: Any) -> None:
        message = error.get("message") if isinstance(error, dict) else error
        count = self.data.events_count - 1  # the events before this one
        self.problem = f"the stream reported an error after {count} event{'s' * (count != 1)}: {_excerpt(message)}"

    def _now(self) -> float:
        return round((time.perf_counter() - self.start) * 1000, 1)

    # ---- the end

    def finish(self, response: Response, failure: str | None) -> StreamedResponse:
        """The streamed response; StreamError when the stream did not end as its format says it must.

        `failure` is the transport's reason for stopping early (timeout, broken connection)."""
        clean_end = failure is None and not response.truncated and not self._stopped
        if clean_end:
            self._take(self._decoder.decode(b"", final=True), final=True)
        unfinished_event = clean_end and self._framer is not None and self._framer.pending
        data = self.data
        if clean_end and not unfinished_event and not self._stopped and self._ends_at_close:
            data.done = bool(data.received)
        data.text = "".join(self._pieces)
        tools = [self._tools[index] for index in sorted(self._tools, key=_order)]
        data.tool_calls = [_tool_call(tool) for tool in tools]
        data.tool_call_texts = [tool["arguments"] for tool in tools]
        data.content_blocks = [self._content_block(index) for index in sorted(self._blocks, key=_order)]
        streamed = StreamedResponse(
            status=response.status, headers=response.headers, body=data.text.encode("utf-8"),
            elapsed_ms=response.elapsed_ms, first_byte_ms=response.first_byte_ms, url=response.url,
            encoding="utf-8", stream=data,
            redirects=response.redirects, transport_retries=response.transport_retries,
            header_lines=response.header_lines,
        )
        problem = self._why_incomplete(response, failure, unfinished_event)
        if problem:
            raise StreamError(problem, streamed)
        return streamed

    def _content_block(self, index: Any) -> dict[str, Any]:
        block = self._blocks[index]
        if index in self._tools:
            return {**block, "input": _tool_call(self._tools[index])["arguments"]}
        return block

    @property
    def _ends_at_close(self) -> bool:
        return self.spec.format in ("sse", "ndjson") and self.spec.done is None

    def _why_incomplete(self, response: Response, failure: str | None, unfinished_event: bool) -> str | None:
        if self.problem:
            return self.problem
        if self.data.done:
            return None
        count = self.data.events_count
        cut = f"stream cut after {count} event{'s' * (count != 1)}"
        if failure:
            return f"{cut}: {failure}"
        if response.truncated:
            return f"{cut}: the body reached the size cap of {len(response.body)} bytes (--max-body-bytes)"
        hint = self._content_type_hint()
        if unfinished_event:
            return f"{cut}: the connection closed in the middle of an event (no blank line after line " \
                   f"{self._lines_seen}){hint}"
        if self._ends_at_close:
            return f"the stream ended with no events{hint}"
        marker = END_MARKERS.get(self.spec.format) if self.spec.done is None else repr(self.spec.done)
        return f"{cut}: the connection closed before {marker}{hint}"

    def _content_type_hint(self) -> str:
        kind = self.content_type.split(";")[0].strip()
        if self._framer is None or kind == "text/event-stream":
            return ""
        return f" (Content-Type is {kind or 'missing'}, not text/event-stream)"


def _tool_call(tool: dict[str, Any]) -> dict[str, Any]:
    text = tool["arguments"]
    try:
        # No arguments streamed is a call without arguments (both APIs send none for a tool without parameters).
        arguments = json_value(text) if text.strip() else {}
    except ValueError:
        arguments = text  # kept as sent: a check on its fields then finds no node, and says so
    return {"id": tool["id"], "name": tool["name"], "arguments": arguments}


# Anthropic's other text deltas of a content block: which field of the block each one extends (a thinking
# block goes back to the API with its signature, or the API refuses the next turn).
_BLOCK_DELTAS = {"thinking_delta": "thinking", "signature_delta": "signature"}


def _joined(current: Any, piece: Any) -> Any:
    if not isinstance(piece, str):
        return current
    return (current if isinstance(current, str) else "") + piece


def _index(value: Any, default: int | None) -> int | None:
    """An event's `index` field: an integer, whatever else the server sent (a key of the tables above)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _order(index: Any) -> tuple[int, str]:
    return (index, "") if isinstance(index, int) else (1 << 30, str(index))


def _is_path(done: str | None) -> bool:
    return bool(done) and done.startswith("$")


def _find(path: str, data: Any) -> list[tuple[str, Any]]:
    return find(path, data)


def _strings(path: str, data: Any) -> list[str]:
    return [value for _, value in _find(path, data) if isinstance(value, str)]


def _excerpt(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return repr(clip(text, _EXCERPT))
