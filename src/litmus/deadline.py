"""A moment by which something must end, on the one clock every deadline in Litmus uses."""

from __future__ import annotations

import time
from dataclasses import dataclass

# The one clock: monotonic, so a wall-clock change neither ends nor extends a deadline.
clock = time.monotonic


@dataclass(frozen=True, order=True)
class Deadline:
    at: float  # a clock() value

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(clock() + seconds)

    def remaining(self) -> float:
        """Seconds left; zero or less once passed."""
        return self.at - clock()

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0

    def at_least(self, seconds: float) -> Deadline:
        """This deadline, or `seconds` from now when that is later (a floor for a call's own time)."""
        return max(self, Deadline.after(seconds))
