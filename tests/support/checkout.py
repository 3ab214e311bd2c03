"""A workspace as actions/checkout leaves it for a trusted job: a git checkout of the repository's `main`,
which the fake GitHub knows as a branch (so the action's trust decision finds the commit on it).

Action tests about something other than trust use this, since a folder that is no git checkout (or a
commit GitHub does not know) is untrusted, as it should be.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
             "GIT_COMMITTER_EMAIL": "t@example.com"}


def trusted_checkout(workspace: Path, github) -> str:
    """Commit everything in `workspace` on `main` and tell the fake GitHub (`FakeGitHub`); returns HEAD."""
    environ = {**os.environ, **_IDENTITY}
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "--allow-empty", "-m", "checkout"]):
        subprocess.run(["git", "-C", str(workspace), *argv], check=True, capture_output=True, env=environ)
    github.state.load_git(workspace, branches=["main"])
    head = subprocess.run(["git", "-C", str(workspace), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True)
    return head.stdout.strip()
