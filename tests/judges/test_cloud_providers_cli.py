"""`litmus run` with each cloud provider as the judge, against the fake judge on 127.0.0.1 (which checks each
one's auth); a host-building field that would send the credentials elsewhere; the cloud credentials a python
check never sees."""

from __future__ import annotations

import json

import pytest

from support.cli import JUDGED_SUITE, litmus
from support.fake_judge import API_KEY, AWS_CREDENTIALS, AWS_ENV, AZURE_API_VERSION, GOOGLE_TOKEN

# Each provider's litmus.yaml, its endpoint at the fake ({base}), and the environment its credentials come from.
PROVIDERS = {
    "azure_openai": ("  model: gpt-4o-mini\n  base_url: {base}\n  deployment: judge-4o-mini\n"
                     f"  api_version: {AZURE_API_VERSION}\n  api_key_env: AZURE_KEY\n", {"AZURE_KEY": API_KEY}),
    "bedrock": ("  model: anthropic.claude-3-5-haiku-20241022-v1:0\n  region: us-east-1\n  base_url: {base}\n",
                AWS_ENV),
    "vertex": ("  model: gemini-2.0-flash-001\n  project: team-ml-42\n  location: us-central1\n  base_url: {base}\n"
               "  token_env: VERTEX_TOKEN\n", {"VERTEX_TOKEN": GOOGLE_TOKEN}),
    "gemini": ("  model: gemini-2.0-flash\n  base_url: {base}\n", {"GEMINI_API_KEY": API_KEY}),
}


def project(tmp_path, target, provider: str, fields: str, suite: str = JUDGED_SUITE):
    target.json("/answer", {"answer": "Your order arrives tomorrow."})
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "suite.yaml").write_text(suite)
    (tmp_path / "litmus.yaml").write_text(f"judge:\n  provider: {provider}\n{fields}")
    return tmp_path


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_judged_check_passes_through_each_provider(tmp_path, target, fake_judge, provider):
    fields, env = PROVIDERS[provider]
    root = project(tmp_path, target, provider, fields.format(base=fake_judge.base_url))
    done = litmus(root, "run", "--base-url", target.base_url, "--out", "out", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    [outcome] = json.loads((root / "out" / "results.json").read_text())["suites"][0]["flow_runs"][0]["steps"][0][
        "assertions"]
    assert outcome["status"] == "passed"
    assert outcome["judge"]["tiers"][0]["provider"] == provider
    assert len([call for call in fake_judge.calls() if call.path != "/token"]) == 1
    secrets = [value for value in env.values() if value != AWS_CREDENTIALS[0]]
    assert not [s for s in secrets for path in (root / "out").iterdir() if s in path.read_text(errors="replace")]


# (provider fields whose host-building value points at the listener, the error's position and text)
REDIRECTS = [
    ("vertex", "  model: gemini-2.0-flash-001\n  project: team-ml-42\n  location: 'us-central1@127.0.0.1:{port}/#'\n"
               "  token_env: VERTEX_TOKEN\n", "litmus.yaml:5:13", "judge.location: 'us-central1@127.0.0.1:"),
    ("bedrock", "  model: anthropic.claude-3-5-haiku-20241022-v1:0\n  region: 'us-east-1@127.0.0.1:{port}/#'\n",
     "litmus.yaml:4:11", "judge.region: 'us-east-1@127.0.0.1:"),
    ("vertex", "  model: m\n  project: team-ml-42\n  location: evil.com/x#\n  token_env: VERTEX_TOKEN\n",
     "litmus.yaml:5:13", "judge.location: 'evil.com/x#' is not a valid location"),
    ("bedrock", "  model: m\n  region: us-east-1.attacker.net\n", "litmus.yaml:4:11",
     "judge.region: 'us-east-1.attacker.net' is not a valid region"),
]


@pytest.mark.parametrize("provider, fields, where, message", REDIRECTS)
def test_a_location_or_region_that_would_redirect_the_credentials_is_refused_before_any_connection(
        tmp_path, target, fake_judge, provider, fields, where, message):
    # Built without the check, the first two make `https://us-central1@127.0.0.1:PORT/#-aiplatform...`: the
    # token would go to the listener, which stands in for an attacker's host.
    root = project(tmp_path, target, provider, fields.format(port=fake_judge.port))
    env = {**AWS_ENV, "VERTEX_TOKEN": GOOGLE_TOKEN}
    for command in (["validate"], ["run", "--base-url", target.base_url, "--out", "out"]):
        done = litmus(root, *command, env=env)
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"{where}: error: {message}" in done.stderr
        assert "builds the endpoint the credentials are sent to" in done.stderr
    assert fake_judge.connections == 0
    assert target.requests == []
    assert not list((root / "out").glob("*"))  # no results, no report


CHECKS = '''\
import os


def sees_no_cloud_credentials(response, context):
    seen = sorted(name for name in os.environ if name.startswith(("AWS_", "GOOGLE_")))
    return True if not seen else [{"path": "$", "expected": "none", "actual": seen, "reason": "visible"}]
'''

PYTHON_SUITE = JUDGED_SUITE + """\
          - {type: python, function: "checks/env.py:sees_no_cloud_credentials"}
"""


def test_a_python_check_never_sees_the_credentials_the_bedrock_judge_signs_with(tmp_path, target, fake_judge):
    fields, _ = PROVIDERS["bedrock"]
    root = project(tmp_path, target, "bedrock", fields.format(base=fake_judge.base_url), PYTHON_SUITE)
    (root / ".git").mkdir()
    (root / "probes" / "checks").mkdir()
    (root / "probes" / "checks" / "env.py").write_text(CHECKS)
    env = {**AWS_ENV, "GOOGLE_APPLICATION_CREDENTIALS": str(root / "sa.json")}
    done = litmus(root, "run", "--base-url", target.base_url, "--out", "out", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    outcomes = json.loads((root / "out" / "results.json").read_text())["suites"][0]["flow_runs"][0]["steps"][0][
        "assertions"]
    assert [(o["type"], o["status"]) for o in outcomes] == [("llm_rubric", "passed"), ("python", "passed")]
    # Nor can the operator hand them over: env-allow cannot list a never-resolve name.
    allowed = litmus(root, "run", "--base-url", target.base_url, "--env-allow", "AWS_SECRET_ACCESS_KEY", env=env)
    assert allowed.returncode == 2
    assert "--env-allow AWS_SECRET_ACCESS_KEY: never resolves" in allowed.stderr


def test_the_aws_secret_and_session_token_are_masked_like_a_judge_key(tmp_path, target, fake_judge):
    fields, _ = PROVIDERS["bedrock"]
    suite = JUDGED_SUITE + '          - {type: contains, value: "never said"}\n'
    root = project(tmp_path, target, "bedrock", fields.format(base=fake_judge.base_url), suite)
    # A target that echoes them (a debug endpoint, a misconfigured proxy): the run's outputs still never show them.
    target.json("/answer", {"answer": f"tomorrow; debug: {AWS_CREDENTIALS[1]} {AWS_CREDENTIALS[2]}"})
    done = litmus(root, "run", "--base-url", target.base_url, "--out", "out", "--format", "markdown,html",
                  env=AWS_ENV)
    assert done.returncode == 1, done.stdout + done.stderr  # the contains check fails, showing the reply
    texts = [done.stdout, done.stderr, *(path.read_text(errors="replace") for path in (root / "out").iterdir())]
    assert "debug: *** ***" in (root / "out" / "results.json").read_text()
    assert [secret for secret in AWS_CREDENTIALS[1:] for text in texts if secret in text] == []
