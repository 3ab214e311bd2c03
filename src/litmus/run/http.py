"""Sending one step's request and reading its response safely.

One `HttpClient` per run holds a pooled adapter that every flow run's `Session` mounts, so
connections are reused while cookies stay per flow run (they live in the Session, not the adapter).

Each step's request is one `Exchange` under one deadline (the step's `timeout_ms`): connecting,
the response headers, every redirect and the body. A `Watchdog` shuts the socket at the deadline,
which per-read socket timeouts alone never do for a peer that trickles one byte at a time, and a
body the deadline cut is an error whatever its framing (Content-Length, chunked, or delimited by
the connection closing, which looks like a normal end to http.client). Bodies are read by one
loop, `read_body`, under the size cap (decompressed bytes, so a gzip bomb stops at the cap; the
response is marked `truncated`) and the deadline.

A request that fails on a reused pooled connection before any response byte arrived (the server
closed it while it sat idle) is sent once more on a new connection, for idempotent methods, by
urllib3's `Retry` (`_TransportRetry`); the count is in `Response.transport_retries`.

Where a request may go, first or redirected, is `litmus.net`'s policy (the `Session` every client
shares); the probe transport adds its own redirect rules (`_ProbeSession.rebuild_auth`): a hop to
another origin also drops every header the probe set and a 307/308 body, and each hop is recorded.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import heapq
import http.client
import itertools
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
from urllib3.connection import HTTPConnection
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from litmus import net
from litmus.deadline import Deadline
from litmus.files import MAX_REQUEST_FILE_BYTES, open_file
from litmus.model import Stream, Tls
from litmus.response import Redirect, Response
from litmus.run.stream import StreamError, StreamReader
from litmus.text import clip
from litmus.trust import origin

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
_CHUNK = 64 * 1024
_CHARSET = re.compile(r"charset\s*=\s*\"?([^\s;\"]+)", re.IGNORECASE)
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})
# http.client refuses a response with more header lines than this.
MAX_RESPONSE_HEADERS = 100
# Describe a body that no longer goes along once the body is dropped.
_BODY_HEADERS = ("Content-Length", "Transfer-Encoding", "Content-Type")
# Redirects a request follows before its step is an error ("redirect loop"); a report's curl uses it too.
MAX_REDIRECTS = requests.models.DEFAULT_REDIRECT_LIMIT


class TransportError(Exception):
    """The request got no (complete) response. `partial` holds what was received, if anything;
    `retries` how often the transport sent the request again before giving up."""

    def __init__(self, message: str, partial: Response | None = None, retries: int = 0) -> None:
        super().__init__(message)
        self.partial = partial
        self.retries = retries


class _HeadersCut(http.client.HTTPException):
    """The connection closed before the blank line that ends the response headers."""


class _TooManyHeaders(http.client.HTTPException):
    pass


@dataclass(frozen=True)
class FilePart:
    """A multipart part streamed from a file (`shown`: repository-relative, as reports name it)."""

    path: Path
    filename: str
    content_type: str | None = None
    shown: str = ""

    @property
    def sent_type(self) -> str:
        return self.content_type or "application/octet-stream"


@dataclass
class OutgoingRequest:
    """A rendered request, ready to send.

    `body_file` and the files of `multipart` (name -> FilePart, or (text, content type)) are opened
    for each attempt and streamed from disk, never read whole into memory.
    """

    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    # Rendered `cookies:`, merged by requests with the session's jar into the one Cookie header.
    cookies: dict[str, str] = field(default_factory=dict)
    query: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    has_json: bool = False
    data: Any = None
    body_file: Path | None = None
    multipart: list[tuple[str, FilePart | tuple[str, str | None]]] | None = None
    # `auth: {basic: ...}` rendered (username, password): sent as the Authorization header, recorded for a curl.
    basic_auth: tuple[str, str] | None = None
    # `tls:` (verify, CA file, client certificate and key), applied through `net.tls_settings`.
    tls: Tls | None = None
    # `auth: {digest: ...}` rendered (username, password): the answer to the server's challenge (`_DigestAuth`).
    digest_auth: tuple[str, str] | None = None
    timeout_ms: float = 30_000
    follow_redirects: bool = True
    # Read the body as a stream of events (see litmus.run.stream); None = read it whole.
    stream: Stream | None = None
    # Wraps the first write of the request to its connected socket (the rate limiter's gate; it may wait).
    write_turn: Callable[[], contextlib.AbstractContextManager] | None = None


class Exchange:
    """One step's request, from connecting to the last body byte, under one deadline.

    The connection carrying it attaches itself (`attach`) and detaches when it goes back to the
    pool, so the watchdog's `expire` shuts down only a socket this exchange still owns. The socket is
    kept, not looked up on the connection at expiry: a response that ends with the connection
    (`Connection: close`, close-delimited bodies) is read after the connection let go of it.
    """

    def __init__(self, out: OutgoingRequest, max_body_bytes: int) -> None:
        self.timeout_ms = out.timeout_ms
        self.started = time.perf_counter()
        self.deadline = Deadline.after(out.timeout_ms / 1000)
        self.probe_headers = frozenset(name.lower() for name in out.headers)
        self.max_body_bytes = max_body_bytes
        self.stream = out.stream
        self.write_turn = out.write_turn
        self.retries = 0
        self.redirects: list[Redirect] = []
        # The response (requests', ours) of a redirect whose body was already read.
        self.redirect_read: tuple[requests.Response, Response] | None = None
        # Set when a request failed on a stale connection: the next attempt must not reuse one.
        self.fresh_connection = False
        self.reused = False
        self.response_started = False
        # When the first byte of the latest response (its status line) arrived: a redirect's next hop
        # moves it on, so it is the final response's, counted like elapsed_ms from the first send.
        self.first_byte_at: float | None = None
        self.timed_out = False
        self._connection: HTTPConnection | None = None
        self._socket: socket.socket | None = None
        self._finished = False
        self._lock = threading.Lock()

    def attach(self, connection: HTTPConnection) -> None:
        with self._lock:
            self._connection = connection
            self._socket = connection.sock
            connection.litmus_exchange = self
            if self.timed_out:
                _shutdown(self._socket)

    def detach(self, connection: HTTPConnection) -> None:
        with self._lock:
            if self._connection is connection:
                self._connection = self._socket = None
            connection.litmus_exchange = None

    def expire(self) -> None:
        """The watchdog's callback at the deadline: stop whatever this exchange is waiting for."""
        with self._lock:
            if self._finished:
                return
            self.timed_out = True
            _shutdown(self._socket)

    def finish(self) -> None:
        with self._lock:
            self._finished = True

    def stale(self, error: Exception) -> bool:
        """Whether a failed attempt met a pooled connection the server had already closed."""
        cause = error.args[1] if len(error.args) > 1 else None
        return (self.reused and not self.response_started and not self.timed_out
                and isinstance(cause, ConnectionError))


