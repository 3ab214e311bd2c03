"""Judge providers over `litmus.net`'s session: OpenAI-compatible chat completions, Anthropic Messages, Azure
OpenAI, Bedrock Converse, and Gemini `generateContent` on Vertex AI and the Generative Language API.

Bedrock's SigV4 signature comes from botocore and Vertex's application-default credentials from google-auth:
optional extras (`litmus-lab[bedrock]`, `litmus-lab[vertex]`), imported only when such a tier is set up, so
`import litmus` never pays for them and a missing one is an error naming the extra.

Retries are urllib3's `Retry` mounted on the session: 429 and 5xx are retried, honouring
`Retry-After` (capped), else exponential backoff with jitter (capped); connection errors are
retried, a timed-out read once. So one call takes at most about
`(retries + 2) * timeout + retries * max_wait`; a retried reply is closed unread (`net.Retry`). Every
failure becomes a `ProviderError` whose message is the provider's own, with the API key replaced by
`***`; a judge that cannot be reached at all says so in one line ("judge unreachable: connection
refused at http://127.0.0.1:9/v1"), never as urllib3's nested exception text. A reply is read at most `MAX_REPLY_BYTES`.
"""

from __future__ import annotations

import errno
import json
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import requests
from urllib3.exceptions import (
    ConnectTimeoutError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)

from litmus import net
from litmus.config import ProviderConfig
from litmus.judges.prompts import Prompt

ANTHROPIC_VERSION = "2023-06-01"
# The longest wait between two attempts, whatever Retry-After or the backoff says.
MAX_WAIT_S = 20.0
BACKOFF_FACTOR_S = 0.5
JITTER_S = 0.5
SEED = 7
RETRIED_STATUSES = (429, 500, 502, 503, 504, 529)
# A reply body is read at most this far: room for a verdict of verdict.MAX_REPLY_BYTES however its JSON
# escapes it, and for an embedding of thousands of dimensions; a larger reply is an error, read no further.
MAX_REPLY_BYTES = 4 * 1024 * 1024
# Bedrock's SigV4 signing name (the endpoint's host says bedrock-runtime, the credential scope says bedrock).
BEDROCK_SIGNING_NAME = "bedrock"
# The OAuth scope of Vertex AI's application-default credentials.
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# A model id goes into the path as one segment: what Google's and AWS's SDKs leave unescaped stays so.
PATH_SAFE = "-._~"


class JudgeConfigError(ValueError):
    """The judge cannot be set up (e.g. its API key variable is not set, an extra is missing); the message says
    what to set or install."""


class ProviderError(Exception):
    """A judge call that produced no reply; the message is safe to show (key redacted)."""

    def __init__(self, message: str, status: int | None = None, *, unreachable: bool = False):
        super().__init__(message)
        self.status = status
        # No connection could be made (refused, unresolved, closed before replying), after the retries.
        self.unreachable = unreachable


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0


