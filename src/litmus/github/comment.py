"""The sticky PR comment: one comment per PR, found by its hidden marker and author, updated in place.

Whose comment counts: only one written by the token's own user, so nobody can hijack the report by
pasting the marker into a comment of their own. `GET /user` names that user for a personal access
token; the workflow's `GITHUB_TOKEN` is an installation token for which `GET /user` answers 403, and
its comments are authored by `github-actions[bot]`, which is then the author we look for.
"""

from __future__ import annotations

from dataclasses import dataclass

from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.report.markdown import MARKER
from litmus.report.markdown_cut import fit

WORKFLOW_TOKEN_LOGIN = "github-actions[bot]"
# GitHub refuses a comment body longer than 65,536 characters (HTTP 422).
BODY_LIMIT = 65_536


@dataclass(frozen=True)
class CommentResult:
    action: str  # created | updated | unchanged
    id: int
    url: str


def token_login(client: GitHubClient) -> str:
    try:
        return client.get("/user")["login"]
    except GitHubAPIError as exc:
        if exc.status in (401, 403, 404):
            return WORKFLOW_TOKEN_LOGIN
        raise


def fit_body(body: str, limit: int = BODY_LIMIT) -> str:
    """The body within GitHub's limit, cut at a block boundary (`markdown_cut.fit`), marker kept; the
    reports already budget for it, this is the guard."""
    if len(body) <= limit:
        return body
    tail = f"{MARKER}\n"
    return fit(body, limit - len(tail), limit_text=f"GitHub's {limit:,}-character limit for a comment",
               where="The job summary and the report artifact hold the whole report.") + tail


def upsert_comment(
    client: GitHubClient, repository: str, number: int, body: str, *, author: str, marker: str = MARKER,
) -> CommentResult:
    """PATCH our marked comment when there is one (and its body changed), else POST a new one."""
    body = fit_body(body)
    if marker not in body:
        body = f"{body}\n{marker}\n"
    existing = next(
        (
            comment for comment in client.paginate(f"/repos/{repository}/issues/{number}/comments")
            if marker in (comment.get("body") or "") and (comment.get("user") or {}).get("login") == author
        ),
        None,
    )
    if existing is None:
        created = client.post(f"/repos/{repository}/issues/{number}/comments", {"body": body})
        return CommentResult("created", created["id"], created.get("html_url", ""))
    if existing.get("body") == body:
        return CommentResult("unchanged", existing["id"], existing.get("html_url", ""))
    updated = client.patch(f"/repos/{repository}/issues/comments/{existing['id']}", {"body": body})
    return CommentResult("updated", updated["id"], updated.get("html_url", ""))
