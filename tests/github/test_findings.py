from litmus.github.findings import Annotation, annotations, cap_per_level, select
from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    Mismatch,
    RunInfo,
    RunResult,
    StepResult,
    SuiteResult,
)


def outcome(status, line, column=9, type_="json_path", reason="r", mismatches=()):
    return AssertionOutcome(type=type_, status=status, reason=reason, line=line, column=column,
                            mismatches=list(mismatches))


def flow_run(steps, scenario=None, index=0, intent=None):
    intent = intent or IntentEvaluation(status="failed", method="deterministic", reason="assertions failed")
    return FlowRunResult(flow="Ask", line=5, run_index=index, intent_evaluation=intent, scenario=scenario,
                         steps=steps)


def make_result(suites):
    return RunResult(run=RunInfo(base_url=None, started_at="t", finished_at="t"), verdict="failed", suites=suites)


def test_annotations_levels_order_and_runs_folded():
    mismatch = Mismatch(path="$.items[3].price", expected=1, actual=2, reason="expected 1, got 2")
    second = Mismatch(path="$.items[4].price", expected=1, actual=3, reason="expected 1, got 3")
    step = lambda: StepResult(name="ask", line=8, status="failed", assertions=[  # noqa: E731
        outcome("passed", 10), outcome("needs_review", 11, type_="tone"),
        outcome("failed", 12, reason="price differs", mismatches=[mismatch, second]), outcome("skipped", 13),
        outcome("error", 14, type_="schema", reason="body is not JSON"),
    ])
    judged = IntentEvaluation(status="failed", method="judge", reason="did not answer")
    suite = SuiteResult(name="Shop", file="probes/shop.yaml", line=1, pass_threshold=100, pass_rate=0,
                        verdict="failed", flow_runs=[
                            flow_run([step()], index=0), flow_run([step()], index=1, intent=judged),
                            flow_run([StepResult(name="ask", line=8, status="error", error="connection refused")],
                                     index=2),
                        ])
    found = annotations(make_result([suite]))
    # Errors first (judged intent, transport error, failed assertion), then warnings, each in file order.
    assert [(a.level, a.line) for a in found] == [
        ("error", 5), ("error", 8), ("error", 12), ("warning", 11), ("warning", 14)]
    failed = found[2]
    assert failed.title == "Shop › Ask › ask: json_path failed" and failed.column == 9
    assert failed.message == (
        "json_path failed at $.items[3].price: expected 1, got 2 (+1 more mismatch)\n"
        "$.items[4].price: expected 1, got 3\n"
        "(Shop › Ask › ask, 2 of 3 runs (runs 1, 2))")
    assert found[0].title == "Shop › Ask: Intent Evaluation failed" and "did not answer" in found[0].message
    assert found[1].title == "Shop › Ask › ask: no response" and "connection refused" in found[1].message
    assert found[4].title == "Shop › Ask › ask: schema could not be evaluated"


def f(level, file="probes/a.yaml"):
    return Annotation(level, file, 1, 1, "t", "m")


def test_select_by_mode_and_changed_files():
    items = [f("error"), f("error", "probes/b.yaml")]
    assert select(items, "none", {"probes/a.yaml"}) == []
    assert select(items, "all", {"probes/a.yaml"}) == items
    assert select(items, "changed", {"probes/a.yaml"}) == items[:1]
    assert select(items, "changed", set()) == []
    assert select(items, "changed", None) == items  # not a PR: nothing to compare against


def test_cap_keeps_ten_per_level():
    items = [f("error")] * 13 + [f("warning")] * 4 + [f("notice")] * 12
    shown, omitted = cap_per_level(items)
    assert [x.level for x in shown].count("error") == 10 and [x.level for x in shown].count("warning") == 4
    assert [x.level for x in shown].count("notice") == 10 and omitted == 5
