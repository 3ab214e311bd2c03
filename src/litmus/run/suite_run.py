"""One run of one suite: its setup once, its flow runs, then its teardown once.

    setup      steps run in order before any flow run; what they extract is `{{ setup.NAME }}`
    flow runs  submitted to the run's shared pool: concurrently, or one at a time in file order
               with `serial: true`; at most `window` are queued at once, so a plan of thousands
               of rows is read as it goes rather than held whole
    teardown   steps run after every flow run ended, whatever happened, interruption included:
               then it gets TEARDOWN_GRACE_S seconds (requests cut to what is left of it)

A setup step that fails or errors skips every flow run of the suite (they are reported, each
step `skipped` naming the setup step) and fails the suite; teardown outcomes are reported and
never change the verdict.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace

from litmus.deadline import Deadline
from litmus.model import Flow, Suite
from litmus.results import FlowRunResult, StepResult
from litmus.run.flow import PlannedRun, RunEnvironment, run_steps, skipped_run
from litmus.run.signals import GRACE_S
from litmus.verdict import NOT_PASSED

TEARDOWN_GRACE_S = 10.0


@dataclass
class SuiteRunResult:
    setup: list[StepResult] = field(default_factory=list)
    teardown: list[StepResult] = field(default_factory=list)
    # Why the flow runs were skipped (the setup step that did not pass); None when they ran.
    setup_failure: str | None = None


def run_suite(suite: Suite, planned: Iterable[tuple[int, PlannedRun]], env: RunEnvironment, pool: Executor,
              run_one: Callable[[PlannedRun, RunEnvironment], FlowRunResult | None],
              deliver: Callable[[int, FlowRunResult], None], *, window: int) -> SuiteRunResult:
    """Run the suite's part of the plan (`(index, planned run)` in plan order); each finished flow run
    goes to `deliver` with its index, from this thread."""
    result = SuiteRunResult()
    planned = iter(planned)
    first = next(planned, None)
    if first is None:
        return result  # nothing of this suite runs here (a --flow filter, another shard): no setup either
    planned = itertools.chain((first,), planned)
    setup_values = None
    try:
        if suite.setup:
            result.setup, setup_values = run_steps(_steps_run(suite, "setup", suite.setup), env)
            result.setup_failure = _setup_failure(result.setup)
        if result.setup_failure is not None:
            for index, run in planned:
                deliver(index, skipped_run(run, result.setup_failure))
        else:
            with_setup = ((i, replace(run, setup=setup_values)) for i, run in planned)
            _run_flow_runs(with_setup, env, pool, run_one, deliver, 1 if suite.serial else window)
    finally:
        if suite.teardown:
            result.teardown = _teardown(suite, env, setup_values)
    return result


def _run_flow_runs(planned: Iterable[tuple[int, PlannedRun]], env: RunEnvironment, pool: Executor,
                   run_one, deliver, window: int) -> None:
    pending: deque[tuple[int, Future]] = deque()
    waiting = _Waiting(env)
    for index, run in planned:
        if env.stop.is_set():
            break
        pending.append((index, pool.submit(run_one, run, env)))
        while len(pending) >= window and waiting.deliver_first(pending, deliver):
            pass
    while pending and waiting.deliver_first(pending, deliver):
        pass


class _Waiting:
    """Waits for flow runs in plan order; after a stop, for GRACE_S at most (not at all after `abort`):
    a flow run still in a step then is abandoned, so the teardown is not held up by a hanging call."""

    def __init__(self, env: RunEnvironment) -> None:
        self.env = env
        self.deadline: Deadline | None = None

    def deliver_first(self, pending: deque[tuple[int, Future]], deliver) -> bool:
        """Deliver the oldest pending flow run; False when the rest are abandoned."""
        index, future = pending[0]
        while True:
            try:
                flow_run = future.result(timeout=0.1)
                break
            except FutureTimeout:
                if self.env.stop.is_set():
                    self.deadline = self.deadline or Deadline.after(GRACE_S)
                    if self.env.abort.is_set() or self.deadline.expired:
                        pending.clear()
                        return False
        pending.popleft()
        if flow_run is not None:  # None: not started, the run was stopped first
            deliver(index, flow_run)
        return True


def _teardown(suite: Suite, env: RunEnvironment, setup_values) -> list[StepResult]:
    stop = threading.Event()
    timer = None
    if env.stop.is_set():
        # Interrupted: clean up anyway, but within a bounded time.
        timer = threading.Timer(TEARDOWN_GRACE_S, stop.set)
        timer.daemon = True
        timer.start()
        env = replace(env, timeout_cap_ms=TEARDOWN_GRACE_S * 1000)
    try:
        steps, _ = run_steps(_steps_run(suite, "teardown", suite.teardown, setup_values), env, stop)
    finally:
        if timer is not None:
            timer.cancel()
    return steps


def _steps_run(suite: Suite, name: str, steps, setup_values=None) -> PlannedRun:
    return PlannedRun(suite, Flow(pos=suite.at(name), name=name, steps=tuple(steps)), None, 0, setup_values)


def _setup_failure(steps: list[StepResult]) -> str | None:
    for step in steps:
        if step.status in ("failed", "error") or any(o.status in NOT_PASSED for o in step.assertions):
            return f"setup step '{step.name}' did not pass" + (f": {step.error}" if step.error else "")
    return None

