"""Azure OpenAI, Bedrock, Vertex AI and Gemini against the fake judge on 127.0.0.1, which checks each one's auth
for real: a wrong key, signature, api-version or token is refused there, so these tests can fail."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest
from judge_helpers import assertion, context, evaluate
from test_similar import REFERENCE, expected_cosine, similar

from litmus.config import EscalationConfig, JudgeConfig, ProviderConfig
from litmus.judges import JudgeConfigError, JudgeService
from litmus.run.redact import Redactor
from support.cli import JUDGED_SUITE, litmus
from support.fake_judge import API_KEY, AWS_CREDENTIALS, AWS_ENV, AZURE_API_VERSION, GOOGLE_TOKEN

MODEL_ID = "anthropic.claude-3-5-haiku-20241022-v1:0"


def tier(fake, provider: str, **fields) -> ProviderConfig:
    """A tier of `provider` at the fake, with the fields that provider needs."""
    defaults = {
        "azure_openai": {"model": "gpt-4o-mini", "deployment": "judge-deploy", "api_version": AZURE_API_VERSION,
                         "api_key_env": "JUDGE_KEY"},
        "bedrock": {"model": MODEL_ID, "region": "us-east-1"},
        "vertex": {"model": "gemini-2.0-flash-001", "project": "team-project-1", "location": "europe-west4",
                   "token_env": "GOOGLE_TOKEN"},
        "gemini": {"model": "gemini-2.0-flash", "api_key_env": "JUDGE_KEY"},
    }[provider]
    return ProviderConfig(provider, base_url=fake.base_url, **{**defaults, **fields})


def judge_config(tmp_path, tier1: ProviderConfig, **settings) -> JudgeConfig:
    fields = {name: getattr(tier1, name) for name in ProviderConfig.__dataclass_fields__}
    return JudgeConfig(**fields, cache=tmp_path / "cache", use_cache=False, retries=0, **settings)


ENV = {"JUDGE_KEY": API_KEY, "GOOGLE_TOKEN": GOOGLE_TOKEN, **AWS_ENV}


def judged(tmp_path, tier1: ProviderConfig, environ=ENV, **settings):
    service = JudgeService.from_config(judge_config(tmp_path, tier1, **settings), environ=environ)
    return evaluate(assertion(), context(service, "Order 1042 is delayed.")), service


def test_azure_openai_calls_the_deployment_with_its_api_version_and_the_key_in_api_key(fake_judge, tmp_path):
    outcome, _ = judged(tmp_path, tier(fake_judge, "azure_openai"))
    assert outcome.status == "passed", outcome.reason
    [call] = fake_judge.calls()
    assert (call.path, call.query) == ("/openai/deployments/judge-deploy/chat/completions",
                                       f"api-version={AZURE_API_VERSION}")
    assert call.headers["api-key"] == API_KEY and "authorization" not in call.headers
    assert [m["role"] for m in call.body["messages"]] == ["system", "user"]
    assert call.body["response_format"] == {"type": "json_object"}
    record = outcome.judge.tiers[0]
    assert (record.provider, record.model) == ("azure_openai", "gpt-4o-mini")
    assert record.input_tokens > 0 and record.output_tokens > 0


def test_azure_openai_sends_an_entra_token_as_a_bearer_token(fake_judge, tmp_path):
    fake_judge.azure_token = "entra-access-token-1"
    environ = {"ENTRA_TOKEN": "entra-access-token-1"}
    outcome, _ = judged(tmp_path, tier(fake_judge, "azure_openai", api_key_env=None, token_env="ENTRA_TOKEN"),
                        environ)
    assert outcome.status == "passed", outcome.reason
    [call] = fake_judge.calls()
    assert call.headers["authorization"] == "Bearer entra-access-token-1" and "api-key" not in call.headers


@pytest.mark.parametrize("fields, refused", [
    ({"api_version": "2023-05-15"}, "HTTP 404: Resource not found"),
    ({"api_key_env": "OTHER_KEY"}, "HTTP 401: Access denied"),
])
def test_azure_openai_a_wrong_api_version_or_key_is_an_error_naming_the_provider(fake_judge, tmp_path, fields,
                                                                                refused):
    outcome, _ = judged(tmp_path, tier(fake_judge, "azure_openai", **fields), {**ENV, "OTHER_KEY": "sk-wrong"})
    assert outcome.status == "error"
    assert "azure_openai:gpt-4o-mini" in outcome.reason and refused in outcome.reason
    assert "sk-wrong" not in outcome.reason


def test_bedrock_converse_is_signed_with_sigv4_and_its_usage_recorded(fake_judge, tmp_path):
    outcome, service = judged(tmp_path, tier(fake_judge, "bedrock"))
    assert outcome.status == "passed", outcome.reason
    [call] = fake_judge.calls()
    assert call.path == "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse"
    assert call.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={AWS_CREDENTIALS[0]}/")
    assert "/us-east-1/bedrock/aws4_request" in call.headers["authorization"]
    assert call.headers["x-amz-security-token"] == AWS_CREDENTIALS[2]
    assert call.body["system"][0]["text"].startswith("You")
    assert call.body["inferenceConfig"] == {"maxTokens": 1024, "temperature": 0}
    assert outcome.judge.tiers[0].input_tokens > 0 and outcome.judge.tiers[0].output_tokens > 0
    # The secret never leaves, and the run masks both it and the session token like an API key.
    assert AWS_CREDENTIALS[1].encode() not in call.raw and AWS_CREDENTIALS[1] not in json.dumps(call.headers)
    masked = Redactor()
    service.mask_with(masked)
    assert masked.redact(f"{AWS_CREDENTIALS[1]} {AWS_CREDENTIALS[2]}") == "*** ***"


def test_bedrock_a_wrong_secret_key_fails_the_signature_check(fake_judge, tmp_path):
    environ = {**ENV, "AWS_SECRET_ACCESS_KEY": "not/the/secret/the/fake/knows/0000000000"}
    outcome, _ = judged(tmp_path, tier(fake_judge, "bedrock"), environ)
    assert outcome.status == "error"
    assert f"bedrock:{MODEL_ID}: HTTP 403" in outcome.reason and "signature" in outcome.reason


def test_bedrock_without_aws_credentials_names_the_variables(fake_judge, tmp_path):
    with pytest.raises(JudgeConfigError, match="AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"):
        judged(tmp_path, tier(fake_judge, "bedrock"), {"JUDGE_KEY": API_KEY})
    assert fake_judge.connections == 0


@pytest.mark.parametrize("provider, module, extra", [("bedrock", "botocore", "bedrock"),
                                                     ("vertex", "google.auth", "vertex")])
def test_a_provider_whose_extra_is_missing_names_the_extra(fake_judge, tmp_path, monkeypatch, provider, module,
                                                           extra):
    for name in [name for name in sys.modules if name == module or name.startswith(f"{module}.")] + [module]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed: importing it raises ImportError
    fields = {"token_env": None} if provider == "vertex" else {}
    with pytest.raises(JudgeConfigError, match=rf"pip install 'litmus-lab\[{extra}\]'"):
        judged(tmp_path, tier(fake_judge, provider, **fields))


def test_vertex_sends_the_access_token_of_token_env(fake_judge, tmp_path):
    outcome, _ = judged(tmp_path, tier(fake_judge, "vertex"))
    assert outcome.status == "passed", outcome.reason
    [call] = fake_judge.calls()
    assert call.path == ("/v1/projects/team-project-1/locations/europe-west4/publishers/google/models/"
                         "gemini-2.0-flash-001:generateContent")
    assert call.headers["authorization"] == f"Bearer {GOOGLE_TOKEN}"
    assert call.body["generationConfig"]["responseMimeType"] == "application/json"
    assert "never an instruction" in call.body["systemInstruction"]["parts"][0]["text"]
    assert outcome.judge.tiers[0].input_tokens > 0


def test_vertex_a_bad_token_is_an_error_naming_the_provider(fake_judge, tmp_path):
    outcome, _ = judged(tmp_path, tier(fake_judge, "vertex"), {"GOOGLE_TOKEN": "ya29.expired"})
    assert outcome.status == "error"
    assert "vertex:gemini-2.0-flash-001: HTTP 401: Request had invalid authentication" in outcome.reason


def service_account(fake, tmp_path, key=None):
    """A service-account JSON whose token_uri is the fake's, with an RSA key made here (the fake knows its public
    half); `key`: sign with another key instead."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    fake.service_account_key = private.public_key()
    fake.service_account_email = "litmus-judge@team-project-1.iam.gserviceaccount.com"
    pem = (key or private).private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()).decode()
    path = tmp_path / "service-account.json"
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "team-project-1", "private_key_id": "k1", "private_key": pem,
        "client_email": fake.service_account_email, "client_id": "1", "token_uri": f"{fake.base_url}/token",
    }))
    return path


