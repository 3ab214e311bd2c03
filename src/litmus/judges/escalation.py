"""Judge escalation, as pure decisions over the tiers' results.

Tier 1 decides unless its score is inside the band around the threshold (|score - threshold| <=
band) or its reply was unparseable; then tier 2, when configured, judges the same prompt and its
verdict stands. Tier 2 also inside the band or unparseable, or no tier 2 and tier 1 unparseable:
`needs_review`, counted as not passed. A provider failure (no reply) is an `error`, never a pass.
A recorded reply the run must not trust (a cassette the pull request changed) decides nothing: the
outcome is `needs_review` with the reason, and no other tier is asked in its place.
"""

from __future__ import annotations

from dataclasses import dataclass

from litmus.judges.verdict import Verdict
from litmus.results import JudgeTier


@dataclass(frozen=True)
class TierResult:
    record: JudgeTier
    # None when the reply was unparseable or there was no reply.
    verdict: Verdict | None = None
    # Set when there was no reply at all (provider failure, missing cassette).
    error: str | None = None
    # The error is that the judge could not be reached at all: its message is the whole reason.
    unreachable: bool = False
    # Why the tier's recorded reply was not used (e.g. the pull request changed the cassette).
    distrusted: str | None = None

    @property
    def label(self) -> str:
        return f"{self.record.provider}:{self.record.model}"


@dataclass(frozen=True)
class Decision:
    status: str  # passed | failed | needs_review | error
    reason: str
    tiers: tuple[TierResult, ...]
    verdict: Verdict | None = None

    @property
    def escalated(self) -> bool:
        return len(self.tiers) > 1

    @property
    def score(self) -> float | None:
        return self.verdict.score if self.verdict else None


def in_band(score: float, threshold: float, band: float) -> bool:
    return abs(score - threshold) <= band


def should_escalate(result: TierResult, threshold: float, band: float | None) -> bool:
    """Whether a tier-1 result goes to tier 2 (band None: no tier 2 configured)."""
    if band is None or result.error or result.distrusted:
        return False
    return result.verdict is None or in_band(result.verdict.score, threshold, band)


def decide(tiers: list[TierResult], threshold: float, band: float | None) -> Decision:
    last = tiers[-1]
    done = tuple(tiers)
    for tier in tiers:
        if tier.distrusted:
            return Decision("needs_review", f"needs review: {tier.distrusted}", done)
    if last.error:
        return Decision("error", last.error if last.unreachable else f"judge unavailable: {last.error}", done)
    if last.verdict is None:
        return Decision("needs_review", f"needs review: {_undecided(done, threshold, band)}", done)
    score = last.verdict.score
    if len(tiers) > 1 and in_band(score, threshold, band):
        return Decision("needs_review", f"needs review: {_undecided(done, threshold, band)}", done, last.verdict)
    passed = score >= threshold
    via = f" after escalation from {tiers[0].label} ({_tier_summary(tiers[0])})" if len(tiers) > 1 else ""
    head = f"score {score:g} {'>=' if passed else '<'} {threshold:g} ({last.label}{via})"
    return Decision("passed" if passed else "failed", f"{head}: {last.verdict.reason}", done, last.verdict)


def budget_blocked(tier1: TierResult, threshold: float, max_calls: int) -> Decision:
    """Tier 1 could not decide and the call budget leaves no room for tier 2."""
    why = _undecided((tier1,), threshold, None)
    return Decision("needs_review", f"needs review: {why}; escalation skipped: judge budget of {max_calls} "
                    "calls reached", (tier1,), tier1.verdict)


def _undecided(tiers: tuple[TierResult, ...], threshold: float, band: float | None) -> str:
    return "; ".join(f"{t.label} {_tier_summary(t, threshold, band)}" for t in tiers)


def _tier_summary(result: TierResult, threshold: float | None = None, band: float | None = None) -> str:
    if result.verdict is None:
        return f"gave no usable verdict ({result.record.reason})"
    text = f"scored {result.verdict.score:g}"
    if threshold is not None and band is not None:
        text += f", within ±{band:g} of the threshold {threshold:g}"
    return text
