"""Merging shard results (`litmus run --shard K/N`) into one run. Pure: documents in, document out.

Verdicts are recomputed from the union by the runner's own rule (`litmus.verdict.decide_suite`): a
suite's pass_rate is the percentage of its flow runs that passed (100 when it has none), it passes at
pass_threshold or above unless LLM-based checks went unevaluated; the run passes when every suite
does and no shard was interrupted. Shards
compared with a baseline keep their comparison (see `litmus.compare.merge_baselines`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from litmus.compare import merge_baselines
from litmus.decisions import merge_summaries
from litmus.openapi.coverage import union
from litmus.results import FlowRunResult, JudgeTotals, RunInfo, RunResult, SuiteResult, Totals, UsageTotals
from litmus.text import noun_for
from litmus.usage import add, target_totals
from litmus.verdict import decide_run, decide_suite


class MergeError(ValueError):
    """Results that cannot be merged into one honest run."""


def _shard(result: RunResult, name: str) -> tuple[int, int] | None:
    if result.run.shard is None:
        return None
    k, n = (int(part) for part in result.run.shard.split("/"))
    if not 1 <= k <= n:
        raise MergeError(f"{name}: shard {result.run.shard} is not one of 1/{n} to {n}/{n}")
    return k, n


def _check_shards(documents: list[RunResult], names: list[str], allow_missing: bool) -> list[str]:
    shards = [_shard(doc, name) for doc, name in zip(documents, names, strict=True)]
    if any(s is None for s in shards) and len(documents) > 1:
        unsharded = [name for name, s in zip(names, shards, strict=True) if s is None]
        raise MergeError(f"{', '.join(unsharded)}: not a shard (run.shard is null); only results of "
                         "`litmus run --shard K/N` can be merged")
    if shards == [None]:
        return []
    totals = {n for _, n in shards}
    if len(totals) > 1:
        raise MergeError(f"shards of different totals ({', '.join(f'{k}/{n}' for k, n in shards)}): "
                         "merge the shards of one sharded run")
    seen: dict[int, str] = {}
    for (k, n), name in zip(shards, names, strict=True):
        if k in seen:
            raise MergeError(f"shard {k}/{n} given twice: {seen[k]} and {name}")
        seen[k] = name
    total = totals.pop()
    missing = sorted(set(range(1, total + 1)) - set(seen))
    if not missing:
        return []
    listed = ", ".join(f"{k}/{total}" for k in missing)
    if not allow_missing:
        raise MergeError(f"missing {noun_for(len(missing), 'shard')} {listed}: the verdict would cover "
                         "only part of the flow runs (pass --allow-missing to merge anyway)")
    return [f"missing {noun_for(len(missing), 'shard')} {listed}: the merged verdict covers only "
            f"{len(seen)} of {total} shards"]


def _timestamp(text: str, name: str, field: str) -> datetime:
    """An RFC 3339 timestamp with its UTC offset; MergeError otherwise (shards of several machines are compared)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise MergeError(f"{name}: run.{field} {text!r} is not an ISO 8601 timestamp") from None
    if moment.tzinfo is None:
        raise MergeError(f"{name}: run.{field} {text!r} has no UTC offset, so it cannot be compared with other shards'")
    return moment


def _same(documents: list[RunResult], names: list[str], what: str, get) -> object:
    values = {}
    for doc, name in zip(documents, names, strict=True):
        values.setdefault(get(doc), name)
    if len(values) > 1:
        found = "; ".join(f"{value!r} in {name}" for value, name in values.items())
        raise MergeError(f"the results disagree on {what}: {found}")
    return next(iter(values))


def _scenario_order(sequences: list[list[str | None]]) -> dict[str | None, int]:
    """One order of scenarios consistent with each shard's order (Kahn's algorithm, ties by first sight)."""
    first_seen: dict[str | None, int] = {}
    after: dict[str | None, set] = {}
    before_count: dict[str | None, int] = {}
    for sequence in sequences:
        for item in sequence:
            first_seen.setdefault(item, len(first_seen))
            after.setdefault(item, set())
            before_count.setdefault(item, 0)
        for earlier, later in zip(sequence, sequence[1:], strict=False):
            if later not in after[earlier]:
                after[earlier].add(later)
                before_count[later] += 1
    order: dict[str | None, int] = {}
    ready = sorted((item for item, count in before_count.items() if count == 0), key=first_seen.get)
    while ready:
        item = ready.pop(0)
        order[item] = len(order)
        for later in after[item]:
            before_count[later] -= 1
            if before_count[later] == 0:
                ready.append(later)
        ready.sort(key=first_seen.get)
    for item in sorted(first_seen, key=first_seen.get):  # contradictory orders: fall back to first sight
        order.setdefault(item, len(order))
    return order


