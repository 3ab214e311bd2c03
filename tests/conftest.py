"""Session-wide test set-up and the real servers on 127.0.0.1 that tests of every area use."""

import atexit
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

# The loader remembers valid JSONPaths/schemas in the user's cache directory; tests (and the
# commands they start) keep theirs in a throwaway one, removed when this process ends (each xdist
# worker has its own).
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="litmus-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], ignore_errors=True)

# `support` (the target, fake judge and fake GitHub servers) lives in tests/support.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from support.fake_github import FakeGitHub  # noqa: E402
from support.fake_judge import FakeJudge  # noqa: E402
from support.target import Target  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "container: runs the action's entrypoint in a venv built like its image (built once per session)")
    config.addinivalue_line(
        "markers", "timing: its assertions depend on how long things take (deadlines, timeouts, signals, streams "
        "cut, retries); every such test runs on one xdist worker, one after another (tests/README.md)")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """One xdist group per test (`--dist loadgroup` runs a group on one worker, test after test): `timing`
    for the timing tests, so they never overlap one another; otherwise the widest fixture of ours that is
    built once for many tests (a session fixture: its name; a module fixture: its module), so it is built
    once, not once per worker."""
    if not config.pluginmanager.hasplugin("xdist"):  # -p no:xdist: no groups, and no unknown marker
        return
    for item in items:
        group = "timing" if item.get_closest_marker("timing") else _shared_fixture_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_collection_finish(session):
    # xdist carries a test's group in its node id ("...@timing"); where that no longer takes (pytest 9.2,
    # pytest-xdist#1386), xdist spreads the groups over the workers without a word: say so.
    if getattr(session.config.option, "loadgroup", False) and any(
            "@" not in item.nodeid for item in session.items if item.get_closest_marker("xdist_group")):
        warnings.warn(pytest.PytestWarning(
            "this pytest-xdist ignores the test groups with this pytest (pytest-xdist#1386): the timing tests "
            "overlap and may fail; install pytest<9.2 (pyproject.toml), or run in one process with -n 0"), stacklevel=1)


def _shared_fixture_group(item) -> str | None:
    # A fixture's baseid is where it is defined ("" for pytest's and plugins' own, like tmp_path_factory).
    # pytest has no public way to list a test's fixture definitions; _fixtureinfo is what plugins read.
    shared = [fixture for definitions in item._fixtureinfo.name2fixturedefs.values() for fixture in definitions[-1:]
              if fixture.baseid and fixture.scope in ("session", "package", "module")]
    if not shared:
        return None
    widest = min(shared, key=lambda fixture: (fixture.scope != "session", fixture.argname))
    return widest.argname if widest.scope == "session" else widest.baseid


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
