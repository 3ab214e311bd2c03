"""Stoplight's Prism serving an OpenAPI description's own examples on 127.0.0.1: an independent mock of the API
a spec describes (it answers each operation with the spec's example for its lowest 2XX response, and checks
requests and credentials against the spec first).

    with PrismMock(repo / "openapi.json") as prism:
        ... prism.base_url ...

Prism takes the port it is given, so a free one is found first; it is started once per spec and module (GitHub's
description takes about 13 s to load).
"""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import requests

from support.tools import prism

# How long Prism may take to load a spec and listen (GitHub's 11 MB description: about 13 s on 2 busy cores).
START_S = 120


class PrismMock:
    def __init__(self, spec: Path) -> None:
        self.spec = spec
        self.log = spec.with_name(spec.name + ".prism.log")
        self.port = _free_port()
        self.process: subprocess.Popen | None = None
        self.start_s = 0.0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> PrismMock:
        command = [*prism(), "mock", "--host", "127.0.0.1", "--port", str(self.port), str(self.spec)]
        started = time.monotonic()
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = started + START_S
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"prism exited {self.process.returncode}:\n{self.log.read_text()}"
            try:
                requests.get(self.base_url, timeout=5)
            except requests.ConnectionError:
                time.sleep(0.25)
                continue
            self.start_s = time.monotonic() - started
            return self
        self.__exit__()
        raise AssertionError(f"prism did not listen within {START_S} s:\n{self.log.read_text()}")

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
