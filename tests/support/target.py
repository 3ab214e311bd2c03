"""A real HTTP target on 127.0.0.1 for tests: scripted routes and transport faults.

    with Target() as target:
        target.json("/order", {"status": "shipped"})
        target.route("/slow", lambda req: time.sleep(2) or (200, {}, b"late"))
        target.fault("/reset", "reset_mid_body")
        ... target.url("/order") ...

A route handler gets a `Request` (method, path, query, headers, body, json()) and returns
`(status, headers, body)`. Faults write raw bytes to the socket to misbehave in ways a
well-behaved server framework would not allow. `target.requests` records every request.
"""

from __future__ import annotations

import gzip
import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from support.server import LocalServer

Handler = Callable[["Request"], tuple[int, dict[str, str], bytes]]


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes = b""
    extra: dict[str, Any] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body or b"null")


class Target(LocalServer):
    def __init__(self) -> None:
        self.routes: dict[str, Handler | str] = {}
        self.requests: list[Request] = []
        self.dead = False
        self._lock = threading.Lock()
        target = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are separate writes

            def log_message(self, *args):  # keep test output quiet
                pass

            def _handle(self):
                target._serve(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _handle

        super().__init__(_Handler)

    def stop(self) -> None:
        """Die: open connections get no more responses, new ones are refused."""
        self.dead = True
        super().stop()

    # -- scripting
    def route(self, path: str, handler: Handler) -> None:
        self.routes[path] = handler

    def json(self, path: str, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(data).encode()
        self.route(path, lambda req: (status, {"Content-Type": "application/json", **(headers or {})}, body))

    def text(self, path: str, text: str | bytes, status: int = 200, content_type: str = "text/plain") -> None:
        body = text.encode() if isinstance(text, str) else text
        self.route(path, lambda req: (status, {"Content-Type": content_type}, body))

    def fault(self, path: str, kind: str) -> None:
        """kind: reset_mid_headers, reset_mid_body, trickle, trickle_slow, late_body, endless, gzip_bomb,
        redirect_loop, http10_close, close_no_response."""
        self.routes[path] = kind

    # -- serving
    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        if self.dead:
            h.close_connection = True
            return
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        request = Request(h.command, parts.path, parse_qs(parts.query), dict(h.headers.items()), body)
        with self._lock:
            self.requests.append(request)
        handler = self.routes.get(parts.path)
        if handler is None:
            return _send(h, 404, {"Content-Type": "text/plain"}, b"no route")
        if isinstance(handler, str):
            return getattr(self, f"_fault_{handler}")(h)
        status, headers, payload = handler(request)
        _send(h, status, headers, payload)

    def _fault_reset_mid_headers(self, h) -> None:
        h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: applica")
        h.wfile.flush()
        time.sleep(0.05)
        _reset(h)

    def _fault_reset_mid_body(self, h) -> None:
        h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"partial\":")
        h.wfile.flush()
        time.sleep(0.05)
        _reset(h)

    def _fault_trickle(self, h, interval: float = 0.05) -> None:
        h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n")
        try:
            for _ in range(100000):
                h.wfile.write(b"x")
                h.wfile.flush()
                time.sleep(interval)
        except OSError:
            pass
        h.close_connection = True

    def _fault_late_body(self, h) -> None:
        """The status line and headers at once, the body one second later (time to first byte vs. the end)."""
        h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\n")
        h.wfile.flush()
        time.sleep(1.0)
        h.wfile.write(b"done")
        h.close_connection = True

    def _fault_trickle_slow(self, h) -> None:
        """One byte per second."""
        self._fault_trickle(h, interval=1.0)

    def _fault_endless(self, h) -> None:
        h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"y" * 65536
        try:
            while True:
                h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass
        h.close_connection = True

    def _fault_gzip_bomb(self, h) -> None:
        payload = _gzip_bomb()
        _send(h, 200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, payload)

    def _fault_redirect_loop(self, h) -> None:
        _send(h, 302, {"Location": h.path}, b"")

    def _fault_http10_close(self, h) -> None:
        # No Content-Length, no chunking: the body ends when the server closes the connection.
        h.wfile.write(b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"via": "close"}')
        h.wfile.flush()
        h.close_connection = True

    def _fault_close_no_response(self, h) -> None:
        h.close_connection = True


def _reset(h: BaseHTTPRequestHandler) -> None:
    # SO_LINGER 0 makes close() send a RST instead of a FIN.
    h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    h.connection.close()
    h.close_connection = True


def _send(h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
    h.send_response(status)
    for name, value in headers.items():
        h.send_header(name, value)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    if h.command != "HEAD":
        h.wfile.write(body)


def _gzip_bomb() -> bytes:
    """About 1 GiB of zeros in about 1 MiB: 1024 gzip members of 1 MiB each (a valid gzip stream)."""
    return gzip.compress(b"\0" * (1 << 20), compresslevel=9) * 1024
