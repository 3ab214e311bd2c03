"""The decisions module on its own: loading with positions, the content hash, recording and pruning as textual
edits that keep every other byte, and applying decisions to a stored results document."""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml

from litmus.decisions import (
    Decision,
    DecisionsError,
    DecisionSource,
    apply_decisions,
    content_sha256,
    load_decisions,
    record_decision,
    remove_decisions,
)
from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    JudgeRecord,
    JudgeTier,
    Mismatch,
    RunInfo,
    RunResult,
    StepResult,
    SuiteResult,
    validate,
)

FINDING, OTHER = "a" * 32, "c" * 32
CONTENT, CHANGED = "b" * 64, "d" * 64
ACCEPT = Decision(FINDING, CONTENT, "pass", "ann", "2026-05-04T12:00:00Z", "looks right")


def load(text: str, name: str = ".litmus/decisions.yaml"):
    return load_decisions([DecisionSource(name, text.encode())])


def test_a_recorded_decision_loads_back_equal():
    text = record_decision("", ACCEPT)
    loaded = load(text)
    assert loaded.diagnostics == []
    assert loaded.decisions == [ACCEPT]
    assert loaded.decisions[0].where == ".litmus/decisions.yaml:1"


def test_every_schema_violation_is_reported_at_its_line_and_column():
    text = ("- finding: xyz\n  content: 12\n  verdict: maybe\n  by: ''\n  at: yesterday\n  colour: red\n"
            f"- {{finding: {FINDING}, content: {CONTENT}, verdict: pass, by: ann, at: '2026-05-04T12:00:00Z'}}\n")
    loaded = load(text)
    where = {(d.position.line, d.position.column) for d in loaded.errors}
    assert where == {(1, 12), (2, 12), (3, 12), (4, 7), (5, 7), (6, 3)}
    assert all(d.position.path == ".litmus/decisions.yaml" for d in loaded.errors)
    # The one valid entry still loads; the broken one is left out.
    assert [d.finding for d in loaded.decisions] == [FINDING]
    by_line = {d.position.line: d.message for d in loaded.errors}
    assert "32 hex digits" in by_line[1] and "64 hex digits" not in by_line[1]
    assert "ISO-8601" in by_line[5]
    assert "colour" in by_line[6]


def test_a_file_that_is_not_a_list_is_one_error_at_its_start():
    loaded = load("finding: x\n")
    assert [(d.position.line, d.severity) for d in loaded.diagnostics] == [(1, "error")]
    assert loaded.decisions == []


def test_invalid_yaml_is_a_positioned_error():
    loaded = load("- finding: [unclosed\n")
    assert loaded.errors and loaded.errors[0].position.line >= 1
    assert loaded.decisions == []


def test_two_decisions_on_the_same_finding_and_content_are_an_error_naming_the_first():
    text = record_decision("", ACCEPT) + record_decision("", Decision(FINDING, CONTENT, "fail", "bob",
                                                                      "2026-05-04T13:00:00Z"))
    loaded = load(text)
    (error,) = loaded.errors
    assert error.position.line == 7 and ":1:" in error.message
    assert loaded.decisions == [ACCEPT]


def test_an_empty_file_holds_no_decisions():
    assert load("").decisions == [] and load("# nothing yet\n").diagnostics == []


def test_recording_replaces_the_same_decision_in_place_and_keeps_every_other_byte():
    other = Decision(OTHER, CHANGED, "fail", "bob", "2026-05-04T12:00:00Z", 'wrong: "x"\nsecond line')
    text = "# Decided by people\n" + record_decision("", ACCEPT) + "# keep me\n" + record_decision("", other)
    changed = Decision(FINDING, CONTENT, "fail", "carol", "2026-05-05T08:00:00Z", "on second thought")
    edited = record_decision(text, changed)
    assert load(edited).decisions == [changed, other]
    # Only the entry's own lines changed.
    before, after = text.splitlines(), edited.splitlines()
    assert before[0] == after[0] and before[7:] == after[7:]
    assert [b for b, a in zip(before[1:7], after[1:7], strict=True) if a != b] == [
        "  verdict: pass", "  by: ann", "  at: '2026-05-04T12:00:00Z'", "  reason: looks right"]


def test_recording_a_new_decision_appends_it():
    text = "# Decided by people\n" + record_decision("", ACCEPT)
    other = Decision(OTHER, CHANGED, "pass", "bob", "2026-05-04T12:00:00Z")
    edited = record_decision(text.rstrip("\n"), other)
    assert edited.startswith(text)
    assert load(edited).decisions == [ACCEPT, other]


def test_recording_into_an_indented_or_flow_list_keeps_it_valid():
    indented = "  " + record_decision("", ACCEPT).replace("\n  ", "\n    ")
    other = Decision(OTHER, CHANGED, "pass", "bob", "2026-05-04T12:00:00Z")
    assert load(record_decision(indented, other)).decisions == [ACCEPT, other]
    assert load(record_decision("# none yet\n[]\n", other)).decisions == [other]


def test_recording_refuses_a_file_that_is_not_a_list():
    with pytest.raises(DecisionsError, match="not a list"):
        record_decision("finding: x\n", ACCEPT)


def test_a_reason_with_quotes_newlines_and_yaml_syntax_survives_a_round_trip():
    tricky = Decision(FINDING, CONTENT, "pass", "a: b", "2026-05-04T12:00:00Z",
                      "- not a list\n#not a comment: 'q' \"d\"")
    text = record_decision(record_decision("", ACCEPT), tricky)
    assert load(text).decisions == [tricky]


