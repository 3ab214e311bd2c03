"""Whether the commit checked out in the workspace is this repository's own: the evidence behind `Trust`.

The contract ("Trust in the action"): the commit is `git rev-parse HEAD` of the workspace, with the
probe paths, `litmus.yaml` and `.litmus/` as committed; it is trusted only when it can be shown to be on
a branch of this repository (a branch's head, or `compare/{branch}...{sha}` answering `identical` or
`behind`), or, on `pull_request`, when the PR comes from this repository itself and the checkout is its
head or merge commit. Whatever cannot be shown (no git, an API error, no token, no PR) is untrusted:
the event says only what is probed, never who wrote the files.

Git and the REST API are asked at the edges (`read_checkout`, `ask_branches`); the decision itself is
made by pure functions (`same_repository_pull_request`, `branch_verdict`) from what they found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from litmus import git
from litmus.config import DEFAULT_CACHE_DIR
from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.github.context import GitHubContext
from litmus.trust import CHECK_PATHS

# The cache Litmus itself writes under `.litmus/` (gitignored); whether a restored cache may be used is the
# cache's own rule, so its files do not count as changes to the checkout.
OWN_OUTPUT = DEFAULT_CACHE_DIR + "/"
# Statuses of `compare/{branch}...{sha}` that put `sha` on `branch`.
ON_BRANCH = ("identical", "behind")
SHOWN_PATHS = 5


@dataclass(frozen=True)
class Checkout:
    """What git says about the workspace: the commit, or why there is none, and the changed files."""

    sha: str | None
    problem: str = ""
    # Probe, config and `.litmus/` paths whose work-tree content is not the commit's (untracked and ignored
    # files included: a file the commit lacks is not any branch's).
    changed: tuple[str, ...] = ()


def decide_trust(ctx: GitHubContext, client: GitHubClient | None, workspace: Path,
                 probe_paths: Sequence[str]) -> tuple[bool, str]:
    """(trusted, the reason in one sentence starting "trusted:" or "untrusted:") for the workspace's checkout."""
    checkout = read_checkout(workspace, [*probe_paths, *CHECK_PATHS])
    if checkout.sha is None:
        return False, f"untrusted: {checkout.problem}"
    short = checkout.sha[:8]
    if checkout.changed:
        return False, (f"untrusted: the work tree differs from commit {short} in {_listed(checkout.changed)}"
                       " (files no branch holds)")
    proof = same_repository_pull_request(ctx, checkout.sha)
    if proof:
        return True, f"trusted: {proof}"
    if not ctx.repository:
        return False, f"untrusted: commit {short} cannot be shown to be on a branch: the repository is unknown"
    if client is None:
        return False, (f"untrusted: commit {short} cannot be shown to be on a branch of {ctx.repository}: "
                       "no GitHub token to ask")
    branches, comparisons = ask_branches(client, ctx.repository, checkout.sha, branches_to_compare(ctx))
    return branch_verdict(checkout.sha, ctx.repository, branches, comparisons)


def read_checkout(workspace: Path, paths: Sequence[str]) -> Checkout:
    """HEAD of the workspace and which of `paths` the work tree changes (git's answer, never a guess)."""
    head = git.run(workspace, "rev-parse", "--verify", "HEAD^{commit}")
    if head is None or head.returncode != 0:
        return Checkout(None, f"no commit is checked out in {workspace} ({_why(head, 'no HEAD')})")
    sha = _text(head.stdout).strip()
    # Literal pathspecs: a probe path is a path, never pathspec magic such as `:(exclude)`.
    status = git.run(workspace, "--literal-pathspecs", "status", "--porcelain=v1", "-z", "--untracked-files=all",
                  "--ignored=matching", "--no-renames", "--", *paths)
    if status is None or status.returncode != 0:
        return Checkout(None, f"cannot tell whether the work tree is commit {sha[:8]} ({_why(status, 'failed')})")
    changed = [entry[3:] for entry in _text(status.stdout).split("\0") if len(entry) > 3]
    return Checkout(sha, changed=tuple(sorted(p for p in changed if not p.startswith(OWN_OUTPUT))))


