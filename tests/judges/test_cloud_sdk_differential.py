"""Differential: each cloud's official SDK and Litmus send the same judge request to the same fake on 127.0.0.1
(boto3's converse, openai's AzureOpenAI, google-genai for Gemini and Vertex AI): the same path, query, auth
headers (by name; for SigV4 the algorithm, credential scope and signed-header list) and JSON body. The fake
checks both requests' auth, so each side is also a valid request."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest
from test_cloud_providers import MODEL_ID, tier

from litmus.judges.prompts import Prompt
from litmus.judges.providers import PROVIDER_CLASSES, SEED
from support.fake_judge import API_KEY, AWS_CREDENTIALS, AWS_ENV, AZURE_API_VERSION, GOOGLE_TOKEN

PROMPT = Prompt(kind="llm_rubric", system="You grade replies; answer with JSON only.",
                user='Rubric: says when the order arrives.\nReply: "Tomorrow, before noon."', summary="differential",
                version="1")
MAX_TOKENS = 1024
AUTH_HEADERS = ("authorization", "api-key", "x-goog-api-key", "x-amz-security-token", "x-amz-date")


def litmus_request(fake, provider: str):
    client = PROVIDER_CLASSES[provider](tier(fake, provider), API_KEY if provider != "vertex" else GOOGLE_TOKEN,
                                        timeout_ms=10_000, retries=0, max_tokens=MAX_TOKENS, pool_size=1,
                                        environ=AWS_ENV)
    completion = client.complete(PROMPT)
    assert completion.text and completion.input_tokens > 0 and completion.output_tokens > 0
    return only_call(fake)


def only_call(fake):
    [call] = fake.calls()
    fake.received.clear()
    return call


def shape(call) -> dict:
    """What must be the same: path, query, the names of the auth headers, SigV4's scheme, the body as JSON."""
    authorization = call.headers.get("authorization", "")
    if authorization.startswith("AWS4-HMAC-SHA256"):
        scope = authorization.split("Credential=")[1].split(",")[0].split("/", 2)[2]  # region/service/aws4_request
        signed = authorization.split("SignedHeaders=")[1].split(",")[0]
        authorization = ("AWS4-HMAC-SHA256", scope, signed)
    elif authorization:
        authorization = authorization.split(" ")[0]  # Bearer
    return {"path": call.path, "query": parse_qs(call.query), "auth": sorted(h for h in AUTH_HEADERS if h in
                                                                            call.headers),
            "authorization": authorization, "body": json.loads(call.raw)}


def test_azure_openai_matches_the_openai_sdks_azure_client(fake_judge):
    from openai import AzureOpenAI

    ours = litmus_request(fake_judge, "azure_openai")
    sdk = AzureOpenAI(azure_endpoint=fake_judge.base_url, azure_deployment="judge-deploy", api_key=API_KEY,
                      api_version=AZURE_API_VERSION, max_retries=0)
    sdk.chat.completions.create(model="gpt-4o-mini", messages=PROMPT.messages, temperature=0, max_tokens=MAX_TOKENS,
                                response_format={"type": "json_object"}, seed=SEED)
    assert shape(ours) == shape(only_call(fake_judge))


def test_bedrock_matches_boto3_converse(fake_judge):
    import boto3
    from botocore.config import Config

    ours = litmus_request(fake_judge, "bedrock")
    sdk = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=fake_judge.base_url,
                       aws_access_key_id=AWS_CREDENTIALS[0], aws_secret_access_key=AWS_CREDENTIALS[1],
                       aws_session_token=AWS_CREDENTIALS[2], config=Config(retries={"total_max_attempts": 1}))
    reply = sdk.converse(modelId=MODEL_ID, messages=[{"role": "user", "content": [{"text": PROMPT.user}]}],
                         system=[{"text": PROMPT.system}], inferenceConfig={"maxTokens": MAX_TOKENS, "temperature": 0})
    assert reply["output"]["message"]["content"][0]["text"]  # the fake accepted boto3's signature too
    theirs = only_call(fake_judge)
    # botocore also signs its own SDK headers (amz-sdk-invocation-id, amz-sdk-request): not a judge's concern.
    sdk_only = {"amz-sdk-invocation-id", "amz-sdk-request"}
    expected = shape(theirs)
    algorithm, scope, signed = expected["authorization"]
    expected["authorization"] = (algorithm, scope, ";".join(h for h in signed.split(";") if h not in sdk_only))
    assert shape(ours) == expected
    assert ours.path == theirs.path == "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse"


@pytest.mark.parametrize("provider", ["gemini", "vertex"])
def test_gemini_and_vertex_match_google_genai(fake_judge, provider):
    from google import genai
    from google.genai import types
    from google.oauth2.credentials import Credentials

    ours = litmus_request(fake_judge, provider)
    if provider == "gemini":
        # The contract's v1beta (this SDK defaults to v1, where generateContent has the same shape).
        sdk = genai.Client(api_key=API_KEY, http_options=types.HttpOptions(base_url=fake_judge.base_url,
                                                                           api_version="v1beta"))
        model = "gemini-2.0-flash"
    else:  # Vertex's GA API version (the SDK's default is v1beta1)
        sdk = genai.Client(vertexai=True, project="team-project-1", location="europe-west4",
                           credentials=Credentials(token=GOOGLE_TOKEN),
                           http_options=types.HttpOptions(base_url=fake_judge.base_url, api_version="v1"))
        model = "gemini-2.0-flash-001"
    sdk.models.generate_content(model=model, contents=PROMPT.user, config=types.GenerateContentConfig(
        system_instruction=PROMPT.system, temperature=0, max_output_tokens=MAX_TOKENS,
        response_mime_type="application/json", seed=SEED))
    assert shape(ours) == shape(only_call(fake_judge))
