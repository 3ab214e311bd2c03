"""Stoplight's Prism serving an OpenAPI description's own examples on 127.0.0.1: an independent mock of the API
a spec describes (it answers each operation with the spec's example for its lowest 2XX response, and checks
requests and credentials against the spec first).

    with PrismMock(repo / "openapi.json", base_path="/v2") as prism:
        ... prism.base_url ...   # http://127.0.0.1:PORT/v2

Prism serves every path at its root, whatever the spec's `servers` say; a client of the real API sends the
server's base path (`/v2/pet/1`), and the `openapi` assertion looks operations up under it. So with a
`base_path`, a small proxy in front of Prism takes requests under it and forwards them without it.

Prism takes the port it is given, so a free one is found first; it is started once per spec and module (GitHub's
description takes about 13 s to load).
"""

from __future__ import annotations

import socket
import subprocess
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import requests

from support.server import LocalServer
from support.tools import prism

# How long Prism may take to load a spec and listen (GitHub's 11 MB description: about 13 s on 2 busy cores).
START_S = 120


class PrismMock:
    def __init__(self, spec: Path, base_path: str = "") -> None:
        self.spec = spec
        self.base_path = base_path
        self.proxy: LocalServer | None = None
        self.log = spec.with_name(spec.name + ".prism.log")
        self.port = _free_port()
        self.process: subprocess.Popen | None = None
        self.start_s = 0.0

    @property
    def prism_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """Where a suite's requests go: Prism itself, or the proxy under the base path."""
        return self.proxy.base_url + self.base_path if self.proxy else self.prism_url

    def __enter__(self) -> PrismMock:
        command = [*prism(), "mock", "--host", "127.0.0.1", "--port", str(self.port), str(self.spec)]
        started = time.monotonic()
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = started + START_S
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"prism exited {self.process.returncode}:\n{self.log.read_text()}"
            try:
                requests.get(self.prism_url, timeout=5)
            except requests.ConnectionError:
                time.sleep(0.25)
                continue
            self.start_s = time.monotonic() - started
            if self.base_path:
                self.proxy = LocalServer(_proxy(self.prism_url, self.base_path)).__enter__()
            return self
        self.__exit__()
        raise AssertionError(f"prism did not listen within {START_S} s:\n{self.log.read_text()}")

    def __exit__(self, *exc) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _proxy(upstream: str, base_path: str) -> type[BaseHTTPRequestHandler]:
    """A handler that forwards a request under `base_path` to `upstream` without it, and answers the rest 404."""

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            if not self.path.startswith(base_path + "/"):
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            answer = requests.request(self.command, upstream + self.path[len(base_path):], headers=headers,
                                      data=body, allow_redirects=False, timeout=30)
            self.send_response(answer.status_code)
            for name, value in answer.headers.items():
                if name.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = forward

    return Forward


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
