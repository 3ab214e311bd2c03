"""How far to trust a judge: the statistics of `litmus calibrate`, pure (no I/O; the command judges and writes).

Input: labelled items, each with the human's verdict and what the judge made of it at the configured threshold
(its outcome status, and the first tier's score). Per assertion type:

- agreement, Cohen's kappa, false-pass and false-fail rates over the items the judge decided (status passed or
  failed; `needs_review` is counted as a rate of its own, an `error` as not judged);
- false-pass rate: of the items a human failed, the share the judge passed (what a merge gate lets through);
  false-fail rate: of the items a human passed, the share the judge failed (what it blocks for nothing);
- rates carry 95% Wilson intervals (`litmus.compare.wilson_interval`), kappa a 95% percentile bootstrap interval
  over BOOTSTRAP_ROUNDS resamples drawn with a stated seed (so the same labels give the same interval);
- a threshold sweep 0-100 over the first tier's score (the score the threshold and the escalation band act on);
- the suggested threshold: the one with the fewest false passes among those whose false-fail rate is at most
  `max_false_fail`, ties going to the lowest threshold (it fails the fewest items a human passed); the suggested
  band: the smallest |score - threshold| that sends every disagreement at the suggested threshold to escalation;
  no suggestion below MIN_LABELS scored items of the type.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from litmus.compare import wilson_interval

# Below this many scored labels of a type, no threshold or band is suggested: the sweep would follow noise.
MIN_LABELS = 30
BOOTSTRAP_ROUNDS = 1000
DEFAULT_SEED = 0
DEFAULT_MAX_FALSE_FAIL = 0.10
SWEEP = range(0, 101)


@dataclass(frozen=True)
class Labelled:
    """One labelled item as the judge saw it."""

    kind: str
    # The label source's name (a labels file, the decisions file).
    source: str
    human_passed: bool
    # The outcome at the configured threshold: passed | failed | needs_review | error.
    status: str
    # The first tier's score (None when it gave no verdict): what the sweep and the band read.
    score: float | None

    @property
    def decided(self) -> bool:
        return self.status in ("passed", "failed")


def rate(count: int, total: int) -> dict[str, Any]:
    """`count` of `total` as a fraction with its 95% Wilson interval (rate None when total is 0)."""
    low, high = wilson_interval(count, total)
    return {"count": count, "of": total, "rate": round(count / total, 4) if total else None,
            "low": round(low, 4), "high": round(high, 4)}


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of (judge passed, human passed) pairs; None when chance agreement is total (both said
    the same one thing throughout, or there are no pairs): kappa is then undefined."""
    n = len(pairs)
    if not n:
        return None
    both = sum(j and h for j, h in pairs)
    neither = sum(not j and not h for j, h in pairs)
    judge_yes = sum(j for j, _ in pairs)
    human_yes = sum(h for _, h in pairs)
    observed = (both + neither) / n
    chance = (judge_yes * human_yes + (n - judge_yes) * (n - human_yes)) / (n * n)
    if chance >= 1:
        return None
    return (observed - chance) / (1 - chance)


def bootstrap_kappa(pairs: Sequence[tuple[bool, bool]], seed: int = DEFAULT_SEED,
                    rounds: int = BOOTSTRAP_ROUNDS) -> tuple[float, float] | None:
    """The 2.5th and 97.5th percentiles of kappa over `rounds` resamples (with replacement) drawn with
    `seed`; resamples where kappa is undefined are left out. None when fewer than 2 resamples had one."""
    draw = random.Random(seed)
    values = []
    for _ in range(rounds):
        kappa = cohen_kappa(draw.choices(pairs, k=len(pairs))) if pairs else None
        if kappa is not None:
            values.append(kappa)
    if len(values) < 2:
        return None
    cuts = statistics.quantiles(values, n=40, method="inclusive")
    return cuts[0], cuts[-1]


def sweep(items: Sequence[Labelled]) -> list[dict[str, Any]]:
    """Per threshold 0-100: false-pass and false-fail rates and agreement, judging `score >= threshold`."""
    scored = [item for item in items if item.score is not None]
    failed = sum(not item.human_passed for item in scored)
    passed = len(scored) - failed
    rows = []
    for threshold in SWEEP:
        false_pass = sum(item.score >= threshold and not item.human_passed for item in scored)
        false_fail = sum(item.score < threshold and item.human_passed for item in scored)
        rows.append({"threshold": threshold,
                     "false_pass": round(false_pass / failed, 4) if failed else 0.0,
                     "false_fail": round(false_fail / passed, 4) if passed else 0.0,
                     "agreement": round(1 - (false_pass + false_fail) / len(scored), 4) if scored else None})
    return rows


