"""The fault list: each against a real server on 127.0.0.1, each a recorded outcome; the run goes on."""

from __future__ import annotations

import threading
import time

import pytest
from build import check, flow, request, step, suite

from litmus.results import load_results, validate, write_results
from litmus.run.runner import RunOptions, run_suites
from support.server import refused_port
from support.target import Target

pytestmark = pytest.mark.timing  # read timeouts and trickling bodies against their deadlines

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    """One run over every fault, concurrently; tests below read its flow runs by name."""
    with Target() as target, refused_port() as port:
        target.fault("/reset", "reset_mid_body")
        target.fault("/trickle", "trickle")
        target.fault("/endless", "endless")
        target.fault("/bomb", "gzip_bomb")
        target.fault("/loop", "redirect_loop")
        target.fault("/http10", "http10_close")
        target.fault("/silent", "close_no_response")
        target.route("/slow", lambda req: time.sleep(1) or (200, {}, b"late"))
        target.text("/500", '{"error": "boom"}', status=500, content_type="application/json")
        target.text("/badjson", '{"a": 1,,}', content_type="application/json")
        target.text("/latin1", "caf\xe9 ol\xe9".encode("latin-1"), content_type="application/json")
        target.text("/latin1-declared", "caf\xe9".encode("latin-1"), content_type="text/plain; charset=iso-8859-1")
        big = b"a" * (50 * MIB)
        target.route("/big", lambda req: (200, {"Content-Type": "text/plain"}, big))
        refused = f"http://127.0.0.1:{port}/x"

        def one(name, req, *assertions):
            return flow(name, step("s", req, *assertions), step("after", request("/500")))

        s = suite("Faults", *[
            one("refused", request(refused), check("status_code", expected=200)),
            one("reset", request("/reset"), check("status_code", expected=200)),
            one("read timeout", request("/slow", timeout_ms=300), check("status_code", expected=200)),
            one("trickle", request("/trickle", timeout_ms=500), check("status_code", expected=200)),
            one("endless", request("/endless"), check("contains", value="y")),
            one("bomb", request("/bomb"), check("json_path", path="$.a", exists=True)),
            one("big", request("/big"), check("contains", value="aaa"), check("status_code", expected=200)),
            one("loop", request("/loop"), check("status_code", expected=200)),
            one("http10", request("/http10"), check("json_path", path="$.via", expected="close")),
            one("silent", request("/silent"), check("status_code", expected=200)),
            one("500", request("/500"), check("status_code", expected="2xx"),
                check("json_path", path="$.error", expected="boom")),
            one("badjson", request("/badjson"), check("json_path", path="$.a", expected=1),
                check("contains", value='"a"')),
            one("latin1", request("/latin1"), check("json_path", path="$", exists=True),
                check("contains", value="caf")),
            one("latin1 declared", request("/latin1-declared"), check("contains", value="café")),
        ])
        started = time.perf_counter()
        result = run_suites([s], RunOptions(base_url=target.base_url, concurrency=4, max_body_bytes=8 * MIB),
                            environ={})
        elapsed = time.perf_counter() - started
        path = tmp_path_factory.mktemp("faults") / "results.json"
        write_results(path, result)
    return {f.flow: f for f in load_results(path).suites[0].flow_runs}, elapsed, result


def first(faults, name):
    return faults[0][name].steps[0]


@pytest.mark.parametrize("name, error", [
    ("refused", "connection refused"),
    ("reset", "connection broken while reading the body after"),
    ("read timeout", "no response within 300 ms"),
    ("trickle", "timed out after 500 ms reading the body"),
    ("loop", "redirect loop: more than 30 redirects"),
    ("silent", "the server closed the connection without a response"),
])
def test_transport_faults_are_step_errors_and_stop_the_flow_run(faults, name, error):
    st = first(faults, name)
    assert st.status == "error"
    assert error in st.error
    assert [o.status for o in st.assertions] == ["skipped"]
    assert st.assertions[0].reason.startswith("no response: ")
    after = faults[0][name].steps[1]
    assert after.status == "skipped" and after.attempts == 0
    assert faults[0][name].intent_evaluation.status == "failed"


def test_trickle_ends_near_the_timeout_and_the_run_is_not_held_up(faults):
    assert faults[1] < 5  # the trickling body would take 80 minutes


def test_endless_and_large_bodies_stop_at_the_size_cap(faults):
    for name in ("endless", "big"):
        st = first(faults, name)
        assert st.status == "passed", st
        assert st.response.truncated and st.response.size == 8 * MIB
        assert st.response.body_excerpt_truncated and len(st.response.body) == 4096


def test_gzip_bomb_is_capped_after_decompression(faults):
    st = first(faults, "bomb")
    assert st.response.truncated and st.response.size == 8 * MIB
    assert st.assertions[0].status == "error" and "cut at the size cap" in st.assertions[0].reason


def test_http10_close_delimited_body_is_read_whole(faults):
    assert first(faults, "http10").status == "passed"


def test_500_bad_json_and_non_utf8_are_outcomes_and_the_flow_goes_on(faults):
    st = first(faults, "500")
    assert [o.status for o in st.assertions] == ["failed", "passed"]
    assert st.assertions[0].reason == "status: expected status 2xx, got 500"
    assert faults[0]["500"].steps[1].response.status == 500  # the next step ran
    st = first(faults, "badjson")
    assert [o.status for o in st.assertions] == ["error", "passed"]
    assert "body is not JSON" in st.assertions[0].reason and "application/json" in st.assertions[0].reason
    st = first(faults, "latin1")
    assert [o.status for o in st.assertions] == ["error", "passed"]
    assert "\\xe9" in st.assertions[0].reason
    assert first(faults, "latin1 declared").status == "passed"


def test_results_document_is_valid(faults):
    assert validate(faults[2].to_dict()) == []


def test_a_target_that_dies_mid_run():
    with Target() as target:
        calls = []

        def die(req):
            calls.append(1)
            if len(calls) == 2:
                target.dead = True
                threading.Thread(target=target.stop).start()
            return 200, {}, b"alive"
        target.route("/x", die)
        s = suite("S", flow("F", step("a", request("/x"), check("status_code", expected=200)),
                            step("b", request("/x"), check("status_code", expected=200)), runs=3))
        result = run_suites([s], RunOptions(base_url=target.base_url, concurrency=1), environ={})
    runs = result.suites[0].flow_runs
    assert len(runs) == 3 and runs[0].intent_evaluation.status == "passed"
    assert runs[2].steps[0].status == "error"
    assert result.verdict == "failed" and validate(result.to_dict()) == []