def test_vertex_with_application_default_credentials_gets_a_token_from_the_service_account(fake_judge, tmp_path,
                                                                                           monkeypatch):
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(service_account(fake_judge, tmp_path)))
    tier1 = tier(fake_judge, "vertex", token_env=None)
    service = JudgeService.from_config(judge_config(tmp_path, tier1), environ={})
    first = evaluate(assertion(), context(service, "Order 1042 is delayed."))
    second = evaluate(assertion(), context(service, "Order 1043 is on time."))
    assert (first.status, second.status) == ("passed", "passed"), first.reason
    token_calls, judge_calls = fake_judge.calls("/token"), [c for c in fake_judge.calls() if c.path != "/token"]
    assert len(token_calls) == 1 and len(judge_calls) == 2  # one token, reused while valid
    assert all(c.headers["authorization"] == f"Bearer {GOOGLE_TOKEN}" for c in judge_calls)
    # A run that starts after the token was issued (the head run after the baseline's) masks it too.
    later_run = Redactor()
    service.mask_with(later_run)
    assert later_run.redact(f"Bearer {GOOGLE_TOKEN}") == "Bearer ***"


def test_vertex_a_service_account_key_the_token_endpoint_does_not_know_is_an_error(fake_judge, tmp_path, monkeypatch):
    from cryptography.hazmat.primitives.asymmetric import rsa

    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(service_account(fake_judge, tmp_path, key=other)))
    outcome, _ = judged(tmp_path, tier(fake_judge, "vertex", token_env=None), {})
    assert outcome.status == "error"
    assert "vertex:gemini-2.0-flash-001: no access token" in outcome.reason
    assert "Invalid JWT Signature" in outcome.reason
    assert [c.path for c in fake_judge.calls()] == ["/token"]


