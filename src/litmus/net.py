"""Every HTTP request Litmus sends goes through one `Session` kind, which owns the outbound policy.

Probes, judge and embeddings calls, the GitHub API (artifact downloads included) and `wait-for`
each mount their own `Adapter` (pools, retries) on a `Session`; what may be sent where is decided
here, once:

- `User-Agent: litmus/<version>` on every request (a probe may set its own).
- Destinations: http(s) only; `.invalid` names never resolve (RFC 6761); `BLOCKED`, the cloud
  metadata and credential endpoints, is refused whatever spelling names it (numeric forms, IPv4
  embedded in IPv6); a redirect from a non-loopback address to loopback is refused; an untrusted run
  sends requests only to its allowed origins (`litmus.trust`). A refused request raises
  `RequestRefused` before any byte is sent.
- The address checked is the address connected to: the URL is checked as written before anything
  connects (`destination_refusal`, `redirect_refusal`: literal hosts, no lookup), and each new
  connection resolves its host once, refuses it when any answer is blocked (`address_refusal`) and
  connects to those checked answers only (`PinnedConnection`), on every redirect hop. TLS still
  verifies the host name of the URL, never the address.
- Proxies: the environment's (`HTTP(S)_PROXY`, `NO_PROXY`) are used, and the proxy is the address
  checked and pinned; its destination's name is the proxy's to resolve, so it is resolved here too,
  and an untrusted run sends nothing through a proxy. `~/.netrc` is never read (`trust_env` is off).
- Redirects: every hop is checked like a first request; a hop to another origin loses its
  credential headers. requests reads a redirect's body whole (to reuse the connection, even when it
  does not follow it): the session closes it unread instead, and a response urllib3 retries on its
  status is closed, not read to its end (`Retry`).
- Bodies: requests never reads one (every send streams); `read_capped` reads at most a given size.
"""

from __future__ import annotations

import contextvars
import functools
import ipaddress
import re
import socket
import warnings
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.utils import select_proxy
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, InsecureRequestWarning, NameResolutionError
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.util.connection import allowed_gai_family

from litmus import __version__
from litmus.trust import origin

USER_AGENT = f"litmus/{__version__}"

# Cloud metadata and credential endpoints (shared/research/github_trust_model.md, section 7): never
# sent a request, first or redirected, in any mode. Each entry is a network, an address or a host name.
BLOCKED: tuple[str, ...] = (
    "169.254.0.0/16",            # IPv4 link-local: IMDS of AWS, GCP, Azure, OCI, DigitalOcean... at 169.254.169.254
    "169.254.170.2",             # AWS ECS task credentials (inside the range above; listed so narrowing it keeps them)
    "169.254.170.23",            # AWS EKS Pod Identity
    "fe80::/10",                 # IPv6 link-local
    "fd00:ec2::254",             # AWS IMDS over IPv6
    "fd00:ec2::23",              # AWS EKS Pod Identity over IPv6
    "168.63.129.16",             # Azure WireServer (a public-range address)
    "100.100.100.200",           # Alibaba Cloud metadata
    "fd00:c1::a9fe:a9fe",        # Oracle Cloud IMDS over IPv6
    "192.0.0.192",               # legacy Oracle Cloud metadata
    "metadata.google.internal",  # GCP's metadata name
)

# Dropped from a redirect to another origin, whoever set them (requests, a session default, a probe).
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization"})

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str], Sequence[Address]]

_CHUNK = 64 * 1024
_NUMERIC_PART = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _parse_blocked() -> tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...], frozenset[str]]:
    networks, names = [], set()
    for entry in BLOCKED:
        try:
            networks.append(ipaddress.ip_network(entry))
        except ValueError:
            names.add(entry)
    return tuple(networks), frozenset(names)


_BLOCKED_NETWORKS, _BLOCKED_NAMES = _parse_blocked()


class RequestRefused(requests.RequestException):
    """A request (first or a redirect hop) the policy does not send; raised before connecting."""


class BodyTooLarge(requests.RequestException):
    """A body larger than the reader's cap; no more of it was read."""


