"""Every kind of request Litmus sends (a probe, a judge call, the GitHub API, `wait-for`) goes through
litmus.net's session: it says `User-Agent: litmus/<version>`, a body is read only up to its client's cap
(the server sees the client stop), and a cloud metadata address is refused before connecting.
Real servers on 127.0.0.1; the probe runs through the `litmus` command."""

from __future__ import annotations

import socket

import pytest
from pipeline import run_litmus, write_suite

from litmus import __version__
from litmus.config import ProviderConfig
from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.github.wait import NotReady, wait_until_ready
from litmus.judges.prompts import Prompt
from litmus.judges.providers import OpenAIProvider, ProviderError
from support.fake_judge import API_KEY
from support.raw_server import RawServer

USER_AGENT = f"litmus/{__version__}"
MB = 1024 * 1024
PROMPT = Prompt(kind="tone", system="s", user="u", summary="tone", version="1")


class Endless:
    """A route announcing a 3 GB body and sending up to `limit` bytes of it, counting what went out."""

    def __init__(self, limit: int, head: bytes = b"HTTP/1.1 200 OK") -> None:
        self.limit, self.head, self.sent = limit, head, 0

    def __call__(self, sock: socket.socket) -> None:
        sock.sendall(self.head + b"\r\nContent-Type: application/json\r\nContent-Length: 3000000000\r\n\r\n")
        chunk = b" " * (256 * 1024)
        while self.sent < self.limit:
            sock.sendall(chunk)
            self.sent += len(chunk)


def test_every_kind_of_request_says_it_is_litmus(tmp_path, target, fake_judge, fake_github):
    target.text("/ok", "ok")
    write_suite(tmp_path, "ua.yaml", "version: 1\nsuite: UA\nflows:\n  - name: f\n    steps:\n"
                                     "      - name: s\n        request: {url: /ok}\n")
    ran = run_litmus(["run", "--base-url", target.base_url, "--out", "out"], cwd=tmp_path)
    assert ran.code == 0, ran.output
    wait_until_ready(target.url("/ok"), 5, log=lambda _: None)
    judge = OpenAIProvider(ProviderConfig("openai", "m", base_url=fake_judge.openai_base_url), API_KEY,
                           timeout_ms=5000, retries=0, max_tokens=10, pool_size=1)
    judge.complete(PROMPT)
    judge.close()
    GitHubClient(fake_github.base_url, "t", retries=0).get("/repos/o/r/issues/1/comments")
    probe, waited = target.requests
    assert probe.headers["User-Agent"] == waited.headers["User-Agent"] == USER_AGENT
    assert fake_judge.calls()[0].headers["user-agent"] == USER_AGENT
    assert fake_github.calls()[0].headers["User-Agent"] == USER_AGENT


def test_a_judge_reply_of_many_megabytes_is_read_only_to_the_cap():
    endless = Endless(64 * MB)
    with RawServer({"/v1/chat/completions": endless}) as server:
        judge = OpenAIProvider(ProviderConfig("openai", "m", base_url=server.base_url + "/v1"), "k",
                               timeout_ms=10_000, retries=0, max_tokens=10, pool_size=1)
        with pytest.raises(ProviderError, match="larger than"):
            judge.complete(PROMPT)
        judge.close()
    assert endless.sent < 24 * MB  # the 4 MiB cap, and what the socket buffers took meanwhile


def test_a_judge_endpoint_on_a_metadata_address_is_refused():
    judge = OpenAIProvider(ProviderConfig("openai", "m", base_url="http://169.254.169.254/v1"), "k",
                           timeout_ms=10_000, retries=0, max_tokens=10, pool_size=1)
    with pytest.raises(ProviderError, match="cloud metadata address refused"):
        judge.complete(PROMPT)


def test_a_github_response_is_read_only_to_the_cap():
    page, artifact = Endless(96 * MB), Endless(96 * MB)
    with RawServer({"/repos/o/r/pulls/1/files": page, "/artifact.zip": artifact}) as server:
        client = GitHubClient(server.base_url, "t", retries=0)
        with pytest.raises(GitHubAPIError, match="larger than"):
            client.get("/repos/o/r/pulls/1/files")
        with pytest.raises(GitHubAPIError, match="larger than 1048576 bytes"):
            client.download("/artifact.zip", MB)
    assert page.sent < 48 * MB  # the 32 MiB cap of an API response, and the socket buffers
    assert artifact.sent < 16 * MB


def test_wait_for_reads_no_body_of_a_response_or_a_redirect():
    ready = Endless(64 * MB)
    redirect = Endless(64 * MB, head=b"HTTP/1.1 302 Found\r\nLocation: /health")
    with RawServer({"/health": ready, "/moved": redirect}) as server:
        wait_until_ready(server.url("/moved"), 10, interval_s=0.1, log=lambda _: None)
        assert server.hits["/health"] == 1
    assert ready.sent < 16 * MB and redirect.sent < 16 * MB


def test_wait_for_refuses_a_redirect_to_the_metadata_service():
    metadata = b"HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/latest/meta-data/\r\nContent-Length: 0\r\n\r\n"
    with RawServer({"/health": lambda sock: sock.sendall(metadata)}) as server:
        with pytest.raises(NotReady, match="redirect to a link-local or cloud metadata address refused: "
                                           "http://169.254.169.254/latest/meta-data/"):
            wait_until_ready(server.url("/health"), 3, interval_s=0.1, log=lambda _: None)
        assert server.hits["/health"] == 1  # not polled again: the refusal is final


def test_a_judge_retrying_a_503_with_an_endless_body_does_not_read_it():
    # urllib3 reads a retried response's body to its end before the next try: this one has none.
    endless = Endless(64 * MB, head=b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 0")
    with RawServer({"/v1/chat/completions": endless}) as server:
        judge = OpenAIProvider(ProviderConfig("openai", "m", base_url=server.base_url + "/v1"), "k",
                               timeout_ms=10_000, retries=2, max_tokens=10, pool_size=1)
        with pytest.raises(ProviderError, match="larger than"):  # the last reply, read under its cap
            judge.complete(PROMPT)
        judge.close()
        assert server.hits["/v1/chat/completions"] == 3
    assert endless.sent < 32 * MB  # the 4 MiB cap once, and what the socket buffers took three times


def test_github_retrying_a_503_with_an_endless_body_does_not_read_it():
    endless = Endless(96 * MB, head=b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 0")
    with RawServer({"/repos/o/r": endless}) as server:
        with pytest.raises(GitHubAPIError, match="larger than"):
            GitHubClient(server.base_url, "t", retries=2, backoff=0).get("/repos/o/r")
        assert server.hits["/repos/o/r"] == 3
    assert endless.sent < 64 * MB  # the 32 MiB cap once, and the socket buffers
