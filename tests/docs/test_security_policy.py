"""docs/security.md's policy table names an attack test per input: each named file and test must exist, so a
renamed or deleted test cannot leave a row pointing at nothing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "docs" / "security.md"
# `tests/x/test_y.py::test_z` names a file (and a test); a following `::test_w` is another test of that file.
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)?((?:::\w+)?)[^`]*`")


def references() -> list[tuple[str, str | None]]:
    found = []
    for line in POLICY.read_text("utf-8").splitlines():
        if not line.startswith("| "):
            continue
        attack = line.rstrip(" |").rsplit(" | ", 1)[-1]
        current = None
        for match in REFERENCE.finditer(attack):
            path, test = match.group(1), match.group(2).lstrip(":") or None
            current = path or current
            if current and (path or test):
                found.append((current, test))
    return found


def test_the_policy_table_names_tests():
    assert len({path for path, _ in references()}) > 20


def test_every_attack_test_the_policy_table_names_exists():
    missing = []
    for path, test in references():
        source = ROOT / path
        if not source.is_file():
            missing.append(path)
        elif test and not re.search(rf"^\s*(async )?def {test}\b", source.read_text("utf-8"), re.M):
            missing.append(f"{path}::{test}")
    assert not missing, missing
