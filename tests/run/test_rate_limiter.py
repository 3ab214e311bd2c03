"""The run's rate limiter (litmus.run.rate): the token bucket's arithmetic, the strictest limit per origin,
Retry-After in both forms and the backoff without it. Times are given, not waited for."""

from __future__ import annotations

import random
import threading
import time
from datetime import UTC, datetime

import pytest

from litmus.deadline import Deadline, clock
from litmus.run.rate import BACKOFF_CAP_S, Rate, RateLimiter, RateLimitExceeded, TokenBucket, retry_after

ORIGIN = "http://127.0.0.1:8080"


def test_a_bucket_lets_its_burst_go_then_one_per_interval():
    bucket = TokenBucket(Rate(per_second=10, burst=3), now=100.0)
    assert [bucket.take(100.0) for _ in range(3)] == [0, 0, 0]
    assert bucket.take(100.0) == pytest.approx(0.1)
    assert bucket.take(100.05) == pytest.approx(0.05)  # half a token refilled
    assert bucket.take(100.1) == 0
    # A quiet spell refills up to the burst, never beyond it.
    assert [bucket.take(200.0) for _ in range(4)][:3] == [0, 0, 0]
    assert bucket.take(200.0) > 0


def test_the_stricter_of_two_limits_is_the_lower_rate_and_the_smaller_burst():
    assert Rate(50, 5).tighter(Rate(5, 10)) == Rate(5, 5)
    assert Rate(5, 1).tighter(None) == Rate(5, 1)


def test_limits_for_one_origin_combine_to_the_strictest():
    limiter = RateLimiter(Rate(100, 4))
    limiter.limit(ORIGIN, Rate(20, 10))
    limiter.limit(ORIGIN, Rate(50, 2))
    assert limiter.rate_of(ORIGIN) == Rate(20, 2)


def test_without_a_limit_no_origin_gets_a_bucket():
    limiter = RateLimiter()
    assert not limiter.active
    assert limiter.acquire(ORIGIN, Deadline.after(1), threading.Event()) == 0
    assert limiter.rate_of(ORIGIN) is None and not limiter.active


def test_a_run_wide_limit_applies_to_every_origin():
    limiter = RateLimiter(Rate(1, 1))
    stop = threading.Event()
    assert limiter.acquire(ORIGIN, Deadline.after(5), stop) < 0.05
    assert limiter.acquire("https://other.example", Deadline.after(5), stop) < 0.05  # its own bucket
    with pytest.raises(RateLimitExceeded):
        limiter.acquire(ORIGIN, Deadline.after(0.2), stop)


def test_a_wait_past_the_deadline_fails_at_once_naming_the_limit():
    limiter = RateLimiter()
    limiter.limit(ORIGIN, Rate(1 / 60))
    stop = threading.Event()
    limiter.acquire(ORIGIN, Deadline.after(30), stop)
    with pytest.raises(RateLimitExceeded) as info:
        limiter.acquire(ORIGIN, Deadline.after(30), stop)
    assert str(info.value).startswith(f"rate limit 1/min for {ORIGIN}: the next request may go in 60 s, beyond "
                                      "the step's deadline (")


def test_a_stopped_run_does_not_wait_for_the_limiter():
    limiter = RateLimiter(Rate(0.5))
    stop = threading.Event()
    limiter.acquire(ORIGIN, Deadline.after(10), stop)
    stop.set()
    assert limiter.acquire(ORIGIN, Deadline.after(10), stop) < 1


@pytest.mark.parametrize(("value", "seconds"), [
    ("120", 120.0), ("0", 0.0), (" 3 ", 3.0), ("1.5", 1.5),
    ("Wed, 02 Dec 2026 10:00:30 GMT", 30.0),
    ("Wed, 02 Dec 2026 09:59:00 GMT", 0.0),  # already past: go now
    ("-5", None), ("soon", None), ("nan", None), ("inf", None), ("", None),
])
def test_retry_after_in_seconds_or_as_an_http_date(value, seconds):
    now = datetime(2026, 12, 2, 10, 0, 0, tzinfo=UTC)
    assert retry_after({"Retry-After": value}, now) == seconds


def test_no_retry_after_header_is_none():
    assert retry_after({}) is None


def test_backoff_doubles_with_jitter_in_its_upper_half_and_is_capped():
    limiter = RateLimiter(rng=random.Random(7))
    for resends, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0)]:
        wait = limiter.backoff(resends)
        assert ceiling / 2 <= wait <= ceiling
    assert BACKOFF_CAP_S / 2 <= limiter.backoff(1000) <= BACKOFF_CAP_S
    # Seeded: the same waits again.
    first, second = RateLimiter(rng=random.Random(7)), RateLimiter(rng=random.Random(7))
    assert [first.backoff(n) for n in range(4)] == [second.backoff(n) for n in range(4)]


@pytest.mark.timing  # measured waits
def test_a_write_goes_out_no_sooner_than_the_interval_after_the_previous_write_ended():
    """A request whose write was held up (its thread waiting for the CPU, here a sleep inside the write)
    still leaves the interval before the next one: that is what the target counts."""
    limiter = RateLimiter(Rate(20))
    deadline = Deadline.after(5)
    ends: list[float] = []
    starts: list[float] = []

    def write(hold: float) -> None:
        with limiter.writing(ORIGIN, deadline):
            starts.append(clock())
            time.sleep(hold)
            ends.append(clock())

    first = threading.Thread(target=write, args=(0.03,))
    first.start()
    time.sleep(0.01)
    write(0)  # waits for the first write's turn, then for the interval after its end
    first.join()
    assert starts[1] - ends[0] >= 0.05 - 1e-3
