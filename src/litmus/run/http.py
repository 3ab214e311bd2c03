"""Sending one step's request and reading its response safely.

One `HttpClient` per run holds a pooled `HTTPAdapter` that every flow run's `Session` mounts, so
connections are reused while cookies stay per flow run (they live in the Session, not the adapter).
The body is streamed under two limits: a size cap (decompressed bytes, so a gzip bomb stops at the
cap; the response is marked `truncated`) and a total deadline (a `Watchdog` shuts the socket when a
body trickles past the step's timeout, which per-read socket timeouts alone never catch).
"""

from __future__ import annotations

import codecs
import heapq
import itertools
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from litmus.run.response import Response

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
_CHUNK = 64 * 1024
_CHARSET = re.compile(r"charset\s*=\s*\"?([^\s;\"]+)", re.IGNORECASE)


class TransportError(Exception):
    """The request got no (complete) response. `partial` holds what was received, if anything."""

    def __init__(self, message: str, partial: Response | None = None) -> None:
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True)
class FilePart:
    """A multipart part streamed from a file."""

    path: Path
    filename: str
    content_type: str | None = None


@dataclass
class OutgoingRequest:
    """A rendered request, ready to send.

    `body_file` and the files of `multipart` (name -> FilePart, or (text, content type)) are opened
    for each attempt and streamed from disk, never read whole into memory.
    """

    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    has_json: bool = False
    data: Any = None
    body_file: Path | None = None
    multipart: list[tuple[str, FilePart | tuple[str, str | None]]] | None = None
    timeout_ms: float = 30_000
    follow_redirects: bool = True


class _IdempotentRetry(Retry):
    """urllib3's Retry, but a request whose method is not idempotent is never sent twice."""

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        if error is not None and method and method.upper() not in (self.allowed_methods or ()):
            raise MaxRetryError(_pool, url, error) from error
        return super().increment(method, url, response, error, _pool, _stacktrace)


