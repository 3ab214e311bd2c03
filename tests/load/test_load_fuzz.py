"""Arbitrary YAML documents and byte strings: the loader only ever raises ProbeError with positions."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from litmus.errors import ProbeError
from litmus.load import load_suites
from support.fuzz import fuzz_settings

KEYS = ["version", "suite", "flows", "name", "steps", "request", "url", "assertions", "type", "expected",
        "context", "scenarios", "id", "data", "extract", "json_path", "runs", "defaults", "headers", "{{ x }}"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 700), st.floats(allow_nan=False),
                    st.sampled_from(["status_code", "json_path", "$.a", "{{ a }}", "{{ env.X }}", "/x", "2xx", "("]),
                    st.text(max_size=12))
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=6)),
    max_leaves=30,
)
# Suite-shaped documents reach deep into the validator instead of stopping at the top level.
suites = st.fixed_dictionaries({"version": st.sampled_from([1, 2, "1"]), "suite": scalars, "flows": documents})
FUZZ = fuzz_settings(100)
pytestmark = pytest.mark.usefixtures("yaml_loader")


def check(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory, "s.yaml")
        path.write_bytes(data)
        try:
            load_suites([path], root=Path(directory), environ={})
        except ProbeError as exc:
            assert exc.diagnostics
            for diagnostic in exc.diagnostics:
                assert diagnostic.position.path == "s.yaml"
                assert diagnostic.position.line >= 1 and diagnostic.position.column >= 1
                diagnostic.render()


@FUZZ
@given(st.one_of(documents, suites))
def test_any_yaml_document(document):
    check(yaml.safe_dump(document, allow_unicode=True).encode("utf-8"))


@FUZZ
@given(st.binary(max_size=200))
def test_any_bytes(data):
    check(data)


@FUZZ
@given(st.text(alphabet="{}[]:-&*!|>'\"#\n ,?abc1", max_size=80))
def test_yaml_punctuation_soup(text):
    check(text.encode("utf-8"))
