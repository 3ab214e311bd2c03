import argparse
from pathlib import Path

import pytest

from litmus.config import add_config_arguments, resolve_config
from litmus.errors import ProbeError


def _args(*argv):
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    return parser.parse_args(list(argv))


def _write(root: Path, text: str) -> None:
    (root / "litmus.yaml").write_text(text)


FILE = """\
judge:
  provider: openai
  model: gpt-4o-mini
  base_url: https://llm.internal/v1
  api_key_env: LLM_KEY
  threshold: 70
  concurrency: 4
  max_calls: 50
  cache: build/verdicts
  escalation:
    band: 5
    to: {model: gpt-4o}
"""


def test_no_file_no_flags_means_no_judge(tmp_path):
    config = resolve_config(_args(), {}, tmp_path)
    assert config.judge is None and config.path is None


def test_the_project_file_is_read_and_the_second_tier_inherits(tmp_path):
    _write(tmp_path, FILE)
    judge = resolve_config(_args(), {}, tmp_path).judge
    assert (judge.provider, judge.model, judge.base_url, judge.api_key_env) == (
        "openai", "gpt-4o-mini", "https://llm.internal/v1", "LLM_KEY")
    assert (judge.threshold, judge.concurrency, judge.max_calls) == (70, 4, 50)
    assert judge.cache == tmp_path / "build/verdicts"
    assert judge.use_cache and not judge.record
    assert judge.escalation.band == 5
    to = judge.escalation.to
    assert (to.provider, to.model, to.base_url, to.api_key_env) == ("openai", "gpt-4o", "https://llm.internal/v1",
                                                                    "LLM_KEY")


def test_another_provider_never_inherits_where_and_how_to_authenticate(tmp_path):
    _write(tmp_path, FILE.replace("to: {model: gpt-4o}", "to: {provider: anthropic, model: claude-sonnet-4-5}"))
    to = resolve_config(_args(), {}, tmp_path).judge.escalation.to
    assert (to.base_url, to.api_key_env) == ("https://api.anthropic.com", "ANTHROPIC_API_KEY")


def test_flags_beat_environment_which_beats_the_file(tmp_path):
    _write(tmp_path, FILE)
    environ = {"LITMUS_JUDGE_MODEL": "from-env", "LITMUS_JUDGE_THRESHOLD": "80", "LITMUS_NO_CACHE": "1"}
    judge = resolve_config(_args("--judge-model", "from-flag"), environ, tmp_path).judge
    assert judge.model == "from-flag" and judge.threshold == 80 and not judge.use_cache
    argv = ("--judge-provider", "anthropic", "--record", "--cache-dir", "/tmp/c")
    judge = resolve_config(_args(*argv), {}, tmp_path).judge
    assert judge.provider == "anthropic" and judge.record and judge.cache == Path("/tmp/c")


def test_flags_alone_configure_a_judge_with_provider_defaults(tmp_path):
    judge = resolve_config(_args("--judge-provider", "anthropic", "--judge-model", "claude-x"), {}, tmp_path).judge
    assert (judge.base_url, judge.api_key_env, judge.threshold, judge.concurrency) == (
        "https://api.anthropic.com", "ANTHROPIC_API_KEY", 75, 8)
    assert judge.cache == tmp_path / ".litmus/cache"
    replay = resolve_config(_args("--judge-provider", "replay"), {}, tmp_path).judge
    assert replay.model == "replay"


def test_an_explicit_config_path_must_exist(tmp_path):
    with pytest.raises(ProbeError, match="config file ci.yaml not found"):
        resolve_config(_args("--config", "ci.yaml"), {}, tmp_path)
    (tmp_path / "ci.yaml").write_text("judge: {provider: replay}\n")
    assert resolve_config(_args(), {"LITMUS_CONFIG": "ci.yaml"}, tmp_path).judge.provider == "replay"


@pytest.mark.parametrize(("text", "message", "where"), [
    ("judge:\n  provider: openai\n  modle: x\n", "unknown judge setting 'modle'", "litmus.yaml:3:3"),
    ("judgе: {}\n", "unknown config section", "litmus.yaml:1:1"),
    ("judge:\n  provider: mistral\n  model: x\n", "'mistral' is not one of openai, anthropic", "litmus.yaml:2:13"),
    ("judge:\n  provider: openai\n", "judge.model is required", "litmus.yaml:2:13"),
    ("judge:\n  model: x\n", "judge.provider is required", "litmus.yaml"),
    ("judge:\n  provider: openai\n  model: x\n  threshold: 120\n", "number from 0 to 100", "litmus.yaml:4:14"),
    ("judge:\n  provider: openai\n  model: x\n  concurrency: 0\n", "whole number from 1 to 1,000", "litmus.yaml:4:16"),
    ("judge:\n  provider: openai\n  model: x\n  escalation: {band: 5}\n", "judge.escalation takes", "litmus.yaml:4:15"),
    ("judge: [\n", "cannot read config", "litmus.yaml:2:1"),
])
def test_bad_config_is_an_error_with_its_position(tmp_path, text, message, where):
    _write(tmp_path, text)
    with pytest.raises(ProbeError) as caught:
        resolve_config(_args(), {}, tmp_path)
    # Every problem is reported (a misspelt `model` is also a missing one): this one among them, at its place.
    assert any(line.startswith(where) and message in line for line in str(caught.value).splitlines())


def test_a_bad_environment_value_names_the_variable(tmp_path):
    expected = r"<environment>:1:1: error: judge.concurrency \(LITMUS_JUDGE_CONCURRENCY\): expected a whole number"
    with pytest.raises(ProbeError, match=expected):
        resolve_config(_args("--judge-provider", "replay"), {"LITMUS_JUDGE_CONCURRENCY": "many"}, tmp_path)


def test_help_teaches_the_precedence_and_the_key_rule():
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    text = " ".join(parser.format_help().split())
    assert "Flags override LITMUS_* environment variables, which override litmus.yaml" in text
    assert "never from a file" in text and "[LITMUS_JUDGE_MODEL]" in text
