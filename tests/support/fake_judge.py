"""A fake LLM judge on 127.0.0.1 speaking the real wire formats, scripted per test.

`POST /v1/chat/completions` answers like OpenAI's chat-completions API (bearer key checked);
`POST /v1/messages` like Anthropic's Messages API (`x-api-key` and `anthropic-version` checked).
Errors use each API's documented error body. Every request is recorded (path, headers, JSON body,
arrival time) so tests can check exactly what a provider sent and how often.

Script it with rules, first match wins: `judge.when("Order 1042", score=90)` answers prompts
containing that text; `times=1` makes a rule single-use (a 429 and then a verdict); `text=` sends
any raw content (garbage, a fenced block); `status=` an HTTP error; `delay=` slows the answer;
`echo_authorization=True` makes the error's message end with the request's Authorization header, as some
gateways echo the request they refused.
Unmatched prompts get `judge.default` (a score of 90 unless changed). `decide=` computes the reply
from the prompt it was sent (a judge that reads the transcript, not one scripted on a needle).

`judge.play_user([...])` makes it also play the simulated user of `simulate:` steps: the prompt's
turn N gets the N-th message, and `{"done": true}` after the last. `judge.connections` counts the TCP
connections accepted, so a test can prove that a replayed run made none.

`POST /v1/embeddings` answers like OpenAI's embeddings API with `embedding(text)`: a deterministic
bag-of-words vector, so texts sharing most words are close (cosine near 1) and unrelated ones are not.

The team-cloud providers, each checking its auth for real (a wrong credential is refused, as the cloud does):
- Azure OpenAI, `/openai/deployments/{deployment}/chat/completions|embeddings?api-version=V`: the key in `api-key`
  or `azure_token` as a bearer token; an api-version other than `azure_api_version` is a 404, as on Azure.
- Bedrock, `/model/{modelId}/converse|invoke`: the SigV4 signature is computed again with botocore from the
  signed headers received and `AWS_CREDENTIALS`, and must match; a signature older than 5 minutes is refused;
  a Converse body must validate against botocore's bedrock-runtime service model.
- Vertex AI, `/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent|predict`: a bearer
  token the fake issued at `POST /token` (a service account's JWT grant, whose RS256 signature it verifies
  with `service_account_key`), or `google_token`.
- Gemini, `/v1beta/models/{m}:generateContent|embedContent`: the key in `x-goog-api-key`; a key in the URL is
  refused.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote

from support.server import LocalServer

API_KEY = "sk-test-fake-judge-key-0123456789"
EMBEDDING_SIZE = 64
# What the simulated user's prompt starts with (litmus.judges.prompts.SIMULATOR_SYSTEM), and how it asks for a turn.
SIMULATOR_PROMPT = "You play the user of a chat assistant"
SIMULATOR_TURN = re.compile(r"Write your message of turn (\d+)")
AZURE_API_VERSION = "2024-10-21"
# (access key id, secret access key, session token) the Bedrock routes accept.
AWS_CREDENTIALS = ("AKIDFAKEJUDGE0000001", "fake/secret/access/key/0123456789abcdefghij", "fake-session-token-42")
AWS_ENV = dict(zip(("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"), AWS_CREDENTIALS, strict=True))
GOOGLE_TOKEN = "ya29.fake-judge-access-token"
# A service account's JWT grant names Google's token endpoint as its audience, wherever token_uri points.
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"
SIGV4 = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                   r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})")


def embedding(text: str) -> list[float]:
    """Each lower-cased word adds 1 to a bucket chosen by its hash; the vector is normalized."""
    vector = [0.0] * EMBEDDING_SIZE
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % EMBEDDING_SIZE] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [round(x / norm, 6) for x in vector]


@dataclass
class Rule:
    contains: str | None = None
    score: float | None = 90
    reason: str = "looks right"
    mismatches: list[dict] = field(default_factory=list)
    text: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: str = "scripted error"
    echo_authorization: bool = False
    delay: float = 0.0
    times: int | None = None
    decide: Callable[[str], str] | None = None

    def content(self, prompt: str) -> str:
        if self.decide is not None:
            return self.decide(prompt)
        if self.text is not None:
            return self.text
        return json.dumps({"score": self.score, "reason": self.reason, "mismatches": self.mismatches})


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float
    query: str = ""
    raw: bytes = b""

    @property
    def prompt(self) -> str:
        """Everything the judge was told: system and user text, in any of the wire formats."""
        body = self.body
        parts = [body.get("system") if isinstance(body.get("system"), str) else ""]
        for message in body.get("messages", []):  # OpenAI and Anthropic: strings; Bedrock: content blocks
            content = message.get("content", "")
            parts += [content] if isinstance(content, str) else [block.get("text", "") for block in content]
        parts += [block.get("text", "") for block in body.get("system", []) if isinstance(block, dict)]
        for content in [body.get("systemInstruction") or {}, *body.get("contents", [])]:  # Gemini
            parts += [part.get("text", "") for part in content.get("parts", [])]
        return "\n".join(p for p in parts if isinstance(p, str))


class FakeJudge(LocalServer):
    def __init__(self, api_key: str = API_KEY, json_mode: bool = True):
        self.api_key = api_key
        self.azure_api_version = AZURE_API_VERSION
        self.azure_token: str | None = None
        self.google_token = GOOGLE_TOKEN
        # The public key of the service account whose JWT grants `POST /token` accepts (set by the test).
        self.service_account_key = None
        self.service_account_email: str | None = None
        # False: reject `response_format` with a 400 like servers without JSON mode.
        self.json_mode = json_mode
        self.rules: list[Rule] = []
        self.default = Rule()
        self.received: list[Received] = []
        self.connections = 0
        self._lock = threading.Lock()
        super().__init__(_handler(self))

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    def when(self, contains: str | None = None, **reply) -> FakeJudge:
        with self._lock:
            self.rules.append(Rule(contains=contains, **reply))
        return self

    def play_user(self, messages: list[str]) -> FakeJudge:
        """Answer the simulated user's prompts: turn N says messages[N-1]; past the last, done."""

        def turn(prompt: str) -> str:
            number = int(SIMULATOR_TURN.search(prompt).group(1))
            if number > len(messages):
                return json.dumps({"message": "", "done": True})
            return json.dumps({"message": messages[number - 1], "done": False})

        return self.when(SIMULATOR_PROMPT, decide=turn)

    def calls(self, path: str | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.received if path is None or r.path == path]

    def _rule_for(self, prompt: str) -> Rule:
        with self._lock:
            for rule in self.rules:
                if rule.times == 0 or (rule.contains is not None and rule.contains not in prompt):
                    continue
                if rule.times is not None:
                    rule.times -= 1
                return rule
            return self.default

    def _record(self, received: Received) -> None:
        with self._lock:
            self.received.append(received)


