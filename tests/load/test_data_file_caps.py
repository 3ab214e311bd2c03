"""Data files get the caps probe files have: a JSON data_file nested past MAX_DEPTH is a load error
(deep enough, it crashed the loader with RecursionError)."""

from __future__ import annotations

import pytest

from litmus.errors import ProbeError
from litmus.load import load_suites
from litmus.load.source import MAX_DEPTH

SUITE = """\
version: 1
suite: S
context:
  scenarios:
    - {id: a, data_file: deep.json}
flows: [{name: f, steps: [{name: s, request: {url: /x}}]}]
"""


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000])
def test_a_deeply_nested_json_data_file_is_a_positioned_error(tmp_path, depth):
    (tmp_path / "deep.json").write_text("[" * depth + "]" * depth)
    (tmp_path / "s.yaml").write_text(SUITE)
    with pytest.raises(ProbeError) as info:
        load_suites([tmp_path / "s.yaml"], root=tmp_path, environ={})
    (diagnostic,) = info.value.diagnostics
    assert (diagnostic.position.line, diagnostic.position.column) == (5, 26)
    assert "deep.json" in diagnostic.message and "nests" in diagnostic.message


def test_json_nested_to_the_limit_loads(tmp_path):
    (tmp_path / "deep.json").write_text("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    (tmp_path / "s.yaml").write_text(SUITE)
    assert load_suites([tmp_path / "s.yaml"], root=tmp_path, environ={}).suites