def _shutdown(sock: socket.socket | None) -> None:
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)  # wakes a blocked recv at once; close() would not
        except OSError:
            pass  # already closed


_exchange: contextvars.ContextVar[Exchange] = contextvars.ContextVar("litmus_exchange")


class _LineWatch:
    """The socket file as http.client reads the status line and headers from it: counts the lines
    and remembers whether the last one was the end of the stream rather than the blank line."""

    def __init__(self, raw, exchange: Exchange) -> None:
        self.raw = raw
        self.exchange = exchange
        self.lines = 0
        self.last = b""

    def readline(self, limit: int = -1) -> bytes:
        line = self.raw.readline(limit)
        if line:
            if self.lines == 0:
                self.exchange.first_byte_at = time.perf_counter()
            self.exchange.response_started = True
        self.lines += 1
        self.last = line
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


class _CheckedResponse(http.client.HTTPResponse):
    """http.client's response, except that headers cut by the connection closing are an error (http.client
    takes the end of the stream for the end of the headers, so a cut response looked like a 200)."""

    def begin(self) -> None:
        if self.headers is not None:
            return
        watch = _LineWatch(self.fp, _exchange.get())
        self.fp = watch
        try:
            super().begin()
        except http.client.LineTooLong:
            raise
        except http.client.HTTPException as exc:
            # The status line is the first line; http.client stops after MAX_RESPONSE_HEADERS more.
            if watch.lines > MAX_RESPONSE_HEADERS + 1:
                raise _TooManyHeaders() from exc
            raise
        finally:
            if self.fp is watch:
                self.fp = watch.raw
        if watch.last == b"":
            raise _HeadersCut()


