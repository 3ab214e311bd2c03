"""Judge replies that are not one verdict, through `litmus run` (subprocess, real fake judge): a score
given twice, and a reason of 1 MB. Neither passes, and neither reply reaches results.json whole."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from pipeline import check_run, run_litmus, write_suite  # noqa: E402

from support.cli import JUDGED_SUITE  # noqa: E402
from support.fake_judge import API_KEY  # noqa: E402


@pytest.mark.parametrize("reply", [
    '{"score": 10, "reason": "rude", "mismatches": [], "score": 95}',
    '{"score": 95, "reason": "' + "z" * 1_000_000 + '", "mismatches": []}',
], ids=["score-twice", "1MB-reason"])
def test_a_reply_that_is_not_one_verdict_does_not_pass(tmp_path, target, fake_judge, reply):
    target.json("/answer", {"reply": "Go away."})
    fake_judge.default.text = reply
    write_suite(tmp_path, "judged.yaml", JUDGED_SUITE)
    (tmp_path / "litmus.yaml").write_text(
        f"judge:\n  provider: openai\n  model: m\n  base_url: {fake_judge.openai_base_url}\n"
        "  api_key_env: JUDGE_KEY\n  cache: cache\n")
    ran = run_litmus(["run", "--base-url", target.base_url, "--out", "out"], cwd=tmp_path,
                     env={"JUDGE_KEY": API_KEY})
    assert ran.code == 1, ran.output
    result = check_run(tmp_path / "out")
    (outcome,) = [o for *_, o in result.iter_outcomes()]
    assert outcome.status == "needs_review"
    assert (tmp_path / "out" / "results.json").stat().st_size < 100_000
    assert json.loads((tmp_path / "out" / "results.json").read_text())["verdict"] == "failed"
