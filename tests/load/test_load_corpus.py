"""Every invalid file in corpus/ fails with the message and position its `# expect:` header states.

Header: `# expect: LINE:COL text` (the text must occur in a diagnostic at exactly that position).
Files that cannot hold a header (binary, non-UTF-8, oversized) are built in tests below.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from litmus.errors import ProbeError
from litmus.load import load_suites
from litmus.load.source import MAX_DEPTH

pytestmark = pytest.mark.usefixtures("yaml_loader")

CORPUS = Path(__file__).parent / "corpus"
EXPECT = re.compile(r"# expect: (\d+):(\d+) (.+)")
FILES = sorted(CORPUS.glob("*.yaml"))


def load_errors(path: Path, root: Path) -> list:
    with pytest.raises(ProbeError) as info:
        load_suites([path], root=root, environ={})
    assert all(d.position.line >= 1 and d.position.column >= 1 for d in info.value.diagnostics)
    return info.value.diagnostics


def test_corpus_is_large_enough():
    assert len(FILES) >= 40


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_corpus_file_reports_expected_error(path: Path):
    line, column, text = EXPECT.match(path.read_text().splitlines()[0]).groups()
    diagnostics = load_errors(path, CORPUS)
    found = [(d.position.line, d.position.column, d.message) for d in diagnostics if d.severity == "error"]
    assert any((ln, col) == (int(line), int(column)) and text in msg for ln, col, msg in found), found
    assert all(d.position.path == path.name for d in diagnostics)
    for diagnostic in diagnostics:  # every diagnostic renders with its source line and a caret
        assert diagnostic.render().startswith(f"{path.name}:{diagnostic.position.line}:")


def test_binary_file(tmp_path: Path):
    (tmp_path / "b.yaml").write_bytes(b"version: 1\nsuite: \x00\x01\x02")
    (d,) = load_errors(tmp_path / "b.yaml", tmp_path)
    assert (d.position.line, d.position.column) == (2, 8) and "binary" in d.message


def test_non_utf8_file(tmp_path: Path):
    (tmp_path / "l.yaml").write_bytes("version: 1\nsuite: caf\u00e9\n".encode("latin-1"))
    (d,) = load_errors(tmp_path / "l.yaml", tmp_path)
    assert (d.position.line, d.position.column) == (2, 11) and "not UTF-8" in d.message and "0xe9" in d.message


def test_control_character(tmp_path: Path):
    (tmp_path / "c.yaml").write_bytes(b"version: 1\nsuite: a\x07b\n")
    (d,) = load_errors(tmp_path / "c.yaml", tmp_path)
    assert (d.position.line, d.position.column) == (2, 9) and "not allowed" in d.message


def test_oversized_file_rejected_before_parsing(tmp_path: Path):
    big = tmp_path / "big.yaml"
    with big.open("wb") as out:
        out.truncate(20 * 1024 * 1024)  # sparse: 20 MB without writing them
    (d,) = load_errors(big, tmp_path)
    assert (d.position.line, d.position.column) == (1, 1) and "20.0 MiB" in d.message and "limited to" in d.message


def test_deep_nesting_is_refused_not_crashing(tmp_path: Path):
    # 5000 levels: which layer refuses it first (libyaml's own scanner limit, or our depth check) depends
    # on the PyYAML build, so only the behaviour is asserted: one positioned error, no crash.
    (tmp_path / "deep.yaml").write_text("version: 1\nsuite: S\nflows: " + "[" * 5000 + "]" * 5000 + "\n")
    (d,) = load_errors(tmp_path / "deep.yaml", tmp_path)
    assert d.severity == "error" and d.position.line == 3


def test_nesting_past_our_limit_is_refused_at_its_bracket(tmp_path: Path):
    # 150 levels is within every libyaml's limit, so our own check must refuse it: the top-level mapping is
    # level 1, so the bracket that goes past MAX_DEPTH is the (MAX_DEPTH)th, at column 7 + MAX_DEPTH.
    (tmp_path / "deep.yaml").write_text("version: 1\nsuite: S\nflows: " + "[" * 150 + "]" * 150 + "\n")
    (d,) = load_errors(tmp_path / "deep.yaml", tmp_path)
    assert (d.position.line, d.position.column) == (3, 7 + MAX_DEPTH) and f"deeper than {MAX_DEPTH}" in d.message


def test_symlink_escaping_the_repository(tmp_path: Path):
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(outside, repo / "link.json")
    (repo / "s.yaml").write_text(
        "version: 1\nsuite: S\ncontext:\n  scenarios:\n    - id: a\n      data_file: link.json\n"
        "flows:\n  - name: f\n    steps:\n      - name: s\n        request: {url: /x}\n"
    )
    (d,) = load_errors(repo / "s.yaml", repo)
    assert (d.position.line, d.position.column) == (6, 18) and "outside the repository root" in d.message


def test_all_errors_of_all_files_are_reported_together(tmp_path: Path):
    for name in ("unknown_key_top", "runs_zero", "version_2"):
        (tmp_path / f"{name}.yaml").write_bytes((CORPUS / f"{name}.yaml").read_bytes())
    diagnostics = load_errors(tmp_path, tmp_path)
    assert {d.position.path for d in diagnostics} == {"unknown_key_top.yaml", "runs_zero.yaml", "version_2.yaml"}


def test_several_errors_of_one_file(tmp_path: Path):
    (tmp_path / "s.yaml").write_text(
        "version: 1\nsuite: S\nflows:\n  - name: f\n    runs: 0\n    steps:\n      - name: s\n"
        "        request: {url: /x, method: PST}\n"
        "        assertions:\n          - {type: tone, tone: x, threshold: 101}\n"
    )
    lines = sorted(d.position.line for d in load_errors(tmp_path / "s.yaml", tmp_path))
    assert lines == [5, 8, 10]


def test_duplicate_suite_names_across_files(tmp_path: Path):
    body = "version: 1\nsuite: Same\nflows:\n  - name: f\n    steps:\n      - name: s\n        request: {url: /x}\n"
    (tmp_path / "a.yaml").write_text(body)
    (tmp_path / "b.yaml").write_text(body)
    (d,) = load_errors(tmp_path, tmp_path)
    assert d.position.path == "b.yaml" and (d.position.line, d.position.column) == (2, 8)
    assert "duplicate suite name 'Same' (also in a.yaml:2)" in d.message
