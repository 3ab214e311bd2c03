import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from support.fake_judge import FakeJudge  # noqa: E402


@pytest.fixture
def fake_judge():
    with FakeJudge() as judge:
        yield judge


@pytest.fixture
def second_judge():
    """Another server, for the escalation tier (its own script and call log)."""
    with FakeJudge() as judge:
        yield judge