def _merge_suite(parts: list[tuple[SuiteResult, str]]) -> SuiteResult:
    first = parts[0][0]
    for suite, name in parts[1:]:
        for attribute in ("file", "line", "intent", "pass_threshold"):
            if getattr(suite, attribute) != getattr(first, attribute):
                raise MergeError(f"suite {first.name!r}: {attribute} differs between {parts[0][1]} "
                                 f"({getattr(first, attribute)!r}) and {name} ({getattr(suite, attribute)!r})")
    owners: dict[tuple, str] = {}
    flow_runs: list[FlowRunResult] = []
    for suite, name in parts:
        for flow_run in suite.flow_runs:
            key = (flow_run.flow, flow_run.scenario, flow_run.run_index)
            if key in owners:
                raise MergeError(f"suite {first.name!r}: flow run {flow_run.flow!r} scenario {flow_run.scenario!r} "
                                 f"run {flow_run.run_index} is in both {owners[key]} and {name}: shards overlap")
            owners[key] = name
            flow_runs.append(flow_run)
    sequences = []
    for suite, _ in parts:
        sequence: list[str | None] = []
        for flow_run in suite.flow_runs:
            if flow_run.scenario not in sequence:
                sequence.append(flow_run.scenario)
        sequences.append(sequence)
    scenario_rank = _scenario_order(sequences)
    flow_runs.sort(key=lambda r: (r.line, r.flow, scenario_rank[r.scenario], r.run_index))
    # Every shard ran the suite's setup and teardown: keep them all, and a failed setup anywhere fails it.
    merged = replace(first, flow_runs=flow_runs,
                     setup=[step for suite, _ in parts for step in suite.setup],
                     teardown=[step for suite, _ in parts for step in suite.teardown],
                     openapi=union([suite.openapi for suite, _ in parts]))
    decide_suite(merged)
    return merged


def merge(documents: list[RunResult], names: list[str] | None = None,
          allow_missing: bool = False) -> tuple[RunResult, list[str]]:
    """The merged run and any warnings. Raises MergeError when the documents cannot be one run."""
    if not documents:
        raise MergeError("nothing to merge")
    names = names or [f"results #{i + 1}" for i in range(len(documents))]
    _same(documents, names, "the schema version", lambda d: d.schema_version)
    _same(documents, names, "the tool", lambda d: (d.tool.name, d.tool.version))
    _same(documents, names, "the commit (run.git_sha)", lambda d: d.run.git_sha)
    warnings = _check_shards(documents, names, allow_missing)
    by_suite: dict[str, list[tuple[SuiteResult, str]]] = {}
    for doc, name in zip(documents, names, strict=True):
        for suite in doc.suites:
            by_suite.setdefault(suite.name, []).append((suite, name))
    suites = [_merge_suite(parts) for parts in by_suite.values()]
    totals = JudgeTotals(**{
        key: sum(getattr(doc.judge, key) for doc in documents) for key in JudgeTotals.__dataclass_fields__
    })
    base_urls = {doc.run.base_url for doc in documents}
    first = documents[0].run
    started = {doc.run.started_at: _timestamp(doc.run.started_at, name, "started_at")
               for doc, name in zip(documents, names, strict=True)}
    finished = {doc.run.finished_at: _timestamp(doc.run.finished_at, name, "finished_at")
                for doc, name in zip(documents, names, strict=True)}
    run = RunInfo(
        base_url=base_urls.pop() if len(base_urls) == 1 else None,
        started_at=min(started, key=started.__getitem__),
        finished_at=max(finished, key=finished.__getitem__),
        interrupted=any(doc.run.interrupted for doc in documents),
        git_sha=first.git_sha,
        shard=None,
        repository=next((doc.run.repository for doc in documents if doc.run.repository), None),
        server_url=next((doc.run.server_url for doc in documents if doc.run.server_url), None),
    )
    judge_usage = UsageTotals()
    for doc in documents:
        add(judge_usage, doc.totals.judge)
    merged = RunResult(run=run, verdict="failed", tool=documents[0].tool,
                       judge=totals, suites=suites, schema_version=documents[0].schema_version,
                       totals=Totals(target=target_totals(suites), judge=judge_usage))
    decide_run(merged)
    merged.decisions = merge_summaries((doc.decisions for doc in documents), merged)
    try:
        merged.baseline = merge_baselines(documents, merged)
    except ValueError as exc:
        raise MergeError(str(exc)) from None
    return merged, warnings
