"""`response_time` with `min_ms` and `until: first_byte`, through `litmus run` against a real target on
127.0.0.1: a late status line, a late body after an early status line, and an instant answer, each
timed until its first byte and until its end, passing and failing as they should."""

from __future__ import annotations

import re
import time

import pytest
from harness import outcomes, run_suite, suite_of

from support.target import Target

pytestmark = pytest.mark.timing  # the outcomes depend on measured durations (with wide margins)

PASS, FAIL = "passed", "failed"
MS = r"\d+(?:\.\d+)? ms"

# (case id, step, assertion fields, status, regex the one mismatch's reason matches, or None: no mismatch)
CASES = [
    ("late-start-first-byte-min", "late start", {"until": "first_byte", "min_ms": 250}, PASS, None),
    ("late-start-first-byte-max", "late start", {"until": "first_byte", "max_ms": 100}, FAIL,
     rf"first byte after {MS}, limit 100 ms"),
    ("late-start-end-min", "late start", {"min_ms": 250}, PASS, None),
    ("late-body-first-byte-max", "late body", {"until": "first_byte", "max_ms": 600}, PASS, None),
    ("late-body-end-max", "late body", {"max_ms": 600}, FAIL, rf"took {MS}, limit 600 ms"),
    ("late-body-end-both", "late body", {"min_ms": 800, "max_ms": 5000, "until": "end"}, PASS, None),
    ("instant-end-min", "instant", {"min_ms": 250}, FAIL, rf"took {MS}, expected at least 250 ms"),
    ("instant-first-byte-min", "instant", {"until": "first_byte", "min_ms": 250}, FAIL,
     rf"first byte after {MS}, expected at least 250 ms"),
]
ROUTES = {"late start": "/late-start", "late body": "/late-body", "instant": "/instant"}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("response_time")
    steps = [{"name": step, "request": {"url": route},
              "assertions": [{"name": case, "type": "response_time", **fields}
                             for case, on, fields, _, _ in CASES if on == step]}
             for step, route in ROUTES.items()]
    with Target() as target:
        target.route("/late-start", lambda req: time.sleep(0.4) or (200, {"Content-Type": "text/plain"}, b"ok"))
        target.fault("/late-body", "late_body")
        target.text("/instant", "ok")
        done, data = run_suite(root, suite_of(steps), target.base_url)
    assert done.returncode == 0, done.stdout + done.stderr
    return data


@pytest.mark.parametrize("case, step, fields, status, reason", CASES, ids=[c[0] for c in CASES])
def test_response_time(results, case, step, fields, status, reason):
    outcome = outcomes(results)[case]
    assert outcome["status"] == status, outcome
    if reason is None:
        assert outcome["mismatches"] == []
    else:
        (found,) = outcome["mismatches"]
        assert re.fullmatch(reason, found["reason"]), found
        assert found["path"] == ("first_byte_ms" if fields.get("until") == "first_byte" else "elapsed_ms")
