"""Nothing the pull request writes steers the judge or decides a judged verdict: its litmus.yaml (endpoints,
key variables, threshold), a verdict cache committed to the repository, a cassette it changed. Real git
repositories in tmp dirs, the fake judge on 127.0.0.1 and a second listener standing in for the PR's host."""

import argparse
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from judge_helpers import assertion, config, context, evaluate, service

from litmus.config import ProviderConfig, add_config_arguments, resolve_config
from litmus.errors import Position, ProbeError
from litmus.judges import JudgeService
from litmus.model import Assertion
from litmus.trust import Trust
from support.fake_judge import API_KEY, FakeJudge

GITHUB_TOKEN = "ghs_theActionsGitHubTokenNeverLeaves0123"
# What the action passes: the judge-api-key input as LITMUS_JUDGE_API_KEY, its endpoint from judge-base-url.
ACTION_ENV = {"LITMUS_JUDGE_API_KEY": API_KEY, "INPUT_GITHUB-TOKEN": GITHUB_TOKEN, "GITHUB_TOKEN": GITHUB_TOKEN}

BASE_CONFIG = """\
judge:
  provider: openai
  model: judge-small
  threshold: 75
  max_calls: 20
"""


def _args(*argv):
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    return parser.parse_args(list(argv))


def _action_args(judge: FakeJudge):
    return _args("--judge-provider", "openai", "--judge-model", "judge-small", "--judge-base-url",
                 judge.openai_base_url, "--judge-api-key-env", "LITMUS_JUDGE_API_KEY")


def _commit(root: Path, files: dict[str, str], message: str = "change") -> str:
    """Write `files` and commit them in the git repository at `root` (made on first use); the commit's SHA."""
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", message], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def _untrusted(base_sha: str | None, changed=("litmus.yaml",), **fields) -> Trust:
    return Trust(False, "a fork's pull request", base_sha=base_sha,
                 changed_files=None if changed is None else frozenset(changed), **fields)


def _headers_seen(*judges: FakeJudge) -> str:
    return repr([call.headers for judge in judges for call in judge.calls()])


# ---- attack 3: the PR's litmus.yaml points the judge, its key and the GitHub token at its own host


def test_attack_3_the_prs_litmus_yaml_reaches_no_host_and_no_key(tmp_path, fake_judge, second_judge):
    pr_host = second_judge
    base = _commit(tmp_path, {"litmus.yaml": BASE_CONFIG}, "base")
    _commit(tmp_path, {"litmus.yaml": f"""\
judge:
  provider: openai
  model: judge-small
  base_url: {pr_host.openai_base_url}
  threshold: 0
  max_calls: 100000
  escalation:
    band: 100
    to: {{base_url: {pr_host.openai_base_url}, api_key_env: INPUT_GITHUB-TOKEN}}
  embeddings: {{model: e, base_url: {pr_host.openai_base_url}, api_key_env: GITHUB_TOKEN}}
"""}, "the pull request")
    fake_judge.default.score = 40
    trust = _untrusted(base)
    run_config = resolve_config(_action_args(fake_judge), ACTION_ENV, tmp_path, trust=trust)
    judge = JudgeService.from_config(run_config.judge, ACTION_ENV, trust=trust)
    outcome = evaluate(assertion(), context(judge, "Your order is somewhere."))

    assert outcome.status == "failed"  # the base's threshold 75, not the PR's 0
    assert (run_config.judge.threshold, run_config.judge.max_calls, run_config.judge.escalation) == (75, 20, None)
    assert pr_host.calls() == []
    assert [call.headers["authorization"] for call in fake_judge.calls()] == [f"Bearer {API_KEY}"]
    assert GITHUB_TOKEN not in _headers_seen(fake_judge, pr_host)
    assert any("the PR's changes to litmus.yaml are not applied" in note and base[:12] in note
               for note in run_config.notes)


def test_an_untrusted_run_takes_no_endpoint_or_key_variable_from_any_litmus_yaml(tmp_path, fake_judge):
    # Even the base commit's own file: every endpoint of an untrusted run comes from the action's inputs.
    base = _commit(tmp_path, {"litmus.yaml": """\
judge:
  provider: openai
  model: judge-small
  base_url: https://gateway.example/v1
  api_key_env: GATEWAY_KEY
  escalation: {band: 5, to: {model: judge-big, base_url: https://other.example/v1, api_key_env: OTHER_KEY}}
  embeddings: {model: e, api_key_env: ALLOWED_KEY}
"""})
    trust = _untrusted(base, changed=(), env_allow=frozenset({"ALLOWED_KEY"}))
    judge = resolve_config(_args("--judge-api-key-env", "LITMUS_JUDGE_API_KEY"), {}, tmp_path, trust=trust)
    tier1, tier2 = judge.judge.tier1, judge.judge.escalation.to
    assert (tier1.base_url, tier1.api_key_env) == ("https://api.openai.com/v1", "LITMUS_JUDGE_API_KEY")
    # The same endpoint as tier 1, so tier 1's key; env-allow is the operator's opt-in for a named variable.
    assert (tier2.base_url, tier2.api_key_env) == ("https://api.openai.com/v1", "LITMUS_JUDGE_API_KEY")
    assert judge.judge.embeddings.api_key_env == "ALLOWED_KEY"
    (note,) = judge.notes
    assert "judge.base_url, judge.escalation.to.base_url, judge.escalation.to.api_key_env" in note
    # A local run of the same repository applies the file as written.
    local = resolve_config(_args(), {}, tmp_path).judge
    assert (local.base_url, local.api_key_env, local.escalation.to.base_url) == (
        "https://gateway.example/v1", "GATEWAY_KEY", "https://other.example/v1")


