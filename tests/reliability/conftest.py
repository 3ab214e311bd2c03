import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from support.fake_github import FakeGitHub  # noqa: E402
from support.fake_judge import FakeJudge  # noqa: E402
from support.target import Target  # noqa: E402


@pytest.fixture
def target():
    with Target() as server:
        yield server


@pytest.fixture
def fake_judge():
    with FakeJudge() as judge:
        yield judge


@pytest.fixture
def fake_github():
    with FakeGitHub() as gh:
        yield gh