class AddressRefused(Exception):
    """A connection refused by `address_refusal`, before connecting. Not an OSError, so that urllib3
    neither retries it nor wraps it: `Session.send` turns it into `RequestRefused`."""


@dataclass
class _Chain:
    """One request and the redirect hops requests sends for it (one `Session.send` and those nested in
    it): the address the last hop connected to, and whether the next may connect to loopback."""

    peer: Address | None = None
    refuse_loopback: bool = False


_chain: contextvars.ContextVar[_Chain] = contextvars.ContextVar("litmus_chain")


class Session(requests.Session):
    """A requests Session under the outbound policy (module docstring); `adapter`, when given, serves
    http and https (else a plain `Adapter`). `origin_allowed` says where an untrusted run may send
    requests (None: anywhere, a trusted run)."""

    def __init__(self, adapter: Adapter | None = None, *,
                 origin_allowed: Callable[[str], bool] | None = None) -> None:
        super().__init__()
        self.trust_env = False  # requests would read ~/.netrc; the environment's proxies: merge_environment_settings
        self.headers["User-Agent"] = USER_AGENT
        self.hooks["response"] = [close_redirect]
        self.origin_allowed = origin_allowed
        adapter = adapter or Adapter()
        self.mount("http://", adapter)
        self.mount("https://", adapter)

    def get_adapter(self, url: str) -> Adapter:
        adapter = super().get_adapter(url)
        if not isinstance(adapter, Adapter):  # its connections would not be pinned
            raise TypeError(f"a litmus.net.Session sends only through a litmus.net.Adapter, not {adapter!r}")
        return adapter

    def merge_environment_settings(self, url, proxies, stream, verify, cert) -> dict[str, Any]:
        """The proxy and CA-bundle variables of the environment, as requests reads them with `trust_env`
        (which would read ~/.netrc too), then this session's own settings."""
        settings = _ENVIRONMENT.merge_environment_settings(url, proxies, stream, verify, cert)
        return super().merge_environment_settings(url, **settings)

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        # requests calls this for the first request and for every redirect hop it follows (never for the
        # next hop of one it does not follow): the one place that sees each request before it connects.
        source = getattr(request, "litmus_redirected_from", None)
        if source is None:
            refusal = (destination_refusal(request.url, resolve=literal_addresses)
                       or origin_refusal(request.url, self.origin_allowed))
        else:
            refusal = redirect_refusal(source, request.url, resolve=literal_addresses,
                                       origin_allowed=self.origin_allowed)
        proxies = kwargs.get("proxies")
        proxy = select_proxy(request.url, proxies) if proxies else None
        if not refusal and proxy:
            refusal = self._proxy_refusal(request.url, proxy)
        if refusal:
            raise RequestRefused(refusal, request=request)
        kwargs["stream"] = True  # bodies are read under a cap by the caller, never whole by requests
        chain = _chain.get(None) if source is not None else None
        token = None
        if chain is None:
            chain = _Chain()
            token = _chain.set(chain)
        else:  # a hop: what the last hop connected to says whether loopback is allowed
            chain.refuse_loopback = chain.peer is not None and not _loopback(chain.peer)
        try:
            return super().send(request, **kwargs)
        except AddressRefused as exc:
            raise RequestRefused(str(exc), request=request) from None
        finally:
            if token is not None:
                _chain.reset(token)

    def _proxy_refusal(self, url: str, proxy: str) -> str | None:
        # Through a proxy, the address connected to (and checked) is the proxy's; the destination's name
        # is resolved by the proxy, out of reach: checked here as well as can be, and never for an
        # untrusted run, whose redirects the pull request chooses.
        if self.origin_allowed is not None:
            return (f"request to {origin(url) or url} refused: this run is untrusted, and sends nothing through a "
                    f"proxy ({proxy}), where the address connected to cannot be checked; "
                    f"add the host to NO_PROXY or unset the proxy variables")
        return destination_refusal(url, resolve=host_addresses)

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> list[str]:
        """requests' hook for each redirect hop, built and not yet sent: marks it as a hop (`send` checks
        it as one) and drops the credential headers when it leaves the origin. Returns the names dropped."""
        source = response.request.url
        prepared_request.litmus_redirected_from = source
        if origin(source) == origin(prepared_request.url):
            return []
        return strip_headers(prepared_request, CREDENTIAL_HEADERS)


