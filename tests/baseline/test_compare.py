"""Baseline comparison: identities, new / unchanged / fixed / none, Wilson verdicts, shards and merge.

Results documents are made by real `litmus run`s of a small suite against real targets on 127.0.0.1, so
the identities compared are the ones the runner writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from litmus.compare import compare, flow_verdict, headline, pass_rate, wilson_interval
from litmus.merge import merge
from litmus.results import RunResult, load_results, validate
from litmus.verdict import fails
from support.cli import litmus
from support.target import Target

SUITE = """\
version: 1
suite: Shop
flows:
  - name: Order
    runs: {runs}
    steps:
      - name: get order
        request: {{url: /order}}
        assertions:
          - {{type: status_code, expected: 200}}
          - {{type: json_path, path: $.status, expected: delayed}}
          - {{type: json_path, path: $.total, json_type: number}}
  - name: Catalogue
    steps:
      - name: list
        request: {{url: /catalogue}}
        assertions:
          - {{type: json_path, path: "$.items[*].price", json_type: number}}
"""


def serve(target: Target, *, status: str = "delayed", total=12.5, prices=(1.0, 2.0)) -> Target:
    target.json("/order", {"status": status, "total": total})
    target.json("/catalogue", {"items": [{"price": p} for p in prices]})
    return target


def run_against(tmp: Path, url: str, name: str, *, runs: int = 1, suite: str | None = None,
                extra: tuple[str, ...] = ()) -> RunResult:
    project = tmp / name
    (project / "probes").mkdir(parents=True, exist_ok=True)
    (project / "probes" / "shop.yaml").write_text(suite or SUITE.format(runs=runs))
    done = litmus(project, "run", "probes/", "--base-url", url, "--out", "out", "--format", "sarif", *extra)
    assert done.returncode in (0, 1), done.stderr
    return load_results(project / "out" / "results.json")


def failing(result: RunResult) -> dict[str, str]:
    """label -> baseline state of each failing assertion outcome."""
    return {f"{step.name}/{o.type}/{o.mismatches[0].path if o.mismatches else ''}": o.baseline
            for _, _, step, o in result.iter_outcomes() if o.status in ("failed", "error")}


def test_wilson_interval_known_values():
    low, high = wilson_interval(2, 10)
    assert (round(low, 3), round(high, 3)) == (0.057, 0.51)
    assert tuple(round(x, 3) for x in wilson_interval(10, 10)) == (0.722, 1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("base", "here", "verdict"), [
    ((10, 10), (2, 10), "regressed"),
    ((9, 10), (3, 10), "within noise"),
    ((3, 3), (2, 3), "within noise"),
    ((2, 10), (10, 10), "improved"),
    ((5, 5), (5, 5), "within noise"),
])
def test_flow_verdict_separates_only_when_intervals_do(base, here, verdict):
    assert flow_verdict(pass_rate(*here), pass_rate(*base)) == verdict


def test_new_unchanged_fixed_and_none(tmp_path):
    with serve(Target(), status="shipped", total=12.5) as base_target, \
            serve(Target(), status="shipped", total="12.50", prices=(1.0, 2.0)) as head_target:
        base = run_against(tmp_path, base_target.base_url, "base")
        head = run_against(tmp_path, head_target.base_url, "head")
    # Without a baseline every finding is "none".
    assert set(failing(head).values()) == {"none"}
    compared = compare(base, head, source="base.json")
    assert failing(compared) == {"get order/json_path/$.status": "unchanged", "get order/json_path/$.total": "new"}
    assert (compared.baseline.new, compared.baseline.unchanged, compared.baseline.fixed) == (1, 1, 0)
    assert validate(json.loads(json.dumps(compared.to_dict()))) == []
    assert fails(compared, "new")
    assert headline(compared.baseline) == "1 new finding, 1 already failing, 0 fixed"

    # The other way round: the total check is fixed, the status check still unchanged, nothing new.
    with serve(Target(), status="shipped", total="12.50") as base_target, \
            serve(Target(), status="shipped", total=12.5) as head_target:
        base = run_against(tmp_path, base_target.base_url, "base2")
        head = run_against(tmp_path, head_target.base_url, "head2")
    compared = compare(base, head, source="base.json")
    assert (compared.baseline.new, compared.baseline.unchanged, compared.baseline.fixed) == (0, 1, 1)
    (fixed,) = compared.baseline.fixed_findings
    assert (fixed.suite, fixed.flow, fixed.step, fixed.label) == ("Shop", "Order", "get order", "json_path")
    assert "string" in fixed.reason
    assert not fails(compared, "new")


def test_identity_survives_lines_moving_messages_changing_and_reordering(tmp_path):
    with serve(Target(), status="shipped") as target:
        before = run_against(tmp_path, target.base_url, "before")
        # A comment line above every check, the flows swapped, a check added in front: same identities.
        moved = "# a new comment line\n" + SUITE.format(runs=1).replace(
            "          - {type: status_code, expected: 200}\n",
            "          - {type: status_code, expected: 200}\n          # moved down a line\n")
        head_first, tail = moved.split("  - name: Catalogue\n")
        swapped = head_first.split("flows:\n")[0] + "flows:\n  - name: Catalogue\n" + tail.rstrip("\n") + "\n" + \
            "\n".join(head_first.split("flows:\n")[1].splitlines()) + "\n"
        after = run_against(tmp_path, target.base_url, "after", suite=swapped)
    ids = lambda result: {o.id: (s.name, step.name, o.type, o.status)  # noqa: E731
                          for s, _, step, o in result.iter_outcomes()}
    lines = lambda result: {o.id: o.line for _, _, _, o in result.iter_outcomes()}  # noqa: E731
    assert ids(before) == ids(after)
    assert lines(before) != lines(after)  # the lines did move
    # Reworded reasons do not matter either: identities come from names and ordinals only.
    for *_, outcome in after.iter_outcomes():
        outcome.reason = "reworded: " + outcome.reason
    compared = compare(before, after, source="before")
    assert compared.baseline.new == 0 and compared.baseline.unchanged == 1


def test_sharded_head_against_unsharded_baseline_and_merge_keeps_the_comparison(tmp_path):
    # 5 runs: 5 of 5 against 0 of 5 is the smallest count whose Wilson intervals separate.
    with serve(Target(), status="delayed", total=12.5) as base_target, \
            serve(Target(), status="shipped", total="x") as head_target:
        base = run_against(tmp_path, base_target.base_url, "base", runs=5)
        whole = compare(base, run_against(tmp_path, head_target.base_url, "whole", runs=5), source="b")
        shards = [compare(base, run_against(tmp_path, head_target.base_url, f"shard{k}", runs=5,
                                            extra=("--shard", f"{k}/2")), source="b") for k in (1, 2)]
    # No shard claims another shard's checks as fixed: a check that did not run here proves nothing.
    for shard in shards:
        assert shard.baseline.fixed == 0
    merged, _ = merge(shards, names=["1", "2"])
    summary = merged.baseline
    assert (summary.new, summary.unchanged, summary.fixed) == (whole.baseline.new, whole.baseline.unchanged, 0)
    flows = {f.flow: f for f in summary.flows}
    whole_flows = {f.flow: f for f in whole.baseline.flows}
    assert flows["Order"].here == whole_flows["Order"].here and flows["Order"].here.total == 5
    assert flows["Order"].verdict == whole_flows["Order"].verdict == "regressed"  # 5 of 5 -> 0 of 5
    assert flows["Catalogue"].verdict == "within noise" and summary.regressed == 1
    assert failing(merged) == failing(whole)


def test_merge_refuses_shards_compared_with_different_baselines(tmp_path):
    with serve(Target()) as target:
        base = run_against(tmp_path, target.base_url, "base")
        parts = [compare(base, run_against(tmp_path, target.base_url, f"s{k}", extra=("--shard", f"{k}/2")),
                         source=f"base-{k}.json") for k in (1, 2)]
    from litmus.merge import MergeError

    with pytest.raises(MergeError):
        merge(parts, names=["1", "2"])
