"""Bodies are whole or an error, whatever their framing; the step timeout bounds the whole exchange,
the header phase included. One `litmus run` through the CLI over every case, against a raw server on
127.0.0.1; each test reads its flow run from that run's results.json."""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))

from pipeline import check_run, run_litmus, write_suite  # noqa: E402

from support.raw_server import RawServer  # noqa: E402

pytestmark = pytest.mark.timing  # step timeouts against routes that trickle for seconds; the run's wall time

CAP = 1000
BIG = b"z" * (5 * CAP)
TICK = 0.05
TICKS = 200  # a slow route writes for at most 10 s; the step's timeout is 1 s


def _slowly(sock: socket.socket, head: bytes, piece: bytes) -> None:
    sock.sendall(head)
    for _ in range(TICKS):
        sock.sendall(piece)
        time.sleep(TICK)


def _trickle_headers(sock: socket.socket) -> None:
    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * TICKS + b"\r\nContent-Length: 0\r\n\r\n":
        sock.sendall(bytes([byte]))
        time.sleep(TICK)


def _chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


ROUTES = {
    "/trickle-headers": _trickle_headers,
    "/cut-headers": lambda s: s.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: applica"),
    "/cut-after-status": lambda s: s.sendall(b"HTTP/1.1 200 OK\r\n"),
    "/many-headers": lambda s: s.sendall(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: 1\r\n" % i for i in range(150))
                                         + b"Content-Length: 0\r\n\r\n"),
    "/close-slow": lambda s: _slowly(s, b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                        b"Connection: close\r\n\r\n", b"data: x\n\n"),
    "/chunked-slow": lambda s: _slowly(s, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"1\r\nx\r\n"),
    "/length-slow": lambda s: _slowly(s, b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", b"x"),
    # 3 of 10 bytes, then nothing until well after the step's timeout.
    "/three-then-stall": lambda s: s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") or time.sleep(3),
    "/close-whole": lambda s: s.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it"),
    "/close-big": lambda s: s.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + BIG),
    "/chunked-big": lambda s: s.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + _chunked(BIG)),
    "/length-big": lambda s: s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(BIG), BIG)),
}

SUITE_HEAD = "version: 1\nsuite: Framing\nflows:\n"
FLOW = """\
  - name: {name}
    steps:
      - name: get
        request: {{url: {path}, timeout_ms: 1000}}
        assertions:
          - {{type: status_code, expected: 200}}
          - {{type: contains, value: "{contains}"}}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("framing")
    flows = "".join(FLOW.format(name=path.strip("/"), path=path, contains="z" if "big" in path else "")
                    for path in ROUTES)
    write_suite(root, "framing.yaml", SUITE_HEAD + flows)
    with RawServer(ROUTES) as server:
        started = time.monotonic()
        ran = run_litmus(["run", "--base-url", server.base_url, "--out", "out", "--max-body-bytes", str(CAP),
                          "--concurrency", "8"], cwd=root)
        wall = time.monotonic() - started
    document = json.loads((root / "out" / "results.json").read_text("utf-8"))
    steps = {f["flow"]: f["steps"][0] for f in document["suites"][0]["flow_runs"]}
    return ran, steps, wall, root


@pytest.mark.parametrize("name, error", [
    ("trickle-headers", "timed out after 1000 ms reading the response headers"),
    ("cut-headers", "the connection closed in the middle of the response headers"),
    ("cut-after-status", "the connection closed in the middle of the response headers"),
    ("many-headers", "the response has more than 100 header lines (refused)"),
    ("close-slow", "timed out after 1000 ms reading the body"),
    ("chunked-slow", "timed out after 1000 ms reading the body"),
    ("length-slow", "timed out after 1000 ms reading the body"),
])
def test_cut_exchanges_are_step_errors(run, name, error):
    step = run[1][name]
    assert step["status"] == "error"
    assert step["error"].startswith(error)
    assert [a["status"] for a in step["assertions"]] == ["skipped", "skipped"]


def test_a_body_cut_by_the_deadline_keeps_what_was_received(run):
    step = run[1]["close-slow"]
    assert step["response"]["status"] == 200 and step["response"]["body"].startswith("data: x")
    assert step["response"]["truncated"] is False  # not the cap: the deadline, hence the error


def test_a_body_timeout_counts_and_keeps_the_bytes_that_arrived(run):
    # urllib3's stream() waited for a full read of a Content-Length body and dropped what it had at the cut.
    step = run[1]["three-then-stall"]
    assert step["error"] == "timed out after 1000 ms reading the body (3 bytes received)"
    assert step["response"]["body"] == "abc" and step["response"]["size"] == 3


@pytest.mark.parametrize("name", ["close-big", "chunked-big", "length-big"])
def test_bodies_over_the_cap_are_marked_truncated_in_every_framing(run, name):
    step = run[1][name]
    assert step["status"] == "passed", step
    assert step["response"]["truncated"] is True and step["response"]["size"] == CAP


def test_a_whole_close_delimited_body_passes(run):
    step = run[1]["close-whole"]
    assert step["status"] == "passed" and step["response"]["body"] == "all of it"
    assert step["response"]["truncated"] is False


def test_the_run_is_bounded_by_the_step_timeouts_and_writes_everything(run):
    ran, _, wall, root = run
    assert ran.code == 1
    assert "Traceback" not in ran.output
    check_run(root / "out")
    # The header trickle alone takes 12 s at one byte per 50 ms; each slow route 10 s.
    assert wall < 10
