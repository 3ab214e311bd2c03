"""A file of a commit, read through the contents API, files committed to a branch through the Git database
API, and what two commits differ in: the comment commands never fetch, check out or run the pull request's
code.

The commit is a compare-and-swap on the branch head (research: github_trust_model.md section 5):
`GET ref` -> `GET commit` (its tree) -> `POST blobs` -> `POST trees` (on that tree) -> `POST commits`
(its parent the head read first) -> `PATCH ref` with `force: false`. GitHub refuses a non-forced update
that is not a fast-forward (409/422), so a push between the read and the update fails the commit
(`BranchMoved`) instead of being overwritten.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from urllib.parse import quote

from litmus.github.api import GitHubAPIError, GitHubClient

# The contents API inlines a file's bytes up to 1 MB; a decisions file larger than that is not one we wrote.
MAX_INLINE_BYTES = 1024 * 1024
# The compare endpoint lists at most this many changed files.
MAX_COMPARED_FILES = 300


class BranchMoved(Exception):
    """The branch is no longer at the commit the change was made on: nothing was written."""


def file_at(client: GitHubClient, repository: str, path: str, ref: str) -> bytes | None:
    """The bytes of `path` at commit `ref` (None when there is no such file); ValueError when GitHub's answer is
    not a file whose content it inlined."""
    try:
        found = client.get(f"/repos/{repository}/contents/{quote(path)}", ref=ref)
    except GitHubAPIError as exc:
        if exc.status == 404:
            return None
        raise
    if not isinstance(found, dict) or found.get("type") != "file":
        raise ValueError(f"{path} at {ref[:12]} is not a file")
    if found.get("path") != path:
        # GitHub answers a symbolic link to a file with the file it leads to: never read (nor written) as its own.
        raise ValueError(f"{path} at {ref[:12]} is a symbolic link (to {found.get('path')})")
    if found.get("encoding") != "base64" or int(found.get("size") or 0) > MAX_INLINE_BYTES:
        raise ValueError(f"{path} at {ref[:12]} is larger than {MAX_INLINE_BYTES // 2**20} MB")
    try:
        return base64.b64decode(found.get("content") or "")
    except (binascii.Error, ValueError):
        raise ValueError(f"GitHub's content of {path} at {ref[:12]} is not base64") from None


def commit_files(client: GitHubClient, repository: str, branch: str, expected_head: str, changes: Mapping[str, bytes],
                 message: str) -> tuple[str, dict[str, str]]:
    """Commit `changes` (path -> bytes) on top of `expected_head` as one commit and move `branch` to it, only as a
    fast-forward from `expected_head`: the new commit's sha and each path's blob sha. BranchMoved when the branch
    is elsewhere, before or during."""
    ref = f"/repos/{repository}/git/refs/heads/{quote(branch)}"
    head = client.get(f"/repos/{repository}/git/ref/heads/{quote(branch)}")["object"]["sha"]
    if head != expected_head:
        raise BranchMoved(f"{branch} is at {head[:12]}, not {expected_head[:12]}")
    tree = client.get(f"/repos/{repository}/git/commits/{head}")["tree"]["sha"]
    blobs = {path: client.post(f"/repos/{repository}/git/blobs",
                               {"content": base64.b64encode(data).decode("ascii"), "encoding": "base64"})["sha"]
             for path, data in changes.items()}
    new_tree = client.post(f"/repos/{repository}/git/trees", {
        "base_tree": tree, "tree": [{"path": path, "mode": "100644", "type": "blob", "sha": blob}
                                    for path, blob in blobs.items()]})["sha"]
    commit = client.post(f"/repos/{repository}/git/commits",
                         {"message": message, "tree": new_tree, "parents": [head]})["sha"]
    try:
        client.patch(ref, {"sha": commit, "force": False})
    except GitHubAPIError as exc:
        if exc.status in (409, 422):
            raise BranchMoved(f"{branch} moved while the commit was made ({exc.message})") from None
        raise
    return commit, blobs


def changes_beyond(client: GitHubClient, repository: str, base: str, head: str,
                   handler_wrote: Callable[[str, str | None], bool]) -> str | None:
    """Why `head` is not `base` plus files the comment commands wrote (None when it is): results made for `base`
    then still hold for `head`. `handler_wrote(path, blob sha at head or None when removed)` says whether a changed
    file is one of those. Asked of the compare endpoint; a comparison GitHub cuts short (it lists at most 300
    files) or cannot make is a reason too."""
    try:
        compared = client.get(f"/repos/{repository}/compare/{base}...{head}")
    except GitHubAPIError as exc:
        return f"GitHub cannot compare {base[:12]}...{head[:12]} (HTTP {exc.status})"
    status = compared.get("status") if isinstance(compared, dict) else None
    if status == "identical":
        return None
    if status != "ahead":
        return f"{head[:12]} does not descend from {base[:12]} ({status})"
    changed = compared.get("files") or []
    if not changed or len(changed) >= MAX_COMPARED_FILES:
        return f"the files {base[:12]}...{head[:12]} changes are not all known"
    others = []
    for entry in changed:
        name = str(entry.get("filename"))
        if not handler_wrote(name, None if entry.get("status") == "removed" else entry.get("sha")):
            others.append(name)
    others.sort()
    if others:
        return f"{base[:12]}...{head[:12]} changes {others[0]}" + (f" and {len(others) - 1} more" if others[1:] else "")
    return None