def same_repository_pull_request(ctx: GitHubContext, sha: str) -> str | None:
    """On `pull_request`: why `sha` is trusted when the PR's head repository is this one and `sha` is its head
    or merge commit (`GITHUB_SHA`); None otherwise. Needs no API: the payload is GitHub's, not the PR's."""
    if ctx.event_name != "pull_request":
        return None
    pull = ctx.event.get("pull_request") or {}
    head = pull.get("head") or {}
    head_repo, repo = head.get("repo") or {}, ctx.event.get("repository") or {}
    name = repo.get("full_name")
    if not name or head_repo.get("full_name") != name or (ctx.repository and ctx.repository != name):
        return None
    if None not in (head_repo.get("id"), repo.get("id")) and head_repo["id"] != repo["id"]:
        return None
    number = pull.get("number")
    if sha == head.get("sha"):
        return f"commit {sha[:8]} is the head of pull request #{number}, whose branch is in {name} itself"
    if sha == ctx.sha:
        return f"commit {sha[:8]} is the merge commit of pull request #{number}, whose branch is in {name} itself"
    return None


def branches_to_compare(ctx: GitHubContext) -> list[str]:
    """The repository's default branch and, for a PR, its base branch (the event's, in that order)."""
    names = [(ctx.event.get("repository") or {}).get("default_branch"),
             ((ctx.event.get("pull_request") or {}).get("base") or {}).get("ref")]
    return list(dict.fromkeys(n for n in names if isinstance(n, str) and n))


def ask_branches(client: GitHubClient, repository: str, sha: str,
                 branches: Sequence[str]) -> tuple[list[str] | str, list[tuple[str, str]]]:
    """The branches whose head is `sha` (or what went wrong asking) and, per branch, the status of
    `compare/{branch}...{sha}` (or what went wrong)."""
    try:
        listed = client.get(f"/repos/{repository}/commits/{sha}/branches-where-head")
        heads: list[str] | str = [b["name"] for b in listed if isinstance(b, dict) and isinstance(b.get("name"), str)]
    except GitHubAPIError as exc:
        heads = f"HTTP {exc.status}" if exc.status else exc.message
    except (ValueError, TypeError):
        heads = "an unreadable answer"
    comparisons = []
    for branch in branches:
        try:
            status = client.get(f"/repos/{repository}/compare/{quote(branch, safe='/')}...{sha}").get("status")
            comparisons.append((branch, status if isinstance(status, str) else "an unreadable answer"))
        except GitHubAPIError as exc:
            comparisons.append((branch, f"HTTP {exc.status}" if exc.status else exc.message))
        except (ValueError, AttributeError):
            comparisons.append((branch, "an unreadable answer"))
    return heads, comparisons


def branch_verdict(sha: str, repository: str, heads: list[str] | str,
                   comparisons: Sequence[tuple[str, str]]) -> tuple[bool, str]:
    """Trusted when a branch's head is `sha` or a comparison puts `sha` on a branch; else untrusted, with
    every answer (`heads` is a list of branches or what went wrong asking)."""
    short = sha[:8]
    if isinstance(heads, list) and heads:
        return True, f"trusted: commit {short} is the head of branch {_shown(heads[0])} of {repository}"
    for branch, status in comparisons:
        if status in ON_BRANCH:
            return True, (f"trusted: commit {short} is on branch {_shown(branch)} of {repository} "
                          f"(compare {_shown(branch)}...{short}: {status})")
    answers = [f"branches-where-head: {'none' if isinstance(heads, list) else heads}"]
    answers += [f"compare {_shown(branch)}...{short}: {status}" for branch, status in comparisons]
    if not comparisons:
        answers.append("compare: no default or base branch in the event")
    return False, f"untrusted: commit {short} is not on a branch of {repository} ({'; '.join(answers)})"


def _listed(paths: Sequence[str]) -> str:
    shown = ", ".join(_shown(p) for p in paths[:SHOWN_PATHS])
    return shown + (f" and {len(paths) - SHOWN_PATHS} more" if len(paths) > SHOWN_PATHS else "")


def _why(done, default: str) -> str:
    """Why a git command gave no answer (its last line on stderr), as one printable line."""
    if done is None:
        return "git cannot run there"
    return _shown((_text(done.stderr).strip().splitlines() or [default])[-1])


def _text(output: bytes) -> str:
    """git's output as text (paths in any encoding git was given survive as surrogates)."""
    return output.decode("utf-8", "surrogateescape")


def _shown(text: str) -> str:
    """A name from git or the event as one printable line (it reaches the log and results.json)."""
    return text if text.isprintable() else ascii(text)
