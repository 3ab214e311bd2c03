"""The statistics of `litmus calibrate` (litmus.calibration) on hand-computed cases: kappa, its seeded bootstrap,
the suggestion's tie-break and band, and no suggestion below 30 labels."""

from __future__ import annotations

import pytest

from litmus.calibration import Labelled, bootstrap_kappa, cohen_kappa, suggest, summarize, sweep


def labelled(human: bool, score: float, threshold: float = 75) -> Labelled:
    return Labelled("tone", "labels.jsonl", human, "passed" if score >= threshold else "failed", score)


def test_kappa_of_a_textbook_table():
    # 20 both pass, 5 judge only, 10 human only, 15 both fail: observed 0.7, chance 0.5, kappa 0.4.
    pairs = [(True, True)] * 20 + [(True, False)] * 5 + [(False, True)] * 10 + [(False, False)] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)


@pytest.mark.parametrize("pairs", [[], [(True, True)] * 5, [(False, False)] * 3])
def test_kappa_is_undefined_when_chance_agreement_is_total(pairs):
    assert cohen_kappa(pairs) is None


def test_the_bootstrap_interval_is_the_same_for_the_same_seed_and_brackets_kappa():
    pairs = [(True, True)] * 20 + [(True, False)] * 5 + [(False, True)] * 10 + [(False, False)] * 15
    low, high = bootstrap_kappa(pairs, seed=3)
    assert (low, high) == bootstrap_kappa(pairs, seed=3)
    assert (low, high) != bootstrap_kappa(pairs, seed=4)
    assert low < 0.4 < high


def test_equal_false_passes_go_to_the_lowest_threshold_and_the_band_covers_every_disagreement():
    # Human-failed replies score 10 and 90 (one false pass above 90's threshold, always); human-passed ones 60
    # and 95. Thresholds 61-90 all give 1 false pass of 2 and 1 false fail of 2; 11-60 give the false pass and no
    # false fail: with --max-false-fail 0 the lowest of those, 11, is suggested.
    items = [labelled(False, 10), labelled(False, 90), labelled(True, 60), labelled(True, 95)]
    rows = sweep(items)
    suggestion = suggest(items, rows, max_false_fail=0)
    assert suggestion["threshold"] == 11
    assert suggestion["false_pass"] == 0.5 and suggestion["false_fail"] == 0.0
    # The one disagreement at 11: the human-failed 90, 79 above it.
    assert suggestion["band"] == 79 and suggestion["disagreements"] == 1


def test_no_suggestion_below_30_scored_labels_and_needs_review_is_its_own_rate():
    # 28 decided and one in the band (scored, undecided): 29 scored labels.
    items = [labelled(number % 2 == 0, 80 if number % 3 else 20) for number in range(28)]
    items.append(Labelled("tone", "labels.jsonl", True, "needs_review", 74))
    figures = summarize(items)
    assert figures["suggestion"] is None and figures["no_suggestion"].startswith("29 scored labels")
    assert figures["needs_review"]["count"] == 1 and figures["needs_review"]["of"] == 29
    assert figures["decided"] == 28 and figures["agreement"]["of"] == 28
    items.append(labelled(True, 99))
    assert summarize(items)["suggestion"] is not None
