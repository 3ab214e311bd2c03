"""Waiting for a preview deployment: poll a URL until it answers 2xx, with progress lines and a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable

import requests


class NotReady(Exception):
    """The target did not answer 2xx before the deadline."""


def wait_until_ready(
    url: str, timeout_s: float, *, interval_s: float = 2.0, log: Callable[[str], None] = print,
    clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
) -> float:
    """Seconds waited until `url` answered 2xx; raises `NotReady` saying what it saw last.

    Bodies are never printed (they are the target's, not ours); only status codes and error kinds.
    """
    start = clock()
    deadline = start + timeout_s
    attempt = 0
    with requests.Session() as session:
        while True:
            attempt += 1
            remaining = deadline - clock()
            try:
                response = session.get(url, timeout=max(1.0, min(10.0, remaining)), allow_redirects=True)
                last = f"HTTP {response.status_code}"
                if 200 <= response.status_code < 300:
                    waited = clock() - start
                    log(f"{url} is ready (HTTP {response.status_code}) after {waited:.1f}s, {attempt} attempt(s)")
                    return waited
            except requests.RequestException as exc:
                last = type(exc).__name__
            elapsed = clock() - start
            if clock() >= deadline:
                raise NotReady(f"{url} was not ready after {elapsed:.0f}s ({attempt} attempts, last: {last}); "
                               f"raise wait-timeout if the deployment needs longer")
            log(f"waiting for {url}: {last} ({elapsed:.0f}s of {timeout_s:.0f}s)")
            # The last try lands on the deadline itself, however the interval divides the timeout.
            sleep(max(0.0, min(interval_s, deadline - clock())))
