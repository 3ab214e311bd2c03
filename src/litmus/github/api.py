"""A small GitHub REST client: an authenticated `litmus.net` session, retries by urllib3, `Link` pagination,
bodies read under a cap.

Idempotent requests (GET, PATCH of a known object) are retried on 429/5xx with backoff, honouring
`Retry-After` (a retried response is closed unread, `net.Retry`); a POST is never retried, so a flaky
network cannot post a comment twice.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import requests

from litmus import net

# GitHub caps list pages at 100 items; 30 pages covers the 3,000-file limit of a PR's file list.
PER_PAGE = 100
MAX_PAGES = 30
# A response body is read at most this far: a page of 100 files with their patches fits well within it.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024


def token_forms(token: str) -> list[str]:
    """The token and the forms it takes on the wire, each of which must be masked like the token.

    actions/checkout persists it as `AUTHORIZATION: basic base64(x-access-token:TOKEN)` in .git/config,
    and git sends that header; a probe or a report may quote either form.
    """
    if not token:
        return []
    basic = f"x-access-token:{token}"
    return [token, basic, base64.b64encode(basic.encode("utf-8")).decode("ascii")]


class GitHubAPIError(Exception):
    def __init__(self, method: str, path: str, status: int, message: str) -> None:
        super().__init__(f"{method} {path}: HTTP {status}: {message}")
        self.method = method
        self.path = path
        self.status = status
        self.message = message

    @property
    def forbidden(self) -> bool:
        """The token may not do this (read-only fork token, missing `permissions:`), or it is not visible."""
        return self.status in (403, 404)


class GitHubClient:
    def __init__(
        self, api_url: str, token: str, *, retries: int = 3, backoff: float = 0.5, timeout: float = 30.0,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.timeout = timeout
        retry = net.Retry(
            total=retries, backoff_factor=backoff, status_forcelist=(429, 500, 502, 503, 504),
            allowed_methods=frozenset({"GET", "HEAD", "PATCH", "PUT"}), respect_retry_after_header=True,
            raise_on_status=False,
        )
        self.session = net.Session(net.Adapter(max_retries=retry))
        self.session.headers.update({"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"})
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def hurry(self, timeout: float) -> None:
        """After a cancellation: every later request gets `timeout` seconds and no retry."""
        self.timeout = timeout
        adapter = net.Adapter(max_retries=net.Retry(total=0, raise_on_status=False))
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def request(self, method: str, path: str, *, json: Any = None, params: dict | None = None,
                max_bytes: int = MAX_RESPONSE_BYTES) -> tuple[requests.Response, bytes]:
        """The response and its body, read at most `max_bytes` (a larger one is an error). A redirect (an
        artifact's zip is a 302 to a short-lived storage URL on another host) is followed under
        `litmus.net`'s policy, which drops our Authorization header when it leaves the API's origin."""
        url = path if path.startswith(("http://", "https://")) else f"{self.api_url}{path}"
        try:
            response = self.session.request(method, url, json=json, params=params, timeout=self.timeout)
        except net.RequestRefused as exc:
            raise GitHubAPIError(method, path, 0, str(exc)) from None
        except requests.RequestException as exc:
            raise GitHubAPIError(method, path, 0, f"no response ({type(exc).__name__})") from None
        try:
            body = net.read_capped(response, max_bytes)
        except net.BodyTooLarge:
            raise GitHubAPIError(method, path, response.status_code, f"larger than {max_bytes} bytes") from None
        except requests.RequestException as exc:
            raise GitHubAPIError(method, path, 0, f"the response broke off ({type(exc).__name__})") from None
        if response.status_code >= 400:
            raise GitHubAPIError(method, path, response.status_code, _error_message(body, response.reason))
        return response, body

    def download(self, path: str, max_bytes: int) -> bytes:
        """A binary resource, read up to `max_bytes`."""
        return self.request("GET", path, max_bytes=max_bytes)[1]

    def get(self, path: str, **params) -> Any:
        return json.loads(self.request("GET", path, params=params or None)[1])

    def post(self, path: str, body: dict) -> Any:
        return json.loads(self.request("POST", path, json=body)[1])

    def patch(self, path: str, body: dict) -> Any:
        return json.loads(self.request("PATCH", path, json=body)[1])

    def paginate(self, path: str, **params) -> Iterator[Any]:
        """Every item of a list endpoint, following the `Link: rel="next"` header page by page."""
        url: str | None = path
        query: dict | None = {"per_page": PER_PAGE, **params}
        for _ in range(MAX_PAGES):
            response, body = self.request("GET", url, params=query)
            yield from json.loads(body)
            url = response.links.get("next", {}).get("url")
            if not url:
                return
            query = None  # the next link carries the query already


def _error_message(body: bytes, reason: str | None) -> str:
    try:
        data = json.loads(body)
        message = data.get("message") if isinstance(data, dict) else None
    except ValueError:
        message = None
    # The message is GitHub's text: short and single-line here, echoed only through `untrusted()`.
    return str(message or reason or "error")[:300].replace("\n", " ")