class _ConnectionMixin:
    """Attaches the connection to the current exchange and bounds connecting by its deadline."""

    response_class = _CheckedResponse
    litmus_exchange: Exchange | None = None
    _litmus_uses = 0

    def connect(self) -> None:
        exchange = _exchange.get()
        if isinstance(self.timeout, (int, float)):
            self.timeout = max(min(self.timeout, exchange.deadline.remaining()), 0.001)
        super().connect()
        self._litmus_uses = 0
        exchange.attach(self)

    def request(self, method, url, body=None, headers=None, **kwargs) -> None:
        exchange = _exchange.get()
        uses = self._litmus_uses if self.sock is not None else 0
        exchange.reused = uses > 0
        exchange.attach(self)
        if exchange.write_turn is None:
            super().request(method, url, body=body, headers=headers, **kwargs)
        else:
            turn, exchange.write_turn = exchange.write_turn, None
            if self.sock is None:
                self.connect()  # connecting (and TLS) is not part of the write the limiter times
            with turn():
                super().request(method, url, body=body, headers=headers, **kwargs)
        self._litmus_uses = uses + 1


class _Connection(_ConnectionMixin, net.PinnedConnection):
    pass


class _HTTPSConnection(_ConnectionMixin, net.PinnedHTTPSConnection):
    pass


class _PoolMixin:
    def _get_conn(self, timeout=None):
        conn = super()._get_conn(timeout)
        if _exchange.get().fresh_connection and conn.sock is not None:
            conn.close()  # reconnects on use: the retry of a stale connection goes on a new one
        return conn

    def _put_conn(self, conn) -> None:
        if conn is not None and conn.litmus_exchange is not None:
            conn.litmus_exchange.detach(conn)
        super()._put_conn(conn)


class _Pool(_PoolMixin, net.PinnedPool):
    ConnectionCls = _Connection


class _HTTPSPool(_PoolMixin, net.PinnedHTTPSPool):
    ConnectionCls = _HTTPSConnection


class _Adapter(net.Adapter):
    pool_classes = {"http": _Pool, "https": _HTTPSPool}


class _TransportRetry(Retry):
    """urllib3's Retry for the probe transport: a request is sent again only when it is idempotent and
    the deadline has not passed; after the request went out (a read error), only when the connection
    was a stale pooled one and nothing of a response arrived. Each resend is counted on the exchange."""

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        exchange = _exchange.get()
        stale = error is not None and exchange.stale(error)
        retry: Retry = self
        if error is not None:
            never_again = (exchange.timed_out or exchange.deadline.remaining() <= 0
                           or (method or "").upper() not in IDEMPOTENT_METHODS)
            if self._is_read_error(error):
                if never_again or not stale:
                    retry = self.new(read=False)  # re-raised as it is
            elif never_again:
                # How urllib3 gives up on a connection error, the form requests translates.
                raise MaxRetryError(_pool, url, error) from error
        again = Retry.increment(retry, method, url, response, error, _pool, _stacktrace)
        exchange.retries += 1
        exchange.fresh_connection = exchange.fresh_connection or stale
        return again


class _ProbeSession(net.Session):
    """The outbound policy's session with the probe's redirect rules (see `rebuild_auth`)."""

    def resolve_redirects(self, resp: requests.Response, req: requests.PreparedRequest, **kwargs: Any):
        # requests also builds the next hop of each response it does not follow itself, for `Response.next`:
        # of an unfollowed redirect, and of every hop it follows (each is sent without following). That hop is
        # never sent, and recording it counted n hops as 2n - 1: the probe builds no `Response.next`.
        if kwargs.get("yield_requests"):
            return iter(())
        return super().resolve_redirects(resp, req, **kwargs)

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> list[str]:
        exchange = _exchange.get()
        source, target = response.request.url, prepared_request.url
        dropped = super().rebuild_auth(prepared_request, response)
        body_dropped = False
        if origin(source) != origin(target):
            dropped += net.strip_headers(prepared_request, exchange.probe_headers - {"cookie"})
            if prepared_request.body is not None:  # still there only after a 307/308
                prepared_request.body = None
                for name in _BODY_HEADERS:
                    prepared_request.headers.pop(name, None)
                body_dropped = True
        exchange.redirects.append(Redirect(url=target, status=response.status_code,
                                           dropped_headers=dropped, body_dropped=body_dropped))
        return dropped


