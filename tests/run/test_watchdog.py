"""The transport's watchdog: a cancelled alarm lets go of its callback at once, not at its deadline."""

from __future__ import annotations

import gc
import weakref

from litmus.deadline import Deadline
from litmus.run.http import Watchdog


class Exchange:
    """Stands for `litmus.run.http.Exchange`: what an alarm's callback is bound to (the response with it)."""

    def expire(self) -> None:
        raise AssertionError("a cancelled alarm never fires")


def test_a_cancelled_alarm_frees_its_exchange_before_its_deadline():
    # Every request arms an alarm at its timeout (30 s by default) and cancels it when done: a run of
    # thousands of requests kept every finished exchange alive until its 30 s were up.
    watchdog = Watchdog()
    exchange = Exchange()
    alive = weakref.ref(exchange)
    alarm = watchdog.arm(Deadline.after(3600), exchange.expire)
    watchdog.cancel(alarm)
    del exchange
    gc.collect()
    assert alive() is None
