"""The fixed results document every report test starts from (a fresh copy per test)."""

from __future__ import annotations

import pytest
from report_fixtures import RESULTS

from litmus.results import RunResult, load_results


@pytest.fixture
def result() -> RunResult:
    return load_results(RESULTS)