def _handler(judge: FakeJudge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: without TCP_NODELAY, Nagle plus delayed ACKs add ~40 ms.
        disable_nagle_algorithm = True

        def log_message(self, *args) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            with judge._lock:
                judge.connections += 1

        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            path, _, query = self.path.partition("?")
            received = Received(path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic(),
                                query, raw)
            judge._record(received)
            if path == "/v1/chat/completions":
                self._openai(received)
            elif path == "/v1/messages":
                self._anthropic(received)
            elif path == "/v1/embeddings":
                self._embeddings(received)
            elif match := re.fullmatch(r"/openai/deployments/[^/]+/(chat/completions|embeddings)", path):
                self._azure(received, match.group(1))
            elif match := re.fullmatch(r"/model/([^/]+)/(converse|invoke)", path):
                self._bedrock(received, unquote(match.group(1)), match.group(2))
            elif match := re.fullmatch(r"/v1/projects/[^/]+/locations/[^/]+/publishers/google/models/[^/:]+:(\w+)",
                                       path):
                self._google(received, match.group(1), vertex=True)
            elif match := re.fullmatch(r"/v1beta/models/[^/:]+:(\w+)", path):
                self._google(received, match.group(1), vertex=False)
            elif path == "/token":
                self._token(received)
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def _azure(self, received: Received, operation: str) -> None:
            if parse_qs(received.query).get("api-version") != [judge.azure_api_version]:
                return self._send(404, {"error": {"code": "404", "message": "Resource not found"}})
            key, bearer = received.headers.get("api-key"), received.headers.get("authorization")
            if not (key == judge.api_key or (judge.azure_token and bearer == f"Bearer {judge.azure_token}")):
                return self._send(401, {"error": {"code": "401", "message": "Access denied due to invalid "
                                                  "subscription key or wrong API endpoint."}})
            if operation == "embeddings":
                return self._embedding_reply(received.body.get("input"), received.body.get("model"))
            self._chat_reply(received)

        def _bedrock(self, received: Received, model_id: str, action: str) -> None:
            refusal = _sigv4_refusal(received, self.path)
            if refusal:
                return self._send(403, {"message": refusal}, {"x-amzn-ErrorType": "InvalidSignatureException"})
            if action == "invoke":  # Amazon Titan text embeddings
                text = received.body.get("inputText")
                if not isinstance(text, str) or not text:
                    return self._send(400, {"message": "inputText is required"})
                return self._send(200, {"embedding": embedding(text), "inputTextTokenCount": max(1, len(text) // 4)})
            invalid = _converse_validation({"modelId": model_id, **received.body})
            if invalid:
                return self._send(400, {"message": invalid}, {"x-amzn-ErrorType": "ValidationException"})
            rule = self._rule(received)
            if rule is None:
                return
            text = rule.content(received.prompt)
            usage = _usage(received.prompt, text, "inputTokens", "outputTokens")
            self._send(200, {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                             "stopReason": "end_turn", "usage": {**usage, "totalTokens": sum(usage.values())},
                             "metrics": {"latencyMs": 1}})

        def _google(self, received: Received, method: str, vertex: bool) -> None:
            if vertex and received.headers.get("authorization") != f"Bearer {judge.google_token}":
                return self._send(401, {"error": {"code": 401, "status": "UNAUTHENTICATED", "message": "Request had "
                                                  "invalid authentication credentials."}})
            if not vertex and ("key" in parse_qs(received.query) or received.headers.get("x-goog-api-key")
                               != judge.api_key):
                return self._send(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT",
                                                  "message": "API key not valid. Please pass a valid API key."}})
            if method == "embedContent":
                parts = (received.body.get("content") or {}).get("parts") or [{}]
                return self._send(200, {"embedding": {"values": embedding(parts[0].get("text") or "")}})
            if method == "predict":
                text = ((received.body.get("instances") or [{}])[0]).get("content") or ""
                return self._send(200, {"predictions": [{"embeddings": {
                    "values": embedding(text), "statistics": {"token_count": max(1, len(text) // 4),
                                                              "truncated": False}}}]})
            if method != "generateContent":
                return self._send(404, {"error": {"code": 404, "message": f"no method {method}"}})
            rule = self._rule(received)
            if rule is None:
                return
            text = rule.content(received.prompt)
            usage = _usage(received.prompt, text, "promptTokenCount", "candidatesTokenCount")
            self._send(200, {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                             "finishReason": "STOP"}],
                             "usageMetadata": {**usage, "totalTokenCount": sum(usage.values())},
                             "modelVersion": "fake"})

        def _token(self, received: Received) -> None:
            """The OAuth token endpoint of a service account: a JWT-bearer grant signed with its private key."""
            form = {k: v[0] for k, v in parse_qs(received.raw.decode()).items()}
            refusal = _jwt_refusal(form, judge)
            if refusal:
                return self._send(400, {"error": "invalid_grant", "error_description": refusal})
            self._send(200, {"access_token": judge.google_token, "expires_in": 3600, "token_type": "Bearer"})

        def _rule(self, received: Received) -> Rule | None:
            """The scripted rule for the prompt, after its delay; None when it answered with its error status."""
            rule = judge._rule_for(received.prompt)
            time.sleep(rule.delay)
            if rule.status != 200:
                echoed = f" (Authorization: {received.headers.get('authorization')})" if rule.echo_authorization else ""
                self._send(rule.status, {"error": {"message": rule.error + echoed}}, rule.headers)
                return None
            return rule

        def _openai(self, received: Received) -> None:
            if received.headers.get("authorization") != f"Bearer {judge.api_key}":
                got = received.headers.get("authorization", "")
                return self._send(401, {"error": {"message": f"Incorrect API key provided: {got[7:]}",
                                                  "type": "invalid_request_error", "code": "invalid_api_key"}})
            if not judge.json_mode and "response_format" in received.body:
                return self._send(400, {"error": {"message": "response_format is not supported by this model",
                                                  "type": "invalid_request_error", "param": "response_format"}})
            self._chat_reply(received)

        def _chat_reply(self, received: Received) -> None:
            rule = judge._rule_for(received.prompt)
            time.sleep(rule.delay)
            if rule.status != 200:
                return self._send(rule.status, {"error": {"message": rule.error, "type": "server_error"}},
                                  rule.headers)
            text = rule.content(received.prompt)
            self._send(200, {
                "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                "model": received.body.get("model"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": _usage(received.prompt, text, "prompt_tokens", "completion_tokens"),
            })

        def _embeddings(self, received: Received) -> None:
            if received.headers.get("authorization") != f"Bearer {judge.api_key}":
                return self._send(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})
            self._embedding_reply(received.body.get("input"), received.body.get("model"))

        def _embedding_reply(self, text: Any, model: Any) -> None:
            if not isinstance(text, str) or not text:
                return self._send(400, {"error": {"message": "'input' must be a non-empty string"}})
            self._send(200, {
                "object": "list", "model": model,
                "data": [{"object": "embedding", "index": 0, "embedding": embedding(text)}],
                "usage": {"prompt_tokens": max(1, len(text) // 4), "total_tokens": max(1, len(text) // 4)},
            })

        def _anthropic(self, received: Received) -> None:
            if received.headers.get("x-api-key") != judge.api_key or not received.headers.get("anthropic-version"):
                return self._send(401, {"type": "error", "error": {"type": "authentication_error",
                                                                   "message": "invalid x-api-key"}})
            rule = judge._rule_for(received.prompt)
            time.sleep(rule.delay)
            if rule.status != 200:
                return self._send(rule.status, {"type": "error", "error": {"type": "api_error",
                                                                           "message": rule.error}}, rule.headers)
            text = rule.content(received.prompt)
            self._send(200, {
                "id": "msg_fake", "type": "message", "role": "assistant", "model": received.body.get("model"),
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": _usage(received.prompt, text, "input_tokens", "output_tokens"),
            })

        def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (a timeout test)

    return Handler


def _usage(prompt: str, text: str, input_name: str, output_name: str) -> dict[str, int]:
    return {input_name: max(1, len(prompt) // 4), output_name: max(1, len(text) // 4)}


def _sigv4_refusal(received: Received, path: str) -> str | None:
    """Why AWS would refuse the request's SigV4 signature: computed again by botocore from the headers it says it
    signed and the fake's credentials, it must match, and be at most 5 minutes old; None when it is valid."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    match = SIGV4.fullmatch(received.headers.get("authorization", ""))
    if match is None:
        return "Missing Authentication Token"
    key_id, day, region, service, signed, signature = match.groups()
    if key_id != AWS_CREDENTIALS[0] or received.headers.get("x-amz-security-token") != AWS_CREDENTIALS[2]:
        return "The security token included in the request is invalid."
    stamp = received.headers.get("x-amz-date", "")
    try:
        at = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
    except ValueError:
        return "no valid X-Amz-Date"
    if abs((datetime.datetime.now(datetime.UTC) - at).total_seconds()) > 300 or not stamp.startswith(day):
        return f"Signature expired: {stamp} is more than 5 minutes from now"
    names = signed.split(";")
    if service != "bedrock" or "host" not in names or any(name not in received.headers for name in names):
        return f"Credential should be scoped to a valid service and sign the host ({service}, {signed})"
    request = AWSRequest(method="POST", url=f"http://{received.headers['host']}{path}", data=received.raw,
                         headers={name: received.headers[name] for name in names})
    request.context["timestamp"] = stamp
    signer = SigV4Auth(Credentials(*AWS_CREDENTIALS), service, region)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    if expected != signature:
        return ("The request signature we calculated does not match the signature you provided. Check your AWS "
                "Secret Access Key and signing method.")
    return None


_CONVERSE_SHAPE: list[Any] = []


def _converse_validation(params: dict[str, Any]) -> str | None:
    """What botocore's validator finds wrong with a Converse request against the bedrock-runtime service model."""
    import botocore.session
    from botocore.validate import ParamValidator

    if not _CONVERSE_SHAPE:
        model = botocore.session.get_session().get_service_model("bedrock-runtime")
        _CONVERSE_SHAPE.append(model.operation_model("Converse").input_shape)
    report = ParamValidator().validate(params, _CONVERSE_SHAPE[0])
    return report.generate_report() if report.has_errors() else None


def _jwt_refusal(form: dict[str, str], judge: FakeJudge) -> str | None:
    """Why Google's token endpoint would refuse this JWT-bearer grant: the RS256 signature is verified with the
    service account's public key, and the claims checked; None when it is valid."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" or judge.service_account_key is None:
        return "unsupported grant"
    try:
        header, payload, signature = form.get("assertion", "").split(".")
        judge.service_account_key.verify(_unbase64(signature), f"{header}.{payload}".encode(), padding.PKCS1v15(),
                                         hashes.SHA256())
        claims = json.loads(_unbase64(payload))
    except (ValueError, InvalidSignature):
        return "Invalid JWT Signature."
    if claims.get("aud") != GOOGLE_TOKEN_AUDIENCE or claims.get("iss") != judge.service_account_email:
        return f"Invalid JWT claims: aud {claims.get('aud')!r}, iss {claims.get('iss')!r}"
    if claims.get("exp", 0) < time.time() or "cloud-platform" not in claims.get("scope", ""):
        return "Invalid JWT: expired or without the cloud-platform scope"
    return None


def _unbase64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