@dataclass
class Body:
    data: bytes
    # The size cap cut it.
    truncated: bool
    # Why it broke off (None: read to its end).
    failure: str | None


def read_body(resp: requests.Response, exchange: Exchange, on_chunk: Callable[[bytes], bool] | None = None) -> Body:
    """The one loop that reads a response body: decoded chunks as they arrive, under the size cap and the
    exchange's deadline; `on_chunk` sees each chunk and returning True stops the read (a stream's end
    marker). A body the deadline cut is a failure whatever its framing: one delimited by the connection
    closing ends "normally" when the watchdog shuts the socket. What arrived before a cut is kept and counted."""
    limit = exchange.max_body_bytes
    chunks: list[bytes] = []
    size = 0
    truncated = False
    failure: str | None = None
    try:
        for chunk in arriving_chunks(resp.raw, _CHUNK):
            room = limit - size
            if len(chunk) > room:
                chunks.append(chunk[:room])
                size += room
                truncated = True
                break
            chunks.append(chunk)
            size += len(chunk)
            if on_chunk is not None and on_chunk(chunk):
                break
    except (Urllib3Error, OSError, ValueError) as exc:
        failure = f"connection broken while reading the body after {size} bytes: {_short(exc)}"
    finally:
        # A body left unread (cap, error) makes the connection unusable: close() discards it.
        resp.close()
    if exchange.timed_out:
        failure = f"timed out after {exchange.timeout_ms:g} ms reading the body ({size} bytes received)"
    return Body(b"".join(chunks), truncated, failure)


def arriving_chunks(raw, size: int) -> Iterator[bytes]:
    """The body's decoded chunks as they arrive. urllib3's `stream()` waits for `size` bytes of a body that
    is not chunked (Content-Length, or ended by closing): a stream's events would be held back and their
    timing lost, and the bytes that arrived before a cut would be dropped with the error that ends the read."""
    if raw.chunked and raw.supports_chunked_reads():
        yield from raw.read_chunked(size, decode_content=True)
        return
    while chunk := raw.read1(size, decode_content=True):
        yield chunk


