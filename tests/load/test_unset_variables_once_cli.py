"""A variable that is not set is reported once, however often it is used: at its first use, with the
number of uses (three unset variables used nine times are three messages, not nine)."""

from __future__ import annotations

import re

from support.cli import litmus

SUITE = """\
version: 1
suite: S
base_url: http://127.0.0.1:9
flows:
  - name: f
    steps:
      - name: a
        request: {url: "/x?u={{ env.USER_A }}&t={{ secrets.TOKEN_B }}", headers: {X: "{{ env.USER_A }}"}}
        assertions:
          - {type: status_code, expected: 200}
      - name: b
        request: {url: "/y?u={{ env.USER_A }}&t={{ secrets.TOKEN_B }}&v={{ vars.C }}"}
        assertions:
          - {type: contains, value: "{{ vars.C }}"}
  - name: g
    steps:
      - name: c
        request: {url: "/z?t={{ env.TOKEN_B }}"}
        assertions:
          - {type: status_code, expected: 200}
"""
EXPECTED = [
    "s.yaml:8:30: {} environment variable USER_A (for 'env.USER_A') is not set (3 uses; the first at s.yaml:8)",
    "s.yaml:8:49: {} environment variable TOKEN_B (for 'secrets.TOKEN_B') is not set (3 uses; the first at s.yaml:8)",
    "s.yaml:12:73: {} run variable 'C' (for 'vars.C') is not given: pass --var C=VALUE or --vars-file "
    "(2 uses; the first at s.yaml:12)",
]


def project(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "s.yaml").write_text(SUITE)
    return tmp_path


def headlines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"s\.yaml:\d+:\d+: ", line)]


def test_validate_warns_once_per_variable(tmp_path):
    done = litmus(project(tmp_path), "validate", "s.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert headlines(done.stderr) == [line.format("warning:") for line in EXPECTED]
    assert "(3 warnings)" in done.stdout


def test_run_refuses_once_per_variable(tmp_path):
    done = litmus(project(tmp_path), "run", "s.yaml")
    assert done.returncode == 2
    assert headlines(done.stderr) == [line.format("error:") for line in EXPECTED]
