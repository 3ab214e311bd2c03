"""Cancelling `litmus action` as a runner does: the action in a subprocess against the fake GitHub and
a target whose `/hang` route answers only after HANG_S, and a signal once that call is under way.
Shared by tests/github/test_cancellation.py and bench/signals.py."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from support.cli import start_litmus
from support.fake_github import FakeGitHub
from support.target import Target

EVENTS = Path(__file__).resolve().parents[1] / "github" / "events"
REPO = "acme/shop"
HANG_S = 60.0
# Two flow runs answer at once; the third hangs until the test ends.
SUITE = """version: 1
suite: Slow
flows:
  - name: quick
    runs: 2
    steps:
      - name: fast
        request: {url: /fast}
        assertions:
          - {type: status_code, expected: 200}
  - name: stuck
    steps:
      - name: hang
        request: {url: /hang, timeout_ms: 120000}
        assertions:
          - {type: status_code, expected: 200}
"""


def workspace_with_slow_suite(root: Path) -> Path:
    workspace = root / "workspace"
    (workspace / "probes").mkdir(parents=True)
    (workspace / "probes" / "slow.yaml").write_text(SUITE)
    return workspace


def route_hang(target: Target, released: threading.Event) -> None:
    """`/hang` answers after HANG_S, or as soon as `released` is set (the test's teardown)."""
    def hang(request):
        released.wait(HANG_S)
        return 200, {}, b"late"

    target.route("/hang", hang)


@contextmanager
def hanging_target() -> Iterator[Target]:
    """A target with `/fast` (answers at once) and `/hang`."""
    released = threading.Event()
    with Target() as target:
        target.json("/fast", {"ok": True})
        route_hang(target, released)
        try:
            yield target
        finally:
            released.set()


def start_action(workspace: Path, gh: FakeGitHub, target: Target, **inputs: str) -> tuple[subprocess.Popen, dict]:
    files = workspace.parent / "file_commands"
    files.mkdir()
    paths = {"output": files / "set_output", "summary": files / "step_summary"}
    for path in paths.values():
        path.write_text("")
    environ = {
        "HOME": str(workspace.parent), "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_EVENT_PATH": str(EVENTS / "pull_request.json"), "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_REPOSITORY": REPO, "GITHUB_SHA": "9" * 40, "GITHUB_API_URL": gh.base_url,
        "GITHUB_OUTPUT": str(paths["output"]), "GITHUB_STEP_SUMMARY": str(paths["summary"]),
        "INPUT_GITHUB-TOKEN": "ghs_cancelled0123456789", "INPUT_BASE-URL": target.base_url,
        "INPUT_PROBES": "probes", "INPUT_OUTPUT-DIR": "litmus-report",
        **{f"INPUT_{name.replace('_', '-').upper()}": value for name, value in inputs.items()},
    }
    proc = start_litmus(workspace, "action", env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc, paths


def cancel(proc: subprocess.Popen, target: Target, signals: tuple[int, ...]) -> tuple[float, str]:
    """Signal the action once the hanging call is under way; seconds from the first signal to its exit."""
    started = time.monotonic()
    while not any(r.path == "/hang" for r in target.requests) and proc.poll() is None:
        assert time.monotonic() - started < 60, "the action never reached the hanging call"
        time.sleep(0.01)
    time.sleep(0.3)  # the quick flow runs have finished by now
    sent = time.monotonic()
    for i, signum in enumerate(signals):
        if i:
            time.sleep(0.1)
        proc.send_signal(signum)
    try:
        output, _ = proc.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the cancelled action still ran when the hanging call would have returned") from None
    return time.monotonic() - sent, output.decode("utf-8", "replace")
