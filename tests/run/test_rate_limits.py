"""Rate limits through `litmus run`: the run's limiter keeps to a target's token bucket, and a 429 / 503 is
waited out (Retry-After in seconds or as an HTTP date, else backoff) within the step's deadline.

`BucketTarget` enforces a token bucket like a rate-limited API: a request that arrives when its bucket is
empty gets a 429 and counts as a violation.
"""

from __future__ import annotations

import bisect
import itertools
import json
import signal
import socket
import struct
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest

from support.cli import litmus, start_litmus
from support.target import Target

pytestmark = pytest.mark.timing  # waits of a known length, measured; a busy machine stretches them

# How early a request may arrive before its token and still be let through. Arrivals are the kernel's receive
# times (SO_TIMESTAMPNS), not when a server thread got to them, and Litmus times its limit at the socket write
# (RateLimiter.writing), so what is left is clock noise: the kernel stamps with the wall clock, Litmus counts
# on the monotonic one (measured: no gap under 50.3 ms at 20/s over 200 requests, under a load of 4-8 on
# 2 cores). The span of a whole run is checked to the interval too.
JITTER_S = 0.005
# Linux's SO_TIMESTAMPNS (socket doesn't name it): each received packet carries its kernel receive time.
SO_TIMESTAMPNS = 35
TIMESPEC = struct.Struct("qq")


def _received_at(connection: socket.socket) -> float | None:
    """When the kernel received the next request's first byte (wall clock), peeked without reading it."""
    try:
        _, ancillary, _, _ = connection.recvmsg(1, socket.CMSG_SPACE(TIMESPEC.size), socket.MSG_PEEK)
    except OSError:
        return None
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanoseconds = TIMESPEC.unpack(data[:TIMESPEC.size])
            return seconds + nanoseconds / 1e9
    return None


class BucketTarget(Target):
    """A target at `/limited` allowing `per_second` requests with `burst` at once; a request finding the bucket
    empty gets 429 (with `retry_after`, if given) and is a violation.

    The bucket is replayed over the arrivals in the order the kernel received them (handler threads may get to
    two requests the other way round), so `violations` counts exactly the requests that came too early."""

    def __init__(self, per_second: float, burst: int = 1, retry_after: str | None = None) -> None:
        super().__init__()
        self.per_second, self.burst = per_second, burst
        self.arrivals: list[float] = []  # kernel receive times, in the order the kernel received them
        # 429s actually sent: a later replay (a request the kernel received earlier, handled later) may judge an
        # arrival otherwise than its answer did, so `violations` and this count can differ by one under load.
        self.turned_away = 0
        self._bucket_lock = threading.Lock()
        retry = {"Retry-After": retry_after} if retry_after else {}
        received = threading.local()  # one connection per handler thread
        # On the listening socket, so that accepted connections inherit it: a request that arrives before its
        # connection's handler thread starts is stamped too.
        self.server.socket.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)

        class Stamped(self.server.RequestHandlerClass):
            def handle_one_request(self):
                received.at = _received_at(self.connection)
                super().handle_one_request()

        self.server.RequestHandlerClass = Stamped

        def limited(req):
            at = received.at
            assert at is not None, "a request without its kernel receive time"
            with self._bucket_lock:
                bisect.insort(self.arrivals, at)
                let_through = self._replay()[self.arrivals.index(at)]
                self.turned_away += not let_through
            if not let_through:
                return 429, {"Content-Type": "text/plain", **retry}, b"slow down"
            return 200, {"Content-Type": "application/json"}, b'{"ok": true}'

        self.route("/limited", limited)

    def _replay(self) -> list[bool]:
        """Whether each arrival found a token (a request turned away takes none)."""
        tokens, stamp, found = float(self.burst), self.arrivals[0], []
        for at in self.arrivals:
            tokens = min(self.burst, tokens + (at - stamp) * self.per_second)
            stamp = at
            found.append(tokens >= 1 - JITTER_S * self.per_second)
            tokens -= found[-1]
        return found

    @property
    def violations(self) -> int:
        with self._bucket_lock:
            return self._replay().count(False) if self.arrivals else 0


def _closest(arrivals: list[float]) -> list[float]:
    """The smallest gaps between arrivals, in ms (what a failed violation check shows)."""
    return sorted(round((b - a) * 1000, 1) for a, b in itertools.pairwise(arrivals))[:5]


def _problems(results: dict) -> list:
    """What the steps that did not simply pass say (what a failed check shows)."""
    return [(step["status"], step["error"], step["rate_limited"]) for step in _steps(results)
            if step["status"] != "passed" or step["rate_limited"]]


