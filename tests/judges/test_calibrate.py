"""`litmus calibrate` (subprocess) against a real fake judge whose errors are planted: each labelled reply names
its item number, and the fake judge answers the score planted for that item. The figures the command reports are
checked against the same figures computed here, independently, from the planted scores and labels."""

from __future__ import annotations

import csv
import json
import random
import re
from pathlib import Path

import jsonschema
import pytest

from support.cli import litmus, write_judge_config
from support.fake_judge import API_KEY

SCHEMA = Path(__file__).resolve().parents[2] / "src" / "litmus" / "schemas" / "calibration.schema.json"
ITEM = re.compile(r"item-(\d+)")
THRESHOLD = 75
TONE = "polite, empathetic"


def planted(n: int, seed: int = 7) -> list[tuple[bool, int]]:
    """(human passed, judge score) per item: humans pass 60%; the judge scores passed replies 50-100 and failed
    ones 0-85, so it errs on both sides of any threshold."""
    draw = random.Random(seed)
    items = []
    for _ in range(n):
        human = draw.random() < 0.6
        items.append((human, draw.randint(50, 100) if human else draw.randint(0, 85)))
    return items


def reply(number: int) -> str:
    return f"Reply item-{number}: thanks for writing, your parcel is on its way and should arrive on Friday."


def scripted(judge, items: list[tuple[bool, int]]) -> None:
    def verdict(prompt: str) -> str:
        number = int(ITEM.findall(prompt)[-1])
        return json.dumps({"score": items[number][1], "reason": f"planted score for item {number}"})

    judge.default.decide = verdict


def write_jsonl(path: Path, items: list[tuple[bool, int]], kind: str = "tone") -> Path:
    lines = [json.dumps({"type": kind, "tone": TONE, "text": reply(number), "verdict": "pass" if human else "fail"})
             for number, (human, _) in enumerate(items)]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def kappa(pairs: list[tuple[bool, bool]]) -> float:
    n = len(pairs)
    a = sum(j and h for j, h in pairs)
    d = sum(not j and not h for j, h in pairs)
    judge_yes, human_yes = sum(j for j, _ in pairs), sum(h for _, h in pairs)
    expected = (judge_yes * human_yes + (n - judge_yes) * (n - human_yes)) / n ** 2
    return ((a + d) / n - expected) / (1 - expected)


def rates(items: list[tuple[bool, int]], threshold: float) -> tuple[float, float]:
    failed = [score for human, score in items if not human]
    passed = [score for human, score in items if human]
    return (sum(s >= threshold for s in failed) / len(failed), sum(s < threshold for s in passed) / len(passed))


def calibrate(project: Path, *argv: str):
    return litmus(project, "calibrate", *argv, env={"JUDGE_KEY": API_KEY}, timeout=120)


@pytest.fixture
def project(tmp_path, fake_judge):
    write_judge_config(tmp_path, fake_judge.openai_base_url, threshold=THRESHOLD, cache="cache")
    return tmp_path


def test_reports_the_planted_agreement_kappa_false_passes_and_threshold(project, fake_judge):
    items = planted(200)
    scripted(fake_judge, items)
    labels = write_jsonl(project / "labels.jsonl", items)
    done = calibrate(project, str(labels), "--max-false-fail", "0.1")
    assert done.returncode == 0, done.stderr
    document = json.loads((project / "litmus-calibration" / "calibration.json").read_text("utf-8"))
    jsonschema.validate(document, json.loads(SCHEMA.read_text("utf-8")))
    tone = document["types"]["tone"]

    pairs = [(score >= THRESHOLD, human) for human, score in items]
    false_pass, false_fail = rates(items, THRESHOLD)
    assert tone["n"] == tone["decided"] == 200
    assert tone["agreement"]["count"] == sum(j == h for j, h in pairs)
    assert tone["agreement"]["rate"] == round(sum(j == h for j, h in pairs) / 200, 4)
    assert tone["kappa"]["value"] == round(kappa(pairs), 4)
    assert tone["kappa"]["low"] < tone["kappa"]["value"] < tone["kappa"]["high"]
    assert tone["false_pass"]["rate"] == round(false_pass, 4)
    assert tone["false_pass"]["of"] == sum(not human for human, _ in items)
    assert tone["false_fail"]["rate"] == round(false_fail, 4)
    assert tone["needs_review"]["count"] == 0
    assert 0 < false_pass < 1 and 0 < false_fail < 1  # the plant errs both ways: the figures could be wrong

    # The suggestion, by brute force over the planted scores: fewest false passes within the false-fail limit.
    allowed = [(rates(items, t)[0], t) for t in range(101) if rates(items, t)[1] <= 0.1]
    best_false_pass, best = min(allowed)
    suggestion = tone["suggestion"]
    assert suggestion["threshold"] == best
    assert suggestion["false_pass"] == round(best_false_pass, 4)
    assert best != THRESHOLD  # the suggestion is not simply the configured threshold
    disagreements = [abs(score - best) for human, score in items if (score >= best) != human]
    assert suggestion["band"] == max(disagreements)
    sweep = {row["threshold"]: row for row in tone["sweep"]}
    assert sweep[THRESHOLD]["false_pass"] == round(false_pass, 4)

    assert "| tone | 200 |" in done.stdout
    assert f"{round(kappa(pairs), 2):.2f}" in done.stdout
    assert len(fake_judge.calls()) == 200

    # Verdicts are cached like any judge call: the same labels again cost no call, and give the same figures.
    again = calibrate(project, str(labels))
    assert again.returncode == 0, again.stderr
    assert len(fake_judge.calls()) == 200
    assert json.loads((project / "litmus-calibration" / "calibration.json").read_text("utf-8"))["types"] == \
        document["types"]


