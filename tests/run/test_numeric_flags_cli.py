"""Every numeric flag of `litmus run` is read by the one number parser: NaN, infinities, zero where a
positive value is needed, and absurd sizes are refused at argument parsing (exit 2, the flag named), never
turned into an "internal error" on every step or a traceback."""

from __future__ import annotations

import pytest

from litmus.numbers import parse_number
from support.cli import litmus

SUITE = """\
version: 1
suite: S
flows:
  - name: f
    steps:
      - name: s
        request: {url: /x}
        assertions:
          - {type: status_code, expected: 200}
"""


@pytest.mark.parametrize(("flag", "value"), [
    ("--timeout-ms", "nan"), ("--timeout-ms", "inf"), ("--timeout-ms", "-inf"), ("--timeout-ms", "0"),
    ("--timeout-ms", "1e400"), ("--timeout-ms", "1e12"),
    ("--concurrency", "0"), ("--concurrency", "nan"), ("--concurrency", "100000"),
    ("--max-body-bytes", "0"), ("--max-body-bytes", "1e3"), ("--max-body-bytes", str(10 ** 15)),
    ("--transport-retries", "-1"), ("--transport-retries", "inf"), ("--transport-retries", "1000"),
    ("--judge-threshold", "nan"), ("--judge-timeout-ms", "inf"), ("--judge-concurrency", "0"),
    ("--rate-limit", "0"), ("--rate-limit", "-2"), ("--rate-limit", "nan"), ("--rate-limit", "1e9"),
])
def test_a_bad_number_is_refused_before_the_run(tmp_path, flag, value):
    (tmp_path / ".git").mkdir()
    (tmp_path / "s.yaml").write_text(SUITE)
    done = litmus(tmp_path, "run", "s.yaml", "--base-url", "http://127.0.0.1:9", f"{flag}={value}")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr + done.stdout
    assert flag in done.stderr and f"got '{value}'" in done.stderr
    assert not (tmp_path / "litmus-report").exists()  # refused before any run


def test_a_bad_rate_limit_variable_is_refused_naming_it(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "s.yaml").write_text(SUITE)
    done = litmus(tmp_path, "run", "s.yaml", "--base-url", "http://127.0.0.1:9", env={"LITMUS_RATE_LIMIT": "fast"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "LITMUS_RATE_LIMIT: expected a number above 0 to 100,000, got 'fast'" in done.stderr
    assert not (tmp_path / "litmus-report").exists()


def test_the_message_says_what_is_expected():
    with pytest.raises(ValueError, match=r"^expected a number of milliseconds above 0 to 21,600,000, got 'nan'$"):
        parse_number("nan", whole=False, low=0, above_low=True, high=21_600_000, unit="milliseconds")
    assert parse_number(" 7 ", whole=True, low=1, high=10) == 7
    assert parse_number("2.5", whole=False, low=0, high=100) == 2.5
