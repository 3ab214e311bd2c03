"""Manners towards a rate-limited target: the run's limiter, and how long to wait out a 429 or 503.

One `RateLimiter` per run holds a token bucket per origin (scheme://host:port) that has a limit: the
`--rate-limit` of the run applies to every origin, a suite's `rate_limit:` to each origin the suite sends
to, and where several apply the strictest wins (the lower rate, the smaller burst). Every suite's requests
to that origin share its bucket. An origin with no limit has no bucket: `acquire` is then one dict lookup,
with no lock and no clock read.

Each origin's rate is kept twice: `acquire` waits for a token before the request is sent (so a wait for
the limit is not counted in its response time), and `writing`, around the write to the connected socket,
takes a token of a second bucket of the same rate that counts from when the write ended. A thread that got
its token and then waited for the CPU would otherwise go out right before the next request.
"""

from __future__ import annotations

import email.utils
import math
import random
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

from litmus.deadline import Deadline, clock
from litmus.model import Suite
from litmus.numbers import parse_number

# A run-wide limit (`--rate-limit`, LITMUS_RATE_LIMIT, the action's `rate-limit`) in requests per second to one
# origin: beyond this it limits nothing a run could send.
MAX_RATE_LIMIT = 100_000
# How each of those reads its value (requests per second, above 0).
RATE_LIMIT_BOUNDS = {"whole": False, "low": 0, "above_low": True, "high": MAX_RATE_LIMIT}

# Resends of one request after a 429 / 503, whatever its deadline still allows: a target that answers 429
# with `Retry-After: 0` forever must not be hammered.
MAX_RESENDS = 10
# Backoff without Retry-After: BACKOFF_BASE_S * 2^n, at most BACKOFF_CAP_S, half of it random (jitter).
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0


# Refills summed from float timestamps fall short of a whole token by rounding: that is a token.
_ROUNDING = 1e-9


def parse_rate_limit(text: str) -> float:
    """A run-wide limit as given (ValueError saying what is expected; the caller names the setting)."""
    return parse_number(text, **RATE_LIMIT_BOUNDS)


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


@dataclass
class _Limited:
    """An origin's two buckets of one rate: `pace` spaces out the requests before they are sent (their waits
    stay out of their response times), `gate` holds each one as it is written to the socket, one at a time
    (`turn`), so that a thread that got its token but then waited for the CPU cannot go out right before the
    next one."""

    pace: TokenBucket
    gate: TokenBucket
    turn: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def at(cls, rate: Rate) -> _Limited:
        now = clock()
        return cls(TokenBucket(rate, now), TokenBucket(rate, now))


class RateLimiter:
    """The run's limits per origin (see the module's doc). Created once per run and passed down: no global
    state, so a parent process can hold the one instance its workers ask."""

    def __init__(self, every_origin: Rate | None = None, *, rng: random.Random | None = None) -> None:
        self.every_origin = every_origin
        self._origins: dict[str, _Limited] = {}
        self._lock = threading.Lock()
        # Backoff jitter; a test passes a seeded one.
        self._rng = rng or random.Random()

    @property
    def active(self) -> bool:
        """Whether any origin may have a limit (else no request needs its origin looked at)."""
        return self.every_origin is not None or bool(self._origins)

    def rate_of(self, origin: str) -> Rate | None:
        limited = self._origins.get(origin)
        return limited.pace.rate if limited is not None else self.every_origin

    def limit(self, origin: str, rate: Rate) -> None:
        """Cap `origin` at `rate` too (a suite's `rate_limit:`): the strictest limit given for it wins."""
        with self._lock:
            limited = self._origins.get(origin)
            if limited is None:
                self._origins[origin] = _Limited.at(rate.tighter(self.every_origin))
            elif limited.pace.rate.tighter(rate) != limited.pace.rate:
                limited.pace.tighten(rate)
                limited.gate.tighten(rate)

    def _limited(self, origin: str) -> _Limited | None:
        limited = self._origins.get(origin)
        if limited is None and self.every_origin is not None:
            with self._lock:
                limited = self._origins.setdefault(origin, _Limited.at(self.every_origin))
        return limited

    def acquire(self, origin: str, deadline: Deadline, stop: threading.Event) -> float:
        """Wait until a request to `origin` may go; the seconds waited. RateLimitExceeded, at once, when
        the wait would end past `deadline`. Returns early when `stop` is set (the caller checks it)."""
        limited = self._limited(origin)
        if limited is None:
            return 0.0
        started = clock()
        while True:
            with self._lock:
                wait = limited.pace.take(clock())
                rate = limited.pace.rate
            if wait == 0:
                return clock() - started
            left = deadline.remaining()
            if wait > left:
                raise RateLimitExceeded(
                    f"rate limit {rate} for {origin}: the next request may go in {wait:.3g} s, beyond the "
                    f"step's deadline ({max(left, 0):.3g} s left)")
            if stop.wait(wait):
                return clock() - started

    @contextmanager
    def writing(self, origin: str, deadline: Deadline) -> Iterator[None]:
        """Around writing a request `acquire` let go to its connected socket: requests to `origin` are written
        one at a time, each once the gate bucket has a token, and that token counts from when the writing
        ended. So the first bytes of two requests never reach the target closer than the limit allows,
        however long a thread waited for the CPU between its token and its write. Waiting for another
        request's write ends at `deadline` (then this one goes without the turn: its exchange ends anyway)."""
        limited = self._limited(origin)
        if limited is None:
            yield
            return
        turn = limited.turn.acquire(timeout=max(deadline.remaining(), 0))
        try:
            while True:
                with self._lock:
                    taken = clock()
                    wait = limited.gate.take(taken)
                if wait == 0:
                    break
                time.sleep(wait)
            try:
                yield
            finally:
                with self._lock:
                    limited.gate.tokens -= (clock() - taken) * limited.gate.rate.per_second
        finally:
            if turn:
                limited.turn.release()

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
