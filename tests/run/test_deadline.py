"""`Deadline`: the one type every deadline in Litmus is, on one clock."""

import time

import pytest

from litmus.deadline import Deadline, clock

pytestmark = pytest.mark.timing  # a deadline of 50 ms read right away


def test_a_deadline_counts_down_on_the_clock_and_expires():
    deadline = Deadline.after(0.05)
    assert 0 < deadline.remaining() <= 0.05
    assert not deadline.expired
    time.sleep(0.06)
    assert deadline.expired
    assert deadline.remaining() < 0


def test_at_least_keeps_the_later_of_the_deadline_and_the_floor():
    near, far = Deadline(clock() + 0.01), Deadline(clock() + 60)
    assert near.at_least(1).remaining() > 0.5  # the floor wins over a deadline about to pass
    assert far.at_least(1) == far  # a later deadline is kept as is


def test_an_expired_deadline_is_the_moment_it_passes():
    assert Deadline(clock()).expired
    assert not Deadline.after(10).expired
