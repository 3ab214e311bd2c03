"""Stale pooled connections: a server that hung up on an idle kept-alive connection is not a failure.

The server here closes each connection when the next request arrives on it, unanswered: the worst
case of a server that closes after every response without `Connection: close` (the request always
loses the race). Every step after the first meets such a connection.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))

from pipeline import check_run, run_litmus, write_suite  # noqa: E402

from support.closing_servers import ClosingServer  # noqa: E402
from support.server import refused_port  # noqa: E402

FLOW = """\
version: 1
suite: Stale
flows:
  - name: several steps
    steps:
{steps}
"""

STEP = """\
      - name: step {i}
        request: {{method: {method}, url: /n}}
        assertions:
          - {{type: status_code, expected: 200}}
"""


def _run(tmp_path: Path, server: ClosingServer, methods: list[str], *extra: str):
    steps = "".join(STEP.format(i=i, method=m) for i, m in enumerate(methods, 1))
    write_suite(tmp_path, "stale.yaml", FLOW.format(steps=steps))
    ran = run_litmus(["run", "--base-url", server.base_url, "--out", "out", *extra], cwd=tmp_path)
    document = json.loads((tmp_path / "out" / "results.json").read_text("utf-8"))
    return ran, document["suites"][0]["flow_runs"][0]["steps"]


def test_a_flow_of_get_steps_meets_stale_connections_and_has_no_error(tmp_path):
    with ClosingServer("on_next_request") as server:
        ran, steps = _run(tmp_path, server, ["GET"] * 6)
        answered = server.requests
    assert ran.code == 0, ran.output
    check_run(tmp_path / "out")
    assert [s["status"] for s in steps] == ["passed"] * 6
    # The first step opened the connection; each later one found it hung up and was sent once more.
    assert [s["transport_retries"] for s in steps] == [0, 1, 1, 1, 1, 1]
    assert answered == 6


def test_a_post_is_never_sent_twice(tmp_path):
    with ClosingServer("on_next_request") as server:
        ran, steps = _run(tmp_path, server, ["GET", "POST"])
    assert ran.code == 1
    assert steps[1]["status"] == "error"
    assert steps[1]["error"] == "the server closed the connection without a response"
    assert steps[1]["transport_retries"] == 0


def test_a_flow_against_a_server_that_closes_after_every_response_has_no_error(tmp_path):
    with ClosingServer("after_response") as server:
        ran, steps = _run(tmp_path, server, ["GET"] * 6)
        answered = server.requests
    assert ran.code == 0, ran.output
    assert [s["status"] for s in steps] == ["passed"] * 6
    assert answered == 6


def test_a_refused_post_is_a_step_error_and_is_not_retried(tmp_path):
    write_suite(tmp_path, "refused.yaml", FLOW.format(steps=STEP.format(i=1, method="POST")))
    with refused_port() as port:
        ran = run_litmus(["run", "--base-url", f"http://127.0.0.1:{port}", "--out", "out", "--transport-retries", "2"],
                         cwd=tmp_path)
    assert ran.code == 1 and "Traceback" not in ran.output
    [step] = json.loads((tmp_path / "out" / "results.json").read_text("utf-8"))["suites"][0]["flow_runs"][0]["steps"]
    assert (step["status"], step["error"], step["transport_retries"]) == ("error", "connection refused", 0)