# Reads the environment's proxy and CA-bundle settings for every Session (its own settings are empty).
_ENVIRONMENT = requests.Session()


def tls_settings(*, verify: bool, ca_file: Path | None, client_cert: Path | None,
                 client_key: Path | None) -> dict[str, Any]:
    """A send's `verify` and `cert` for a probe's `tls:` (replacing the environment's CA bundle when given):
    `verify=False` checks no certificate, `ca_file` is the only trust anchor, the client certificate (and its
    key, else the key in the certificate's file) is presented when the server asks. requests keys its
    connection pools by these, so a connection made with one setting never serves another."""
    settings: dict[str, Any] = {}
    if not verify:
        warnings.filterwarnings("ignore", category=InsecureRequestWarning)  # the probe asked, per request
        settings["verify"] = False
    elif ca_file is not None:
        settings["verify"] = str(ca_file)
    if client_cert is not None:
        settings["cert"] = (str(client_cert), str(client_key)) if client_key is not None else str(client_cert)
    return settings


def environment_settings(url: str) -> dict[str, Any]:
    """The environment's proxy and CA-bundle settings for `url` (never ~/.netrc), for a client that sends
    through its own Session subclass and looks them up once per origin (the probe transport)."""
    return _ENVIRONMENT.merge_environment_settings(url, {}, True, None, None)


class PinnedConnection(HTTPConnection):
    """An HTTP connection that resolves its host once, refuses it when any answer is blocked
    (`address_refusal`), and connects to those checked answers only. For a proxied request the host is
    the proxy's."""

    litmus_peer: Address | None = None

    def _new_conn(self) -> socket.socket:
        host = self._dns_host
        chain = _chain.get(None)
        try:
            answers = resolve(host, self.port)
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc
        refusal = address_refusal(self.host, [address for _, address in answers],
                                  refuse_loopback=chain is not None and chain.refuse_loopback)
        if refusal:
            raise AddressRefused(refusal)
        # urllib3 connects to the checked answer itself: its own lookup of an address reads it, asking no
        # resolver. The URL's host name stays `self.host` (TLS server name and certificate check).
        try:
            for index, (sockaddr_host, address) in enumerate(answers):
                self._dns_host = sockaddr_host
                try:
                    sock = super()._new_conn()
                except ConnectTimeoutError:  # NewConnectionError too: the next answer, if any
                    if index == len(answers) - 1:
                        raise
                    continue
                self.litmus_peer = address
                return sock
        finally:
            self._dns_host = host

    def request(self, method, url, body=None, headers=None, **kwargs) -> None:
        chain = _chain.get(None)
        if chain is not None and self.sock is not None and self.litmus_peer is not None:
            # A pooled connection was checked under the rules of the request that opened it.
            refusal = address_refusal(self.host, [self.litmus_peer], refuse_loopback=chain.refuse_loopback)
            if refusal:
                raise AddressRefused(refusal)
        super().request(method, url, body=body, headers=headers, **kwargs)
        if chain is not None:
            chain.peer = self.litmus_peer


class PinnedHTTPSConnection(PinnedConnection, HTTPSConnection):
    """The pinned connection over TLS: the certificate is still verified against the URL's host name."""


class PinnedPool(HTTPConnectionPool):
    ConnectionCls = PinnedConnection


class PinnedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = PinnedHTTPSConnection


class Adapter(HTTPAdapter):
    """requests' adapter whose pools open only pinned connections (`pool_classes`, per scheme), directly
    or to a proxy. A SOCKS proxy is refused: its connections cannot be pinned."""

    pool_classes: dict[str, type[HTTPConnectionPool]] = {"http": PinnedPool, "https": PinnedHTTPSPool}

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = self.pool_classes

    def proxy_manager_for(self, proxy: str, **proxy_kwargs):
        if proxy.lower().startswith("socks"):
            raise AddressRefused(f"request through the SOCKS proxy {proxy} refused: the address connected to "
                                 f"through it cannot be checked")
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = self.pool_classes
        return manager