def test_an_untrusted_run_without_a_known_base_reads_no_litmus_yaml(tmp_path, fake_judge, second_judge):
    _commit(tmp_path, {"litmus.yaml": "judge:\n  provider: openai\n  model: m\n  threshold: 0\n"})
    run_config = resolve_config(_action_args(fake_judge), ACTION_ENV, tmp_path, trust=_untrusted(None))
    assert run_config.path is None and run_config.judge.threshold == 75
    assert any("litmus.yaml is not read" in note and "base commit is unknown" in note for note in run_config.notes)


def test_a_config_input_is_read_at_the_base_too_and_absent_there_is_no_config(tmp_path, fake_judge):
    base = _commit(tmp_path, {"ci/litmus.yaml": BASE_CONFIG})
    _commit(tmp_path, {"ci/litmus.yaml": BASE_CONFIG.replace("75", "0"), "new.yaml": "judge: {threshold: 1}\n"})
    trust = _untrusted(base, changed=("ci/litmus.yaml", "new.yaml"))
    assert resolve_config(_args("--config", "ci/litmus.yaml"), {}, tmp_path, trust=trust).judge.threshold == 75
    added = resolve_config(_args("--config", "new.yaml", "--judge-provider", "replay"), {}, tmp_path, trust=trust)
    assert added.path is None and added.judge.threshold == 75
    assert any("base commit" in note and "has no new.yaml" in note for note in added.notes)


# ---- credential names never resolve as key variables, in any mode


@pytest.mark.parametrize(("text", "argv", "field", "where"), [
    ("judge:\n  provider: openai\n  model: m\n  api_key_env: GITHUB_TOKEN\n", (), "judge.api_key_env 'GITHUB_TOKEN'",
     "litmus.yaml:4:16"),
    ("judge:\n  provider: openai\n  model: m\n  escalation:\n    to: {api_key_env: INPUT_GITHUB-TOKEN}\n", (),
     "judge.escalation.to.api_key_env 'INPUT_GITHUB-TOKEN'", "litmus.yaml:5:5"),
    ("judge:\n  provider: openai\n  model: m\n  embeddings: {model: e, api_key_env: actions_runtime_token}\n", (),
     "judge.embeddings.api_key_env 'actions_runtime_token'", "litmus.yaml:4:15"),
    ("judge:\n  provider: openai\n  model: m\n", ("--judge-api-key-env", "GH_TOKEN"), "judge.api_key_env 'GH_TOKEN'",
     "<command line>"),
])
@pytest.mark.parametrize("trust", [None, _untrusted(None, changed=None, fork_code_allowed=True)],
                         ids=["local", "allow-fork-code"])
def test_an_api_key_variable_never_names_the_actions_credentials(tmp_path, text, argv, field, where, trust):
    (tmp_path / "litmus.yaml").write_text(text)
    with pytest.raises(ProbeError) as caught:
        resolve_config(_args(*argv), {"GITHUB_TOKEN": GITHUB_TOKEN}, tmp_path, **({"trust": trust} if trust else {}))
    line = next(line for line in str(caught.value).splitlines() if field.replace(" ", ": ") in line)
    assert line.startswith(where) and "never resolve" in line and GITHUB_TOKEN not in str(caught.value)


# ---- a key goes only to the endpoint it was configured for (every mode)


