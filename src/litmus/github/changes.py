"""Which files a PR changed (REST, paginated; `git diff` when the API cannot be used or lists too many) and which
suites that touches."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from litmus.git import git
from litmus.github.api import GitHubClient
from litmus.github.context import InputError, PullRequest, pull_request_from_payload
from litmus.model import Suite
from litmus.trust import CHECK_PATHS

# GitHub lists at most 3,000 files of a PR (and `paginate` reads at most 30 pages of 100): a listing that long
# may be missing some.
MAX_PR_FILES = 3000


def pull_request_files(client: GitHubClient, repository: str, number: int) -> set[str] | None:
    """Repository-relative paths the PR touches, old names of renamed files included; None when GitHub's listing
    reached its cap, so that a change past it is never taken for no change."""
    changed: set[str] = set()
    listed = 0
    for entry in client.paginate(f"/repos/{repository}/pulls/{number}/files"):
        listed += 1
        changed.add(entry["filename"])
        if entry.get("previous_filename"):
            changed.add(entry["previous_filename"])
    return None if listed >= MAX_PR_FILES else changed


def pull_request_of_commit(client: GitHubClient, repository: str, sha: str) -> PullRequest | None:
    """The open PR whose head is `sha` (else the first open PR containing it), None when there is none."""
    candidates = [pr for pr in client.get(f"/repos/{repository}/commits/{sha}/pulls")
                  if isinstance(pr, dict) and pr.get("state") == "open"]
    candidates.sort(key=lambda pr: (pr.get("head") or {}).get("sha") != sha)  # the PR this commit heads first
    for pr in candidates:
        try:
            return pull_request_from_payload(pr, repository)
        except InputError:
            continue  # not a PR the action can use (e.g. no number): look at the next one
    return None


def git_changed_files(workspace: Path, base_sha: str | None) -> set[str] | None:
    """Paths changed against the PR base, from the checkout itself; None when git cannot tell.

    With a base SHA: `git diff base...HEAD` (needs the base fetched). Without: `HEAD^1 HEAD`, which on
    the merge commit actions/checkout makes for a PR is the PR's whole change (needs fetch-depth: 2).
    """
    ranges = ([f"{base_sha}...HEAD"] if base_sha else []) + ["HEAD^1", "HEAD"]
    attempts = [ranges[:1], ranges[1:]] if base_sha else [ranges]
    for revisions in attempts:
        # The base SHA comes from the event file: `--end-of-options` keeps it from ever being an option.
        listing = git(workspace, "diff", "--name-only", "--end-of-options", *revisions)
        if listing is not None:
            return {line for line in listing.decode("utf-8", "surrogateescape").splitlines() if line}
    return None


def suites_touched(suites: Sequence[Suite], changed: Iterable[str]) -> list[Suite]:
    """The suites whose own file, or a file they read (`Suite.referenced_files`, as the loader resolved them),
    is among `changed`."""
    changed = set(changed)
    return [s for s in suites if not changed.isdisjoint(s.referenced_files)]


def changed_checks(changed: Iterable[str], suites: Sequence[Suite], probe_paths: Sequence[str],
                   config_path: str | None = None) -> list[str]:
    """The changed files that are the PR's own checks: probe files and what they reference (python checks,
    schemas, scenarios, cassettes), the config, and `.litmus/`; for "This pull request changes its own checks"."""
    roots = [p.strip("/") for p in (*probe_paths, *CHECK_PATHS, config_path or "") if p.strip("/")]
    files = {path for suite in suites for path in suite.referenced_files}
    return sorted(path for path in set(changed)
                  if path in files or any(path == root or path.startswith(root + "/") for root in roots))
