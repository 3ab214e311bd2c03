import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from support.fake_github import FakeGitHub  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "container: runs the action's entrypoint in a venv built like its image (built once per session)")


@pytest.fixture
def fake_github():
    with FakeGitHub() as gh:
        yield gh