def _suite(name: str, base_url: str, *, runs: int, rate_limit: str = "", request: str = "{url: /limited}",
           timeout_ms: int = 10_000) -> str:
    limit = f"rate_limit: {rate_limit}\n" if rate_limit else ""
    return f"""\
version: 1
suite: {name}
base_url: {base_url}
{limit}defaults: {{timeout_ms: {timeout_ms}}}
flows:
  - name: call
    runs: {runs}
    steps:
      - name: one
        request: {request}
        assertions:
          - {{type: status_code, expected: 200}}
"""


def _run(tmp_path: Path, suites: dict[str, str], *argv: str, env: dict[str, str] | None = None) -> dict:
    probes = tmp_path / "probes"
    probes.mkdir(exist_ok=True)
    for name, text in suites.items():
        (probes / f"{name}.yaml").write_text(text)
    proc = litmus(tmp_path, "run", "probes", "--format", "html", *argv, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads((tmp_path / "litmus-report" / "results.json").read_text())


def _steps(results: dict) -> list[dict]:
    return [step for suite in results["suites"] for run in suite["flow_runs"] for step in run["steps"]]


def test_per_second_20_over_200_requests_makes_no_violation(tmp_path: Path):
    with BucketTarget(per_second=20) as target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=200, rate_limit="{per_second: 20}")})
    steps = _steps(results)
    assert target.violations == 0, _closest(target.arrivals)
    assert len(target.arrivals) == 200
    assert all(step["status"] == "passed" and step["rate_limited"] == [] for step in steps), _problems(results)
    # 200 requests at 20/s with a burst of 1: at least 199 intervals of 50 ms.
    assert target.arrivals[-1] - target.arrivals[0] >= 199 / 20 - JITTER_S, _closest(target.arrivals)


def test_without_a_limit_the_same_target_is_overrun(tmp_path: Path):
    """The bucket target does count violations: unlimited, Litmus outruns it, and every 429 (an idempotent GET,
    no Retry-After: backoff) is waited out and sent again until it passes."""
    with BucketTarget(per_second=20) as target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=12)})
    steps = _steps(results)
    assert target.violations > 0
    assert all(step["status"] == "passed" for step in steps)
    waited = [wait for step in steps for wait in step["rate_limited"]]
    assert len(waited) == target.turned_away
    assert {wait["status"] for wait in waited} == {429}


def test_the_strictest_limit_of_two_suites_on_one_origin_wins(tmp_path: Path):
    with BucketTarget(per_second=5) as target:
        results = _run(tmp_path, {
            "fast": _suite("Fast", target.base_url, runs=6, rate_limit="{per_second: 50}"),
            "slow": _suite("Slow", target.base_url, runs=6, rate_limit="{per_minute: 300}"),
        })
    assert target.violations == 0, _closest(target.arrivals)
    assert all(step["status"] == "passed" for step in _steps(results)), _problems(results)
    assert len(target.arrivals) == 12
    assert target.arrivals[-1] - target.arrivals[0] >= 11 / 5 - JITTER_S, _closest(target.arrivals)


def test_rate_limit_flag_caps_a_suite_that_allows_more(tmp_path: Path):
    with BucketTarget(per_second=10) as target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=10, rate_limit="{per_second: 100}")},
                       "--rate-limit", "10")
    assert target.violations == 0, _closest(target.arrivals)
    assert all(step["status"] == "passed" for step in _steps(results)), _problems(results)
    assert target.arrivals[-1] - target.arrivals[0] >= 9 / 10 - JITTER_S, _closest(target.arrivals)


def test_rate_limit_variable_caps_every_origin(tmp_path: Path):
    with BucketTarget(per_second=10, burst=3) as target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=10)}, env={"LITMUS_RATE_LIMIT": "10"})
    assert target.violations == 0, _closest(target.arrivals)
    assert all(step["status"] == "passed" for step in _steps(results)), _problems(results)


def test_a_suite_burst_lets_that_many_go_at_once(tmp_path: Path):
    with BucketTarget(per_second=2, burst=4) as target:
        _run(tmp_path, {"a": _suite("A", target.base_url, runs=4, rate_limit="{per_second: 2, burst: 4}")})
    assert target.violations == 0
    # Four tokens at the start: no wait for a refill (which would take 0.5 s each).
    assert target.arrivals[-1] - target.arrivals[0] < 0.5


def _once_429(headers_of, content_type: str = "application/json", body: bytes = b'{"ok": true}') -> Target:
    """A target whose `/once` answers its first request 429 with `headers_of()`, then 200 with `body`."""
    target = Target()
    seen: list[float] = []

    def once(req):
        seen.append(time.time())
        if len(seen) == 1:
            return 429, {"Content-Type": "text/plain", **headers_of()}, b"slow down"
        return 200, {"Content-Type": content_type}, body

    target.route("/once", once)
    target.seen = seen
    return target


