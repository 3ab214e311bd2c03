"""Manners towards a rate-limited target: the run's limiter, and how long to wait out a 429 or 503.

One `RateLimiter` per run holds a token bucket per origin (scheme://host:port) that has a limit: the
`--rate-limit` of the run applies to every origin, a suite's `rate_limit:` to each origin the suite sends
to, and where several apply the strictest wins (the lower rate, the smaller burst). Every suite's requests
to that origin share its bucket. An origin with no limit has no bucket: `acquire` is then one dict lookup,
with no lock and no clock read.

A token is taken when the request may go, not reserved ahead: a thread that wakes late moves the schedule
on instead of sending two requests closer together than the limit allows.
"""

from __future__ import annotations

import email.utils
import math
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from litmus.deadline import Deadline, clock
from litmus.model import Suite

# Statuses that mean "not now": waited out and the request sent again.
WAIT_STATUSES = frozenset({429, 503})
# Resends of one request after a 429 / 503, whatever its deadline still allows: a target that answers 429
# with `Retry-After: 0` forever must not be hammered.
MAX_RESENDS = 10
# Backoff without Retry-After: BACKOFF_BASE_S * 2^n, at most BACKOFF_CAP_S, half of it random (jitter).
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0


# Refills summed from float timestamps fall short of a whole token by rounding: that is a token.
_ROUNDING = 1e-9


class RateLimitExceeded(Exception):
    """The wait for a request to go would end past its step's deadline (the message names the limit)."""


@dataclass(frozen=True)
class Rate:
    per_second: float
    burst: int = 1

    @classmethod
    def of(cls, suite: Suite) -> Rate | None:
        """A suite's `rate_limit:`, if it has one."""
        limit = suite.rate_limit
        return None if limit is None else cls(limit.per_second, limit.burst)

    def tighter(self, other: Rate | None) -> Rate:
        """The stricter of the two in each part: what both limits allow."""
        if other is None:
            return self
        return Rate(min(self.per_second, other.per_second), min(self.burst, other.burst))

    def __str__(self) -> str:
        shown = f"{self.per_second:g}/s" if self.per_second >= 1 else f"{self.per_second * 60:g}/min"
        return shown if self.burst == 1 else f"{shown}, burst {self.burst}"


class TokenBucket:
    """`burst` tokens at most, refilled at `per_second`; a request takes one. Not thread-safe: the limiter
    holds its lock around every call."""

    def __init__(self, rate: Rate, now: float) -> None:
        self.rate = rate
        self.tokens = float(rate.burst)
        self.stamp = now

    def tighten(self, rate: Rate) -> None:
        self.rate = self.rate.tighter(rate)
        self.tokens = min(self.tokens, self.rate.burst)

    def take(self, now: float) -> float:
        """0 when a token was taken; else the seconds until one will be there (nothing taken)."""
        self.tokens = min(float(self.rate.burst), self.tokens + (now - self.stamp) * self.rate.per_second)
        self.stamp = now
        if self.tokens >= 1 - _ROUNDING:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate.per_second


class RateLimiter:
    """The run's limits per origin (see the module's doc). Created once per run and passed down: no global
    state, so a parent process can hold the one instance its workers ask."""

    def __init__(self, every_origin: Rate | None = None, *, rng: random.Random | None = None) -> None:
        self.every_origin = every_origin
        self._buckets: dict[str, TokenBucket] = {}
        self._lock = threading.Lock()
        # Backoff jitter; a test passes a seeded one.
        self._rng = rng or random.Random()

    @property
    def active(self) -> bool:
        """Whether any origin may have a limit (else no request needs its origin looked at)."""
        return self.every_origin is not None or bool(self._buckets)

    def limit(self, origin: str, rate: Rate) -> None:
        """Cap `origin` at `rate` too (a suite's `rate_limit:`): the strictest limit given for it wins."""
        with self._lock:
            bucket = self._buckets.get(origin)
            if bucket is None:
                self._buckets[origin] = TokenBucket(rate.tighter(self.every_origin), clock())
            elif bucket.rate.tighter(rate) != bucket.rate:
                bucket.tighten(rate)

    def acquire(self, origin: str, deadline: Deadline, stop: threading.Event) -> float:
        """Wait until a request to `origin` may go; the seconds waited. RateLimitExceeded, at once, when
        the wait would end past `deadline`. Returns early when `stop` is set (the caller checks it)."""
        bucket = self._buckets.get(origin)
        if bucket is None:
            if self.every_origin is None:
                return 0.0
            with self._lock:
                bucket = self._buckets.setdefault(origin, TokenBucket(self.every_origin, clock()))
        started = clock()
        while True:
            with self._lock:
                wait = bucket.take(clock())
                rate = bucket.rate
            if wait == 0:
                return clock() - started
            left = deadline.remaining()
            if wait > left:
                raise RateLimitExceeded(
                    f"rate limit {rate} for {origin}: the next request may go in {wait:.3g} s, beyond the "
                    f"step's deadline ({max(left, 0):.3g} s left)")
            if stop.wait(wait):
                return clock() - started

    def backoff(self, resends: int) -> float:
        """Seconds to wait before resend number `resends` + 1 when the target said no Retry-After:
        exponential, capped, the upper half random so that flow runs limited together spread out."""
        ceiling = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** min(resends, 32))
        return ceiling / 2 + self._rng.random() * ceiling / 2


def retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """A response's `Retry-After` in seconds from now (delay-seconds or an HTTP date; a date already
    past is 0), or None when it has none or it is neither form."""
    value = (headers.get("Retry-After") or "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # RFC 9110: an HTTP date is GMT
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
