"""The loader fuzzers of tests/load/test_load_fuzz.py (arbitrary YAML documents, suite-shaped ones, raw
bytes) at bench scale: bench/reliability.py sets LITMUS_FUZZ_EXAMPLES. In the normal test run they run
there, at their own size, so here they are skipped."""

from __future__ import annotations

import os

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from load.test_load_fuzz import check, documents, suites

EXAMPLES = int(os.environ.get("LITMUS_FUZZ_EXAMPLES", "0"))
LONG = settings(max_examples=max(EXAMPLES, 1), deadline=None, database=None, suppress_health_check=list(HealthCheck))
pytestmark = pytest.mark.skipif(not EXAMPLES, reason="bench scale only: set LITMUS_FUZZ_EXAMPLES")


@LONG
@given(st.one_of(documents, suites))
def test_any_yaml_document(document):
    check(yaml.safe_dump(document, allow_unicode=True).encode("utf-8"))


@LONG
@given(st.binary(max_size=300))
def test_any_bytes(data):
    check(data)