def test_no_suggestion_below_30_labels_and_min_kappa_exits_1(project, fake_judge):
    items = planted(29)
    scripted(fake_judge, items)
    labels = write_jsonl(project / "few.jsonl", items)
    done = calibrate(project, str(labels), "--min-kappa", "0.99")
    assert done.returncode == 1, done.stderr
    assert "kappa below --min-kappa 0.99: tone" in done.stderr
    tone = json.loads((project / "litmus-calibration" / "calibration.json").read_text("utf-8"))["types"]["tone"]
    assert tone["suggestion"] is None
    assert "29 scored labels" in tone["no_suggestion"]
    assert "none (fewer than 30 labels)" in done.stdout

    passing = calibrate(project, str(labels), "--min-kappa", "-0.5")
    assert passing.returncode == 0, passing.stderr


def test_no_judge_passed_item_warns_that_false_passes_cannot_be_measured(project, fake_judge):
    items = [(number % 2 == 0, 10) for number in range(40)]
    scripted(fake_judge, items)
    done = calibrate(project, str(write_jsonl(project / "low.jsonl", items)))
    assert done.returncode == 0, done.stderr
    assert "no labelled item was passed by the judge, so false passes cannot be measured" in done.stdout
    assert "litmus review --sample N" in done.stdout


def test_a_csv_gives_the_figures_of_the_same_jsonl(project, fake_judge):
    items = planted(40, seed=3)
    scripted(fake_judge, items)
    with (project / "labels.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["type", "text", "verdict", "tone"])
        for number, (human, _) in enumerate(items):
            writer.writerow(["tone", reply(number), "pass" if human else "fail", TONE])
    from_csv = calibrate(project, "labels.csv", "--out", "csv")
    from_jsonl = calibrate(project, str(write_jsonl(project / "labels.jsonl", items)), "--out", "jsonl")
    assert from_csv.returncode == from_jsonl.returncode == 0, from_csv.stderr + from_jsonl.stderr
    read = lambda out: json.loads((project / out / "calibration.json").read_text("utf-8"))["types"]  # noqa: E731
    assert read("csv") == read("jsonl")


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("bad.jsonl", '{"type": "tone", "tone": "kind", "text": "hi", "verdict": "pass"}\n{"type": "tone", "text": "x"',
     "bad.jsonl:2:1: error: not a JSON object"),
    ("bad.jsonl", '{"type": "tone", "tone": "kind", "text": "hi", "verdict": "maybe"}\n',
     "bad.jsonl:1:1: error: verdict 'maybe': the human label is `pass` or `fail`"),
    ("bad.jsonl", '{"type": "tone", "text": "hi", "verdict": "pass"}\n',
     "bad.jsonl:1:1: error: tone needs its field 'tone'"),
    ("bad.jsonl", '{"type": "tone", "tone": "kind", "text": "hi", "verdict": "pass", "rubrik": "x"}\n',
     "bad.jsonl:1:1: error: unknown column 'rubrik' for type tone"),
    ("bad.jsonl", '{"type": "politeness", "text": "hi", "verdict": "pass"}\n',
     "bad.jsonl:1:1: error: type 'politeness' is not a judged type"),
    ("bad.csv", 'type,text,verdict,tone\ntone,hi,pass,kind\ntone,"two\nlines",pass,kind\ntone,hi,pass,kind,extra\n',
     "bad.csv:5:1: error: 1 more cells than the header has columns"),
    ("bad.jsonl", '{"type": "consistent_with_scenario_data", "text": "hi", "verdict": "pass", "scenario_data": 1,'
                  ' "id": "a"}\n{"type": "accurate_with_scenario_context", "text": "hi", "verdict": "fail", '
                  '"scenario_data": {"eta": 1}}\n',
     "bad.jsonl:2:1: error: accurate_with_scenario_context compares with the approved reply"),
])
def test_a_malformed_label_is_an_error_with_file_and_line(project, fake_judge, name, text, expected):
    (project / name).write_text(text, "utf-8")
    done = calibrate(project, name)
    assert done.returncode == 2
    assert expected in done.stderr
    assert not fake_judge.calls()  # nothing is judged while a label is wrong


