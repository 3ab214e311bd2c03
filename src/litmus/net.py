"""Every HTTP request Litmus sends goes through one `Session` kind, which owns the outbound policy.

Probes, judge and embeddings calls, the GitHub API (artifact downloads included) and `wait-for`
each mount their own adapter (pools, retries) on a `Session`; what may be sent where is decided
here, once:

- `User-Agent: litmus/<version>` on every request (a probe may set its own).
- Destinations: http(s) only; `.invalid` names never resolve (RFC 6761); `BLOCKED`, the cloud
  metadata and credential endpoints, is refused whatever spelling names it (numeric forms, IPv4
  embedded in IPv6); a redirect from a non-loopback origin to loopback is refused; an untrusted run
  sends requests only to its allowed origins (`litmus.trust`). A refused request raises
  `RequestRefused` before any connection is made.
- Redirects: every hop is checked like a first request; a hop to another origin loses its
  credential headers. requests reads a redirect's body whole (to reuse the connection, even when it
  does not follow it): the session closes it unread instead.
- Bodies: requests never reads one (every send streams); `read_capped` reads at most a given size.

The first request's destination is checked with `resolve_first`: the probe transport passes
`literal_addresses` (no DNS lookup per probe), the other clients the resolver. The checks are pure
functions of a URL and its addresses (`destination_refusal`, `redirect_refusal`, `is_blocked`) so that
checking the connected address itself (against DNS rebinding) can move into the adapters.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
from collections.abc import Callable, Collection, Sequence
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import BaseAdapter
from urllib3.exceptions import HTTPError as Urllib3Error

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


class Session(requests.Session):
    """A requests Session under the outbound policy (module docstring); `adapter`, when given, serves
    http and https. `origin_allowed` says where an untrusted run may send requests (None: anywhere);
    `resolve_first` gives the first request's addresses for the blocked-address check."""

    def __init__(self, adapter: BaseAdapter | None = None, *, origin_allowed: Callable[[str], bool] | None = None,
                 resolve_first: Resolver | None = None) -> None:
        super().__init__()
        self.headers["User-Agent"] = USER_AGENT
        self.hooks["response"] = [close_redirect]
        self.origin_allowed = origin_allowed
        self.resolve_first = resolve_first or host_addresses
        if adapter is not None:
            self.mount("http://", adapter)
            self.mount("https://", adapter)

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        # requests calls this for the first request and for every redirect hop it follows (never for the
        # next hop of one it does not follow): the one place that sees each request before it connects.
        source = getattr(request, "litmus_redirected_from", None)
        if source is None:
            refusal = (destination_refusal(request.url, resolve=self.resolve_first)
                       or origin_refusal(request.url, self.origin_allowed))
        else:
            refusal = redirect_refusal(source, request.url, origin_allowed=self.origin_allowed)
        if refusal:
            raise RequestRefused(refusal, request=request)
        kwargs["stream"] = True  # bodies are read under a cap by the caller, never whole by requests
        return super().send(request, **kwargs)

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> list[str]:
        """requests' hook for each redirect hop, built and not yet sent: marks it as a hop (`send` checks
        it as one) and drops the credential headers when it leaves the origin. Returns the names dropped."""
        source = response.request.url
        prepared_request.litmus_redirected_from = source
        if origin(source) == origin(prepared_request.url):
            return []
        return strip_headers(prepared_request, CREDENTIAL_HEADERS)


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
