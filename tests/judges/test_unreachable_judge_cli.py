"""A judge that cannot be reached, through `litmus run` in a subprocess: one clear line per judged
assertion (never urllib3's nested exception text), and after repeated connection failures no more calls."""

from __future__ import annotations

import socketserver
import subprocess
import threading
from pathlib import Path

import pytest

from litmus.judges.service import UNREACHABLE_AFTER
from litmus.results import load_results
from support.cli import litmus, write_judge_config
from support.server import LocalServer, refused_port

JUDGED = 6
SUITE = """\
version: 1
suite: Judged
intent: a friendly greeting
flows:
  - name: Greets
    steps:
      - name: hello
        request: {url: /hello}
        assertions:
""" + "".join(f"          - {{type: llm_rubric, rubric: 'greeting number {i}'}}\n" for i in range(JUDGED))


class HangUp(LocalServer):
    """A TCP server on 127.0.0.1 that accepts every connection and closes it at once, counting them."""

    def __init__(self) -> None:
        self.accepted = 0
        lock = threading.Lock()
        server = self

        class _Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                with lock:
                    server.accepted += 1  # returning closes the connection

        super().__init__(_Handler)


def run(project: Path, target, judge_url: str) -> subprocess.CompletedProcess:
    (project / "probes").mkdir(exist_ok=True)
    (project / "probes" / "judged.yaml").write_text(SUITE)
    write_judge_config(project, judge_url, concurrency=1, retries=0)
    return litmus(project, "run", "--base-url", target.base_url, env={"JUDGE_KEY": "sk-unreachable-0123456789"})


def judged_outcomes(project: Path):
    return [o for *_, o in load_results(project / "litmus-report" / "results.json").iter_outcomes()]


def test_a_refused_connection_is_one_clear_line_per_judged_assertion(tmp_path, target):
    target.text("/hello", "Hello!")
    with refused_port() as port:
        url = f"http://127.0.0.1:{port}/v1"
        done = run(tmp_path, target, url)
    assert done.returncode == 1
    expected = f"judge unreachable: connection refused at {url} (openai:judge-small)"
    outcomes = judged_outcomes(tmp_path)
    assert [(o.status, o.reason) for o in outcomes] == [("error", expected)] * JUDGED
    flow_run = load_results(tmp_path / "litmus-report" / "results.json").suites[0].flow_runs[0]
    assert (flow_run.intent_evaluation.status, flow_run.intent_evaluation.reason) == ("error", expected)
    printed = done.stdout + done.stderr
    assert printed.count(expected) == JUDGED + 1  # each judged assertion and the intent, nothing else
    for urllib3_text in ("HTTPConnection", "Errno", "Max retries", "object at 0x"):
        assert urllib3_text not in printed
        assert urllib3_text not in (tmp_path / "litmus-report" / "results.json").read_text()


@pytest.fixture
def hang_up():
    with HangUp() as server:
        yield server


def test_after_repeated_connection_failures_the_judge_is_not_called_again(tmp_path, target, hang_up):
    target.text("/hello", "Hello!")
    url = f"http://127.0.0.1:{hang_up.port}/v1"
    done = run(tmp_path, target, url)
    assert done.returncode == 1
    # Six assertions and one Intent Evaluation to judge; the judge was tried UNREACHABLE_AFTER times.
    assert hang_up.accepted == UNREACHABLE_AFTER
    expected = f"judge unreachable: connection closed without a reply at {url} (openai:judge-small)"
    assert [(o.status, o.reason) for o in judged_outcomes(tmp_path)] == [("error", expected)] * JUDGED
