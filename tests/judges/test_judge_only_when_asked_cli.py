"""A `judge:` block in litmus.yaml needs its API key only when a run asks the judge something."""

from __future__ import annotations

from support.cli import JUDGED_SUITE, litmus, write_judge_config

DETERMINISTIC_SUITE = """\
version: 1
suite: Deterministic
flows:
  - name: ask
    steps:
      - name: one
        request: {url: /answer}
        assertions:
          - {type: status_code, expected: 200}
"""


def project(tmp_path, target, suite: str):
    target.json("/answer", {"answer": "tomorrow"})
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "suite.yaml").write_text(suite)
    write_judge_config(tmp_path, "http://127.0.0.1:9/v1")
    return tmp_path


def test_a_run_with_no_judged_check_needs_no_judge_key(tmp_path, target):
    done = litmus(project(tmp_path, target, DETERMINISTIC_SUITE), "run", "--base-url", target.base_url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "JUDGE_KEY" not in done.stderr


def test_a_run_with_an_intent_still_needs_the_key(tmp_path, target):
    suite = DETERMINISTIC_SUITE.replace("suite: Deterministic", "suite: Deterministic\nintent: The answer is given")
    done = litmus(project(tmp_path, target, suite), "run", "--base-url", target.base_url)
    assert done.returncode == 2
    assert "JUDGE_KEY" in done.stderr


def test_a_run_with_a_judged_check_still_needs_the_key(tmp_path, target):
    done = litmus(project(tmp_path, target, JUDGED_SUITE), "run", "--base-url", target.base_url)
    assert done.returncode == 2
    assert "JUDGE_KEY" in done.stderr and "not set" in done.stderr