class HttpClient:
    def __init__(self, *, pool_size: int = 4, transport_retries: int = 0,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        retries: Retry | int = 0
        if transport_retries > 0:
            # Connection failures only: never a retry on a status or after the request was read.
            retries = _IdempotentRetry(
                total=transport_retries, connect=transport_retries, read=0, status=0, other=0,
                redirect=None, backoff_factor=0.1, raise_on_status=False,
            )
        self.adapter = HTTPAdapter(pool_connections=8, pool_maxsize=max(pool_size, 1), max_retries=retries)
        self.max_body_bytes = max_body_bytes
        self.watchdog = Watchdog()
        # Proxy and CA settings from the environment, looked up once per origin rather than per
        # request (requests rescans os.environ and ~/.netrc on every request otherwise).
        self._environment_session = requests.Session()
        self._environment: dict[tuple[str, str], dict[str, Any]] = {}

    def session(self) -> requests.Session:
        """A fresh Session (own cookie jar) on the shared connection pool."""
        session = requests.Session()
        session.trust_env = False  # see _settings
        session.mount("http://", self.adapter)
        session.mount("https://", self.adapter)
        return session

    def close(self) -> None:
        self.adapter.close()

    def prepare(self, session: requests.Session, out: OutgoingRequest) -> requests.PreparedRequest:
        """The request to send; files it streams are open until `send` (or `discard`) closes them."""
        opened: list[Any] = []
        data, headers = out.data, dict(out.headers)
        try:
            if out.body_file is not None:
                data = out.body_file.open("rb")
                opened.append(data)
            elif out.multipart is not None:
                data = _multipart(out.multipart, opened)
                headers["Content-Type"] = data.content_type
            request = requests.Request(
                out.method, out.url, headers=headers, params=out.query,
                json=out.json if out.has_json else None, data=data,
            )
            prepared = session.prepare_request(request)
        except BaseException:
            _close_all(opened)
            raise
        prepared.litmus_opened = opened
        return prepared

    def discard(self, prepared: requests.PreparedRequest) -> None:
        """Close what a prepared request that will not be sent holds open."""
        _close_all(getattr(prepared, "litmus_opened", ()))

    def send(self, session: requests.Session, prepared: requests.PreparedRequest, out: OutgoingRequest) -> Response:
        timeout_s = out.timeout_ms / 1000
        host = (urlsplit(prepared.url).hostname or "").rstrip(".")
        if host == "invalid" or host.endswith(".invalid"):
            # RFC 6761: `.invalid` never resolves. The system resolver would still ask the network
            # (and wait out its timeout when there is none), so answer at once.
            raise TransportError(f"host name not found: {host} is a reserved name that never resolves (RFC 6761)")
        settings = self._settings(prepared.url)
        start = time.perf_counter()
        try:
            resp = session.send(prepared, timeout=timeout_s, allow_redirects=out.follow_redirects, **settings)
        except requests.RequestException as exc:
            raise TransportError(describe_transport_error(exc, out.timeout_ms)) from None
        finally:
            self.discard(prepared)
        return self._read(resp, start, start + timeout_s, out.timeout_ms)

    def _settings(self, url: str) -> dict[str, Any]:
        origin = tuple(urlsplit(url)[:2])
        settings = self._environment.get(origin)
        if settings is None:
            settings = self._environment_session.merge_environment_settings(url, {}, True, None, None)
            self._environment[origin] = settings
        return settings

    def _read(self, resp: requests.Response, start: float, deadline: float, timeout_ms: float) -> Response:
        chunks: list[bytes] = []
        size = 0
        truncated = False
        failure: str | None = None
        alarm = self.watchdog.arm(deadline, resp.raw.shutdown)
        try:
            for chunk in resp.raw.stream(_CHUNK, decode_content=True):
                room = self.max_body_bytes - size
                if len(chunk) > room:
                    chunks.append(chunk[:room])
                    size += room
                    truncated = True
                    break
                chunks.append(chunk)
                size += len(chunk)
        except (Urllib3Error, OSError, ValueError) as exc:
            if alarm.fired:
                failure = f"timed out after {timeout_ms:g} ms reading the body ({size} bytes received)"
            else:
                failure = f"connection broken while reading the body after {size} bytes: {_short(exc)}"
        finally:
            self.watchdog.cancel(alarm)
            # A body left unread (cap, error) makes the connection unusable: close() discards it.
            resp.close()
        elapsed_ms = (time.perf_counter() - start) * 1000
        response = Response(
            status=resp.status_code, headers=resp.headers, body=b"".join(chunks), elapsed_ms=elapsed_ms,
            truncated=truncated, url=resp.url, encoding=_encoding(resp.headers.get("Content-Type", "")),
        )
        if failure:
            raise TransportError(failure, partial=response)
        return response


def _multipart(parts, opened: list[Any]):
    from requests_toolbelt.multipart.encoder import MultipartEncoder

    fields = []
    for name, part in parts:
        if isinstance(part, FilePart):
            handle = part.path.open("rb")
            opened.append(handle)
            fields.append((name, (part.filename, handle, part.content_type or "application/octet-stream")))
        else:
            text, content_type = part
            fields.append((name, (None, text, content_type) if content_type else text))
    return MultipartEncoder(fields=fields)


def _close_all(handles) -> None:
    for handle in handles:
        handle.close()


def describe_body(prepared: requests.PreparedRequest) -> str | None:
    """The request body as text for results: decoded bytes, or what a streamed body holds."""
    body = prepared.body
    if body is None or isinstance(body, str):
        return body
    if isinstance(body, bytes):
        return body.decode("utf-8", errors="replace")
    fields = getattr(body, "fields", None)
    if fields is not None:  # a MultipartEncoder
        parts = []
        for name, value in fields:
            if isinstance(value, str):
                parts.append(f"{name}={value}")
            elif value[0] is None:
                parts.append(f"{name}={value[1]}")
            else:
                parts.append(f"{name}=@{value[0]};type={value[2]}")
        return "[multipart/form-data] " + " & ".join(parts)
    name = getattr(body, "name", None)
    if not isinstance(name, str):
        return None
    return f"[the bytes of {Path(name).name}, {Path(name).stat().st_size} bytes]"


def describe_transport_error(exc: requests.RequestException, timeout_ms: float) -> str:
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return f"connection timed out after {timeout_ms:g} ms"
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return f"no response within {timeout_ms:g} ms"
    if isinstance(exc, requests.exceptions.TooManyRedirects):
        return f"redirect loop: more than {requests.models.DEFAULT_REDIRECT_LIMIT} redirects"
    if isinstance(exc, requests.exceptions.SSLError):
        return f"TLS error: {_short(exc)}"
    if isinstance(exc, (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema,
                        requests.exceptions.InvalidSchema)):
        return f"invalid URL: {_short(exc)}"
    text = str(exc)
    for needle, message in (
        ("Connection refused", "connection refused"),
        ("reset by peer", "connection reset by peer"),
        ("RemoteDisconnected", "the server closed the connection without a response"),
        ("Name or service not known", "host name not found"),
        ("nodename nor servname", "host name not found"),
    ):
        if needle in text:
            return message
    return _short(exc)


def _short(exc: BaseException, limit: int = 200) -> str:
    text = f"{exc}" or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "…"


def _encoding(content_type: str) -> str | None:
    match = _CHARSET.search(content_type)
    if not match:
        return None
    try:
        return codecs.lookup(match.group(1)).name
    except LookupError:
        return None


@dataclass(eq=False)
class Alarm:
    callback: Callable[[], Any]
    cancelled: bool = False
    fired: bool = False


class Watchdog:
    """One background thread calling callbacks at their deadlines (time.perf_counter clock)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Alarm]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, deadline: float, callback: Callable[[], Any]) -> Alarm:
        alarm = Alarm(callback)
        with self._cond:
            heapq.heappush(self._heap, (deadline, next(self._order), alarm))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="litmus-watchdog", daemon=True)
                self._thread.start()
            if self._heap[0][2] is alarm:
                self._cond.notify()
        return alarm

    def cancel(self, alarm: Alarm) -> None:
        alarm.cancelled = True  # removed lazily when its deadline comes

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._heap:
                    self._cond.wait()
                deadline, _, alarm = self._heap[0]
                wait = deadline - time.perf_counter()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)
                if alarm.cancelled:
                    continue
                alarm.fired = True
            try:
                alarm.callback()
            except Exception:  # noqa: BLE001 - the response may already be closed or released
                pass
