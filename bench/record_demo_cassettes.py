"""Re-record the judge cassettes `litmus demo` replays (probes/cassettes/), offline.

    python3 bench/record_demo_cassettes.py

Runs the example suites against the demo target exactly as `litmus demo` does, but with a live
two-tier judge: two scripted fake judges on 127.0.0.1 (tests/support/fake_judge.py) speaking the
OpenAI wire format, with `--record` on. The embeddings of `similar` come from the first fake judge's
/v1/embeddings (a deterministic bag-of-words vector). Every judge prompt gets the verdict scripted below, so the
demo shows each judge outcome: passed, failed, escalated (tier 2 decided) and needs_review. The first fake
judge also plays the conversation suite's simulated user (the simulator defaults to the tier-1 judge), its
messages scripted turn by turn like the verdicts.

It also judges the labelled replies of probes/calibration/ (what `litmus demo` calibrates its judge on): each
label's verdicts are scripted in CALIBRATION_SCORES by its id, tier 1's score and, where that lands within the
escalation band, tier 2's, so the demo's calibration shows agreement, false passes, false fails and needs_review.

Re-record after anything that changes a judge prompt (PROMPT_VERSION, prompt wording, the example
suites, the demo target's replies): a cassette is keyed by the exact prompt and tier, and a stale
one is simply not found (the assertion then reports the missing cassette; a simulated turn, the first turn
without one). The script fails when a
prompt matches no scripted verdict, so a new LLM-based assertion cannot slip in unrecorded.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from litmus.config import ProviderConfig  # noqa: E402
from litmus.demo.run import (  # noqa: E402
    DEMO_TRUST,
    calibration_labels,
    cassette_dir,
    demo_environment,
    demo_judge_config,
)
from litmus.demo.target import DemoCredentials, running_demo_target  # noqa: E402
from litmus.judges import JudgeService  # noqa: E402
from litmus.labels import judge_labels  # noqa: E402
from litmus.load import load_suites  # noqa: E402
from litmus.run.runner import RunOptions, run_suites  # noqa: E402
from support.fake_judge import API_KEY, FakeJudge, Rule  # noqa: E402

PROBES = ROOT / "probes"
KEY_VARIABLE = "LITMUS_RECORDING_JUDGE_KEY"

INTENT = "Criterion: The flow run achieved"
RUBRIC = "Criterion: The response satisfies the rubric."
TONE = "Criterion: The response's tone"
FACTUAL = "Criterion: The response agrees with the ground-truth"
ANSWERS = "Criterion: The response adequately answers"
NO_HALLUCINATION = "Criterion: The response does not contradict the context"
CONSISTENT = "Criterion: Nothing in the response contradicts the scenario data"
ACCURATE = "Criterion: The response aligns with the approved reference response"
INVENTS = "Criterion: The response invents no facts"
CONTEXTUAL = "Criterion: The response meets the rubric, read with the scenario data"
INVENTED_DATE = "5 December"  # only in the support answer for order 1042 (the demo's hallucination)
RETENTION = "Criterion: The assistant retains what it was told"
ROLE = "Criterion: The assistant keeps to its role"
COMPLETENESS = "Criterion: The user's goal was met"
SIMULATED_USER = "You play the user of a chat assistant"
IMPATIENT = "an impatient customer whose mug arrived broken"


def user_turn(message: str) -> Rule:
    """The simulated user's next message; an empty one ends the conversation (goal reached)."""
    return Rule(text=json.dumps({"message": message, "done": not message}))


def verdict(score: float, reason: str, *mismatches: tuple[str, str, str, str]) -> Rule:
    return Rule(score=score, reason=reason,
                mismatches=[dict(zip(("path", "expected", "actual", "reason"), m, strict=True)) for m in mismatches])


