"""A real streaming HTTP server on 127.0.0.1 for tests: each route writes its chunks as they come.

    with StreamTarget() as target:
        target.script("/chat", Script(sse_frames(...), first_delay=0.2))
        ... target.url("/chat") ...

A `Script` is the chunks to write (each written and flushed on its own, so the client sees them
arrive one by one), how the body is framed (`chunked` transfer encoding, or `close`: no length, the
body ends when the connection closes), and what happens after the last chunk: `end` (the body ends
properly), `hang` (the connection stays open, sending nothing) or `drop` (the connection closes
without the end of the chunked body). `target.first_chunk_at` records, per path, when the first
chunk was written (`time.perf_counter()`, the clock the client uses too).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from support.server import LocalServer


@dataclass
class Script:
    chunks: Iterable[bytes] | Callable[[], Iterable[bytes]]
    content_type: str = "text/event-stream"
    status: int = 200
    first_delay: float = 0.0
    interval: float = 0.0
    framing: Literal["chunked", "close"] = "chunked"
    then: Literal["end", "hang", "drop"] = "end"


def sse(*events: Any, event: str | None = None) -> bytes:
    """SSE frames: each event's data (JSON-encoded unless already a string), a blank line after each."""
    out = []
    for data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {event}\n" if event else ""
        out.append(head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n")
    return "".join(out).encode()


def openai_chunks(*pieces: str, done: bool = True) -> list[bytes]:
    """OpenAI chat-completion chunks, one per piece of content, then `[DONE]`."""
    frames = [sse({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})]
    frames += [sse({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {"content": piece}}]}) for piece in pieces]
    frames.append(sse({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    if done:
        frames.append(sse("[DONE]"))
    return frames


def anthropic_events(*pieces: str, stop: bool = True) -> list[bytes]:
    """Anthropic Messages streaming events around text deltas (`message_stop` at the end)."""
    frames = [
        sse({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}},
            event="message_start"),
        sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            event="content_block_start"),
        b": keep-alive\n\n",
        sse({"type": "ping"}, event="ping"),
    ]
    frames += [sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
                   event="content_block_delta") for piece in pieces]
    frames += [sse({"type": "content_block_stop", "index": 0}, event="content_block_stop"),
               sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}, event="message_delta")]
    if stop:
        frames.append(sse({"type": "message_stop"}, event="message_stop"))
    return frames


class StreamTarget(LocalServer):
    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}
        self.first_chunk_at: dict[str, float] = {}
        self.requests: list[dict[str, Any]] = []
        self._stop = threading.Event()
        target = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def _handle(self):
                target._serve(self)

            do_GET = do_POST = _handle

        super().__init__(_Handler)

    def stop(self) -> None:
        self._stop.set()  # releases the connections left hanging
        super().stop()

    def script(self, path: str, script: Script) -> None:
        self.scripts[path] = script

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        self.requests.append({"path": h.path, "body": body})
        script = self.scripts.get(h.path)
        if script is None:
            h.send_error(404)
            return
        h.send_response(script.status)
        h.send_header("Content-Type", script.content_type)
        h.send_header("Cache-Control", "no-cache")
        if script.framing == "chunked":
            h.send_header("Transfer-Encoding", "chunked")
        # It closes the connection after every reply, so it says so (HTTP/1.1): a client must not send
        # the next request on it. Without the header, a POST raced the close (a POST is never resent).
        h.send_header("Connection", "close")
        h.close_connection = True
        h.end_headers()
        h.wfile.flush()
        chunks = script.chunks() if callable(script.chunks) else script.chunks
        try:
            time.sleep(script.first_delay)
            for index, chunk in enumerate(chunks):
                if index == 0:
                    self.first_chunk_at[h.path] = time.perf_counter()
                elif script.interval:
                    time.sleep(script.interval)
                h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if script.framing == "chunked" else chunk)
                h.wfile.flush()
            if script.then == "hang":
                self._stop.wait(60)
            elif script.then == "end" and script.framing == "chunked":
                h.wfile.write(b"0\r\n\r\n")
                h.wfile.flush()
        except OSError:
            pass  # the client hung up (cap, timeout, end marker)
        h.close_connection = True
