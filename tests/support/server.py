"""The one base of the tests' servers on 127.0.0.1: a free port of its own, a thread serving it (and one
per connection), start and stop. Every test server is one (`Target`, `StreamTarget`, `RawServer`,
`ClosingServer`, `FakeJudge`, `FakeGitHub` and the small ones inside test files).

    class Hello(LocalServer):
        def __init__(self) -> None:
            super().__init__(HelloHandler)  # any socketserver handler; an HTTP one gets an HTTP server

    with Hello() as server:
        ... server.url("/hello") ...

A handler's errors that are a client hanging up early (size caps, deadlines, cancelled runs) are
expected and stay quiet; any other is printed, as socketserver does.

`refused_port()` is a port on 127.0.0.1 where every connection is refused, for as long as it is held.
"""

from __future__ import annotations

import socket
import socketserver
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# How often the serving loop looks for a stop request: stopping waits for it, and socketserver's
# default (0.5 s) made every server's stop take half a second, 160 s over the suite.
POLL_S = 0.01


class _QuietHangUps:
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _HTTPServer(_QuietHangUps, ThreadingHTTPServer):
    pass


class _TCPServer(_QuietHangUps, socketserver.ThreadingTCPServer):
    pass


class LocalServer:
    def __init__(self, handler: type[socketserver.BaseRequestHandler]) -> None:
        server_class = _HTTPServer if issubclass(handler, BaseHTTPRequestHandler) else _TCPServer
        self.server = server_class(("127.0.0.1", 0), handler)
        self.port: int = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, args=(POLL_S,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving and close the port; connections being answered finish on their own threads.
        Safe to call twice and from another thread."""
        if self._thread.is_alive():
            self.server.shutdown()
        self.server.server_close()


@contextmanager
def refused_port() -> Iterator[int]:
    """A port bound but never listened on: connections to it are refused, and no other server (another
    test, another xdist worker) can take it while it is held, as it could a port merely found free."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
