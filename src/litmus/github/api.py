"""A small GitHub REST client: authenticated `requests` session, retries by urllib3, `Link` pagination.

Idempotent requests (GET, PATCH of a known object) are retried on 429/5xx with backoff, honouring
`Retry-After`; a POST is never retried, so a flaky network cannot post a comment twice.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from litmus import __version__

# GitHub caps list pages at 100 items; 30 pages covers the 3,000-file limit of a PR's file list.
PER_PAGE = 100
MAX_PAGES = 30


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
        self.session = requests.Session()
        self.session.headers.update({
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": f"litmus/{__version__}",
        })
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        retry = Retry(
            total=retries, backoff_factor=backoff, status_forcelist=(429, 500, 502, 503, 504),
            allowed_methods=frozenset({"GET", "HEAD", "PATCH", "PUT"}), respect_retry_after_header=True,
            raise_on_status=False,
        )
        adapter = HTTPAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def hurry(self, timeout: float) -> None:
        """After a cancellation: every later request gets `timeout` seconds and no retry."""
        self.timeout = timeout
        adapter = HTTPAdapter(max_retries=Retry(total=0, raise_on_status=False))
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def request(self, method: str, path: str, *, json: Any = None, params: dict | None = None,
                stream: bool = False) -> requests.Response:
        url = path if path.startswith(("http://", "https://")) else f"{self.api_url}{path}"
        try:
            response = self.session.request(method, url, json=json, params=params, timeout=self.timeout,
                                            stream=stream)
        except requests.RequestException as exc:
            raise GitHubAPIError(method, path, 0, f"no response ({type(exc).__name__})") from None
        if response.status_code >= 400:
            raise GitHubAPIError(method, path, response.status_code, _error_message(response))
        return response

    def download(self, path: str, max_bytes: int) -> bytes:
        """A binary resource, read up to `max_bytes`. An artifact's zip is a 302 to a short-lived storage
        URL on another host, which requests follows without our Authorization header."""
        response = self.request("GET", path, stream=True)
        chunks, size = [], 0
        try:
            for chunk in response.iter_content(64 * 1024):
                size += len(chunk)
                if size > max_bytes:
                    raise GitHubAPIError("GET", path, response.status_code, f"larger than {max_bytes} bytes")
                chunks.append(chunk)
        except requests.RequestException as exc:
            raise GitHubAPIError("GET", path, 0, f"download broke off ({type(exc).__name__})") from None
        finally:
            response.close()
        return b"".join(chunks)

    def get(self, path: str, **params) -> Any:
        return self.request("GET", path, params=params or None).json()

    def post(self, path: str, body: dict) -> Any:
        return self.request("POST", path, json=body).json()

    def patch(self, path: str, body: dict) -> Any:
        return self.request("PATCH", path, json=body).json()

    def paginate(self, path: str, **params) -> Iterator[Any]:
        """Every item of a list endpoint, following the `Link: rel="next"` header page by page."""
        url: str | None = path
        query: dict | None = {"per_page": PER_PAGE, **params}
        for _ in range(MAX_PAGES):
            response = self.request("GET", url, params=query)
            yield from response.json()
            url = response.links.get("next", {}).get("url")
            if not url:
                return
            query = None  # the next link carries the query already


def _error_message(response: requests.Response) -> str:
    try:
        message = response.json().get("message")
    except ValueError:
        message = None
    # The message is GitHub's text: short and single-line here, echoed only through `untrusted()`.
    return str(message or response.reason or "error")[:300].replace("\n", " ")