# (every text the prompt must contain, the verdict). First match wins: specific entries first.
TIER1: list[tuple[tuple[str, ...], Rule]] = [
    ((INTENT, "Flow: Refund for a damaged item"), verdict(
        88, "The assistant apologised, explained how to request the refund and when the money arrives; every "
            "check passed except one awaiting review, which does not undermine the answer.")),
    ((INTENT, "Flow: Delivery times"), verdict(
        22, "The reply opens with a banned boilerplate disclaimer and promises free delivery from 40 EUR, "
            "which the shop's policy puts at 50 EUR.",
        ("steps.ask about delivery", "delivery free over 50 EUR, no disclaimer",
         "\"As an AI language model\"; free over 40 EUR", "wrong policy stated in a banned voice"))),
    ((INTENT, "scenario delayed-order"), verdict(
        18, "The support answer gives 5 December as the new delivery date; the order data says 2026-12-03.",
        ("steps.ask support", "eta 2026-12-03", "arrives on 5 December", "invented delivery date"))),
    ((INTENT, "scenario delivered-order"), verdict(
        92, "The shopper learns the order was delivered by UPS on 18 November 2026 and what to do if the "
            "parcel is missing.")),
    ((INTENT, "scenario unindexed-order"), verdict(
        5, "Support answered 404 (order_not_indexed) for an order that exists: the shopper got no answer.",
        ("steps.ask support", "the order's status and date", "HTTP 404 order_not_indexed", "no answer given"))),
    # The conversation suite's impatient customer (the simulator is the tier-1 judge), one entry per turn it
    # plays: it corrects the order the assistant got wrong at turn 3, asks for the label, then stops.
    ((SIMULATED_USER, IMPATIENT, "message of turn 4"), user_turn(
        "That's the wrong order! Mine is 1042. When do I get my money back?")),
    ((SIMULATED_USER, IMPATIENT, "message of turn 5"), user_turn("Just send me the return label now.")),
    ((SIMULATED_USER, IMPATIENT, "message of turn 6"), user_turn("")),
    ((RETENTION,), verdict(
        10, "At turn 3 the assistant sends the customer to the return label of order 1077; the customer gave "
            "order 1042 at turn 1 and the assistant confirmed it.",
        ("turns[3]", "order 1042", "the return label of order 1077", "forgot the order number given at turn 1"))),
    ((ROLE,), verdict(
        90, "Polite and brief in every turn; the refund is promised only once the item is back.")),
    ((COMPLETENESS,), verdict(
        86, "By the end the customer has the return label for order 1042 and knows the refund follows within "
            "14 days of the item coming back.")),
    ((RUBRIC,), verdict(
        74, "Explains where to request the refund and the 14-day timing, but does not say who pays for "
            "return postage; a reader may assume they do.")),
    ((TONE,), verdict(93, "Apologetic and warm without grovelling; short, plain sentences.")),
    ((FACTUAL,), verdict(90, "States that the refund reaches the card within 14 days of the item coming back, "
                             "as the ground truth says.")),
    ((ANSWERS,), verdict(
        76, "Says a refund is possible and where to ask, but leaves open whether a photo of the damage is needed.")),
    ((NO_HALLUCINATION,), verdict(
        12, "Claims delivery is free on orders over 40 EUR; the context sets the threshold at 50 EUR.",
        ("$", "Delivery is free on orders over 50 EUR", "free on orders over 40 EUR", "contradicts the context"))),
    ((CONSISTENT, INVENTED_DATE), verdict(
        15, "The answer moves the delivery date to 5 December; the scenario data says 2026-12-03.",
        ("scenario.data.eta", "2026-12-03", "should now arrive on 5 December", "date contradicts the data"))),
    ((CONSISTENT,), verdict(96, "Status, carrier and date all match the scenario data.")),
    ((ACCURATE, INVENTED_DATE), verdict(
        30, "Same status and carrier as the approved answer, but a different arrival date (5 vs 3 December).",
        ("scenario.reference_response", "arrive on 3 December 2026", "arrive on 5 December",
         "the commitment differs from the approved answer"))),
    ((ACCURATE,), verdict(91, "Same facts and next step as the approved answer, in different words.")),
    ((INVENTS, INVENTED_DATE), verdict(
        20, "\"5 December\" appears nowhere in the scenario data; the data's eta is 2026-12-03.",
        ("scenario.data.eta", "2026-12-03", "5 December", "invented date"))),
    ((INVENTS,), verdict(93, "Every specific claim (delivered, UPS, 18 November 2026) is in the data.")),
    ((CONTEXTUAL, INVENTED_DATE), verdict(
        45, "Gives the status and a next step, but the expected date is wrong for this order.",
        ("scenario.data.eta", "2026-12-03", "5 December", "wrong expected date"))),
    ((CONTEXTUAL,), verdict(91, "States the delivery and its date, and offers a trace if the parcel is missing.")),
]

