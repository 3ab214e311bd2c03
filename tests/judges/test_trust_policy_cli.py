"""The judge's trust rules through `litmus run` in a subprocess, as a user runs it in a git checkout: a
verdict cache committed to the repository is judged again, and no key variable names a credential."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.cli import JUDGED_SUITE, litmus, write_judge_config
from support.fake_judge import API_KEY

GITHUB_TOKEN = "ghs_theActionsGitHubTokenNeverLeaves0123"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   check=True, capture_output=True)


def test_a_committed_verdict_cache_does_not_pass_a_failing_check(tmp_path, target, fake_judge):
    target.json("/answer", {"reply": "Your order is somewhere."})
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "judged.yaml").write_text(JUDGED_SUITE)
    write_judge_config(tmp_path, fake_judge.openai_base_url)
    env = {"JUDGE_KEY": API_KEY}
    argv = ("run", "probes", "--base-url", target.base_url, "--out", "out")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)

    fake_judge.default.score = 95  # the verdict the pull request commits in .litmus/cache
    assert litmus(tmp_path, *argv, env=env).returncode == 0
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "a cache entry that says pass")
    fake_judge.default.score = 20  # what the judge says of this response

    judged_again = litmus(tmp_path, *argv, env=env)
    assert judged_again.returncode == 1, judged_again.stderr
    assert len(fake_judge.calls()) == 2
    assert "1 judge cache entry" in judged_again.stderr and "tracked by git" in judged_again.stderr

    _git(tmp_path, "rm", "-q", "-r", "--cached", ".litmus")
    cached = litmus(tmp_path, *argv, env=env)
    assert cached.returncode == 1 and len(fake_judge.calls()) == 2  # an untracked cache is read as before
    assert "tracked by git" not in cached.stderr


def test_an_api_key_variable_naming_the_github_token_stops_the_run(tmp_path, target, fake_judge):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "judged.yaml").write_text(JUDGED_SUITE)
    write_judge_config(tmp_path, fake_judge.openai_base_url)
    config = tmp_path / "litmus.yaml"
    config.write_text(config.read_text().replace("api_key_env: JUDGE_KEY", "api_key_env: GITHUB_TOKEN"))
    ran = litmus(tmp_path, "run", "probes", "--base-url", target.base_url, "--out", "out",
                 env={"GITHUB_TOKEN": GITHUB_TOKEN})
    assert ran.returncode == 2
    assert "litmus.yaml:5:16" in ran.stderr and "judge.api_key_env: 'GITHUB_TOKEN'" in ran.stderr
    assert GITHUB_TOKEN not in ran.stdout + ran.stderr
    assert fake_judge.calls() == []