def test_gemini_sends_the_key_in_x_goog_api_key_never_in_the_url(fake_judge, tmp_path):
    outcome, _ = judged(tmp_path, tier(fake_judge, "gemini"))
    assert outcome.status == "passed", outcome.reason
    [call] = fake_judge.calls()
    assert (call.path, call.query) == ("/v1beta/models/gemini-2.0-flash:generateContent", "")
    assert call.headers["x-goog-api-key"] == API_KEY and "authorization" not in call.headers
    assert API_KEY.encode() not in call.raw
    assert outcome.judge.tiers[0].output_tokens > 0


def test_gemini_a_model_named_in_googles_models_spelling_calls_the_same_endpoint(fake_judge, tmp_path):
    outcome, _ = judged(tmp_path, tier(fake_judge, "gemini", model="models/gemini-2.0-flash"))
    assert outcome.status == "passed", outcome.reason
    [call] = fake_judge.calls()
    assert call.path == "/v1beta/models/gemini-2.0-flash:generateContent"


def test_gemini_a_wrong_key_is_an_error_naming_the_provider(fake_judge, tmp_path):
    outcome, _ = judged(tmp_path, tier(fake_judge, "gemini"), {"JUDGE_KEY": "AIza-wrong"})
    assert outcome.status == "error"
    assert "gemini:gemini-2.0-flash: HTTP 400: API key not valid" in outcome.reason


EMBEDDING_MODELS = {"azure_openai": {"model": "text-embedding-3-small", "deployment": "embed-deploy"},
                    "bedrock": {"model": "amazon.titan-embed-text-v2:0"},
                    "vertex": {"model": "text-embedding-005"}, "gemini": {"model": "text-embedding-004"}}
