"""HTTP servers on 127.0.0.1 that close kept-alive connections the way real ones do, without a
`Connection: close` header (for stale pooled connections; used by tests and bench/stale_connections.py).

    with ClosingServer("after_response") as server: ...   # every response is the connection's last
    with ClosingServer("when_idle") as server: ...        # idle connections closed 20-200 ms after a response
    with ClosingServer("on_next_request") as server: ...  # closes when the next request arrives, unanswered

Each answers every request with a small JSON body `{"n": <request number>}`. `requests` counts the
requests answered, `connections` the connections accepted.
"""

from __future__ import annotations

import json
import random
import select
import threading
from http.server import BaseHTTPRequestHandler

from support.server import LocalServer

MODES = ("after_response", "when_idle", "on_next_request")


class ClosingServer(LocalServer):
    def __init__(self, mode: str, *, seed: int = 7) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.requests = 0
        self.connections = 0
        self._lock = threading.Lock()
        rng = random.Random(seed)
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                with server._lock:
                    server.connections += 1

            def handle(self):
                self.close_connection = False
                while not self.close_connection:
                    self.handle_one_request()
                    if mode == "after_response":
                        self.close_connection = True
                    elif mode == "when_idle":
                        with server._lock:
                            idle = rng.uniform(0.02, 0.2)
                        self.connection.settimeout(idle)  # handle_one_request drops it on the timeout
                    elif not self.close_connection:
                        # Wait for the next request, then hang up without reading or answering it.
                        select.select([self.connection], [], [], 5.0)
                        self.close_connection = True

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                with server._lock:
                    server.requests += 1
                    body = json.dumps({"n": server.requests}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _answer

        super().__init__(_Handler)
