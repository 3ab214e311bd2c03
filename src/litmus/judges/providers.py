"""Judge providers over `litmus.net`'s session: OpenAI-compatible chat completions and Anthropic Messages.

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
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

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
                 pool_size: int):
        self.name = tier.provider
        self.model = tier.model
        self.base_url = tier.base_url or ""
        self._api_key = api_key
        self._timeout_s = timeout_ms / 1000
        retry = net.Retry(
            total=retries, connect=retries, read=min(1, retries), status=retries, other=0,
            allowed_methods=None,  # retry POST too: a judge call has no side effects
            status_forcelist=RETRIED_STATUSES, respect_retry_after_header=True, raise_on_status=False,
            backoff_factor=BACKOFF_FACTOR_S, backoff_jitter=JITTER_S, backoff_max=MAX_WAIT_S,
            retry_after_max=MAX_WAIT_S,
        )
        self._session = net.Session(net.Adapter(max_retries=retry, pool_connections=1, pool_maxsize=pool_size))

    def close(self) -> None:
        self._session.close()

    def _post(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        try:
            # Never followed: a redirect would carry the API key (and the prompt) to wherever it points.
            reply = self._session.post(url, json=body, headers=headers, timeout=self._timeout_s,
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
                 max_tokens: int, pool_size: int):
        super().__init__(tier, api_key, timeout_ms=timeout_ms, retries=retries, pool_size=pool_size)
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
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        while True:
            body = {"model": self.model, "messages": prompt.messages, **self.parameters}
            for name in self._unsupported:
                body.pop(name, None)
            try:
                data = self._post(f"{self.base_url}/chat/completions", headers, body)
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


PROVIDER_CLASSES = {"openai": OpenAIProvider, "anthropic": AnthropicProvider}