class HTTPTransport:
    """The transport shared by the API clients (judges, embeddings): session, retries, timeouts, errors."""

    def __init__(self, tier: ProviderConfig, api_key: str | None, *, timeout_ms: float, retries: int,
                 pool_size: int, environ: Mapping[str, str] = os.environ):
        self.name = tier.provider
        self.model = tier.model
        self.base_url = tier.base_url or ""
        self.tier = tier
        # The tier's credential (an API key or an access token), read from the variable the tier names.
        self._api_key = api_key
        self._environ = environ
        self._timeout_s = timeout_ms / 1000
        retry = net.Retry(
            total=retries, connect=retries, read=min(1, retries), status=retries, other=0,
            allowed_methods=None,  # retry POST too: a judge call has no side effects
            status_forcelist=RETRIED_STATUSES, respect_retry_after_header=True, raise_on_status=False,
            backoff_factor=BACKOFF_FACTOR_S, backoff_jitter=JITTER_S, backoff_max=MAX_WAIT_S,
            retry_after_max=MAX_WAIT_S,
        )
        self._session = net.Session(net.Adapter(max_retries=retry, pool_connections=1, pool_maxsize=pool_size))
        # Told each credential the client obtains itself during the run (a refreshed Vertex access token), so that
        # the run masks it like an API key; the judge service sets it.
        self.on_credential: Callable[[str], None] = lambda value: None

    def close(self) -> None:
        self._session.close()

    def _url(self, operation: str) -> str:
        """The URL of an API operation (OpenAI-compatible: under the base URL, unless a provider says otherwise)."""
        return f"{self.base_url}/{operation}"

    def _headers(self) -> dict[str, str]:
        """The authentication headers of a call (the OpenAI-compatible bearer key unless a provider says otherwise)."""
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _signed(self, url: str, headers: dict[str, str], data: bytes) -> dict[str, str]:
        """The headers with whatever signs the exact request (Bedrock's SigV4); as they are by default."""
        return headers

    def _post(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(body, allow_nan=False).encode()
        try:
            headers = self._signed(url, {"Content-Type": "application/json", **headers}, data)
            # Never followed: a redirect would carry the API key (and the prompt) to wherever it points.
            reply = self._session.post(url, data=data, headers=headers, timeout=self._timeout_s,
                                       allow_redirects=False)
        except requests.exceptions.RetryError as exc:
            raise self._error(f"gave up after retries: {exc}") from None
        except requests.exceptions.ConnectionError as exc:
            if why := _unreachable(exc):
                raise ProviderError(self._redacted(f"judge unreachable: {why} at {self.base_url} "
                                                   f"({self.name}:{self.model})"), unreachable=True) from None
            if _timed_out(exc):  # a timeout that was retried surfaces as a ConnectionError
                raise self._error(f"no reply within {self._timeout_s:g} s (timeout)") from None
            raise self._error(f"request failed: {exc}") from None
        except requests.exceptions.Timeout:
            raise self._error(f"no reply within {self._timeout_s:g} s (timeout)") from None
        except requests.exceptions.RequestException as exc:
            raise self._error(f"request failed: {exc}") from None
        try:
            body = net.read_capped(reply, MAX_REPLY_BYTES)
        except requests.exceptions.RequestException as exc:
            raise self._error(f"reply not read: {exc}", status=reply.status_code) from None
        text = body.decode("utf-8", errors="replace")
        if reply.status_code >= 300:  # 3xx included: redirects are not followed
            raise self._error(f"HTTP {reply.status_code}: {_provider_message(text, reply.reason)}",
                              status=reply.status_code)
        try:
            data = json.loads(text)
        except ValueError:
            raise self._error(f"reply is not JSON: {text[:200]!r}") from None
        if not isinstance(data, dict):
            raise self._error(f"unexpected reply: {text[:200]!r}")
        return data

    def _error(self, message: str, status: int | None = None) -> ProviderError:
        return ProviderError(self._redacted(f"{self.name}:{self.model}: {message}"), status)

    def _redacted(self, message: str) -> str:
        return message.replace(self._api_key, "***") if self._api_key else message


class HTTPProvider(HTTPTransport, ABC):
    """A judge over HTTP: a prompt in, a reply out."""

    def __init__(self, tier: ProviderConfig, api_key: str | None, *, timeout_ms: float, retries: int,
                 max_tokens: int, pool_size: int, environ: Mapping[str, str] = os.environ):
        super().__init__(tier, api_key, timeout_ms=timeout_ms, retries=retries, pool_size=pool_size, environ=environ)
        self.max_tokens = max_tokens

    @property
    def parameters(self) -> dict[str, Any]:
        """What, besides the messages, decides the reply: part of the cache key."""
        return {"temperature": 0, "max_tokens": self.max_tokens}

    @abstractmethod
    def complete(self, prompt: Prompt) -> Completion:
        """Send the prompt in this provider's wire format and return its reply."""


class OpenAIProvider(HTTPProvider):
    """Any OpenAI-compatible `POST {base_url}/chat/completions` (OpenAI, Azure-style proxies, vLLM,
    Ollama, LiteLLM...). JSON mode and a seed are requested; a server that rejects either with a 400
    naming it gets the call again without it, and never again during this run."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._unsupported: set[str] = set()

    @property
    def parameters(self) -> dict[str, Any]:
        return {**super().parameters, "response_format": {"type": "json_object"}, "seed": SEED}

    def complete(self, prompt: Prompt) -> Completion:
        headers = self._headers()
        while True:
            body = {"model": self.model, "messages": prompt.messages, **self.parameters}
            for name in self._unsupported:
                body.pop(name, None)
            try:
                data = self._post(self._url("chat/completions"), headers, body)
                break
            except ProviderError as exc:
                rejected = [n for n in ("response_format", "seed") if n in body and n in str(exc)]
                if exc.status != 400 or not rejected:
                    raise
                self._unsupported.update(rejected)
        try:
            text = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise self._error(f"no choices[0].message.content in reply: {json.dumps(data)[:200]}") from None
        usage = data.get("usage") or {}
        return Completion(text or "", int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))


class AnthropicProvider(HTTPProvider):
    """Anthropic `POST {base_url}/v1/messages` with `x-api-key` and `anthropic-version`."""

    def complete(self, prompt: Prompt) -> Completion:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        body = {
            "model": self.model, "system": prompt.system,
            "messages": [{"role": "user", "content": prompt.user}], **self.parameters,
        }
        data = self._post(f"{self.base_url}/v1/messages", headers, body)
        content = data.get("content")
        if not isinstance(content, list):
            raise self._error(f"no content in reply: {json.dumps(data)[:200]}")
        texts = [part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"]
        text = "".join(texts)
        usage = data.get("usage") or {}
        return Completion(text, int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))


class AzureEndpoint:
    """Azure OpenAI's endpoint and auth, shared by chat and embeddings: `{resource}/openai/deployments/{deployment}/
    {operation}?api-version=...`, the key in `api-key`, or an Entra access token as a bearer token."""

    def _url(self, operation: str) -> str:
        tier = self.tier
        return f"{self.base_url}/openai/deployments/{tier.deployment}/{operation}?api-version={tier.api_version}"

    def _headers(self) -> dict[str, str]:
        if self.tier.token_env:
            return {"Authorization": f"Bearer {self._api_key}"}
        return {"api-key": self._api_key or ""}


class AzureOpenAIProvider(AzureEndpoint, OpenAIProvider):
    """Azure OpenAI chat completions: the OpenAI wire format on a deployment of the team's own resource."""


class BedrockSigning:
    """SigV4 by botocore, with the AWS credentials of the standard environment variables (AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN): read from the real environment, never through a template."""

    def _load_credentials(self) -> None:
        try:
            from botocore.auth import SigV4Auth  # lazy: the bedrock extra
            from botocore.awsrequest import AWSRequest  # lazy: the bedrock extra
            from botocore.credentials import EnvProvider  # lazy: the bedrock extra
        except ImportError:
            raise JudgeConfigError(f"the {self.name} provider needs botocore: pip install 'litmus-lab[bedrock]'") \
                from None
        credentials = EnvProvider(environ=self._environ).load()
        if credentials is None:
            raise JudgeConfigError(f"the {self.name} provider needs AWS credentials in the environment variables "
                                   "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary "
                                   "ones), which are not set")
        self._aws_request = AWSRequest
        self._signer = SigV4Auth(credentials, BEDROCK_SIGNING_NAME, self.tier.region)
        frozen = credentials.get_frozen_credentials()
        # Masked by the run like any API key (the secret never leaves; the session token is a header).
        self.credential_values = {name: value for name, value in (("AWS_SECRET_ACCESS_KEY", frozen.secret_key),
                                                                  ("AWS_SESSION_TOKEN", frozen.token)) if value}

    def _headers(self) -> dict[str, str]:
        return {}

    def _signed(self, url: str, headers: dict[str, str], data: bytes) -> dict[str, str]:
        request = self._aws_request(method="POST", url=url, data=data, headers=headers)
        self._signer.add_auth(request)  # signs the time of this attempt: a retry is within SigV4's 5 minutes
        return dict(request.headers.items())

    def _model_url(self, action: str) -> str:
        return f"{self.base_url}/model/{quote(self.model, safe=PATH_SAFE)}/{action}"


class BedrockProvider(BedrockSigning, HTTPProvider):
    """Bedrock's Converse API, `POST /model/{modelId}/converse`: one API for every model Bedrock serves (it has no
    JSON-output switch; the judge prompt asks for JSON)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_credentials()

    def complete(self, prompt: Prompt) -> Completion:
        body = {
            "messages": [{"role": "user", "content": [{"text": prompt.user}]}],
            "system": [{"text": prompt.system}],
            "inferenceConfig": {"maxTokens": self.max_tokens, "temperature": 0},
        }
        data = self._post(self._model_url("converse"), {}, body)
        try:
            content = data["output"]["message"]["content"]
            text = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        except (KeyError, TypeError, AttributeError):
            raise self._error(f"no output.message.content in reply: {json.dumps(data)[:200]}") from None
        usage = data.get("usage") or {}
        return Completion(text, int(usage.get("inputTokens") or 0), int(usage.get("outputTokens") or 0))


class GoogleEndpoint:
    """The endpoints and auth of Gemini models: the Generative Language API (`/v1beta/models/{model}:{method}`, the key
    in `x-goog-api-key`, never in the URL) and Vertex AI (`/v1/projects/{project}/locations/{location}/publishers/
    google/models/{model}:{method}`, an OAuth access token from `token_env`, else application-default credentials)."""

    def _set_up_credentials(self) -> None:
        self._google_credentials = None
        if self.name != "vertex" or self.tier.token_env:
            return
        try:
            import google.auth  # lazy: the vertex extra
            from google.auth.exceptions import DefaultCredentialsError  # lazy: the vertex extra
            from google.auth.transport.requests import Request  # lazy: the vertex extra
        except ImportError:
            raise JudgeConfigError(f"the {self.name} provider needs google-auth for application-default "
                                   "credentials: pip install 'litmus-lab[vertex]' (or set judge.token_env)") from None
        try:
            self._google_credentials, _ = google.auth.default(scopes=[CLOUD_PLATFORM_SCOPE])
        except DefaultCredentialsError as exc:
            raise JudgeConfigError(f"the {self.name} provider found no application-default credentials ({exc}); "
                                   "set GOOGLE_APPLICATION_CREDENTIALS or judge.token_env") from None
        # The token endpoint is called through Litmus's own session (its outbound policy, no redirects).
        self._token_request = Request(session=self._session)
        self._token_lock = threading.Lock()

    def _google_url(self, method: str) -> str:
        # Google's docs and SDKs name models both ways ("gemini-2.0-flash", "models/gemini-2.0-flash").
        model = quote(self.model.removeprefix("models/"), safe=PATH_SAFE)
        if self.name == "gemini":
            return f"{self.base_url}/v1beta/models/{model}:{method}"
        tier = self.tier
        return (f"{self.base_url}/v1/projects/{tier.project}/locations/{tier.location}/publishers/google/models/"
                f"{model}:{method}")

    def _headers(self) -> dict[str, str]:
        if self.name == "gemini":
            return {"x-goog-api-key": self._api_key or ""}
        return {"Authorization": f"Bearer {self._access_token()}"}

    def _access_token(self) -> str:
        if self._google_credentials is None:
            return self._api_key or ""
        from google.auth.exceptions import GoogleAuthError  # lazy: the vertex extra, loaded with the credentials

        with self._token_lock:  # one refresh for the calls in flight
            if not self._google_credentials.valid:
                try:
                    self._google_credentials.refresh(self._token_request)
                except GoogleAuthError as exc:
                    raise self._error(f"no access token from the application-default credentials: {exc}") from None
                # Masked before it is sent: an error body that echoes the Authorization header cannot show it.
                self.on_credential(self._google_credentials.token)
            return self._google_credentials.token


class GeminiProvider(GoogleEndpoint, HTTPProvider):
    """Gemini `generateContent` (Vertex AI or the Generative Language API): the system prompt as
    `systemInstruction`, JSON output requested with `responseMimeType`."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._set_up_credentials()

    @property
    def parameters(self) -> dict[str, Any]:
        return {**super().parameters, "response_mime_type": "application/json", "seed": SEED}

    def complete(self, prompt: Prompt) -> Completion:
        body = {
            "contents": [{"parts": [{"text": prompt.user}], "role": "user"}],
            "systemInstruction": {"parts": [{"text": prompt.system}], "role": "user"},
            "generationConfig": {"temperature": 0, "maxOutputTokens": self.max_tokens,
                                 "responseMimeType": "application/json", "seed": SEED},
        }
        data = self._post(self._google_url("generateContent"), self._headers(), body)
        try:
            parts = data["candidates"][0]["content"]["parts"]
            text = "".join(part.get("text", "") for part in parts if isinstance(part, dict))
        except (KeyError, IndexError, TypeError, AttributeError):
            blocked = (data.get("promptFeedback") or {}).get("blockReason")
            why = f"the prompt was blocked ({blocked})" if blocked else f"no candidates[0].content.parts in reply: " \
                                                                         f"{json.dumps(data)[:200]}"
            raise self._error(why) from None
        usage = data.get("usageMetadata") or {}
        return Completion(text, int(usage.get("promptTokenCount") or 0), int(usage.get("candidatesTokenCount") or 0))


def _unreachable(exc: requests.RequestException) -> str | None:
    """Why no connection to the judge could be made, in a few words; None when one was made."""
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    reason = reason or (exc.args[0] if exc.args else None)
    if isinstance(reason, NameResolutionError):
        return "host name not resolved"
    if isinstance(reason, NewConnectionError):
        # NewConnectionError subclasses ConnectTimeoutError in urllib3 2: check it first.
        code = getattr(reason.__cause__, "errno", None)
        return {errno.ECONNREFUSED: "connection refused", errno.EHOSTUNREACH: "host unreachable",
                errno.ENETUNREACH: "network unreachable"}.get(code, "no connection could be made")
    if isinstance(reason, ConnectTimeoutError):
        return "connection timed out"
    if isinstance(reason, (ProtocolError, ConnectionResetError, ConnectionAbortedError)):
        return "connection closed without a reply"
    return None


def _timed_out(exc: requests.RequestException) -> bool:
    """Whether urllib3 gave up on a read timeout (requests wraps it in a ConnectionError after retries)."""
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, ReadTimeoutError)


def _provider_message(text: str, reason: str | None) -> str:
    """The provider's own error message: `error.message` in both APIs' error bodies, else the text."""
    try:
        data = json.loads(text)
        error = data.get("error") if isinstance(data, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message)[:500]
    except ValueError:
        pass
    return text[:500] or reason or "no message"


PROVIDER_CLASSES = {"openai": OpenAIProvider, "anthropic": AnthropicProvider, "azure_openai": AzureOpenAIProvider,
                    "bedrock": BedrockProvider, "vertex": GeminiProvider, "gemini": GeminiProvider}
