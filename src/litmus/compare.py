"""What this pull request changed: a run compared with a baseline run of the same suites.

Pure functions over two results documents. Findings are matched by identity (`litmus.identity`),
never by message text. Each finding of the head run is `new` (it did not fail in the baseline) or
`unchanged` (it failed there too); a baseline finding whose check ran here and held in every run is
`fixed`. Flows are compared by pass rate with 95% Wilson score intervals: `regressed` only when the
head's interval lies wholly below the baseline's, so 2 of 3 against 3 of 3 is noise, not a regression.
With `max_cost_increase` a flow also regressed when its cost per run (its tokens per run, where a step on
either side was unpriced) rose more than that percentage (see docs/cost.md).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

from litmus.identity import fingerprint, flow_key
from litmus.results import (
    BaselineSummary,
    FixedFinding,
    FlowComparison,
    PassRate,
    RunResult,
    ScoreComparison,
    ScoreStats,
    UsageChange,
    UsageTotals,
)
from litmus.text import count
from litmus.usage import add, measured
from litmus.verdict import Checked, checked, stamp

# --max-cost-increase's upper bound, in percent: a hundredfold rise is still a number someone may mean.
MAX_COST_INCREASE = 1_000_000

# The 97.5th percentile of the standard normal distribution: a two-sided 95% interval.
Z95 = 1.959963984540054


def wilson_interval(passed: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion, as fractions in [0, 1].

    Unlike the normal approximation it stays inside [0, 1] and is honest at 0 of n and n of n,
    which is where a probe's pass rate usually sits."""
    if total <= 0:
        return 0.0, 1.0
    p = passed / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_rate(passed: int, total: int) -> PassRate:
    low, high = wilson_interval(passed, total)
    rate = 100 * passed / total if total else 0.0
    return PassRate(passed, total, round(rate, 2), round(100 * low, 2), round(100 * high, 2))


def usage_change(here: UsageTotals | None, here_runs: int, baseline: UsageTotals | None,
                 baseline_runs: int) -> UsageChange | None:
    """A flow's usage against the baseline's: compared per flow run, on cost where every step on both sides
    was priced, else on tokens (input and output); None when either side reported no usage."""
    if here is None or baseline is None or not here_runs or not baseline_runs:
        return None
    priced = all(side.cost_usd is not None and not side.unpriced for side in (here, baseline))
    measure = "cost" if priced else "tokens"
    now, before = (measured(side, measure) / runs for side, runs in ((here, here_runs), (baseline, baseline_runs)))
    change = round(100 * (now - before) / before, 2) if before else None
    return UsageChange(measure, here, baseline, change)


def flow_verdict(here: PassRate | None, baseline: PassRate | None, usage: UsageChange | None = None,
                 max_cost_increase: float | None = None) -> str:
    """The flow's verdict against the baseline; sets `usage.over_limit` when its rise is beyond
    `max_cost_increase` percent (a rise from nothing, the baseline's measure 0, is beyond any limit)."""
    if here is None:
        return "not run here"
    if baseline is None:
        return "new flow"
    if usage is not None and max_cost_increase is not None:
        rose_from_nothing = usage.change_pct is None and measured(usage.here, usage.measure) > 0
        usage.over_limit = rose_from_nothing or (usage.change_pct is not None and usage.change_pct > max_cost_increase)
        if usage.over_limit:
            return "regressed"
    # Compare the unrounded intervals: rounding could make touching intervals look separate.
    here_low, here_high = wilson_interval(here.passed, here.total)
    base_low, base_high = wilson_interval(baseline.passed, baseline.total)
    if here_high < base_low:
        return "regressed"
    if here_low > base_high:
        return "improved"
    return "within noise"


def score_stats(values: list[float]) -> ScoreStats | None:
    if not values:
        return None
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return ScoreStats(len(values), round(mean, 2), round(spread, 2), list(values))


def _by_key(items: Iterable[Checked]) -> dict[str, list[Checked]]:
    grouped: dict[str, list[Checked]] = defaultdict(list)
    for item in items:
        grouped[item.key].append(item)
    return grouped


def _label(item: Checked) -> str:
    if item.part == "transport":
        return "no response"
    if item.part == "intent":
        return "Intent Evaluation"
    return item.record.name or item.record.type


def _reason(item: Checked) -> str:
    return item.step.error if item.part == "transport" else item.record.reason


def _failing_paths(items: list[Checked]) -> set[str]:
    return {m.path for item in items if item.is_finding for m in getattr(item.record, "mismatches", ())}