# The stronger second tier is asked only when tier 1 lands within the escalation band of the threshold.
TIER2: list[tuple[tuple[str, ...], Rule]] = [
    ((RUBRIC,), verdict(
        90, "The rubric asks not to make the shopper pay for return postage; the reply asks for no payment at "
            "all, so it meets the rubric. Refund route and timing are both explained.")),
    ((ANSWERS,), verdict(
        83, "Answers 'can I' and 'how', but whether photos of the damage are required is a reasonable part of "
            "'how' and is missing; a human should decide if that matters here.")),
]


# The demo judge's verdicts on the labelled replies of probes/calibration/, by label id: (tier 1's score, tier 2's
# where tier 1 lands within the escalation band). Mostly right, with planted false passes (tone-37, ans-26),
# false fails (tone-38, ans-35) and tier-2 scores still in the band (tone-31, ans-34: needs_review).
CALIBRATION_SCORES: dict[str, tuple[int, int | None]] = {
    "tone-01": (94, None), "tone-02": (91, None), "tone-03": (8, None), "tone-04": (88, None), "tone-05": (35, None),
    "tone-06": (96, None), "tone-07": (22, None), "tone-08": (93, None), "tone-09": (82, 90), "tone-10": (4, None),
    "tone-11": (86, None), "tone-12": (58, None), "tone-13": (95, None), "tone-14": (12, None), "tone-15": (90, None),
    "tone-16": (30, None), "tone-17": (97, None), "tone-18": (84, 88), "tone-19": (6, None), "tone-20": (92, None),
    "tone-21": (18, None), "tone-22": (87, None), "tone-23": (71, 40), "tone-24": (89, None), "tone-25": (3, None),
    "tone-26": (78, 86), "tone-27": (2, None), "tone-28": (93, None), "tone-29": (45, None), "tone-30": (96, None),
    "tone-31": (76, 72), "tone-32": (91, None), "tone-33": (15, None), "tone-34": (88, None), "tone-35": (52, None),
    "tone-36": (87, None), "tone-37": (88, None), "tone-38": (62, None), "tone-39": (9, None), "tone-40": (94, None),
    "ans-01": (93, None), "ans-02": (5, None), "ans-03": (95, None), "ans-04": (40, None), "ans-05": (91, None),
    "ans-06": (3, None), "ans-07": (96, None), "ans-08": (20, None), "ans-09": (90, None), "ans-10": (48, None),
    "ans-11": (94, None), "ans-12": (68, 35), "ans-13": (92, None), "ans-14": (72, 45), "ans-15": (89, None),
    "ans-16": (14, None), "ans-17": (93, None), "ans-18": (7, None), "ans-19": (84, 90), "ans-20": (33, None),
    "ans-21": (88, None), "ans-22": (25, None), "ans-23": (95, None), "ans-24": (55, None), "ans-25": (90, None),
    "ans-26": (87, None), "ans-27": (79, 87), "ans-28": (30, None), "ans-29": (92, None), "ans-30": (10, None),
    "ans-31": (94, None), "ans-32": (62, None), "ans-33": (91, None), "ans-34": (70, 74), "ans-35": (58, None),
    "ans-36": (18, None), "ans-37": (96, None), "ans-38": (12, None), "ans-39": (93, None), "ans-40": (9, None),
}


def calibration_scripts() -> tuple[list[tuple[tuple[str, ...], Rule]], list[tuple[tuple[str, ...], Rule]]]:
    """Tier 1's and tier 2's scripted verdicts on each labelled reply, matched by its text (ahead of the suites'
    entries: a labelled reply is judged with the same criteria)."""
    labels, problems = calibration_labels(PROBES)
    if problems:
        raise SystemExit("\n".join(problem.render() for problem in problems))
    tier1, tier2 = [], []
    for label in labels:
        first, second = CALIBRATION_SCORES[label.id]
        text = label.context.response.text
        tier1.append(((text,), verdict(first, f"scripted verdict on calibration label {label.id}")))
        if second is not None:
            tier2.append(((text,), verdict(second, f"scripted tier-2 verdict on calibration label {label.id}")))
    return tier1, tier2


