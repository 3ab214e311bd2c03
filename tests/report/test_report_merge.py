from __future__ import annotations

import json

import pytest

from litmus.cli import main
from litmus.merge import MergeError, merge
from litmus.results import JudgeTotals, load_results, write_results


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
