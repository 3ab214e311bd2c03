"""The cloud providers' fields in litmus.yaml: what each provider takes and needs, the strict patterns of the
fields that build an endpoint, inheritance by a second tier, and what an untrusted run applies."""

from __future__ import annotations

import pytest
from judge_helpers import assertion, context, evaluate
from test_config import _args, _write
from test_trust_policy import _commit, _untrusted

from litmus.config import resolve_config
from litmus.errors import ProbeError
from litmus.judges import JudgeService
from support.fake_judge import AWS_ENV

AZURE = """\
judge:
  provider: azure_openai
  model: gpt-4o-mini
  base_url: https://team.openai.azure.com
  deployment: judge-4o-mini
  api_version: 2024-10-21
"""
BEDROCK = "judge:\n  provider: bedrock\n  model: anthropic.claude-3-5-haiku-20241022-v1:0\n  region: eu-west-3\n"
VERTEX = "judge:\n  provider: vertex\n  model: gemini-2.0-flash-001\n  project: team-ml-42\n  location: {location}\n"


def test_each_provider_builds_its_endpoint_and_defaults_its_key_variable(tmp_path):
    cases = [
        (AZURE, "https://team.openai.azure.com", "AZURE_OPENAI_API_KEY"),
        (BEDROCK, "https://bedrock-runtime.eu-west-3.amazonaws.com", None),
        (VERTEX.format(location="europe-west4"), "https://europe-west4-aiplatform.googleapis.com", None),
        (VERTEX.format(location="global"), "https://aiplatform.googleapis.com", None),
        ("judge:\n  provider: gemini\n  model: gemini-2.0-flash\n", "https://generativelanguage.googleapis.com",
         "GEMINI_API_KEY"),
    ]
    for text, endpoint, key in cases:
        _write(tmp_path, text)
        judge = resolve_config(_args(), {}, tmp_path).judge
        assert (judge.base_url, judge.api_key_env) == (endpoint, key), text


def test_base_url_replaces_the_built_endpoint_and_a_second_tier_inherits_the_coordinates(tmp_path):
    _write(tmp_path, BEDROCK + "  base_url: https://vpce-1.bedrock-runtime.eu-west-3.vpce.amazonaws.com\n"
                               "  escalation: {band: 5, to: {model: anthropic.claude-sonnet-4-v1:0}}\n"
                               "  simulator: {region: us-east-1}\n")
    judge = resolve_config(_args(), {}, tmp_path).judge
    assert (judge.base_url, judge.region) == ("https://vpce-1.bedrock-runtime.eu-west-3.vpce.amazonaws.com",
                                              "eu-west-3")
    assert (judge.escalation.to.base_url, judge.escalation.to.region) == (judge.base_url, "eu-west-3")
    # Another region is another endpoint: the simulator builds its own rather than inheriting tier 1's.
    assert judge.simulator.base_url == "https://bedrock-runtime.us-east-1.amazonaws.com"


def test_embeddings_default_to_a_cloud_judges_own_provider_and_coordinates(tmp_path):
    _write(tmp_path, BEDROCK + "  embeddings: {model: amazon.titan-embed-text-v2:0}\n")
    embeddings = resolve_config(_args(), {}, tmp_path).judge.embeddings
    assert (embeddings.provider, embeddings.region, embeddings.base_url) == (
        "bedrock", "eu-west-3", "https://bedrock-runtime.eu-west-3.amazonaws.com")
    _write(tmp_path, "judge:\n  provider: anthropic\n  model: m\n  embeddings: {model: e}\n")
    assert resolve_config(_args(), {}, tmp_path).judge.embeddings.provider == "openai"


def test_an_entra_token_replaces_the_default_key_variable(tmp_path):
    _write(tmp_path, AZURE + "  token_env: ENTRA_TOKEN\n")
    judge = resolve_config(_args(), {}, tmp_path).judge
    assert (judge.api_key_env, judge.token_env) == (None, "ENTRA_TOKEN")


