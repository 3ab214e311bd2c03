"""A response that began and then broke off is titled by what happened, the same in every report: a
stream cut after 5 events is "an incomplete stream", a body that stalled after 3 bytes "an incomplete
response" that counts them, never "got no response" above "→ 200 … streamed: 5 events". Through `litmus run`
against a raw server on 127.0.0.1, every report file read back."""

from __future__ import annotations

import html
import json
import socket
import time
import xml.etree.ElementTree as ET

import pytest
from report_fixtures import litmus_run

from litmus.github.findings import annotations
from litmus.results import load_results
from support.raw_server import RawServer

SUITE = """\
version: 1
suite: Cuts
flows:
  - name: Chat
    steps:
      - name: ask
        request: {url: /chat, stream: {format: sse, done: "[DONE]"}}
        assertions:
          - {type: status_code, expected: 200}
  - name: Stall
    steps:
      - name: read
        request: {url: /stall, timeout_ms: 1000}
        assertions:
          - {type: status_code, expected: 200}
  - name: Refused
    steps:
      - name: knock
        request: {url: "http://127.0.0.1:9/closed"}
"""

STREAM_TITLE = "got an incomplete stream: stream cut after 5 events: the connection closed before '[DONE]'"
STALL_TITLE = "got an incomplete response: timed out after 1000 ms reading the body (3 bytes received)"


def _five_events_then_close(sock: socket.socket) -> None:
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    for i in range(5):
        sock.sendall(b'data: {"choices": [{"delta": {"content": "word%d "}}]}\n\n' % i)


def _three_bytes_then_stall(sock: socket.socket) -> None:
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nabc")
    time.sleep(3)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    project = tmp_path_factory.mktemp("cuts")
    (project / "probes").mkdir()
    (project / "probes" / "cuts.yaml").write_text(SUITE)
    with RawServer({"/chat": _five_events_then_close, "/stall": _three_bytes_then_stall}) as server:
        done, _ = litmus_run(project, server.base_url, {})
    assert done.returncode == 1, done.stderr
    return project / "out"


def test_every_report_titles_a_cut_exchange_by_what_happened(out):
    texts = {
        "comment": (out / "comment.md").read_text("utf-8").replace("\\", ""),
        "summary": (out / "summary.md").read_text("utf-8").replace("\\", ""),
        "html": html.unescape((out / "report.html").read_text("utf-8")),
        "sarif": " ".join(r["message"]["text"] for r in json.loads((out / "litmus.sarif").read_text("utf-8"))
                          ["runs"][0]["results"]),
    }
    for name, text in texts.items():
        assert f"/chat {STREAM_TITLE}" in text, name
        assert f"/stall {STALL_TITLE}" in text, name
        assert text.count("got no response") == 1, name  # the refused connection's alone
    errors = {e.get("message") for e in ET.parse(out / "junit.xml").iter("error")}
    assert STREAM_TITLE.removeprefix("got an ") in errors and STALL_TITLE.removeprefix("got an ") in errors
    titles = sorted(a.title for a in annotations(load_results(out / "results.json")))
    assert titles == ["Cuts › Chat › ask: incomplete stream", "Cuts › Refused › knock: no response",
                      "Cuts › Stall › read: incomplete response"]


def test_the_response_line_beside_it_shows_what_arrived(out):
    comment = (out / "comment.md").read_text("utf-8").replace("\\", "")
    assert "→ 200 in" in comment and "streamed: 5 events" in comment and "not finished" in comment
