"""Session-wide test set-up and the real servers on 127.0.0.1 that tests of every area use."""

import os
import sys
import tempfile
from pathlib import Path

import pytest

# The loader remembers valid JSONPaths/schemas in the user's cache directory; tests (and the
# commands they start) keep theirs in a throwaway one.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="litmus-test-cache-")

# `support` (the target, fake judge and fake GitHub servers) lives in tests/support.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from support.fake_github import FakeGitHub  # noqa: E402
from support.fake_judge import FakeJudge  # noqa: E402
from support.target import Target  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "container: runs the action's entrypoint in a venv built like its image (built once per session)")


@pytest.fixture
def target():
    with Target() as server:
        yield server


@pytest.fixture
def fake_judge():
    with FakeJudge() as judge:
        yield judge


@pytest.fixture
def second_judge():
    """Another judge server, for the escalation tier (its own script and call log)."""
    with FakeJudge() as judge:
        yield judge


@pytest.fixture
def fake_github():
    with FakeGitHub() as gh:
        yield gh
