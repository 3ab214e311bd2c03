"""Stopping a run cleanly on SIGINT/SIGTERM: finish or cut the running flow runs, keep the results."""

from __future__ import annotations

import signal
import threading


class StopOnSignals:
    """While active, SIGINT/SIGTERM set `event` (and `signum`); a second SIGINT aborts at once.

    Only the main thread can install handlers; elsewhere this does nothing.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, event: threading.Event) -> None:
        self.event = event
        self.signum: int | None = None
        self._previous: dict[int, object] = {}

    def _handle(self, signum, frame) -> None:
        if self.event.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt  # asked twice: stop waiting for running steps
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