class Retry(urllib3.Retry):
    """urllib3's Retry, except that a response retried on its status is closed, not drained: urllib3
    reads the rest of its body to reuse the connection, all of it however large, before the next try."""

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        again = super().increment(method, url, response, error, _pool, _stacktrace)
        if response is not None:  # not raised: it is retried (the last response is returned unread)
            response.close()
        return again


def close_redirect(response: requests.Response, **kwargs: Any) -> requests.Response:
    """A response hook: a redirect's body is never read (requests would read all of it)."""
    if response.is_redirect:
        response.close()
    return response


def strip_headers(prepared: requests.PreparedRequest, names: Collection[str]) -> list[str]:
    """Delete the headers whose lower-case names are in `names`; the names deleted, as spelled there."""
    dropped = [name for name in prepared.headers if name.lower() in names]
    for name in dropped:
        del prepared.headers[name]
    return dropped


def read_capped(response: requests.Response, limit: int) -> bytes:
    """The response body (decoded), reading at most `limit` bytes of it: past that, `BodyTooLarge` and
    nothing more is read. A body that breaks off is a `requests.ConnectionError`. Closes the response."""
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.raw.stream(_CHUNK, decode_content=True):
            size += len(chunk)
            if size > limit:
                break
            chunks.append(chunk)
    except (Urllib3Error, OSError) as exc:
        raise requests.ConnectionError(f"the body broke off after {size:,} bytes: {exc}") from None
    finally:
        response.close()
    if size > limit:
        raise BodyTooLarge(f"the body is larger than {limit:,} bytes (read stopped there)")
    return b"".join(chunks)