class HttpClient:
    def __init__(self, *, pool_size: int = 4, transport_retries: int = 0,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 origin_allowed: Callable[[str], bool] | None = None) -> None:
        # `origin_allowed`: where requests may go, first or redirected (an untrusted run's Trust.origin_allowed).
        # Connection failures: `transport_retries` more tries. A request already sent: once more, and
        # only on a stale pooled connection (see _TransportRetry). Never on a status.
        retries = _TransportRetry(
            total=transport_retries + 1, connect=transport_retries, read=1, status=0, other=0,
            redirect=None, allowed_methods=IDEMPOTENT_METHODS, backoff_factor=0.1, raise_on_status=False,
        )
        self.adapter = _Adapter(pool_connections=8, pool_maxsize=max(pool_size, 1), max_retries=retries)
        self.max_body_bytes = max_body_bytes
        self.origin_allowed = origin_allowed
        self.watchdog = Watchdog()
        # Proxy and CA settings from the environment, looked up once per origin rather than per
        # request (never ~/.netrc: see litmus.net).
        self._environment: dict[tuple[str, str], dict[str, Any]] = {}

    def session(self) -> requests.Session:
        """A fresh Session (own cookie jar) on the shared connection pool."""
        session = _ProbeSession(self.adapter, origin_allowed=self.origin_allowed)
        session.max_redirects = MAX_REDIRECTS
        session.hooks["response"] = [_read_redirect_body]  # the probe keeps a redirect's body, under its cap
        return session

    def close(self) -> None:
        self.adapter.close()

    def prepare(self, session: requests.Session, out: OutgoingRequest) -> requests.PreparedRequest:
        """The request to send; files it streams are open until `send` (or `discard`) closes them."""
        opened: list[Any] = []
        data, headers = out.data, dict(out.headers)
        try:
            if out.body_file is not None:
                data = open_file(out.body_file, MAX_REQUEST_FILE_BYTES, what="request files")
                opened.append(data)
            elif out.multipart is not None:
                data = _multipart(out.multipart, opened)
                headers["Content-Type"] = data.content_type
            request = requests.Request(
                out.method, out.url, headers=headers, params=out.query, cookies=_host_cookies(out),
                json=out.json if out.has_json else None, data=data,
            )
            prepared = session.prepare_request(request)
            if out.digest_auth is not None:
                # On the prepared request, so its hooks join the session's (given to requests.Request, they
                # would replace them, the redirect-body hook with them).
                prepared.prepare_auth(_DigestAuth(*out.digest_auth, origin=origin(out.url)))
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
        settings = self._settings(prepared.url)
        if out.tls is not None:
            settings = {**settings, **net.tls_settings(verify=out.tls.verify, ca_file=out.tls.ca_file,
                                                       client_cert=out.tls.client_cert,
                                                       client_key=out.tls.client_key)}
        exchange = Exchange(out, self.max_body_bytes)
        alarm = self.watchdog.arm(exchange.deadline, exchange.expire)
        token = _exchange.set(exchange)
        try:
            try:
                resp = session.send(prepared, timeout=timeout_s, allow_redirects=out.follow_redirects, **settings)
            except requests.RequestException as exc:
                # The redirect that led here, if any, is what was received.
                partial = exchange.redirect_read[1] if exchange.redirect_read else None
                raise TransportError(describe_transport_error(exc, exchange), partial=partial,
                                     retries=exchange.retries) from None
            if exchange.redirect_read is not None and exchange.redirect_read[0] is resp:
                return exchange.redirect_read[1]  # an unfollowed redirect: read by the hook
            return _read(resp, exchange)
        finally:
            self.discard(prepared)
            exchange.finish()
            self.watchdog.cancel(alarm)
            _exchange.reset(token)

    def _settings(self, url: str) -> dict[str, Any]:
        origin = tuple(urlsplit(url)[:2])
        settings = self._environment.get(origin)
        if settings is None:
            settings = net.environment_settings(url)
            self._environment[origin] = settings
        return settings


def _read(resp: requests.Response, exchange: Exchange) -> Response:
    """The response with its body; a body that broke off is a TransportError holding what was read.
    With `stream:`, a success is read through a StreamReader (an error reply, 401, 429, 500, is read
    whole, as a body, so `status_code` checks still see it)."""
    reader = StreamReader(exchange.stream, exchange.started, resp.headers.get("Content-Type", "")) \
        if exchange.stream is not None and 200 <= resp.status_code < 300 else None
    body = read_body(resp, exchange, on_chunk=reader.feed if reader is not None else None)
    response = Response(
        status=resp.status_code, headers=resp.headers, body=body.data,
        elapsed_ms=(time.perf_counter() - exchange.started) * 1000,
        first_byte_ms=(exchange.first_byte_at - exchange.started) * 1000 if exchange.first_byte_at else None,
        truncated=body.truncated, url=resp.url, encoding=_encoding(resp.headers.get("Content-Type", "")),
        redirects=tuple(exchange.redirects), transport_retries=exchange.retries,
        header_lines=list(resp.raw.headers.items()),
    )
    if reader is not None:
        try:
            return reader.finish(response, body.failure)
        except StreamError as exc:
            raise TransportError(str(exc), partial=exc.partial, retries=exchange.retries) from None
    if body.failure:
        raise TransportError(body.failure, partial=response, retries=exchange.retries)
    return response


def _read_redirect_body(resp: requests.Response, **kwargs: Any) -> requests.Response:
    """A response hook: a redirect's body is read here, under the cap and the deadline, before requests
    would read it whole (it does, to release the connection, even when not following it)."""
    if resp.is_redirect:
        exchange = _exchange.get()
        exchange.redirect_read = (resp, _read(resp, exchange))
    return resp