def test_retry_after_in_seconds_is_waited_out(tmp_path: Path):
    with _once_429(lambda: {"Retry-After": "1"}) as target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=1, request="{url: /once}")})
    (step,) = _steps(results)
    assert step["status"] == "passed"
    assert [wait["status"] for wait in step["rate_limited"]] == [429]
    assert step["rate_limited"][0]["waited_ms"] >= 1000
    assert target.seen[1] - target.seen[0] >= 1.0


def test_retry_after_as_an_http_date_is_waited_out(tmp_path: Path):
    asked: list[datetime] = []

    def date_header():
        asked.append((datetime.now(UTC) + timedelta(seconds=2)).replace(microsecond=0))
        return {"Retry-After": format_datetime(asked[0], usegmt=True)}

    with _once_429(date_header) as target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=1, request="{url: /once}")})
    (step,) = _steps(results)
    assert step["status"] == "passed"
    # The resend arrives no sooner than the date said; the date has whole seconds, so the wait is over 1 s.
    assert target.seen[1] >= asked[0].timestamp()
    assert step["rate_limited"][0]["waited_ms"] >= 1000


def test_a_retry_after_beyond_the_deadline_is_an_error_without_a_long_sleep(tmp_path: Path):
    """A hostile or overloaded target asking for 999999 s: the step is an error naming the limit at once."""
    with _once_429(lambda: {"Retry-After": "999999"}) as target:
        started = time.monotonic()
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=1, request="{url: /once}",
                                              timeout_ms=30_000)})
        took = time.monotonic() - started
    (step,) = _steps(results)
    assert step["status"] == "error"
    assert step["error"].startswith("429 Too Many Requests: Retry-After 999999 s is beyond the step's deadline (")
    assert step["response"]["status"] == 429
    assert results["verdict"] == "failed"
    assert len(target.seen) == 1
    assert took < 15  # the run's start-up; nowhere near the step's 30 s, let alone 999999 s


def test_a_post_is_not_sent_again_without_retry_on_429(tmp_path: Path):
    with _once_429(lambda: {"Retry-After": "0"}) as target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=1,
                                              request="{url: /once, method: POST, json: {a: 1}}")})
    (step,) = _steps(results)
    assert len(target.seen) == 1
    assert step["status"] == "error"
    assert "429 Too Many Requests: a POST is not sent again unless its request says 'retry_on_429: true'" \
        in step["error"]


def test_a_post_with_retry_on_429_is_sent_again(tmp_path: Path):
    with _once_429(lambda: {"Retry-After": "0"}) as target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=1,
                                              request="{url: /once, method: POST, json: {a: 1}, retry_on_429: true}")})
    (step,) = _steps(results)
    assert len(target.seen) == 2
    assert step["status"] == "passed"
    assert [wait["status"] for wait in step["rate_limited"]] == [429]


def test_retry_on_429_false_lets_the_assertions_see_the_429(tmp_path: Path):
    with _once_429(lambda: {"Retry-After": "0"}) as target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=1,
                                              request="{url: /once, retry_on_429: false}")})
    (step,) = _steps(results)
    assert len(target.seen) == 1
    assert step["status"] == "failed"
    assert step["assertions"][0]["reason"].endswith("expected status 200, got 429")


def test_a_503_without_retry_after_is_backed_off_and_sent_again(tmp_path: Path):
    target = Target()
    seen: list[float] = []

    def flaky(req):
        seen.append(time.monotonic())
        if len(seen) <= 2:
            return 503, {"Content-Type": "text/plain"}, b"busy"
        return 200, {"Content-Type": "application/json"}, b'{"ok": true}'

    target.route("/flaky", flaky)
    with target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=1, request="{url: /flaky}")})
    (step,) = _steps(results)
    assert step["status"] == "passed"
    assert [wait["status"] for wait in step["rate_limited"]] == [503, 503]
    # Backoff: the first wait is between half and all of 0.5 s, the second of 1 s.
    first, second = (wait["waited_ms"] for wait in step["rate_limited"])
    assert 250 <= first and 500 <= second
    assert seen[1] - seen[0] >= 0.25 and seen[2] - seen[1] >= 0.5


def test_a_per_minute_limit_from_a_pull_request_ends_in_bounded_time_with_errors(tmp_path: Path):
    """`per_minute: 1` written by a fork: the run does not stall until the limit allows each request; a
    request whose wait would pass its step's deadline is an error naming the limit, at once."""
    with BucketTarget(per_second=100) as target:
        started = time.monotonic()
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=6, rate_limit="{per_minute: 1}",
                                              timeout_ms=5_000)})
        took = time.monotonic() - started
    steps = _steps(results)
    assert len(target.arrivals) == 1
    assert [step["status"] for step in steps].count("passed") == 1
    errors = [step["error"] for step in steps if step["status"] == "error"]
    assert len(errors) == 5
    assert all(error.startswith(f"rate limit 1/min for {target.base_url}: the next request may go in ")
               and "beyond the step's deadline" in error for error in errors)
    assert results["verdict"] == "failed"
    assert took < 15