def destination_refusal(url: str, *, resolve: Resolver | None = None, what: str = "request") -> str | None:
    """Why a request to `url` is not sent, whoever asked (None: it may be): a non-HTTP scheme, a
    `.invalid` name, a blocked name or address. `what` names the request in the message."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        return f"{what} to a non-HTTP URL refused: {url}"
    host = (parts.hostname or "").rstrip(".").lower()
    if host == "invalid" or host.endswith(".invalid"):
        # The system resolver would still ask the network (and wait out its timeout when there is none).
        return f"host name not found: {host} is a reserved name that never resolves (RFC 6761)"
    try:
        _numeric_ipv4(host)
    except ValueError:
        return f"{what} to {host} refused: a numeric host outside the IPv4 range (an overflow spelling)"
    if host in _BLOCKED_NAMES or any(is_blocked(a) for a in (resolve or host_addresses)(host)):
        return f"{what} to a link-local or cloud metadata address refused: {url}"
    return None


def origin_refusal(url: str, origin_allowed: Callable[[str], bool] | None, what: str = "request") -> str | None:
    """Why an untrusted run does not send a request to `url` (None: it may)."""
    if origin_allowed is None or origin_allowed(url):
        return None
    where = origin(url) or url
    return (f"{what} to {where} refused: this run is untrusted, and sends requests only to base-url, the deployment "
            f"URL and the action input `allowed-origins`; add {where} to `allowed-origins` to allow it")


def redirect_refusal(source: str, target: str, *, resolve: Resolver | None = None,
                     origin_allowed: Callable[[str], bool] | None = None) -> str | None:
    """Why a redirect from `source` to `target` is not followed (None: it is)."""
    resolve = resolve or host_addresses
    refusal = (destination_refusal(target, resolve=resolve, what="redirect")
               or origin_refusal(target, origin_allowed, what="redirect"))
    if refusal:
        return refusal
    to = resolve((urlsplit(target).hostname or "").rstrip("."))
    if to and all(_loopback(a) for a in to):
        came_from = resolve((urlsplit(source).hostname or "").rstrip("."))
        if came_from and not any(_loopback(a) for a in came_from):
            return f"redirect from a non-loopback origin to loopback refused: {target}"
    return None


def address_refusal(host: str, addresses: Sequence[Address], *, refuse_loopback: bool) -> str | None:
    """Why a connection to `host`, which resolved to `addresses`, is not made (None: it may be): any of
    them blocked, or, when `refuse_loopback` (a redirect hop from a non-loopback address), any loopback."""
    for address in addresses:
        named = str(address) if str(address) == host else f"{address} ({host} resolves to it)"
        if is_blocked(address):
            return f"connection to a link-local or cloud metadata address refused: {named}"
        if refuse_loopback and _loopback(address):
            return f"connection to loopback after a redirect from a non-loopback address refused: {named}"
    return None


def resolve(host: str, port: int) -> list[tuple[str, Address]]:
    """A connection's one lookup of `host`: each answer as the socket address text to connect to and
    the address it stands for (IPv4-mapped read as IPv4), in the resolver's order. socket.gaierror when
    there is none."""
    answers: dict[str, Address] = {}
    for *_, sockaddr in socket.getaddrinfo(host.strip("[]"), port, allowed_gai_family(), socket.SOCK_STREAM):
        answers.setdefault(sockaddr[0], _unmapped(ipaddress.ip_address(sockaddr[0].split("%", 1)[0])))
    if not answers:
        raise socket.gaierror(f"no address for {host}")
    return list(answers.items())


# Both are pure, and asked once per request: a probe run asks the same few hosts thousands of times.
@functools.lru_cache(maxsize=1024)
def is_blocked(address: Address) -> bool:
    """Whether `address`, or the IPv4 address it embeds (mapped, compatible, NAT64, 6to4), is in `BLOCKED`."""
    candidates = [address]
    if isinstance(address, ipaddress.IPv6Address):
        value = int(address)
        if address.ipv4_mapped is not None:
            candidates.append(address.ipv4_mapped)
        elif address.sixtofour is not None:
            candidates.append(address.sixtofour)
        elif value >> 32 == 0 or address in _NAT64:  # ::a.b.c.d (compatible), 64:ff9b::a.b.c.d
            candidates.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    return any(a in network for a in candidates for network in _BLOCKED_NETWORKS)


@functools.lru_cache(maxsize=1024)
def literal_addresses(host: str) -> tuple[Address, ...]:
    """The addresses a host stands for without a lookup: an IP literal in any spelling the system
    resolver reads, `localhost` (RFC 6761); none for a name."""
    lowered = host.lower()
    if lowered == "localhost" or lowered.endswith(".localhost"):
        return (ipaddress.ip_address("127.0.0.1"),)
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        try:
            numeric = _numeric_ipv4(host)
        except ValueError:
            return ()  # refused by destination_refusal before anything connects
        return (numeric,) if numeric is not None else ()
    return (_unmapped(address),)


def host_addresses(host: str) -> list[Address]:
    """The addresses a host stands for: literal forms without a lookup, others from the resolver.
    A name that does not resolve gives none: connecting to it fails anyway."""
    literal = literal_addresses(host)
    if literal or not host:
        return list(literal)
    try:
        infos = socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError, OSError):
        return []
    return [_unmapped(ipaddress.ip_address(info[4][0].split("%", 1)[0])) for info in infos]


def _unmapped(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _numeric_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address of a numeric host in the forms inet_aton reads (1 to 4 parts, each decimal,
    octal or hex: 2852039166, 0251.0376.0251.0376, 0xa9fea9fe, 169.254.43518); None for any other host.
    ValueError for a numeric form whose parts overflow (which some clients wrap around)."""
    parts = host.split(".")
    if len(parts) > 4 or not all(_NUMERIC_PART.fullmatch(part) for part in parts):
        return None
    values = [int(part, 16) if part[:2].lower() == "0x" else int(part, 8) if part.startswith("0") else int(part)
              for part in parts]
    *head, last = values
    if any(value > 255 for value in head) or last >= 256 ** (4 - len(head)):
        raise ValueError(f"{host} is outside the IPv4 range")
    value = last
    for index, part in enumerate(head):
        value += part << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _loopback(address: Address) -> bool:
    # 0.0.0.0 and :: reach the local machine too.
    return address.is_loopback or address.is_unspecified