# (the file, what the error says, where)
BAD = [
    (BEDROCK.replace("eu-west-3", "us-east-1.attacker.net"), "judge.region: 'us-east-1.attacker.net' is not a valid "
     "region", "litmus.yaml:4:11"),
    (VERTEX.format(location="'evil.com/x#'"), "judge.location: 'evil.com/x#' is not a valid location",
     "litmus.yaml:5:13"),
    (VERTEX.format(location="us-central1").replace("team-ml-42", "Team_ML"), "judge.project: 'Team_ML' is not a "
     "valid project", "litmus.yaml:4:12"),
    (AZURE.replace("judge-4o-mini", "x/../../other?"), "judge.deployment: 'x/../../other?' is not a valid deployment",
     "litmus.yaml:5:15"),
    (AZURE.replace("2024-10-21", "latest"), "judge.api_version: 'latest' is not a valid api_version",
     "litmus.yaml:6:16"),
    (AZURE.replace("  deployment: judge-4o-mini\n", ""), "judge.deployment is required for provider azure_openai",
     "litmus.yaml:2:13"),
    (AZURE.replace("  base_url: https://team.openai.azure.com\n", ""), "judge.base_url is required for provider "
     "azure_openai", "litmus.yaml:2:13"),
    ("judge:\n  provider: bedrock\n  model: m\n", "judge.region is required for provider bedrock", "litmus.yaml:2:13"),
    ("judge:\n  provider: vertex\n  model: m\n  location: us-central1\n", "judge.project is required",
     "litmus.yaml:2:13"),
    (BEDROCK + "  api_key_env: AWS_KEY\n", "judge.api_key_env: provider bedrock takes no api_key_env",
     "litmus.yaml:5:16"),
    ("judge:\n  provider: openai\n  model: m\n  region: us-east-1\n", "judge.region: provider openai takes no region "
     "(it is for bedrock)", "litmus.yaml:4:11"),
    (AZURE + "  api_key_env: K\n  token_env: T\n", "judge.token_env: give api_key_env or token_env, not both",
     "litmus.yaml:8:14"),
    (AZURE + "  escalation: {band: 5, to: {deployment: 'a#b'}}\n", "judge.escalation.to.deployment: 'a#b' is not",
     "litmus.yaml:7:15"),
    (AZURE + "  embeddings: {provider: bedrock, model: amazon.titan-embed-text-v2:0, region: x}\n",
     "judge.embeddings.region: 'x' is not a valid region", "litmus.yaml:7:15"),
    (BEDROCK + "  token_env: AWS_SECRET_ACCESS_KEY\n", "judge.token_env: 'AWS_SECRET_ACCESS_KEY' names one of the "
     "action's credentials", "litmus.yaml:5:14"),
    ("judge:\n  provider: gemini\n  model: m\n  api_key_env: GOOGLE_APPLICATION_CREDENTIALS\n",
     "judge.api_key_env: 'GOOGLE_APPLICATION_CREDENTIALS' names one of the action's credentials", "litmus.yaml:4:16"),
]


@pytest.mark.parametrize("text, message, where", BAD, ids=[message.split(":")[0] + f"-{n}"
                                                           for n, (_, message, _) in enumerate(BAD)])
def test_a_misused_provider_field_is_an_error_at_its_position(tmp_path, text, message, where):
    _write(tmp_path, text)
    with pytest.raises(ProbeError) as caught:
        resolve_config(_args(), {}, tmp_path)
    lines = str(caught.value).splitlines()
    assert any(line.startswith(f"{where}: error: {message}") for line in lines), lines


def test_an_untrusted_run_applies_the_base_commits_coordinates_but_not_its_endpoint_or_token_variable(tmp_path):
    base = _commit(tmp_path, {"litmus.yaml": VERTEX.format(location="europe-west4")
                              + "  base_url: https://vertex-proxy.team.example\n  token_env: VERTEX_TOKEN\n"})
    _commit(tmp_path, {"litmus.yaml": VERTEX.format(location="us-central1")}, "the pull request")
    run_config = resolve_config(_args(), {}, tmp_path, trust=_untrusted(base))
    judge = run_config.judge
    # The base's location and project (the PR's change is not applied); the endpoint they build, not the file's URL.
    assert (judge.location, judge.project) == ("europe-west4", "team-ml-42")
    assert judge.base_url == "https://europe-west4-aiplatform.googleapis.com"
    assert judge.token_env is None  # not in env-allow: application-default credentials instead
    assert any("judge.base_url, judge.token_env" in note for note in run_config.notes)
    allowed = resolve_config(_args(), {}, tmp_path, trust=_untrusted(base, env_allow=frozenset({"VERTEX_TOKEN"})))
    assert allowed.judge.token_env == "VERTEX_TOKEN"


def test_attack_the_prs_litmus_yaml_points_a_bedrock_judge_and_its_signature_at_its_own_host(
        tmp_path, fake_judge, second_judge):
    pr_host = second_judge
    base = _commit(tmp_path, {"litmus.yaml": BEDROCK})
    _commit(tmp_path, {"litmus.yaml": BEDROCK.replace("eu-west-3", "us-east-1") + f"  base_url: {pr_host.base_url}\n"
                       f"  simulator: {{base_url: {pr_host.base_url}}}\n"}, "the pull request")
    trust = _untrusted(base)
    # The action's judge-base-url input stands for the team's private Bedrock endpoint.
    run_config = resolve_config(_args("--judge-base-url", fake_judge.base_url), {}, tmp_path, trust=trust)
    service = JudgeService.from_config(run_config.judge, AWS_ENV, trust=trust)
    outcome = evaluate(assertion(), context(service, "Order 1042 is delayed."))
    service.simulate_turn("a customer", "find order 1042", [], turn=1)
    assert outcome.status == "passed", outcome.reason
    assert pr_host.connections == 0
    assert all("/eu-west-3/bedrock/aws4_request" in call.headers["authorization"] for call in fake_judge.calls())
    assert len(fake_judge.calls()) == 2
