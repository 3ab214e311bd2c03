"""Waiting for a preview deployment: poll a URL until it answers 2xx, with progress lines and a deadline.

Each attempt runs in a worker thread and the wait watches `stop` meanwhile, so a cancelled job
(SIGINT/SIGTERM) ends the wait within a tenth of a second, even while an attempt hangs.

Requests go through `litmus.net`'s session: redirects are followed under the probes' policy (a
redirect to a cloud metadata address ends the wait at once, naming it), and no body is read: the
status is all the wait needs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import requests

from litmus import net
from litmus.deadline import Deadline, clock
from litmus.text import count


class NotReady(Exception):
    """The target did not answer 2xx before the deadline."""


def wait_until_ready(
    url: str, timeout_s: float, *, interval_s: float = 2.0, log: Callable[[str], None] = print,
    stop: threading.Event | None = None,
) -> float | None:
    """Seconds waited until `url` answered 2xx, None when `stop` was set first; raises `NotReady`
    saying what it saw last.

    Bodies are never printed (they are the target's, not ours); only status codes and error kinds.
    """
    stop = stop or threading.Event()
    start = clock()
    deadline = Deadline.after(timeout_s)
    attempt = 0
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="litmus-wait")
    with net.Session() as session:
        try:
            while True:
                attempt += 1
                remaining = deadline.remaining()
                pending = pool.submit(session.get, url, timeout=max(1.0, min(10.0, remaining)), allow_redirects=True)
                while not pending.done():
                    if stop.wait(0.1):
                        return None
                try:
                    response = pending.result()
                    response.close()
                    last = f"HTTP {response.status_code}"
                    if 200 <= response.status_code < 300:
                        waited = clock() - start
                        log(f"{url} is ready (HTTP {response.status_code}) after {waited:.1f}s, "
                            f"{count(attempt, 'attempt')}")
                        return waited
                except net.RequestRefused as exc:
                    raise NotReady(f"{url} will not be ready: {exc}") from None
                except requests.RequestException as exc:
                    last = type(exc).__name__
                elapsed = clock() - start
                if deadline.expired:
                    raise NotReady(f"{url} was not ready after {elapsed:.0f}s ({attempt} attempts, last: {last}); "
                                   f"raise wait-timeout if the deployment needs longer")
                log(f"waiting for {url}: {last} ({elapsed:.0f}s of {timeout_s:.0f}s)")
                # The last try lands on the deadline itself, however the interval divides the timeout.
                if stop.wait(max(0.0, min(interval_s, deadline.remaining()))):
                    return None
        finally:
            # A hanging attempt is left behind after a stop; its thread ends with its timeout.
            pool.shutdown(wait=not stop.is_set(), cancel_futures=True)
