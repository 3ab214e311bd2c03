from litmus.github.findings import Finding, cap_per_level, findings, select
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


def test_findings_levels_merging_and_order():
    mismatch = Mismatch(path="$.items[3].price", expected=1, actual=2, reason="expected 1, got 2")
    step = lambda: StepResult(name="ask", line=8, status="failed", assertions=[  # noqa: E731
        outcome("passed", 10), outcome("needs_review", 11, type_="tone"),
        outcome("failed", 12, reason="price differs", mismatches=[mismatch]), outcome("skipped", 13),
    ])
    judged = IntentEvaluation(status="failed", method="judge", reason="did not answer")
    suite = SuiteResult(name="Shop", file="probes/shop.yaml", line=1, pass_threshold=100, pass_rate=0,
                        verdict="failed", flow_runs=[
                            flow_run([step()], scenario="a"), flow_run([step()], scenario="b", intent=judged),
                            flow_run([StepResult(name="ask", line=8, status="error", error="connection refused")]),
                        ])
    found = findings(make_result([suite]))
    assert [(f.level, f.line) for f in found] == [("error", 12), ("error", 5), ("error", 8), ("warning", 11)]
    first = found[0]
    assert first.title == "Shop › Ask › ask: json_path failed" and first.column == 9
    assert first.message == (
        "price differs\n$.items[3].price: expected 1, got 2\n(in 2 flow runs: scenario a, scenario b)")
    assert found[1].title == "Shop › Ask: intent failed" and found[1].message == "did not answer"
    assert found[2].message == "connection refused"


def f(level, file="probes/a.yaml"):
    return Finding(level, file, 1, 1, "t", "m")


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
