"""A TCP server on 127.0.0.1 that answers each request with whatever bytes a route writes, for framings
and misbehaviour no HTTP framework produces (headers trickled or cut, chunked or close-delimited bodies).

    with RawServer({"/cut": lambda sock: sock.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Ty")}) as server:
        ... server.url("/cut") ...

A route gets the connected socket after the request head (and a Content-Length body) was read; the
connection is closed when it returns. `hits` counts the requests per path; `connections` counts every
connection accepted, including ones that sent nothing.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections import Counter
from collections.abc import Callable

from support.server import LocalServer

Route = Callable[[socket.socket], None]


class RawServer(LocalServer):
    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.hits: Counter[str] = Counter()
        self.connections = 0
        self._lock = threading.Lock()
        raw = self

        class _Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                raw._serve(self.request)

        super().__init__(_Handler)

    def _serve(self, conn: socket.socket) -> None:
        with self._lock:
            self.connections += 1
        head = b""
        while b"\r\n\r\n" not in head:
            data = conn.recv(65536)
            if not data:
                return
            head += data
        head, _, rest = head.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1].split("?", 1)[0]
        length = next((int(line.split(":", 1)[1]) for line in lines[1:]
                       if line.lower().startswith("content-length:")), 0)
        while len(rest) < length:
            data = conn.recv(65536)
            if not data:
                break
            rest += data
        with self._lock:
            self.hits[path] += 1
        route = self.routes.get(path)
        if route is None:
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        else:
            route(conn)