def test_pruning_removes_exactly_the_named_entries_lines():
    other = Decision(OTHER, CHANGED, "fail", "bob", "2026-05-04T12:00:00Z", "two\nlines")
    text = "# head\n" + record_decision("", ACCEPT) + "# between\n" + record_decision("", other) + "# tail\n"
    pruned = remove_decisions(text, [other.key])
    assert pruned == "# head\n" + record_decision("", ACCEPT) + "# between\n# tail\n"
    assert remove_decisions(text, []) == text
    assert load(remove_decisions(pruned, [ACCEPT.key])).decisions == []


def test_the_content_hash_is_sha256_of_canonical_json_of_the_contract_fields():
    fields = {"rubric": "Says when the order arrives"}
    expected = hashlib.sha256(json.dumps(
        {"fields": fields, "text": "Arrives Monday.", "type": "llm_rubric"},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")).hexdigest()
    assert content_sha256("llm_rubric", fields, "Arrives Monday.") == expected
    # Every input counts; key order does not.
    assert content_sha256("tone", fields, "Arrives Monday.") != expected
    assert content_sha256("llm_rubric", fields, "Arrives Tuesday.") != expected
    assert content_sha256("llm_rubric", {"rubric": "x"}, "Arrives Monday.") != expected
    scenario = content_sha256("accurate_with_scenario_context", {}, "t", {"data": {"a": 1, "b": 2}, "reference": "r"})
    assert scenario == content_sha256("accurate_with_scenario_context", {}, "t", {"reference": "r",
                                                                                   "data": {"b": 2, "a": 1}})
    assert scenario != content_sha256("accurate_with_scenario_context", {}, "t", {"data": {"a": 1}, "reference": "r"})


def _document() -> RunResult:
    judged = AssertionOutcome(
        type="llm_rubric", status="needs_review", reason="no verdict", line=9, column=11, id=FINDING,
        content_sha256=CONTENT, threshold=75.0, critical=True,
        mismatches=[Mismatch("$", "a judge verdict", None, "unparseable")],
        judge=JudgeRecord(False, [JudgeTier("openai", "m", None, "unparseable", 3.0)]))
    deterministic = AssertionOutcome(type="status_code", status="passed", reason="200", line=8, column=11,
                                     id=OTHER)
    step = StepResult(name="ask", line=7, status="failed", assertions=[deterministic, judged], id="e" * 32)
    intent = IntentEvaluation("failed", "deterministic", "1 need review", id="f" * 32)
    flow_run = FlowRunResult(flow="f", line=5, run_index=0, intent_evaluation=intent, steps=[step], status="failed")
    suite = SuiteResult(name="S", file="probes/s.yaml", line=1, pass_threshold=100, pass_rate=0, verdict="failed",
                        flow_runs=[flow_run])
    return RunResult(run=RunInfo(base_url=None, started_at="2026-05-04T12:00:00Z",
                                 finished_at="2026-05-04T12:00:01Z"), verdict="failed", suites=[suite])


def test_applying_a_decision_to_stored_results_decides_every_verdict_again_without_touching_the_input():
    stored = _document()
    decided = apply_decisions(stored, [ACCEPT])
    outcome = decided.suites[0].flow_runs[0].steps[0].assertions[1]
    assert outcome.status == "passed" and outcome.mismatches == []
    assert (outcome.decided_by.kind, outcome.decided_by.by, outcome.decided_by.reason) == ("human", "ann",
                                                                                           "looks right")
    assert outcome.reason.startswith("critical check accepted by ann")
    assert outcome.judge is not None  # what the judge said stays on record
    assert decided.verdict == "passed" and decided.suites[0].verdict == "passed"
    assert decided.decisions.applied == 1 and decided.decisions.stale == []
    # Pure: the stored document is unchanged.
    assert stored.verdict == "failed" and stored.suites[0].flow_runs[0].steps[0].assertions[1].decided_by is None
    assert validate(json.loads(json.dumps(decided.to_dict()))) == []


def test_a_rejection_fails_the_outcome_with_one_mismatch():
    decided = apply_decisions(_document(), [Decision(FINDING, CONTENT, "fail", "bob", "2026-05-04T12:00:00Z", "no")])
    outcome = decided.suites[0].flow_runs[0].steps[0].assertions[1]
    assert outcome.status == "failed" and decided.verdict == "failed"
    assert [m.path for m in outcome.mismatches] == ["$"]


def test_decisions_that_match_nothing_judged_are_stale_and_deterministic_ones_ignored():
    stale = Decision(FINDING, CHANGED, "pass", "ann", "2026-05-04T12:00:00Z", where="d.yaml:8")
    on_deterministic = Decision(OTHER, CONTENT, "pass", "mallory", "2026-05-04T12:00:00Z", where="d.yaml:15")
    decided = apply_decisions(_document(), [stale, on_deterministic])
    assert decided.verdict == "failed"
    assert [(n.where, "reply changed" in n.why) for n in decided.decisions.stale] == [("d.yaml:8", True)]
    assert [(n.by, "deterministic" in n.why) for n in decided.decisions.ignored] == [("mallory", True)]
    assert decided.suites[0].flow_runs[0].steps[0].assertions[0].decided_by is None


def test_the_schema_ships_and_accepts_what_record_decision_writes():
    import jsonschema

    from litmus.decisions import schema

    text = record_decision(record_decision("", ACCEPT), Decision(OTHER, CHANGED, "fail", "b", "2026-05-04T12:00:00Z",
                                                                 url="https://github.com/a/b/pull/1#issuecomment-1"))
    jsonschema.validate(yaml.safe_load(text), schema())