def _flow_rates(result: RunResult) -> dict[str, tuple[str, str, int, int]]:
    """flow id -> (suite, flow, flow runs passed, flow runs)."""
    rates: dict[str, tuple[str, str, int, int]] = {}
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            flow_id = fingerprint(flow_key(suite.name, flow_run.flow))
            _, _, passed, total = rates.get(flow_id, (suite.name, flow_run.flow, 0, 0))
            # The flow run's own verdict: its Intent Evaluation, unless a critical assertion failed it.
            rates[flow_id] = (suite.name, flow_run.flow, passed + (flow_run.status == "passed"), total + 1)
    return rates


def _flow_usage(result: RunResult) -> dict[str, UsageTotals]:
    """flow id -> its flow runs' usage summed (flows whose runs reported none are left out)."""
    totals: dict[str, UsageTotals] = {}
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            if flow_run.usage is not None:
                add(totals.setdefault(fingerprint(flow_key(suite.name, flow_run.flow)), UsageTotals()),
                    flow_run.usage)
    return totals


def _scores(grouped: dict[str, list[Checked]]) -> dict[str, list[float]]:
    return {key: [item.record.score for item in items if item.record.score is not None]
            for key, items in grouped.items()
            if items[0].part not in ("transport", "intent") and any(i.record.score is not None for i in items)}


def compare(baseline: RunResult, head: RunResult, source: str, max_cost_increase: float | None = None) -> RunResult:
    """`head`, with every finding's `baseline` state set and the `baseline` summary filled in."""
    stamp(baseline)
    stamp(head)
    base_items = _by_key(checked(baseline.suites))
    head_items = _by_key(checked(head.suites))
    base_failing = {key: items for key, items in base_items.items() if any(i.is_finding for i in items)}

    summary = BaselineSummary(source=source, max_cost_increase=max_cost_increase)
    for key, items in head_items.items():
        failing = [item for item in items if item.is_finding]
        if not failing:
            continue
        state = "unchanged" if key in base_failing else "new"
        setattr(summary, state, getattr(summary, state) + 1)
        known_paths = _failing_paths(base_failing.get(key, []))
        for item in failing:
            item.record.baseline = state
            for mismatch in getattr(item.record, "mismatches", ()):
                mismatch.baseline = "unchanged" if mismatch.path in known_paths else "new"

    for key, items in base_failing.items():
        here = head_items.get(key)
        # Fixed only when the check ran here, in every run, and held: an assertion another shard ran,
        # or one skipped here, proves nothing.
        if here and all(item.status == "passed" for item in here):
            first = next(item for item in items if item.is_finding)
            summary.fixed_findings.append(_fixed(first))
    summary.fixed = len(summary.fixed_findings)

    summary.flows = _compare_flows(_flow_rates(head), _flow_rates(baseline), _flow_usage(head),
                                   _flow_usage(baseline), max_cost_increase)
    summary.regressed = sum(flow.verdict == "regressed" for flow in summary.flows)
    summary.scores = _compare_scores(head_items, base_items)
    head.baseline = summary
    return head


def _fixed(item: Checked) -> FixedFinding:
    line = item.record.line if item.part not in ("transport", "intent") else (
        item.step.line if item.step else item.flow_run.line)
    return FixedFinding(
        id=fingerprint(item.key), suite=item.suite.name, flow=item.flow_run.flow, scenario=item.flow_run.scenario,
        step=item.step.name if item.step and item.part != "intent" else None,
        label=_label(item), line=line, reason=_reason(item) or "",
    )


def _compare_flows(here: dict[str, tuple[str, str, int, int]], base: dict[str, tuple[str, str, int, int]],
                   here_usage: dict[str, UsageTotals], base_usage: dict[str, UsageTotals],
                   max_cost_increase: float | None) -> list[FlowComparison]:
    flows = []
    for flow_id in list(here) + [f for f in base if f not in here]:
        suite, flow, *_ = here.get(flow_id) or base[flow_id]
        here_rate = pass_rate(*here[flow_id][2:]) if flow_id in here else None
        base_rate = pass_rate(*base[flow_id][2:]) if flow_id in base else None
        change = usage_change(here_usage.get(flow_id), here_rate.total if here_rate else 0,
                              base_usage.get(flow_id), base_rate.total if base_rate else 0)
        flows.append(FlowComparison(flow_id, suite, flow, flow_verdict(here_rate, base_rate, change, max_cost_increase),
                                    here_rate, base_rate, change))
    return flows


