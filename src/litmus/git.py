"""Reading the repository through git: files as they are at a commit, and which files git tracks.

The action's container runs as root on a checkout owned by the runner user, so every command marks
the repository safe for that command only (`-c safe.directory=<root>`), never globally.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

# A commit id as the event payload gives it: hex only, so it can never be read as an option.
_COMMIT = re.compile(r"[0-9a-fA-F]{7,64}")
_TIMEOUT_S = 60


def run(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes] | None:
    """`git ARGS` in `cwd` (default `root`), its output captured; None when git is missing or hangs."""
    try:
        return subprocess.run(["git", "-c", f"safe.directory={root.resolve()}", *args], cwd=cwd or root,
                              capture_output=True, timeout=_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def git(root: Path, *args: str, cwd: Path | None = None) -> bytes | None:
    """The stdout of `git ARGS` in `cwd` (default `root`); None when git is missing, fails or hangs."""
    done = run(root, *args, cwd=cwd)
    return done.stdout if done is not None and done.returncode == 0 else None


def has_commit(root: Path, sha: str) -> bool:
    """Whether `sha` is a commit present in the repository at `root` (e.g. not missing from a shallow clone)."""
    if not _COMMIT.fullmatch(sha):
        return False
    return git(root, "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}") is not None


def file_size_at(root: Path, sha: str, path: str) -> int | None:
    """The size in bytes of the repository-relative `path` at commit `sha`; None when it is not there."""
    out = git(root, "cat-file", "-s", f"{sha}:{path}") if _COMMIT.fullmatch(sha) else None
    return int(out) if out and out.strip().isdigit() else None


def file_at(root: Path, sha: str, path: str) -> bytes | None:
    """The bytes of the repository-relative `path` at commit `sha` (check its size first); None when absent."""
    return git(root, "cat-file", "blob", f"{sha}:{path}") if _COMMIT.fullmatch(sha) else None


def is_tracked(path: Path, root: Path) -> bool:
    """Whether git tracks the file `path` (inside `root`) in the repository at `root`; False when it does not,
    when `root` is no repository, or git is unavailable."""
    if not (root / ".git").exists():
        return False
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    return git(root, "ls-files", "--error-unmatch", "--", f":(literal){relative}") is not None


def tracked_names(directory: Path, root: Path) -> frozenset[str]:
    """Names of the files directly in `directory` that git tracks in the repository at `root`; empty when
    the directory does not exist, is in no repository, or git is unavailable."""
    if not directory.is_dir() or not (root / ".git").exists():
        return frozenset()
    listing = git(root, "ls-files", "-z", "--", ".", cwd=directory)
    if listing is None:
        return frozenset()
    names = (entry.decode("utf-8", "surrogateescape") for entry in listing.split(b"\0") if entry)
    return frozenset(name for name in names if "/" not in name)