class ScriptedJudge(FakeJudge):
    """The fake judge, answering by a script of needle tuples; unscripted prompts are collected."""

    def __init__(self, script: list[tuple[tuple[str, ...], Rule]]):
        super().__init__()
        self.script = script
        self.unscripted: list[str] = []

    def _rule_for(self, prompt: str) -> Rule:
        for needles, rule in self.script:
            if all(needle in prompt for needle in needles):
                return rule
        self.unscripted.append(prompt)
        return Rule(text="UNSCRIPTED PROMPT: add a verdict for it to bench/record_demo_cassettes.py")


def main() -> int:
    cassettes = cassette_dir(PROBES) / "cassettes"
    with tempfile.TemporaryDirectory() as scratch:
        unscripted, calls = record(Path(scratch))
        if unscripted:
            for prompt in unscripted:
                print("unscripted judge prompt:\n" + prompt[-1500:], file=sys.stderr)
            return 1
        changed, removed = replace_changed(Path(scratch) / "cassettes", cassettes)
    print(f"{calls} judge calls, {len(list(cassettes.glob('*.json')))} cassettes in {cassettes.relative_to(ROOT)}: "
          f"{changed} written, {removed} removed")
    return 0


def replace_changed(recorded: Path, cassettes: Path) -> tuple[int, int]:
    """Move the new recordings into `cassettes`, leaving a cassette whose reply did not change as it was
    (its timestamp and latency differ on every recording), so the diff shows exactly which ones went stale."""
    cassettes.mkdir(exist_ok=True)
    changed, names = 0, set()
    for path in recorded.glob("*.json"):
        names.add(path.name)
        old = cassettes / path.name
        if not (old.exists() and _lasting(old) == _lasting(path)):
            path.replace(old)
            changed += 1
    stale = [path for path in cassettes.glob("*.json") if path.name not in names]
    for path in stale:
        path.unlink()
    return changed, len(stale)


def _lasting(path: Path) -> dict:
    """A cassette without what changes on every recording."""
    entry = json.loads(path.read_text())
    entry.pop("recorded_at", None)
    entry.get("usage", {}).pop("latency_ms", None)
    return entry


def record(scratch: Path) -> tuple[list[str], int]:
    """Record every judge call of the demo's suites into `scratch`/cassettes: (unscripted prompts, calls)."""
    calibration_tier1, calibration_tier2 = calibration_scripts()
    with ScriptedJudge(calibration_tier1 + TIER1) as tier1, ScriptedJudge(calibration_tier2 + TIER2) as tier2:
        environ = demo_environment({KEY_VARIABLE: API_KEY})
        config = dataclasses.replace(demo_judge_config(
            PROBES,
            ProviderConfig("openai", "scripted-judge-small", tier1.openai_base_url, KEY_VARIABLE),
            ProviderConfig("openai", "scripted-judge-large", tier2.openai_base_url, KEY_VARIABLE),
            embeddings=ProviderConfig("openai", "scripted-embeddings", tier1.openai_base_url, KEY_VARIABLE),
            record=True,
        ), cache=scratch)
        judge = JudgeService.from_config(config, environ)
        # The demo's own trust: the intent judge reads a masked transcript, so what it masks keys the cassettes.
        suites = load_suites([PROBES], environ=environ, trust=DEMO_TRUST).suites
        try:
            with running_demo_target(DemoCredentials.from_environment(environ)) as base_url:
                run_suites(suites, RunOptions(base_url=base_url, concurrency=1, trust=DEMO_TRUST), judge=judge,
                           environ=environ)
            judge_labels(judge, calibration_labels(PROBES)[0])
        finally:
            judge.close()
        return tier1.unscripted + tier2.unscripted, len(tier1.calls()) + len(tier2.calls())


if __name__ == "__main__":
    raise SystemExit(main())