def suggest(items: Sequence[Labelled], rows: list[dict[str, Any]], max_false_fail: float) -> dict[str, Any]:
    """The suggested threshold and band (see the module docstring); rows from `sweep(items)`."""
    allowed = [row for row in rows if row["false_fail"] <= max_false_fail]
    best = min(allowed, key=lambda row: (row["false_pass"], row["threshold"]))
    threshold = best["threshold"]
    scored = [item for item in items if item.score is not None]
    gaps = [abs(item.score - threshold) for item in scored if (item.score >= threshold) != item.human_passed]
    band = math.ceil(max(gaps)) if gaps else 0
    escalated = sum(abs(item.score - threshold) <= band for item in scored) if gaps else 0
    return {"threshold": threshold, "false_pass": best["false_pass"], "false_fail": best["false_fail"],
            "band": band, "disagreements": len(gaps), "escalated": rate(escalated, len(scored))}


def summarize(items: Sequence[Labelled], *, max_false_fail: float = DEFAULT_MAX_FALSE_FAIL,
              seed: int = DEFAULT_SEED, with_sweep: bool = True) -> dict[str, Any]:
    """The figures of one type's items (see the module docstring and docs/judges.md for each field)."""
    decided = [item for item in items if item.decided]
    pairs = [(item.status == "passed", item.human_passed) for item in decided]
    human_failed = [item for item in decided if not item.human_passed]
    human_passed = [item for item in decided if item.human_passed]
    kappa = cohen_kappa(pairs)
    interval = bootstrap_kappa(pairs, seed) if kappa is not None else None
    summary: dict[str, Any] = {
        "n": len(items),
        "decided": len(decided),
        "judge_passed": sum(item.status == "passed" for item in items),
        "human_passed": sum(item.human_passed for item in items),
        "not_judged": sum(item.status not in ("passed", "failed", "needs_review") for item in items),
        "needs_review": rate(sum(item.status == "needs_review" for item in items), len(items)),
        "agreement": rate(sum(j == h for j, h in pairs), len(pairs)),
        "kappa": {"value": None if kappa is None else round(kappa, 4),
                  "low": None if interval is None else round(interval[0], 4),
                  "high": None if interval is None else round(interval[1], 4)},
        "false_pass": rate(sum(item.status == "passed" for item in human_failed), len(human_failed)),
        "false_fail": rate(sum(item.status == "failed" for item in human_passed), len(human_passed)),
    }
    if not with_sweep:
        return summary
    rows = sweep(items)
    scored = sum(item.score is not None for item in items)
    summary["sweep"] = rows
    summary["suggestion"] = suggest(items, rows, max_false_fail) if scored >= MIN_LABELS else None
    summary["no_suggestion"] = None if scored >= MIN_LABELS else (
        f"{scored} scored labels; a threshold and band are suggested from {MIN_LABELS} labels of a type")
    return summary


def by_kind(items: Iterable[Labelled]) -> dict[str, list[Labelled]]:
    grouped: dict[str, list[Labelled]] = {}
    for item in items:
        grouped.setdefault(item.kind, []).append(item)
    return dict(sorted(grouped.items()))


def warnings(kind: str, summary: dict[str, Any]) -> list[str]:
    """What a reader of the figures must know: false passes unmeasurable, kappa undefined."""
    said = []
    if summary["judge_passed"] == 0:
        said.append(f"{kind}: no labelled item was passed by the judge, so false passes cannot be measured: label "
                    "judge-passed outcomes too (`litmus review --sample N`)")
    if summary["human_passed"] in (0, summary["n"]):
        side = "passed" if summary["human_passed"] else "failed"
        said.append(f"{kind}: every label says {side}: label both kinds of reply, or one of the rates has no items")
    if summary["kappa"]["value"] is None and summary["decided"]:
        said.append(f"{kind}: kappa is undefined (the judge or the labels say one thing throughout)")
    return said
