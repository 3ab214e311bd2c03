"""Stopping a run cleanly on SIGINT/SIGTERM: cut the running flow runs, keep the results, exit fast.

The first SIGINT or SIGTERM sets `stop`: no new flow run starts, and the runner gives the flow runs
in progress `GRACE_S` to finish their current step, then abandons them (an HTTP call to the target
or a judge call still in flight is not waited for). A second SIGINT sets `abort`: the runner stops
waiting at once. Either way results.json and the reports are written from what finished.

Python joins every worker thread at exit, so a process whose abandoned threads still wait on a
60 s judge call would take 60 s to end: `exit_abandoning` ends it without that join, once every
file is written.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

# How long flow runs in progress may take to finish their current step after the first signal.
GRACE_S = 1.0


class StopOnSignals:
    """While active, SIGINT/SIGTERM set `event` (and `signum`); a second SIGINT also sets `abort`.

    The handlers never raise: the main thread polls the events, so a signal cannot cut a report
    being written. Only the main thread can install handlers; elsewhere this does nothing.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, event: threading.Event, abort: threading.Event | None = None) -> None:
        self.event = event
        self.abort = abort if abort is not None else threading.Event()
        self.signum: int | None = None
        self._previous: dict[int, object] = {}

    def _handle(self, signum, frame) -> None:
        if self.event.is_set() and signum == signal.SIGINT:
            self.abort.set()  # asked twice: stop waiting for running steps
        self.signum = self.signum or signum
        self.event.set()

    def __enter__(self) -> StopOnSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    @property
    def exit_code(self) -> int | None:
        """128 + the signal number (130 for SIGINT, 143 for SIGTERM), None when no signal came."""
        return 128 + self.signum if self.signum else None


def exit_abandoning(code: int) -> int:
    """End the process with `code` now if abandoned worker threads are still running, else return it.

    Call it only once every output is written and flushed by the caller's own code paths.
    """
    busy = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if not busy:
        return code
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can be said there
            pass
    os._exit(code)
