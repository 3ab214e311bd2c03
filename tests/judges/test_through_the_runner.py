"""A probe file loaded, run by the runner against a target on 127.0.0.1, judged by the fake judge."""

import json
import textwrap
from argparse import Namespace
from http.server import BaseHTTPRequestHandler

import pytest
from judge_helpers import ENV

from litmus.config import resolve_config
from litmus.judges import JudgeService
from litmus.load import load_suites
from litmus.results import validate
from litmus.run.runner import RunOptions, run_suites
from support.fake_judge import API_KEY
from support.server import LocalServer

TOKEN = "tok-canary-91c2"
SUITE = """\
version: 1
suite: Order assistant
intent: Customers get accurate answers about their own orders.
pass_threshold: 50
defaults:
  headers: {Authorization: "Bearer {{ secrets.SHOP_TOKEN }}"}
context:
  name: orders
  scenarios:
    - id: delayed
      data: {order_id: 1042, status: delayed, eta: "2026-12-03"}
      reference_response: Order 1042 is delayed and should arrive on 3 December.
    - id: wrong
      data: {order_id: 7, status: delivered}
      reference_response: Order 7 was delivered.
flows:
  - name: Ask
    steps:
      - name: ask
        request:
          method: POST
          url: /chat
          json: {order_id: "{{ scenario.data.order_id }}"}
        assertions:
          - type: status_code
            expected: "2xx"
          - type: llm_rubric
            rubric: Gives the order status
            select: $.reply
          - type: consistent_with_scenario_data
          - type: tone
            tone: polite
"""


class _Target(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802
        order = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["order_id"]
        token = self.headers.get("Authorization", "")[7:]
        reply = ("Order 1042 is delayed until 3 December." if order == 1042
                 else f"Order {order} is on its way! (session {token})")
        data = json.dumps({"reply": reply}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def target():
    with LocalServer(_Target) as server:
        yield server.base_url


def _run(tmp_path, target, fake_judge, **flags):
    (tmp_path / "probes").mkdir(exist_ok=True)
    (tmp_path / "probes" / "orders.yaml").write_text(SUITE)
    (tmp_path / "litmus.yaml").write_text(textwrap.dedent(f"""\
        judge:
          provider: openai
          model: judge-small
          base_url: {fake_judge.openai_base_url}
          api_key_env: JUDGE_KEY
          concurrency: 4
        """))
    environ = {**ENV, "SHOP_TOKEN": TOKEN}
    config = resolve_config(Namespace(**flags), environ, tmp_path)
    judge = JudgeService.from_config(config.judge, environ=environ)
    suites = load_suites([tmp_path / "probes"], root=tmp_path, environ=environ).suites
    try:
        return run_suites(suites, RunOptions(base_url=target, concurrency=2), judge=judge, environ=environ)
    finally:
        judge.close()


def test_a_run_judges_assertions_and_intent_and_a_rerun_is_free(tmp_path, target, fake_judge):
    fake_judge.when("is on its way", score=12, reason="contradicts the data",
                    mismatches=[{"path": "status", "expected": "delivered", "actual": "on its way", "reason": "x"}])
    result = _run(tmp_path, target, fake_judge)
    assert validate(result.to_dict()) == []
    delayed, wrong = result.suites[0].flow_runs
    by_type = {o.type: o for o in wrong.steps[0].assertions}
    assert by_type["consistent_with_scenario_data"].status == "failed"
    assert by_type["consistent_with_scenario_data"].mismatches[0].path == "scenario.data.status"
    assert by_type["llm_rubric"].mismatches[0].path == "$.reply"  # the concrete path of the judged node
    assert all(o.status == "passed" for o in delayed.steps[0].assertions)
    assert (delayed.intent_evaluation.method, delayed.intent_evaluation.status) == ("judge", "passed")
    assert wrong.intent_evaluation.status == "failed"
    assert result.suites[0].pass_rate == 50 and result.suites[0].verdict == "passed"
    # 3 LLM assertions and 1 intent per flow run, 2 flow runs.
    assert len(fake_judge.calls()) == 8
    assert (result.judge.calls, result.judge.cached) == (8, 0)
    # The canary (a secret the target echoes) never reached the judge.
    sent = json.dumps([c.body for c in fake_judge.calls()])
    assert TOKEN not in sent and "(session ***)" in sent
    assert API_KEY not in json.dumps(result.to_dict())

    rerun = _run(tmp_path, target, fake_judge)
    assert len(fake_judge.calls()) == 8
    assert (rerun.judge.calls, rerun.judge.cached) == (0, 8)
    assert [f.intent_evaluation.status for f in rerun.suites[0].flow_runs] == ["passed", "failed"]


def test_no_cache_flag_calls_again(tmp_path, target, fake_judge):
    _run(tmp_path, target, fake_judge)
    _run(tmp_path, target, fake_judge, no_cache=True)
    assert len(fake_judge.calls()) == 16
