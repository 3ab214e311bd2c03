"""Every format rendered from the fixed results document equals its golden file.

Regenerate after an intended change with `LITMUS_UPDATE_GOLDEN=1 python3 -m pytest tests/report`,
then read the diff: it is the review of what users will see.
"""

from __future__ import annotations

import json
import os

import pytest
from report_fixtures import GOLDEN, RESULTS

from litmus.report import FORMATS, render
from litmus.results import validate


def test_fixture_is_a_valid_results_document():
    assert validate(json.loads(RESULTS.read_text("utf-8"))) == []


@pytest.mark.parametrize("name", list(FORMATS))
def test_golden(result, name):
    text = render(name, result)
    golden = GOLDEN / FORMATS[name].filename
    if os.environ.get("LITMUS_UPDATE_GOLDEN") == "1":
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), f"no golden file {golden}: run with LITMUS_UPDATE_GOLDEN=1"
    assert text == golden.read_text("utf-8")


@pytest.mark.parametrize("name", list(FORMATS))
def test_rendering_is_deterministic(result, name):
    assert render(name, result) == render(name, result)