def test_a_second_tier_on_another_endpoint_does_not_inherit_the_first_tiers_key(tmp_path, fake_judge):
    own_key = "sk-the-second-tiers-own-key-42"
    fake_judge.default.score = 75  # inside the band: escalate
    with FakeJudge(api_key=own_key) as other:
        other.default.score = 90
        (tmp_path / "litmus.yaml").write_text(f"""\
judge:
  provider: openai
  model: judge-small
  base_url: {fake_judge.openai_base_url}
  api_key_env: JUDGE_KEY
  escalation: {{band: 10, to: {{model: judge-big, base_url: {other.openai_base_url}}}}}
""")
        judge_config = resolve_config(_args(), {}, tmp_path).judge
        assert judge_config.escalation.to.api_key_env == "OPENAI_API_KEY"  # its provider's default, not JUDGE_KEY
        judge = JudgeService.from_config(judge_config, {"JUDGE_KEY": API_KEY, "OPENAI_API_KEY": own_key})
        outcome = evaluate(assertion(), context(judge, "Order 1042 is delayed."))
        assert outcome.status == "passed" and outcome.judge.escalated
        assert [call.headers["authorization"] for call in other.calls()] == [f"Bearer {own_key}"]
        assert API_KEY not in _headers_seen(other)


# ---- attack 5: a verdict cache committed to the repository


def test_attack_5_a_committed_cache_entry_is_judged_again(tmp_path, fake_judge):
    cache = tmp_path / ".litmus" / "cache"
    body = "Your order is somewhere."
    fake_judge.default.score = 95  # the entry the PR commits claims a pass
    evaluate(assertion(), context(service(config(fake_judge, cache)), body))
    _commit(tmp_path, {}, "the pull request commits its verdict cache")
    fake_judge.default.score = 20  # what the judge really says

    judge = service(config(fake_judge, cache))
    outcome = evaluate(assertion(), context(judge, body))
    assert outcome.status == "failed" and not outcome.judge.tiers[0].cached
    assert len(fake_judge.calls()) == 2
    (note,) = judge.notes
    assert note.startswith("1 judge cache entry") and "tracked by git" in note

    # Untracked, the cache works as before: the entry (now the judge's real verdict) is read, no call made.
    subprocess.run(["git", "-C", str(tmp_path), "rm", "-q", "-r", "--cached", ".litmus"], check=True)
    untracked = service(config(fake_judge, cache))
    assert evaluate(assertion(), context(untracked, body)).status == "failed"
    assert len(fake_judge.calls()) == 2 and untracked.notes == ()


# ---- cassettes: committed on purpose, but not the ones the pull request changed


def test_a_cassette_the_pr_changed_decides_nothing(tmp_path, fake_judge):
    cache = tmp_path / ".litmus" / "cache"
    body = "Your order is somewhere."
    evaluate(assertion(), context(service(config(fake_judge, cache, record=True)), body))
    (cassette,) = (cache / "cassettes").glob("*.json")
    relative = cassette.relative_to(tmp_path).as_posix()
    _commit(tmp_path, {}, "the pull request records a passing verdict")
    replay_config = replace(config(fake_judge, cache), provider="replay", model="replay")

    def replayed(trust):
        return evaluate(assertion(), context(JudgeService.from_config(replay_config, {}, trust=trust), body))

    changed = replayed(_untrusted("0" * 40, changed=(relative,)))
    assert changed.status == "needs_review"
    assert f"the recorded verdict was changed by this pull request: {relative}" in changed.reason
    assert replayed(_untrusted("0" * 40, changed=None)).status == "needs_review"  # changes unknown
    assert replayed(_untrusted("0" * 40, changed=("probes/other.yaml",))).status == "passed"
    assert replayed(None).status == "passed"  # a local run replays its own recordings
    assert len(fake_judge.calls()) == 1


def test_recorded_embeddings_the_pr_changed_decide_nothing(tmp_path, fake_judge):
    cache = tmp_path / ".litmus" / "cache"
    _commit(tmp_path, {}, "a checkout")
    reference, body = "Order 1042 is delayed.", "Order 1042 is delayed."
    embeddings = ProviderConfig("openai", "embed-small", fake_judge.openai_base_url, "JUDGE_KEY")
    check = Assertion(pos=Position("probes/chat.yaml", 30, 11), type="similar", params={"value": reference})
    evaluate(check, context(service(config(fake_judge, cache, embeddings=embeddings, record=True)), body))
    (recorded,) = (cache / "cassettes").glob("*.json")  # one text: the reference and the response are the same
    replay_config = replace(config(fake_judge, cache), provider="replay", model="replay",
                            embeddings=ProviderConfig("replay", "recorded"))
    trust = _untrusted("0" * 40, changed=(recorded.relative_to(tmp_path).as_posix(),))
    outcome = evaluate(check, context(JudgeService.from_config(replay_config, {}, trust=trust), body))
    assert outcome.status == "needs_review" and "changed by this pull request" in outcome.reason
    assert evaluate(check, context(JudgeService.from_config(replay_config, {}), body)).status == "passed"
    # Outside any git checkout, what the pull request changed cannot be matched to a recording: none is used.
    shutil.rmtree(tmp_path / ".git")
    outside = evaluate(check, context(JudgeService.from_config(replay_config, {}, trust=trust), body))
    assert outside.status == "needs_review" and "in no git checkout" in outside.reason