def test_a_stream_waits_out_a_429_before_it_is_read(tmp_path: Path):
    with _once_429(lambda: {"Retry-After": "0"}, "text/event-stream", b"data: hello\n\ndata: world\n\n") as target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=1,
                                              request="{url: /once, stream: sse}")})
    (step,) = _steps(results)
    assert step["status"] == "passed", step
    assert [wait["status"] for wait in step["rate_limited"]] == [429]
    assert step["stream"]["events_count"] == 2


def test_a_conversation_turn_waits_out_a_429(tmp_path: Path):
    suite = """\
version: 1
suite: Chat
base_url: {base}
flows:
  - name: talk
    conversation:
      request: {method: POST, url: /once, retry_on_429: true}
      format: {history_path: $.input, reply_path: $.reply, history: none}
    steps:
      - name: hello
        user: "Hi"
        assertions: [{type: contains, value: "hello there"}]
"""
    with _once_429(lambda: {"Retry-After": "0"}, body=b'{"reply": "hello there"}') as target:
        results = _run(tmp_path, {"chat": suite.replace("{base}", target.base_url)})
    (step,) = _steps(results)
    assert step["status"] == "passed", step
    assert [wait["status"] for wait in step["rate_limited"]] == [429]
    assert len(target.seen) == 2


def test_a_setup_step_waits_out_a_429_and_keeps_to_the_limit(tmp_path: Path):
    suite = _suite("A", "{base}", runs=3, rate_limit="{per_second: 10}").replace(
        "flows:", "setup:\n  - name: warm up\n    request: {url: /once}\nflows:")
    with BucketTarget(per_second=10) as target:
        limited = target.routes["/limited"]
        seen: list[float] = []
        target.route("/once", lambda req: seen.append(0) or ((429, {"Retry-After": "0"}, b"") if len(seen) == 1
                                                              else limited(req)))
        results = _run(tmp_path, {"a": suite.replace("{base}", target.base_url)})
    (setup,) = results["suites"][0]["setup"]
    assert setup["status"] == "passed"
    assert [wait["status"] for wait in setup["rate_limited"]] == [429]
    assert target.violations == 0
    assert all(step["status"] == "passed" for step in _steps(results)), _problems(results)


def test_a_target_answering_429_forever_gets_at_most_ten_resends(tmp_path: Path):
    """`retry_on_429: true` on a POST (a pull request may write it) against a target that says `Retry-After: 0`
    to everything: the POST goes out 11 times at most, then the step is an error saying so."""
    target = Target()
    target.route("/busy", lambda req: (429, {"Retry-After": "0", "Content-Type": "text/plain"}, b"busy"))
    with target:
        results = _run(tmp_path, {"a": _suite("A", target.base_url, runs=1,
                                              request="{url: /busy, method: POST, retry_on_429: true}")})
    (step,) = _steps(results)
    assert len(target.requests) == 11
    assert step["status"] == "error"
    assert step["error"] == "429 Too Many Requests: still 429 after 10 resends (the most Litmus sends)"
    assert len(step["rate_limited"]) == 10


def test_an_interrupted_run_sends_nothing_it_was_waiting_to_send(tmp_path: Path):
    """Ctrl-C while flow runs wait for the limiter: they stop waiting and send nothing more."""
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "a.yaml").write_text(
        _suite("A", "{base}", runs=3, rate_limit="{per_minute: 6}", timeout_ms=30_000))
    with BucketTarget(per_second=100) as target:
        text = (tmp_path / "probes" / "a.yaml").read_text().replace("{base}", target.base_url)
        (tmp_path / "probes" / "a.yaml").write_text(text)
        proc = start_litmus(tmp_path, "run", "probes", "--format", "summary", stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
        waited_for = time.monotonic() + 10
        while not target.arrivals and time.monotonic() < waited_for:
            time.sleep(0.02)
        time.sleep(0.3)  # the other flow runs are waiting for their turn (10 s apart)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
    assert len(target.arrivals) == 1
    results = json.loads((tmp_path / "litmus-report" / "results.json").read_text())
    assert results["run"]["interrupted"]
    errors = [step["error"] for step in _steps(results) if step["status"] == "error"]
    assert errors and all(error == f"run interrupted while waiting for the rate limit of {target.base_url}"
                          for error in errors)
