"""Issue 20's attack 2 on `type: python`, through `litmus run`: return values outside the contract, a check
that ends its process, one that overruns its step. Each is that check's `error`, naming the cause, and the
run goes on: the checks after it run (in a new worker when the old one was killed), results.json is valid
JSON and every report is written."""

from __future__ import annotations

import json
import sys

import pytest
import yaml
from harness import outcomes

from litmus.report import FORMATS
from support.cli import litmus
from support.target import Target

pytestmark = pytest.mark.timing  # each attack's step has a 2 s deadline the check after it must fit in

CHECKS = '''\
import os
import time


def returns_bytes(response, context):
    return [{"path": "$", "expected": b"raw", "actual": 1, "reason": "bytes"}]


def returns_a_set(response, context):
    return [{"path": "$", "expected": {1, 2}, "actual": 1, "reason": "a set"}]


def returns_a_huge_int(response, context):
    return [{"path": "$", "expected": 1, "actual": 10 ** 5000, "reason": "5,001 digits"}]


def returns_nan(response, context):
    return [{"path": "$", "expected": float("nan"), "actual": 1, "reason": "NaN"}]


def returns_infinity(response, context):
    return [{"path": "$", "expected": 1, "actual": float("inf"), "reason": "Infinity"}]


def exits(response, context):
    os._exit(0)


def sleeps(response, context):
    time.sleep(30)
    return True


def passes(response, context):
    return response.json()["ok"] is True
'''

# (assertion name = function, what its reason must say)
ATTACKS = [
    ("returns_bytes", "returned bytes, which is not plain JSON"),
    ("returns_a_set", "returned set, which is not plain JSON"),
    ("returns_a_huge_int", f"returned an int of more than {sys.get_int_max_str_digits()} digits"),
    ("returns_nan", "returned float nan, which is not plain JSON"),
    ("returns_infinity", "returned float inf, which is not plain JSON"),
    ("exits", "exits() ended its worker process (exit status 0)"),
    ("sleeps", "sleeps() did not return within the step's deadline"),
]


def strict_json(text: str):
    """json.loads that refuses NaN and Infinity, which are not JSON."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("worker")
    (root / ".git").mkdir()
    (root / "probes" / "checks").mkdir(parents=True)
    (root / "probes" / "checks" / "attacks.py").write_text(CHECKS)
    # Each attack in its own step (a step's deadline bounds all its checks), each followed by a check that
    # must still run and pass.
    steps = [{"name": name, "request": {"url": "/", "timeout_ms": 2000},
              "assertions": [{"name": name, "type": "python", "function": f"checks/attacks.py:{name}"},
                             {"name": f"after {name}", "type": "python", "function": "checks/attacks.py:passes"}]}
             for name, _ in ATTACKS]
    suite = {"version": 1, "suite": "Attacks", "flows": [{"name": "attacks", "steps": steps}]}
    (root / "probes" / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    with Target() as target:
        target.json("/", {"ok": True})
        done = litmus(root, "run", "probes/suite.yaml", "--base-url", target.base_url, "--out", "out", timeout=300)
    return root, done


def test_results_json_is_valid_and_every_report_is_written(run):
    root, done = run
    assert done.returncode == 1, done.stdout + done.stderr  # the attacks are errors: the suite fails
    strict_json((root / "out" / "results.json").read_text("utf-8"))
    for report in FORMATS.values():
        assert (root / "out" / report.filename).stat().st_size > 0, report.filename


@pytest.mark.parametrize("name, cause", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_each_attack_is_its_checks_error_naming_the_cause_and_the_next_check_runs(run, name, cause):
    found = outcomes(strict_json((run[0] / "out" / "results.json").read_text("utf-8")))
    assert found[name]["status"] == "error" and cause in found[name]["reason"], found[name]
    assert found[name]["reason"].startswith("probes/checks/attacks.py")
    assert found[f"after {name}"]["status"] == "passed", found[f"after {name}"]
