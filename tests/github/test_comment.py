from http.server import BaseHTTPRequestHandler

import pytest

from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.github.comment import BODY_LIMIT, MARKER, fit_body, token_login, upsert_comment
from support.server import LocalServer

REPO = "acme/shop"


def client(gh, token="ghs_workflow"):
    return GitHubClient(gh.base_url, token, retries=0)


def test_token_login_for_a_pat_and_for_the_workflow_token(fake_github):
    fake_github.state.pats["ghp_pat"] = "octo-bot"
    assert token_login(client(fake_github, "ghp_pat")) == "octo-bot"
    assert token_login(client(fake_github)) == "github-actions[bot]"


def test_created_then_updated_then_unchanged(fake_github):
    gh = client(fake_github)
    first = upsert_comment(gh, REPO, 42, f"{MARKER}\nrun 1", author="github-actions[bot]")
    second = upsert_comment(gh, REPO, 42, f"{MARKER}\nrun 2", author="github-actions[bot]")
    third = upsert_comment(gh, REPO, 42, f"{MARKER}\nrun 2", author="github-actions[bot]")
    assert [r.action for r in (first, second, third)] == ["created", "updated", "unchanged"]
    assert first.id == second.id == third.id and "issuecomment" in first.url
    comments = fake_github.state.comments[(REPO, 42)]
    assert len(comments) == 1 and comments[0]["body"] == f"{MARKER}\nrun 2"
    assert len(fake_github.calls("POST")) == 1 and len(fake_github.calls("PATCH")) == 1
    assert all(c.headers["Authorization"] == "Bearer ghs_workflow" for c in fake_github.state.calls)


def test_marker_search_spans_pages_and_ignores_other_authors(fake_github):
    state = fake_github.state
    for i in range(230):
        state.add_comment(REPO, 42, f"chatter {i}", "someone")
    state.add_comment(REPO, 42, f"{MARKER} hijack attempt", "mallory")
    ours = state.add_comment(REPO, 42, f"{MARKER}\nold", "github-actions[bot]")
    result = upsert_comment(client(fake_github), REPO, 42, f"{MARKER}\nnew", author="github-actions[bot]")
    assert result.action == "updated" and result.id == ours["id"]
    pages = fake_github.calls("GET", r"/issues/42/comments$")
    assert [c.query.get("page", "1") for c in pages] == ["1", "2", "3"]
    assert pages[0].query["per_page"] == "100"
    assert state.comments[(REPO, 42)][-2]["body"] == f"{MARKER} hijack attempt"


def test_marker_is_added_when_the_body_lacks_it(fake_github):
    upsert_comment(client(fake_github), REPO, 1, "plain", author="github-actions[bot]")
    assert fake_github.state.comments[(REPO, 1)][0]["body"] == f"plain\n{MARKER}\n"


def test_a_read_only_token_raises_forbidden(fake_github):
    fake_github.state.deny.add("comment-write")
    with pytest.raises(GitHubAPIError) as info:
        upsert_comment(client(fake_github), REPO, 7, MARKER, author="github-actions[bot]")
    assert info.value.forbidden and info.value.status == 403
    assert "Resource not accessible by integration" in str(info.value)


def test_over_long_bodies_are_cut_to_the_limit_with_the_marker_kept():
    body = MARKER + "\n" + "x" * 100 + "\n" + "finding line\n" * 10_000
    cut = fit_body(body)
    assert len(cut) <= BODY_LIMIT and cut.startswith(MARKER) and cut.rstrip().endswith(MARKER)
    assert "**Cut at GitHub's 65,536-character limit for a comment**" in cut
    assert fit_body("short") == "short"


def test_server_errors_on_get_are_retried(fake_github):
    hits = []

    class Flaky(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            hits.append(self.path)
            status, body = (503, b"{}") if len(hits) < 3 else (200, b'{"login": "x"}')
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with LocalServer(Flaky) as server:
        gh = GitHubClient(server.base_url, "t", retries=3, backoff=0.01)
        assert gh.get("/user") == {"login": "x"} and len(hits) == 3