def _compare_scores(head_items: dict[str, list[Checked]],
                    base_items: dict[str, list[Checked]]) -> list[ScoreComparison]:
    here, base = _scores(head_items), _scores(base_items)
    comparisons = []
    for key in list(here) + [k for k in base if k not in here]:
        item = (head_items.get(key) or base_items[key])[0]
        comparisons.append(ScoreComparison(
            id=fingerprint(key), suite=item.suite.name, flow=item.flow_run.flow, scenario=item.flow_run.scenario,
            step=item.step.name if item.step else None, assertion=_label(item),
            here=score_stats(here.get(key, [])), baseline=score_stats(base.get(key, [])),
        ))
    return comparisons


def unmetered_flows(summary: BaselineSummary) -> list[str]:
    """The flows run on both sides whose usage could not be compared (one side reported none): what a
    --max-cost-increase gate could not judge, named "suite › flow"."""
    return [f"{flow.suite} › {flow.flow}" for flow in summary.flows
            if flow.here is not None and flow.baseline is not None and flow.usage is None]


def headline(summary: BaselineSummary) -> str:
    """'2 new findings, 3 already failing, 1 fixed; 1 flow regressed': the check run's title and the
    first line of every report."""
    text = (f"{count(summary.new, 'new finding')}, {summary.unchanged} already failing, "
            f"{summary.fixed} fixed")
    if summary.regressed:
        text += f"; {count(summary.regressed, 'flow')} regressed"
    return text


def merge_baselines(parts: list[RunResult], merged: RunResult) -> BaselineSummary | None:
    """The baseline summary of shards merged into `merged`: counts recounted from the merged findings,
    pass rates summed over the shards and their intervals recomputed, fixed findings kept only where no
    shard still fails them. Raises ValueError when the shards were compared with different baselines."""
    summaries = [part.baseline for part in parts if part.baseline is not None]
    if not summaries:
        return None
    sources = {summary.source for summary in summaries}
    if len(sources) > 1 or len(summaries) != len(parts):
        raise ValueError("the shards were not all compared with the same baseline "
                         f"({', '.join(sorted(sources))}{'' if len(summaries) == len(parts) else ', and none'})")
    limit = summaries[0].max_cost_increase
    summary = BaselineSummary(source=summaries[0].source, max_cost_increase=limit)
    still_failing = set()
    for key, items in _by_key(checked(merged.suites)).items():
        failing = [item for item in items if item.is_finding]
        if failing:
            still_failing.add(fingerprint(key))
            state = "unchanged" if any(item.record.baseline == "unchanged" for item in failing) else "new"
            setattr(summary, state, getattr(summary, state) + 1)
    seen = set()
    for part in summaries:
        for fixed in part.fixed_findings:
            if fixed.id not in still_failing and fixed.id not in seen:
                seen.add(fixed.id)
                summary.fixed_findings.append(fixed)
    summary.fixed = len(summary.fixed_findings)

    flows: dict[str, FlowComparison] = {}
    usage_totals: dict[str, UsageTotals] = {}
    base_usage: dict[str, UsageTotals] = {}
    for part in summaries:
        for flow in part.flows:
            into = flows.setdefault(flow.flow_id, FlowComparison(flow.flow_id, flow.suite, flow.flow, "",
                                                                 None, flow.baseline))
            if flow.here is not None:
                passed = (into.here.passed if into.here else 0) + flow.here.passed
                total = (into.here.total if into.here else 0) + flow.here.total
                into.here = pass_rate(passed, total)
            if flow.usage is not None:
                here_usage = usage_totals.setdefault(flow.flow_id, UsageTotals())
                add(here_usage, flow.usage.here)
                base_usage[flow.flow_id] = flow.usage.baseline
    for flow in flows.values():
        flow.usage = usage_change(usage_totals.get(flow.flow_id), flow.here.total if flow.here else 0,
                                  base_usage.get(flow.flow_id), flow.baseline.total if flow.baseline else 0)
        flow.verdict = flow_verdict(flow.here, flow.baseline, flow.usage, limit)
    summary.flows = list(flows.values())
    summary.regressed = sum(flow.verdict == "regressed" for flow in summary.flows)

    scores: dict[str, ScoreComparison] = {}
    for part in summaries:
        for score in part.scores:
            into = scores.setdefault(score.id, ScoreComparison(score.id, score.suite, score.flow, score.scenario,
                                                               score.step, score.assertion, None, score.baseline))
            values = (into.here.values if into.here else []) + (score.here.values if score.here else [])
            into.here = score_stats(values)
    summary.scores = list(scores.values())
    return summary
