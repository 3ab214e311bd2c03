"""`litmus demo` end to end, offline: the documented exit code, a valid results.json, the expected findings
(docs/demo.md), every judge outcome kind replayed from the committed cassettes, and no secret leaked."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from litmus.assertions import all_specs
from litmus.demo.run import run_demo
from litmus.demo.target import DEMO_ENVIRONMENT
from litmus.results import RunResult, validate
from support.cli import litmus

pytestmark = pytest.mark.timing  # the demo's planned outcomes include a 500 ms time to first token

ROOT = Path(__file__).resolve().parents[2]
SECRETS = ("demo-password", "demo-api-token")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """One real `litmus demo` in a subprocess, with none of the LITMUS_DEMO_* variables set."""
    out = tmp_path_factory.mktemp("demo") / "report"
    done = litmus(ROOT, "demo", "--out", str(out))
    data = json.loads((out / "results.json").read_text())
    return done, out, data, RunResult.from_dict(data)


def outcomes(result: RunResult, suite: str, flow: str | None = None, scenario: str | None = None):
    return [(o, step) for s, fr, step, o in result.iter_outcomes()
            if s.name == suite and (flow is None or fr.flow == flow) and (scenario is None or fr.scenario == scenario)]


def suite_named(result: RunResult, name: str):
    return next(s for s in result.suites if s.name == name)


def test_exit_code_verdict_and_summary(demo):
    done, out, data, result = demo
    assert done.returncode == 1, done.stdout + done.stderr
    assert validate(data) == []
    assert result.verdict == "failed"
    assert {s.name: s.verdict for s in result.suites} == {
        "Shop assistant": "passed", "Orders API": "failed", "Streaming assistant": "failed",
        "Order support (RAG)": "failed"}
    assert {s.name: s.pass_rate for s in result.suites} == {
        "Shop assistant": 75.0, "Orders API": 33.33, "Streaming assistant": 66.67, "Order support (RAG)": 33.33}
    assert "FAILED: 1 of 4 suites passed" in done.stdout
    assert "judge: verdicts replayed from probes/cassettes" in done.stdout
    for name in ("results.json", "litmus.sarif", "junit.xml", "comment.md", "report.html", "summary.md"):
        assert (out / name).stat().st_size > 0
        assert str(out / name) in done.stdout


def test_orders_findings(demo):
    _, _, _, result = demo
    found = outcomes(result, "Orders API")
    failed = {(o.type, m.path) for o, _ in found if o.status == "failed" for m in o.mismatches}
    assert failed == {("schema", "$.items[0].unit_price"), ("json_path", "$.items[0].unit_price"),
                      ("response_time", "elapsed_ms")}
    # The status poll retried until the order was ready: pending, packing, ready.
    [poll] = {step.name: step for _, step in found if step.name == "wait until the order is ready"}.values()
    assert (poll.status, poll.attempts) == ("passed", 3)


def test_support_findings(demo):
    _, _, _, result = demo
    unindexed = outcomes(result, "Order support (RAG)", scenario="unindexed-order")
    assert (unindexed[0][0].type, unindexed[0][0].status) == ("status_code", "failed")
    assert {o.status for o, _ in unindexed[1:]} == {"skipped"}
    assert all("stop_request" in o.reason for o, _ in unindexed[1:])
    delayed = {o.type: o for o, _ in outcomes(result, "Order support (RAG)", scenario="delayed-order")}
    assert delayed["consistent_with_scenario_data"].status == "failed"
    assert delayed["consistent_with_scenario_data"].mismatches[0].path == "scenario.data.eta"
    delivered = outcomes(result, "Order support (RAG)", scenario="delivered-order")
    assert {o.status for o, _ in delivered} == {"passed"}
    intents = {fr.scenario: fr.intent_evaluation for fr in suite_named(result, "Order support (RAG)").flow_runs}
    assert {k: (v.method, v.status) for k, v in intents.items()} == {
        "delayed-order": ("judge", "failed"), "delivered-order": ("judge", "passed"),
        "unindexed-order": ("judge", "failed")}


def test_streaming_findings(demo):
    _, _, _, result = demo
    found = outcomes(result, "Streaming assistant", "Streamed refund answer")
    refund = {o.name or o.type: (o, step) for o, step in found}
    assert {name: o.status for name, (o, _) in refund.items()} == dict.fromkeys(refund, "passed")
    similar, step = refund["similar"]
    assert similar.score >= similar.threshold == 0.8 and similar.judge.tiers[0].provider == "replay"
    assert step.stream.done is True and step.stream.text.startswith("I'm sorry your order arrived damaged.")
    assert step.stream.first_event_ms <= step.response.elapsed_ms
    tool = outcomes(result, "Streaming assistant", "Order lookup by tool call")
    assert [o.status for o, _ in tool] == ["passed", "passed"]
    [(beta, beta_step)] = outcomes(result, "Streaming assistant", "Beta deployment")
    assert beta.status == "skipped" and beta_step.status == "error"
    assert beta_step.error.startswith("stream cut after 4 events")


def test_every_judge_outcome_kind_is_replayed(demo):
    _, _, data, result = demo
    refund = {o.type: o for o, _ in outcomes(result, "Shop assistant", "Refund for a damaged item")}
    assert (refund["tone"].status, refund["tone"].judge.escalated) == ("passed", False)
    assert (refund["llm_rubric"].status, refund["llm_rubric"].judge.escalated) == ("passed", True)
    assert [t.score for t in refund["llm_rubric"].judge.tiers] == [74, 90]
    assert (refund["answers_question"].status, refund["answers_question"].threshold) == ("needs_review", 80)
    delivery = {o.type: o for o, _ in outcomes(result, "Shop assistant", "Delivery times")}
    assert (delivery["no_hallucination"].status, delivery["no_hallucination"].score) == ("failed", 12)
    assert delivery["not_contains"].status == "failed"
    # Replayed, not called: no live judge call, every verdict from a cassette.
    judged = [o for _, _, _, o in result.iter_outcomes() if o.judge]
    assert judged and all(t.provider == "replay" and t.cached for o in judged for t in o.judge.tiers)
    assert data["judge"]["calls"] == 0 and data["judge"]["escalated"] > 0 and data["judge"]["needs_review"] > 0
    assert {fr.intent_evaluation.method for s in result.suites if s.intent for fr in s.flow_runs} == {"judge"}


def test_no_secret_reaches_any_output(demo):
    done, out, _, _ = demo
    for path in out.iterdir():
        text = path.read_text()
        assert not [s for s in SECRETS if s in text], path
    assert not [s for s in SECRETS if s in done.stdout + done.stderr]


def test_without_cassettes_llm_assertions_are_skipped_and_the_verdict_holds(tmp_path, monkeypatch):
    probes = tmp_path / "probes"
    shutil.copytree(ROOT / "probes", probes, ignore=shutil.ignore_patterns("cassettes"))
    monkeypatch.chdir(tmp_path)
    stdout = io.StringIO()
    status = run_demo(Path("probes"), tmp_path / "out", "never", {}, stdout, io.StringIO())
    result = RunResult.from_dict(json.loads((tmp_path / "out" / "results.json").read_text()))
    assert status == 0  # --fail-on never
    assert result.verdict == "failed"
    llm = [o for _, _, _, o in result.iter_outcomes() if o.type not in DETERMINISTIC]
    assert llm and {(o.status, o.reason) for o in llm if o.status != "skipped" or "stop_request" not in o.reason} == {
        ("skipped", "no judge configured")}
    assert {fr.intent_evaluation.method for s in result.suites for fr in s.flow_runs} == {"deterministic"}
    assert "LLM-based assertions are skipped" in stdout.getvalue()


def test_demo_values_yield_to_variables_already_set(tmp_path):
    environ = {"LITMUS_DEMO_PASSWORD": "another-password", "LITMUS_DEMO_TOKEN": "another-token"}
    status = run_demo(ROOT / "probes", tmp_path, "suite", environ, io.StringIO(), io.StringIO())
    text = (tmp_path / "results.json").read_text()
    assert status == 1
    assert "another-password" not in text and "another-token" not in text
    # The target accepted the values the suites sent: logins and chats worked.
    result = RunResult.from_dict(json.loads(text))
    assert [fr.intent_evaluation.status for fr in suite_named(result, "Orders API").flow_runs] == [
        "failed", "failed", "passed"]
    assert DEMO_ENVIRONMENT["LITMUS_DEMO_PASSWORD"] != environ["LITMUS_DEMO_PASSWORD"]


def test_outside_a_clone_it_says_where_the_examples_are(tmp_path):
    done = litmus(tmp_path, "demo", timeout=60)
    assert done.returncode == 2
    assert "probes/ not found" in done.stderr and "--probes" in done.stderr
    assert not (tmp_path / "litmus-report").exists()


DETERMINISTIC = {name for name, spec in all_specs().items() if not spec.llm_based}
