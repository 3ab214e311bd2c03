from __future__ import annotations

import json

import pytest

from litmus.cli import main
from litmus.merge import MergeError, merge
from litmus.results import DecidedBy, DecisionNote, DecisionsSummary, JudgeTotals, load_results, write_results


def shards(result, total=2):
    """Split the fixture into `total` shards by flow run, round-robin, as `--shard K/N` would."""
    out = []
    for k in range(1, total + 1):
        part = load_results_copy(result)
        part.run.shard = f"{k}/{total}"
        for suite in part.suites:
            suite.flow_runs = [r for i, r in enumerate(suite.flow_runs) if i % total == k - 1]
        part.judge = JudgeTotals(calls=k, cached=1, escalated=0, needs_review=0, input_tokens=10 * k, output_tokens=k)
        out.append(part)
    return out


def load_results_copy(result):
    from litmus.results import RunResult

    return RunResult.from_dict(json.loads(json.dumps(result.to_dict())))


def test_merging_shards_restores_the_run(result):
    parts = shards(result, 3)
    merged, warnings = merge(list(reversed(parts)))
    assert warnings == []
    assert [s.name for s in merged.suites] == ["Checkout assistant", "Users API"]
    original = [(r.flow, r.scenario, r.run_index) for r in result.suites[0].flow_runs]
    assert [(r.flow, r.scenario, r.run_index) for r in merged.suites[0].flow_runs] == original
    assert merged.suites[0].pass_rate == 50.0 and merged.suites[0].verdict == "failed"
    assert merged.judge.calls == 6 and merged.judge.input_tokens == 60
    assert merged.run.shard is None and merged.verdict == "failed"


def test_verdict_recomputed_from_the_union(result):
    for run in result.suites[0].flow_runs:
        run.intent_evaluation.status = "passed"
    result.suites = result.suites[:1]
    parts = shards(result, 2)
    assert parts[0].suites[0].pass_rate == 50.0 and parts[0].suites[0].verdict == "failed"  # stale, from each shard
    merged, _ = merge(parts)
    assert merged.suites[0].pass_rate == 100.0 and merged.verdict == "passed"
    parts[1].run.interrupted = True
    merged, _ = merge(parts)
    assert merged.run.interrupted and merged.verdict == "failed"


@pytest.mark.parametrize("spoil, message", [
    (lambda a, b: setattr(b.tool, "version", "9.9.9"), "disagree on the tool"),
    (lambda a, b: setattr(b.run, "git_sha", "f" * 40), "disagree on the commit"),
    (lambda a, b: setattr(b.run, "shard", "1/2"), "shard 1/2 given twice"),
    (lambda a, b: setattr(b.run, "shard", "2/3"), "different totals"),
    (lambda a, b: b.suites[0].flow_runs.append(a.suites[0].flow_runs[0]), "shards overlap"),
    (lambda a, b: setattr(b.suites[0], "pass_threshold", 50), "pass_threshold differs"),
])
def test_refuses_what_is_not_one_run(result, spoil, message):
    a, b = shards(result, 2)
    spoil(a, b)
    with pytest.raises(MergeError, match=message):
        merge([a, b])


def test_missing_shard_refused_unless_allowed(result):
    parts = shards(result, 3)[:2]
    with pytest.raises(MergeError, match="missing shard 3/3"):
        merge(parts)
    merged, warnings = merge(parts, allow_missing=True)
    assert warnings == ["missing shard 3/3: the merged verdict covers only 2 of 3 shards"]


def test_scenario_order_follows_the_shards_not_the_alphabet(result):
    for run in result.suites[0].flow_runs:
        run.scenario = {"delayed-order": "zeta", "delivered-order": "alpha"}[run.scenario]
    merged, _ = merge(shards(result, 2))
    assert [r.scenario for r in merged.suites[0].flow_runs] == ["zeta", "zeta", "alpha", "alpha"]


def test_cli(result, tmp_path, capsys):
    paths = []
    for part in shards(result, 2):
        path = tmp_path / f"results-{part.run.shard[0]}.json"
        write_results(path, part)
        paths.append(str(path))
    out = tmp_path / "merged.json"
    assert main(["merge", *paths, "-o", str(out)]) == 0
    assert load_results(out).suites[0].pass_rate == 50.0
    assert main(["merge", paths[0], "-o", str(out)]) == 2
    assert "missing shard 2/2" in capsys.readouterr().err


def test_decision_summaries_are_united_and_a_decision_applied_in_any_shard_is_not_stale(result):
    """Two runs of one judged finding land in different shards: the decision matches the reply of one (applied
    there) and not the other's (stale there). The merged run applied it, so it is not stale."""
    finding = "f" * 32
    result.suites = result.suites[:1]
    first, second = (run.steps[0].assertions[2] for run in result.suites[0].flow_runs[:2])
    first.id, first.content_sha256, first.status = finding, "a" * 64, "passed"
    first.decided_by = DecidedBy("ann", "2026-05-04T12:00:00Z", "fine")
    second.id, second.content_sha256 = finding, "b" * 64
    one, two = shards(result, 2)
    deterministic = DecisionNote("d" * 32, "c" * 64, "bob", ".litmus/decisions.yaml:7", "names a deterministic check")
    gone = DecisionNote("e" * 32, "e" * 64, "bob", ".litmus/decisions.yaml:12", "the reply changed")
    one.decisions = DecisionsSummary([".litmus/decisions.yaml"], 1, [gone], [deterministic])
    two.decisions = DecisionsSummary([".litmus/decisions.yaml", "comment 5"], 0,
                                     [DecisionNote(finding, "a" * 64, "ann", ".litmus/decisions.yaml:1",
                                                   "the reply changed"), gone], [deterministic])

    merged, _ = merge([one, two])

    assert merged.decisions.sources == [".litmus/decisions.yaml", "comment 5"]
    assert merged.decisions.applied == 1
    assert merged.decisions.stale == [gone], "applied in shard 1, so not stale; the other is stale in both"
    assert merged.decisions.ignored == [deterministic]
    one.decisions = two.decisions = None
    assert merge([one, two])[0].decisions is None


def test_token_and_cost_totals_are_summed_over_the_shards(result):
    from litmus.results import Usage, UsageTotals

    for number, run in enumerate(result.suites[0].flow_runs):
        for step in run.steps:
            step.usage = None
        run.steps[0].usage = Usage(input_tokens=10, output_tokens=number, source="openai", model="m",
                                   price_key="m" if number else None, cost_usd=0.001 if number else None)
    parts = shards(result, 2)
    for k, part in enumerate(parts, 1):
        part.totals.judge = UsageTotals(input_tokens=100 * k, output_tokens=k, cost_usd=0.01 * k, count=k, unpriced=0)
    merged, _ = merge(parts)
    runs = len(result.suites[0].flow_runs)
    target = merged.totals.target
    assert (target.count, target.input_tokens, target.output_tokens, target.unpriced) == (
        runs, 10 * runs, sum(range(runs)), 1)
    assert target.cost_usd == round(0.001 * (runs - 1), 8)
    judge = merged.totals.judge
    assert (judge.count, judge.input_tokens, judge.output_tokens, judge.cost_usd) == (3, 300, 3, 0.03)