EMBEDDING_PATHS = {"azure_openai": "/openai/deployments/embed-deploy/embeddings",
                   "bedrock": "/model/amazon.titan-embed-text-v2%3A0/invoke",
                   "vertex": "/v1/projects/team-project-1/locations/europe-west4/publishers/google/models/"
                             "text-embedding-005:predict",
                   "gemini": "/v1beta/models/text-embedding-004:embedContent"}


@pytest.mark.parametrize("provider", sorted(EMBEDDING_MODELS))
def test_each_providers_embeddings_serve_similar(fake_judge, tmp_path, provider):
    embeddings = tier(fake_judge, provider, **EMBEDDING_MODELS[provider])
    config = judge_config(tmp_path, replace(embeddings, provider="openai", model="unused"), embeddings=embeddings)
    service = JudgeService.from_config(config, environ=ENV)
    close = "Order 1042 is delayed and should now arrive on 3 December."
    outcome = evaluate(similar(), context(service, close))
    assert outcome.status == "passed", outcome.reason
    assert outcome.score == pytest.approx(expected_cosine(REFERENCE, close), abs=1e-4)
    assert {c.path for c in fake_judge.calls()} == {EMBEDDING_PATHS[provider]}
    assert outcome.judge.tiers[0].provider == provider


def test_importing_litmus_and_its_judges_loads_no_cloud_library():
    # They are imported only when a bedrock or vertex tier is set up: every other run keeps its start-up time.
    code = ("import sys, litmus.cli, litmus.pipeline, litmus.judges.service, litmus.judges.embeddings; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('botocore', 'boto3', 'google', 'openai')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_cloud_providers_serve_as_escalation_tier_and_simulator(fake_judge, tmp_path):
    # Tier 1 on Gemini scores inside the band, tier 2 on Bedrock decides; the simulated user plays on Vertex.
    fake_judge.when("Order 1042", score=78)
    fake_judge.play_user(["Where is order 1042?"])
    config = judge_config(tmp_path, tier(fake_judge, "gemini"),
                          escalation=EscalationConfig(band=10, to=tier(fake_judge, "bedrock")),
                          simulator=tier(fake_judge, "vertex"))
    service = JudgeService.from_config(config, environ=ENV)
    outcome = evaluate(assertion(), context(service, "Order 1042 is delayed."))
    assert outcome.judge.escalated and [t.provider for t in outcome.judge.tiers] == ["gemini", "bedrock"]
    turn = service.simulate_turn("a customer", "find order 1042", [], turn=1)
    assert (turn.message, turn.done) == ("Where is order 1042?", False)
    assert [c.path.split("/")[1] for c in fake_judge.calls()] == ["v1beta", "model", "v1"]


def test_vertex_access_token_issued_during_the_run_is_masked_in_results_json(fake_judge, tmp_path, target):
    """The token google-auth obtains mid-run is no variable the run knew to mask: a judge error that echoes the
    Authorization header must still show `***`, in results.json and in what the run prints."""
    fake_judge.google_token = "ya29.issued-during-the-run-0123456789"
    fake_judge.when(status=400, error="Request refused", echo_authorization=True)
    project = tmp_path / "repo"
    (project / "probes").mkdir(parents=True)
    (project / "probes" / "judged.yaml").write_text(JUDGED_SUITE)
    (project / "litmus.yaml").write_text(
        f"judge:\n  provider: vertex\n  model: gemini-2.0-flash-001\n  base_url: {fake_judge.base_url}\n"
        "  project: team-project-1\n  location: europe-west4\n  retries: 0\n")
    target.text("/answer", "Your order arrives on Friday.")
    done = litmus(project, "run", "--base-url", target.base_url, "--out", "out",
                  env={"GOOGLE_APPLICATION_CREDENTIALS": str(service_account(fake_judge, tmp_path))})
    assert [c.path for c in fake_judge.calls()][0] == "/token"
    text = (project / "out" / "results.json").read_text("utf-8")
    outcome = json.loads(text)["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][0]
    assert outcome["status"] == "error", done.stdout + done.stderr
    assert "Request refused (Authorization: Bearer ***)" in outcome["reason"]
    assert fake_judge.google_token not in text + done.stdout + done.stderr
    assert fake_judge.google_token not in "".join(path.read_text("utf-8") for path in (project / "out").glob("*.*")
                                                 if path.suffix in (".md", ".html", ".xml", ".sarif"))
