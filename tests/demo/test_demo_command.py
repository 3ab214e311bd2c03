"""`litmus demo` end to end, offline: the documented exit code, a valid results.json, the expected findings
(docs/demo.md), every judge outcome kind replayed from the committed cassettes, and no secret leaked."""

from __future__ import annotations

import io
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from litmus.assertions import all_specs
from litmus.demo.run import run_demo
from litmus.demo.target import DEMO_ENVIRONMENT
from litmus.results import RunResult, run_label, validate
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
        "Shop assistant": "passed", "Support conversation": "failed", "Orders API": "failed",
        "Streaming assistant": "failed", "Order support (RAG)": "failed"}
    assert {s.name: s.pass_rate for s in result.suites} == {
        "Shop assistant": 75.0, "Support conversation": 0.0, "Orders API": 33.33, "Streaming assistant": 66.67,
        "Order support (RAG)": 33.33}
    assert "FAILED: 1 of 5 suites passed" in done.stdout
    assert "expected: FAILED, 1 of 5 suites passed" in done.stdout
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


def test_conversation_forgets_the_order_at_turn_3_and_replays_offline(demo):
    _, out, _, result = demo
    [flow_run] = suite_named(result, "Support conversation").flow_runs
    # The simulated customer's two turns came from the cassettes, as the verdicts did: nothing was asked.
    assert [(step.name, step.turn, step.status) for step in flow_run.steps] == [
        ("name the order", 1, "passed"), ("report the damage", 2, "passed"), ("ask how to return it", 3, "passed"),
        ("impatient customer #1", 4, "passed"), ("impatient customer #2", 5, "passed")]
    assert flow_run.steps[3].user == "That's the wrong order! Mine is 1042. When do I get my money back?"
    assert "order 1077" in flow_run.transcript[6]["content"]  # the assistant's reply of turn 3
    retention, role, completeness = flow_run.conversation_assertions
    assert (retention.type, retention.status, [m.path for m in retention.mismatches]) == (
        "knowledge_retention", "failed", ["turns[3]"])
    assert (role.type, role.status, completeness.type, completeness.status) == (
        "role_adherence", "passed", "conversation_completeness", "passed")
    assert all(t.provider == "replay" and t.cached for o in flow_run.conversation_assertions for t in o.judge.tiers)
    assert "turn 3 at fault" in (out / "comment.md").read_text("utf-8")


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
    assert [o.status for o, _ in tool] == ["passed", "passed", "passed"]
    assert tool[2][0].reason == "1 tool call (get_order_status): 1 expected call matched, no others, arguments valid"
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


# -- Every outcome, one by one, against docs/demo.md ---------------------------------------------------

DEMO_DOC = ROOT / "docs" / "demo.md"
OTHER_CHECKS = re.compile(r"(\d+) (?:other )?checks?")


def planned_outcomes() -> dict[str, list[tuple[str, str]]]:
    """docs/demo.md's "Every outcome" table: flow run -> [(what, outcome)], in the doc's order."""
    section = DEMO_DOC.read_text("utf-8").split("### Every outcome", 1)[1].split("\n#", 1)[0]
    planned: dict[str, list[tuple[str, str]]] = {}
    for line in section.splitlines():
        cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("Flow run", "---"):
            planned.setdefault(cells[0], []).append((cells[1], cells[2]))
    return planned


def actual_outcomes(result: RunResult) -> dict[str, list[tuple[str, str]]]:
    """Each flow run's outcomes as the doc names them: `step › check`, `step` (an errored step),
    `conversation › check` (judged on the transcript, as the terminal names it), `intent`."""
    actual: dict[str, list[tuple[str, str]]] = {}
    for suite in result.suites:
        runs = Counter((fr.flow, fr.scenario) for fr in suite.flow_runs)
        for fr in suite.flow_runs:
            count = runs[fr.flow, fr.scenario]
            where = ([fr.scenario] if fr.scenario else []) + ([run_label(fr.run_index, count)] if count > 1 else [])
            rows = actual.setdefault(f"{suite.name} › {fr.flow}" + (f" [{', '.join(where)}]" if where else ""), [])
            for step in fr.steps:
                if step.status == "error":
                    rows.append((step.name, "error"))
                rows += [(f"{step.name} › {o.type}" + (f" ({o.name})" if o.name else ""), o.status)
                         for o in step.assertions]
            rows += [("conversation › " + o.type + (f" ({o.name})" if o.name else ""), o.status)
                     for o in fr.conversation_assertions]
            if suite.intent and fr.intent_evaluation:
                rows.append(("intent", fr.intent_evaluation.status))
    return actual


