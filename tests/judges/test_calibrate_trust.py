"""What a pull request could plant for `litmus calibrate`: label files, decisions, results.json files naming probe
files. Calibration only reports: no run reads its output, and what it reads stays inside the repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support.cli import litmus, write_judge_config
from support.fake_judge import API_KEY

TONE_SUITE = """\
version: 1
suite: Replies
flows:
  - name: reply
    steps:
      - name: ask
        request: {url: /r}
        assertions:
          - {type: tone, tone: "polite"}
"""


def _run(project: Path, target) -> dict:
    ran = litmus(project, "run", "--base-url", target.base_url, "--out", "out", env={"JUDGE_KEY": API_KEY})
    assert ran.returncode == 1, ran.stderr
    return json.loads((project / "out" / "results.json").read_text("utf-8"))


@pytest.fixture
def project(tmp_path, fake_judge, target):
    root = tmp_path / "repo"
    (root / "probes").mkdir(parents=True)
    (root / "probes" / "replies.yaml").write_text(TONE_SUITE, "utf-8")
    write_judge_config(root, fake_judge.openai_base_url, threshold=75, cache="cache")
    fake_judge.default.score = 60  # below the threshold: the check fails
    target.text("/r", "Whatever.")
    return root


def test_calibration_output_changes_no_verdict(project, target):
    """A calibration that "suggests" threshold 0 (what planted labels could make it say), written where calibrate
    writes and in .litmus/, leaves `litmus run`'s verdict and every outcome as they were: nothing reads it."""
    before = _run(project, target)
    (project / "litmus-calibration").mkdir()
    planted = {"types": {"tone": {"suggestion": {"threshold": 0, "band": 100}}}, "judge": {"threshold": 0}}
    for path in (project / "litmus-calibration" / "calibration.json", project / ".litmus" / "calibration.json"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(planted), "utf-8")
    after = _run(project, target)
    outcome = lambda result: result["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][0]  # noqa: E731
    assert after["verdict"] == before["verdict"] == "failed"
    assert outcome(after)["status"] == outcome(before)["status"] == "failed"
    assert outcome(after)["threshold"] == 75


def test_a_results_file_cannot_make_calibrate_read_a_probe_outside_the_repository(project, target, fake_judge):
    """results.json names each suite's file; a crafted one naming a file outside the repository (holding the very
    check the decision hashes to) is not read: the decision is named as not used, and nothing is judged."""
    result = _run(project, target)
    outcome = result["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][0]
    (project / ".litmus").mkdir()
    (project / ".litmus" / "decisions.yaml").write_text(json.dumps([{
        "finding": outcome["id"], "content": outcome["content_sha256"], "verdict": "pass", "by": "ann",
        "at": "2026-05-04T12:00:00Z"}]), "utf-8")
    (project.parent / "outside.yaml").write_text(TONE_SUITE, "utf-8")
    (project / "probes" / "replies.yaml").unlink()
    result["suites"][0]["file"] = "../outside.yaml"
    (project / "crafted.json").write_text(json.dumps(result), "utf-8")
    calls = len(fake_judge.calls())

    done = litmus(project, "calibrate", "--results", "crafted.json", env={"JUDGE_KEY": API_KEY})
    assert done.returncode == 2
    assert "no labelled reply to judge: 1 decision matched no rebuildable outcome" in done.stderr
    assert "../outside.yaml:9:13 holds no tone check" in done.stderr
    assert len(fake_judge.calls()) == calls

    # The same decision with the probe back in the repository is used: the refusal above was the path's.
    (project / "probes" / "replies.yaml").write_text(TONE_SUITE, "utf-8")
    result["suites"][0]["file"] = "probes/replies.yaml"
    (project / "crafted.json").write_text(json.dumps(result), "utf-8")
    used = litmus(project, "calibrate", "--results", "crafted.json", env={"JUDGE_KEY": API_KEY})
    assert used.returncode == 0, used.stderr
    assert "| tone | 1 |" in used.stdout


@pytest.mark.parametrize("kind", ["fifo", "git"])
def test_a_labels_file_that_is_no_regular_file_or_is_in_git_metadata_is_refused(project, kind):
    if kind == "fifo":
        name = "labels.jsonl"
        os.mkfifo(project / name)  # reading it would block for ever
    else:
        name = ".git/labels.jsonl"
        (project / ".git").mkdir()
        (project / name).write_text('{"type": "tone", "tone": "kind", "text": "hi", "verdict": "pass"}\n', "utf-8")
    done = litmus(project, "calibrate", name, env={"JUDGE_KEY": API_KEY}, timeout=30)
    assert done.returncode == 2
    assert done.stderr.startswith("litmus calibrate: error: ")
    assert name in done.stderr


def test_a_label_file_found_in_a_directory_must_stay_inside_the_repository(tmp_path):
    """`litmus demo` reads the label files it finds in probes/calibration/: one a pull request committed as a link
    to a file outside the repository is refused, so no line of that file reaches an error message."""
    from litmus.labels import CalibrateError, read_labels

    root = tmp_path / "repo"
    (root / "probes" / "calibration").mkdir(parents=True)
    (tmp_path / "secret.csv").write_text("type,text,verdict,api_token_abc123\ntone,hi,pass,x\n", "utf-8")
    link = root / "probes" / "calibration" / "labels.csv"
    link.symlink_to(tmp_path / "secret.csv")
    with pytest.raises(CalibrateError) as refused:
        read_labels(str(link), root)
    assert "resolves outside the repository root" in str(refused.value)
    assert "api_token_abc123" not in str(refused.value)
    # Named on the command line by the operator, the same file is theirs to read, and its errors show its text.
    labels, problems = read_labels(str(link))
    assert labels == [] and "unknown column 'api_token_abc123'" in problems[0].message