def _host_cookies(out: OutgoingRequest) -> requests.cookies.RequestsCookieJar:
    """The request's `cookies:` for its own host only: without a domain, requests would send them on to
    wherever a redirect leads."""
    jar = requests.cookies.RequestsCookieJar()
    for name, value in out.cookies.items():
        jar.set(name, value, domain=urlsplit(out.url).hostname or "", path="/")
    return jar


class _DigestAuth(requests.auth.HTTPDigestAuth):
    """requests' RFC 7616 digest auth, answering only a challenge from the request's own origin (requests
    would answer one a redirect led to, handing another origin a hash of the password) and reading the
    challenge's body under the exchange's cap (requests would read it whole). The answer goes to the URL that
    challenged, which was already checked."""

    def __init__(self, username: str, password: str, *, origin: str | None) -> None:
        super().__init__(username, password)
        self.origin = origin

    def handle_401(self, r: requests.Response, **kwargs: Any) -> requests.Response:
        if origin(r.url) != self.origin:
            return r
        if "digest" in r.headers.get("www-authenticate", "").lower():
            r._content = net.read_capped(r, _exchange.get().max_body_bytes)
        return super().handle_401(r, **kwargs)


def _multipart(parts, opened: list[Any]):
    from requests_toolbelt.multipart.encoder import MultipartEncoder  # lazy: ~130 ms, only for a multipart request

    fields = []
    for name, part in parts:
        if isinstance(part, FilePart):
            handle = open_file(part.path, MAX_REQUEST_FILE_BYTES, what="request files")
            opened.append(handle)
            fields.append((name, (part.filename, handle, part.sent_type)))
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


def describe_transport_error(exc: requests.RequestException, exchange: Exchange) -> str:
    timeout_ms = exchange.timeout_ms
    cause = _root_cause(exc)
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return f"connection timed out after {timeout_ms:g} ms"
    if exchange.timed_out:
        if exchange.response_started:
            return f"timed out after {timeout_ms:g} ms reading the response headers"
        return f"no response within {timeout_ms:g} ms"
    if isinstance(exc, net.RequestRefused):
        return str(exc)
    if isinstance(cause, _HeadersCut):
        return "the connection closed in the middle of the response headers"
    if isinstance(cause, _TooManyHeaders):
        return f"the response has more than {MAX_RESPONSE_HEADERS} header lines (refused)"
    if isinstance(cause, http.client.LineTooLong):
        return "a response header line is longer than 65536 bytes (refused)"
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return f"no response within {timeout_ms:g} ms"
    if isinstance(exc, requests.exceptions.TooManyRedirects):
        return f"redirect loop: more than {MAX_REDIRECTS} redirects"
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


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost error: requests wraps urllib3's, which wraps http.client's in its args."""
    seen = exc
    for _ in range(8):
        inner = next((a for a in getattr(seen, "args", ()) if isinstance(a, BaseException)), None)
        inner = inner or getattr(seen, "reason", None)
        if not isinstance(inner, BaseException) or inner is seen:
            break
        seen = inner
    return seen


def _short(exc: BaseException, limit: int = 200) -> str:
    text = f"{exc}" or type(exc).__name__
    return clip(text, limit)


def _encoding(content_type: str) -> str | None:
    match = _CHARSET.search(content_type)
    if not match:
        return None
    try:
        return codecs.lookup(match.group(1)).name
    except LookupError:
        return None


def _nothing() -> None:
    """A cancelled alarm's callback."""


@dataclass(eq=False)
class Alarm:
    callback: Callable[[], Any]
    cancelled: bool = False


class Watchdog:
    """One background thread calling callbacks at their deadlines."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[Deadline, int, Alarm]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, deadline: Deadline, callback: Callable[[], Any]) -> Alarm:
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
        alarm.cancelled = True  # removed lazily when its deadline comes,
        alarm.callback = _nothing  # holding nothing till then: the callback's exchange is freed now

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._heap:
                    self._cond.wait()
                deadline, _, alarm = self._heap[0]
                wait = deadline.remaining()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)
                if alarm.cancelled:
                    continue
            try:
                alarm.callback()
            except Exception:  # noqa: BLE001 - the response may already be closed or released
                pass
