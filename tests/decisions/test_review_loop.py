"""The loop from a red `needs_review` to green, through the real commands: `litmus run` (a target and the fake
judge on 127.0.0.1), `litmus review --accept`, `litmus run` again (no judge call for the decided reply), a
changed reply (judged again, the decision stale), `--prune`; and what `review` and `validate` refuse."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from support.cli import litmus, write_judge_config
from support.fake_judge import API_KEY

SUITE = """\
version: 1
suite: Orders
flows:
  - name: ask
    steps:
      - name: one
        request: {url: /answer}
        assertions:
          - {type: status_code, expected: 200}
          - {type: llm_rubric, rubric: "Says when the parcel arrives", critical: true}
"""
ENV = {"JUDGE_KEY": API_KEY}


def project(tmp_path: Path, judge_url: str) -> Path:
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "orders.yaml").write_text(SUITE)
    write_judge_config(tmp_path, judge_url)
    return tmp_path


def run(root: Path, target, out: str = "out"):
    done = litmus(root, "run", "probes", "--base-url", target.base_url, "--out", out, env=ENV)
    return done, json.loads((root / out / "results.json").read_text("utf-8"))


def judged(document: dict) -> dict:
    return document["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][1]


def rubric_calls(fake_judge) -> int:
    return sum("parcel arrives" in call.prompt for call in fake_judge.calls())


def test_needs_review_to_green_and_back(tmp_path, target, fake_judge):
    target.text("/answer", "Your parcel 1042 arrives on Monday.")
    fake_judge.when("parcel", text="no verdict here")  # unparseable, no tier 2: needs review
    root = project(tmp_path, fake_judge.openai_base_url)

    done, first = run(root, target)
    assert done.returncode == 1, done.stdout + done.stderr
    outcome = judged(first)
    assert outcome["status"] == "needs_review" and len(outcome["content_sha256"]) == 64
    assert rubric_calls(fake_judge) == 1

    accepted = litmus(root, "review", "out/results.json", "--accept", outcome["id"], "--reason", "looks right",
                      "--by", "ann")
    assert accepted.returncode == 0, accepted.stderr
    (entry,) = yaml.safe_load((root / ".litmus" / "decisions.yaml").read_text("utf-8"))
    assert (entry["finding"], entry["content"], entry["verdict"], entry["by"], entry["reason"]) == (
        outcome["id"], outcome["content_sha256"], "pass", "ann", "looks right")

    done, second = run(root, target, "out2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert rubric_calls(fake_judge) == 1, "a decided reply must not reach the judge"
    outcome2 = judged(second)
    assert outcome2["status"] == "passed" and outcome2["judge"] is None
    assert outcome2["decided_by"] == {"kind": "human", "by": "ann", "at": entry["at"], "reason": "looks right",
                                      "verdict": "pass", "url": None}
    assert second["decisions"]["applied"] == 1 and second["decisions"]["stale"] == []
    comment = (root / "out2" / "comment.md").read_text("utf-8")
    assert "ann" in comment and "looks right" in comment and "critical" in comment
    assert "ann" in (root / "out2" / "report.html").read_text("utf-8")

    target.text("/answer", "Your parcel 1042 arrives on Tuesday.")
    done, third = run(root, target, "out3")
    assert done.returncode == 1
    assert rubric_calls(fake_judge) == 2, "a changed reply is judged again"
    assert judged(third)["decided_by"] is None and judged(third)["status"] == "needs_review"
    (stale,) = third["decisions"]["stale"]
    assert stale["finding"] == outcome["id"] and stale["where"] == ".litmus/decisions.yaml:1"
    assert "stale decision by ann" in done.stdout + done.stderr

    pruned = litmus(root, "review", "out3/results.json", "--prune")
    assert pruned.returncode == 0 and "removed .litmus/decisions.yaml:1" in pruned.stdout
    assert yaml.safe_load((root / ".litmus" / "decisions.yaml").read_text("utf-8")) is None


def test_review_refuses_a_deterministic_finding_and_suggests_near_ids(tmp_path, target, fake_judge):
    target.text("/answer", "Your parcel 1042 arrives on Monday.")
    fake_judge.when("parcel", text="no verdict here")
    root = project(tmp_path, fake_judge.openai_base_url)
    _, document = run(root, target)
    deterministic = document["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][0]["id"]

    refused = litmus(root, "review", "out/results.json", "--accept", deterministic, "--by", "ann")
    assert refused.returncode == 2
    assert "deterministic check (status_code" in refused.stderr and "probes/orders.yaml:9" in refused.stderr
    assert not (root / ".litmus" / "decisions.yaml").exists()

    typo = judged(document)["id"][:-1] + "0"
    unknown = litmus(root, "review", "out/results.json", "--reject", typo, "--by", "ann")
    assert unknown.returncode == 2 and f"did you mean '{judged(document)['id']}'" in unknown.stderr


def test_a_decision_on_a_deterministic_finding_in_the_file_is_ignored_with_a_reason(tmp_path, target, fake_judge):
    target.text("/answer", "Your parcel 1042 arrives on Monday.")
    fake_judge.when("parcel", score=90, reason="says Monday")
    root = project(tmp_path, fake_judge.openai_base_url)
    target.text("/answer", "oops", status=500)
    _, document = run(root, target)
    status_check = document["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][0]
    (root / ".litmus").mkdir(exist_ok=True)
    (root / ".litmus" / "decisions.yaml").write_text(
        f"- finding: {status_check['id']}\n  content: {'0f' * 32}\n  verdict: pass\n  by: mallory\n"
        "  at: '2026-05-04T12:00:00Z'\n  reason: trust me\n")
    done, again = run(root, target, "out2")
    assert done.returncode == 1
    assert again["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][0]["status"] == "failed"
    (ignored,) = again["decisions"]["ignored"]
    assert ignored["by"] == "mallory" and "deterministic" in ignored["why"]


def test_validate_and_run_report_a_broken_decisions_file_with_positions(tmp_path, target, fake_judge):
    root = project(tmp_path, fake_judge.openai_base_url)
    (root / ".litmus").mkdir(exist_ok=True)
    (root / ".litmus" / "decisions.yaml").write_text(
        f"- finding: {'a' * 32}\n  content: {'b' * 64}\n  verdict: maybe\n  by: ann\n  at: '2026-05-04T12:00:00Z'\n")
    checked = litmus(root, "validate", "probes")
    assert checked.returncode == 2
    assert ".litmus/decisions.yaml:3:12: error: decision 1: verdict" in checked.stderr
    done = litmus(root, "run", "probes", "--base-url", target.base_url, env=ENV)
    assert done.returncode == 2 and ".litmus/decisions.yaml:3:12" in done.stderr
    (root / ".litmus" / "decisions.yaml").write_text("[]\n")
    assert litmus(root, "validate", "probes").returncode == 0


def test_a_judged_intent_evaluation_is_decided_like_an_assertion(tmp_path, target, fake_judge):
    target.text("/answer", "Your parcel 1042 arrives on Monday.")
    fake_judge.when("Customers learn", text="no verdict here")
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "orders.yaml").write_text(SUITE.replace("flows:", "intent: Customers learn when parcels "
                                                                   "arrive\nflows:").replace(
        '          - {type: llm_rubric, rubric: "Says when the parcel arrives", critical: true}\n', ""))
    write_judge_config(tmp_path, fake_judge.openai_base_url)
    done, first = run(tmp_path, target)
    intent = first["suites"][0]["flow_runs"][0]["intent_evaluation"]
    assert done.returncode == 1 and intent["status"] == "needs_review" and len(fake_judge.calls()) == 1
    assert litmus(tmp_path, "review", "out/results.json", "--reject", intent["id"], "--by", "bob").returncode == 0
    done, second = run(tmp_path, target, "out2")
    decided = second["suites"][0]["flow_runs"][0]["intent_evaluation"]
    assert done.returncode == 1 and len(fake_judge.calls()) == 1
    assert decided["status"] == "failed" and decided["decided_by"]["by"] == "bob"
    assert "rejected by bob" in (tmp_path / "out2" / "comment.md").read_text("utf-8")


def test_sample_offers_judge_passed_outcomes_with_the_seed_stated(tmp_path, target, fake_judge):
    target.text("/answer", "Your parcel 1042 arrives on Monday.")
    fake_judge.when("parcel", score=90, reason="says Monday")
    root = project(tmp_path, fake_judge.openai_base_url)
    done, _ = run(root, target)
    assert done.returncode == 0
    nothing = litmus(root, "review", "out/results.json", "--by", "ann")
    assert "nothing to review" in nothing.stdout
    sampled = litmus(root, "review", "out/results.json", "--by", "ann", "--sample", "3", "--seed", "7",
                     input="fail\ntoo vague\n")
    assert sampled.returncode == 0, sampled.stderr
    assert "1 judge-passed outcomes drawn with --seed 7" in sampled.stdout and "status: passed" in sampled.stdout
    (entry,) = yaml.safe_load((root / ".litmus" / "decisions.yaml").read_text("utf-8"))
    assert (entry["verdict"], entry["reason"]) == ("fail", "too vague")
