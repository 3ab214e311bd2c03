"""An untrusted run sends requests only to its allowed origins: a probe, a suite's own `base_url`, a
setup or teardown step or a redirect that points elsewhere is a step `error` naming the origin and
the input that allows it, and nothing connects there. Real listeners on 127.0.0.1 (two ports are two
origins); the one not allowed counts every connection it accepts."""

from __future__ import annotations

from dataclasses import replace

import pytest
from build import check, flow, request, step, suite

from litmus.run.runner import RunOptions, run_suites
from litmus.trust import Trust, origin
from support.raw_server import RawServer
from support.target import Target


def _ok(sock):
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")


@pytest.fixture
def allowed():
    with Target() as target:
        target.text("/ok", "ok")
        yield target


@pytest.fixture
def elsewhere():
    """A listener on an origin no run here allows."""
    with RawServer({"/ok": _ok, "/secret": _ok}) as server:
        yield server


def untrusted(*origins: str) -> Trust:
    return Trust(False, "test: a fork's pull request", allowed_origins=frozenset(origin(o) for o in origins))


def steps_of(result):
    [suite_result] = result.suites
    return suite_result, [s for run in suite_result.flow_runs for s in run.steps]


def assert_refused(step_result, where: str) -> None:
    assert step_result.status == "error"
    assert origin(where) in step_result.error and "allowed-origins" in step_result.error
    assert all(o.status == "skipped" for o in step_result.assertions)


def test_a_probe_to_an_origin_not_allowed_is_an_error_and_never_connects(allowed, elsewhere):
    s = suite("S", flow("here", step("fine", request("/ok"), check("status_code", expected=200))),
              flow("there", step("leak", request(elsewhere.url("/ok")), check("status_code", expected=200))))
    result = run_suites([s], RunOptions(base_url=allowed.base_url, trust=untrusted(allowed.base_url)), environ={})
    suite_result, [fine, leak] = steps_of(result)
    assert fine.status == "passed", fine.error
    assert_refused(leak, elsewhere.base_url)
    assert suite_result.verdict == "failed"
    assert elsewhere.connections == 0
    # The same suite in a trusted run (the default, Trust.local()) reaches both.
    trusted = run_suites([s], RunOptions(base_url=allowed.base_url), environ={})
    _, [fine, anywhere] = steps_of(trusted)
    assert fine.status == anywhere.status == "passed"
    assert elsewhere.connections == 1


def test_the_suites_own_base_url_is_not_an_allowed_origin(elsewhere):
    s = suite("S", flow("F", step("relative", request("/ok"), check("status_code", expected=200))),
              base_url=elsewhere.base_url)
    result = run_suites([s], RunOptions(trust=untrusted()), environ={})
    _, [relative] = steps_of(result)
    assert_refused(relative, elsewhere.base_url)
    assert elsewhere.connections == 0


def test_a_redirect_to_an_origin_not_allowed_is_refused_before_connecting(allowed, elsewhere):
    allowed.route("/away", lambda req: (302, {"Location": elsewhere.url("/secret")}, b""))
    s = suite("S", flow("F", step("hop", request("/away"), check("status_code", expected=200))))
    result = run_suites([s], RunOptions(base_url=allowed.base_url, trust=untrusted(allowed.base_url)), environ={})
    _, [hop] = steps_of(result)
    assert_refused(hop, elsewhere.base_url)
    assert hop.error.startswith("redirect to ")
    assert hop.response.status == 302  # the redirect itself was received, and is kept
    assert elsewhere.connections == 0


def test_setup_and_teardown_steps_obey_the_rule_too(allowed, elsewhere):
    s = replace(
        suite("S", flow("F", step("fine", request("/ok")))),
        setup=(step("login", request(elsewhere.url("/secret"))),),
        teardown=(step("cleanup", request(elsewhere.url("/secret"))),),
    )
    result = run_suites([s], RunOptions(base_url=allowed.base_url, trust=untrusted(allowed.base_url)), environ={})
    suite_result = result.suites[0]
    assert_refused(suite_result.setup[0], elsewhere.base_url)
    assert_refused(suite_result.teardown[0], elsewhere.base_url)
    assert elsewhere.connections == 0
