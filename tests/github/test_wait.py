import time
from http.server import BaseHTTPRequestHandler

import pytest

from litmus.github.wait import NotReady, wait_until_ready
from support.server import LocalServer

pytestmark = pytest.mark.timing  # readiness polled against a clock


@pytest.fixture
def preview():
    """A preview deployment answering 503 until `ready_at` (monotonic seconds), then 200."""
    state = {"ready_at": float("inf"), "hits": 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            state["hits"] += 1
            status = 200 if time.monotonic() >= state["ready_at"] else 503
            body = b"::error::injected by the target"
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with LocalServer(Handler) as server:
        yield server.url("/health"), state


def test_becomes_ready_after_a_delay(preview):
    url, state = preview
    state["ready_at"] = time.monotonic() + 0.3
    lines = []
    waited = wait_until_ready(url, 10, interval_s=0.1, log=lines.append)
    assert 0.25 <= waited < 5 and state["hits"] >= 2
    assert lines[0].startswith(f"waiting for {url}: HTTP 503")
    assert lines[-1].startswith(f"{url} is ready (HTTP 200)")
    assert not any("injected" in line for line in lines)


def test_never_ready_fails_clearly(preview):
    url, state = preview
    lines = []
    with pytest.raises(NotReady, match=r"was not ready after \d+s \(\d+ attempts, last: HTTP 503\)"):
        wait_until_ready(url, 0.5, interval_s=0.1, log=lines.append)
    assert len(lines) >= 2


def test_connection_refused_is_reported_by_kind():
    with pytest.raises(NotReady, match="last: ConnectionError"):
        wait_until_ready("http://127.0.0.1:9/health", 0.2, interval_s=0.1, log=lambda _: None)