def test_decisions_with_their_runs_give_the_figures_of_the_same_labels_in_jsonl(project, fake_judge, target):
    """Decisions (as `litmus review` records them) paired with a run's results.json by content hash give exactly
    the figures of the same replies and labels in a JSONL file; a decision no run has, and one whose probe has
    changed since (its reply cannot be rebuilt), are counted and named, and not used."""
    items = planted(40, seed=11)
    scripted(fake_judge, items)
    flows = []
    for number in range(len(items)):
        target.text(f"/r/{number}", reply(number))
        flows.append(f"  - name: reply {number}\n    steps:\n      - name: ask\n        request: {{url: /r/{number}}}\n"
                     f"        assertions:\n          - {{type: tone, tone: \"{TONE}\"}}\n")
    probes = project / "probes"
    probes.mkdir()
    suite = "version: 1\nsuite: Replies\nflows:\n" + "".join(flows)
    (probes / "replies.yaml").write_text(suite, "utf-8")
    ran = litmus(project, "run", "--base-url", target.base_url, "--out", "out", env={"JUDGE_KEY": API_KEY})
    assert ran.returncode == 1, ran.stderr  # the planted judge fails some replies
    result = json.loads((project / "out" / "results.json").read_text("utf-8"))
    outcomes = {run["flow"]: run["steps"][0]["assertions"][0] for run in result["suites"][0]["flow_runs"]}
    entries = []
    for number, (human, _) in enumerate(items):
        outcome = outcomes[f"reply {number}"]
        entries.append({"finding": outcome["id"], "content": outcome["content_sha256"],
                        "verdict": "pass" if human else "fail", "by": "ann", "at": "2026-05-04T12:00:00Z"})
    entries.append({"finding": "f" * 32, "content": "c" * 64, "verdict": "fail", "by": "ann",
                    "at": "2026-05-04T12:00:00Z"})
    (project / ".litmus").mkdir()
    (project / ".litmus" / "decisions.yaml").write_text(json.dumps(entries), "utf-8")
    write_jsonl(project / "labels-a.jsonl", items[:5])
    # Reply 0's check now asks for another tone: its decision no longer describes what the probe judges.
    (probes / "replies.yaml").write_text(suite.replace(f'tone: "{TONE}"', 'tone: "curt"', 1), "utf-8")

    from_decisions = calibrate(project, "--results", "out/results.json", "--out", "decided")
    both = calibrate(project, "labels-a.jsonl", "--results", "out/results.json", "--out", "both")
    assert from_decisions.returncode == 0, from_decisions.stderr
    from_jsonl = calibrate(project, str(write_jsonl(project / "labels.jsonl", items)), "--out", "labelled")
    assert from_jsonl.returncode == 0, from_jsonl.stderr
    decided = json.loads((project / "decided" / "calibration.json").read_text("utf-8"))
    jsonl = json.loads((project / "labelled" / "calibration.json").read_text("utf-8"))

    # A labels file with --results takes the decisions file as well (--results names what decisions need).
    assert both.returncode == 0, both.stderr
    mixed = json.loads((project / "both" / "calibration.json").read_text("utf-8"))
    assert [source["name"] for source in mixed["sources"]] == ["labels-a.jsonl", ".litmus/decisions.yaml"]

    (rebuilt_differently, nowhere) = sorted(decided["unmatched"], key=lambda note: note["finding"] == "f" * 32)
    assert rebuilt_differently["finding"] == outcomes["reply 0"]["id"]
    assert "hash differently" in rebuilt_differently["why"]
    assert nowhere["why"] == "no judged outcome with this finding id and content hash in the --results files"
    assert "Decisions not used (2)" in from_decisions.stdout and "f" * 32 in from_decisions.stdout
    assert decided["sources"] == [{"name": ".litmus/decisions.yaml", "labels": 39}]

    # The same 39 labels in JSONL (item 0 left out, as the decisions had to leave it out) give the same figures.
    lines = write_jsonl(project / "labels39.jsonl", items).read_text("utf-8").splitlines()[1:]
    (project / "labels39.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    jsonl_39 = calibrate(project, "labels39.jsonl", "--out", "labelled39")
    assert jsonl_39.returncode == 0, jsonl_39.stderr
    same = json.loads((project / "labelled39" / "calibration.json").read_text("utf-8"))
    assert decided["types"] == same["types"]
    assert decided["types"]["tone"]["suggestion"] is not None
    assert jsonl["types"]["tone"]["n"] == 40


def test_decisions_need_their_runs(project):
    (project / ".litmus").mkdir()
    (project / ".litmus" / "decisions.yaml").write_text("[]\n", "utf-8")
    done = calibrate(project)
    assert done.returncode == 2
    assert "decisions hold no text: name the results.json files" in done.stderr


def test_a_scenario_aware_label_from_csv_is_judged_against_its_scenario_data(project, fake_judge):
    """scenario_data in a CSV cell is JSON; the judge is shown it and the reference reply, as in a run."""
    with (project / "scenario.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["type", "text", "verdict", "scenario_data", "reference_response", "rubric", "tone"])
        writer.writerow(["accurate_with_scenario_context", "Order 1042 arrives on 5 December.", "fail",
                         '{"order_id": 1042, "eta": "2026-12-03"}', "Order 1042 arrives on 3 December 2026.", "", ""])
    fake_judge.default.score = 20
    done = calibrate(project, "scenario.csv")
    assert done.returncode == 0, done.stderr
    (call,) = fake_judge.calls()
    assert '"eta": "2026-12-03"' in call.prompt and "Order 1042 arrives on 3 December 2026." in call.prompt
    figures = json.loads((project / "litmus-calibration" / "calibration.json").read_text("utf-8"))["types"]
    assert figures["accurate_with_scenario_context"]["agreement"]["count"] == 1


def test_escalated_and_undecided_labels_count_as_the_run_would(project, fake_judge, second_judge):
    """With an escalation tier, a tier-1 score in the band goes to tier 2, whose verdict is the judge's; tier 2 in
    the band too is needs_review, counted as its own rate and not as agreement."""
    write_judge_config(project, fake_judge.openai_base_url, threshold=THRESHOLD, cache="cache",
                       escalation=f"{{band: 10, to: {{model: judge-large, base_url: {second_judge.openai_base_url}, "
                                  "api_key_env: JUDGE_KEY}}")
    items = [(True, 80), (False, 70), (True, 95)]  # two in the band
    scripted(fake_judge, items)
    second_judge.when("item-0", score=90).when("item-1", score=72)
    done = calibrate(project, str(write_jsonl(project / "labels.jsonl", items)))
    assert done.returncode == 0, done.stderr
    document = json.loads((project / "litmus-calibration" / "calibration.json").read_text("utf-8"))
    status = {item["where"].rsplit(":", 1)[1]: (item["status"], item["escalated"]) for item in document["items"]}
    assert status == {"1": ("passed", True), "2": ("needs_review", True), "3": ("passed", False)}
    tone = document["types"]["tone"]
    assert tone["needs_review"]["count"] == 1 and tone["decided"] == 2 and tone["agreement"]["count"] == 2
    assert document["judge"]["escalation"]["band"] == 10


def test_the_same_reply_labelled_pass_and_fail_is_named(project, fake_judge):
    items = planted(3)
    scripted(fake_judge, items)
    write_jsonl(project / "ann.jsonl", items)
    write_jsonl(project / "bob.jsonl", [(not human, score) if number == 1 else (human, score)
                                        for number, (human, score) in enumerate(items)])
    done = calibrate(project, "ann.jsonl", "bob.jsonl")
    assert done.returncode == 0, done.stderr
    first, second = ("ann.jsonl:2", "bob.jsonl:2") if items[1][0] else ("bob.jsonl:2", "ann.jsonl:2")
    assert f"tone: the same reply is labelled pass ({first}) and fail ({second}); both labels are counted" in \
        done.stdout
    assert done.stdout.count("the same reply is labelled") == 1


def test_without_a_judge_it_says_how_to_configure_one(tmp_path):
    write_jsonl(tmp_path / "labels.jsonl", planted(2))
    done = litmus(tmp_path, "calibrate", "labels.jsonl")
    assert done.returncode == 2
    assert "calibrate needs a judge: set `judge` in litmus.yaml, or --judge-provider and --judge-model" in done.stderr