def test_the_doc_plans_every_flow_run_the_demo_runs(demo):
    _, _, _, result = demo
    assert list(planned_outcomes()) == list(actual_outcomes(result))


@pytest.mark.parametrize("flow_run", list(planned_outcomes()))
def test_every_outcome_is_the_planned_one(demo, flow_run):
    """The outcomes the doc names one by one are exactly those; the rest are counted by status."""
    _, _, _, result = demo
    actual = actual_outcomes(result).get(flow_run, [])
    counted: Counter[str] = Counter()
    for what, outcome in planned_outcomes()[flow_run]:
        if match := OTHER_CHECKS.fullmatch(what):
            counted[outcome] += int(match[1])
            continue
        assert (what, outcome) in actual, f"{flow_run} › {what}: planned {outcome}, got {dict(actual).get(what)}"
        actual.remove((what, outcome))
    assert Counter(outcome for _, outcome in actual) == counted, f"{flow_run}: unplanned {actual}"


def test_no_error_is_printed_but_the_planned_ones(demo):
    done, _, _, _ = demo
    # The terminal names a flow run without its suite: "Beta deployment › ask the beta model › error: …".
    planned = sorted(f"{flow_run.split(' › ', 1)[1]} › {what} › error:" for flow_run, rows in planned_outcomes().items()
                     for what, outcome in rows if outcome == "error")
    printed = sorted(line.split(" ", 1)[1].split(" error:")[0] + " error:" for line in done.stdout.splitlines()
                     if re.search(r"\berror\b", line))
    assert printed == planned


# -- The README's excerpts of the demo's output are its output ------------------------------------------

README = (ROOT / "README.md").read_text("utf-8")


def normalized(text: str) -> list[str]:
    """Lines, without what differs from run to run: the target's port and the timings."""
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)
    return re.sub(r"\d+(?:\\?\.\d+)? ms\b", "N ms", text).splitlines()


def excerpt(language: str) -> list[str]:
    """The README's one fenced block in `language` taken from the demo (it cites the demo's probes/orders.yaml),
    its `...` elisions left out."""
    (block,) = [block for block in re.findall(rf"^```{language}\n(.*?)^```", README, re.DOTALL | re.MULTILINE)
                if "probes/orders.yaml" in block]
    return [line for line in normalized(block) if line.strip() and line != "..."]


def test_the_readme_terminal_excerpt_is_the_demos_output(demo):
    done, out, _, _ = demo
    printed = normalized(done.stdout.replace(str(out), "litmus-report"))  # the fixture's --out, the default
    assert [line for line in excerpt("text") if line not in printed] == []


def test_the_readme_comment_excerpt_is_the_demos_comment(demo):
    _, out, _, _ = demo
    comment = normalized((out / "comment.md").read_text("utf-8"))
    assert [line for line in excerpt("markdown") if line not in comment] == []


def test_the_demo_calibrates_its_judge_from_cassettes_as_docs_judges_md_says(demo):
    """The demo's calibration (80 labelled replies, verdicts replayed) prints the table docs/judges.md shows,
    and writes a calibration.json that its schema accepts, with each planted kind of judge error."""
    import jsonschema

    done, out, _, _ = demo
    document = json.loads((out / "calibration.json").read_text("utf-8"))
    schema = json.loads((ROOT / "src" / "litmus" / "schemas" / "calibration.schema.json").read_text("utf-8"))
    jsonschema.validate(document, schema)
    assert (out / "calibration.html").stat().st_size > 0
    doc = (ROOT / "docs" / "judges.md").read_text("utf-8").split("### The demo's judge", 1)[1]
    table = [line for line in doc.split("### Outputs", 1)[0].splitlines() if line.startswith("|")]
    assert len(table) == 4
    printed = done.stdout.splitlines()
    assert [line for line in table if line not in printed] == []
    for kind in ("tone", "answers_question"):
        figures = document["types"][kind]
        assert figures["n"] == 40
        assert figures["false_pass"]["count"] == figures["false_fail"]["count"] == figures["needs_review"]["count"] == 1
        assert figures["suggestion"] is not None
    assert all(item["status"] != "error" for item in document["items"])  # every verdict had its cassette
