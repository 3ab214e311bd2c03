"""The whole pipeline as a user runs it, and the promises every run must keep whatever went wrong.

`run_litmus` starts the real `litmus` command in a subprocess (load -> run -> results -> reports; through
`support.cli.start_litmus`) and measures its peak RSS; `check_run` asserts the cross-cutting promises on
what it left behind: every report written and well-formed, results.json valid, every assertion an outcome
with a reason.
`bench/reliability.py` drives the same helpers at a larger scale.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from litmus.report import FORMATS
from litmus.results import RunResult, load_results, validate
from support.cli import start_litmus

OUTCOMES = {"passed", "failed", "error", "skipped", "needs_review"}
REPORT_FILES = [f.filename for f in FORMATS.values()]


@dataclass
class Ran:
    code: int
    stdout: bytes
    stderr: bytes
    max_rss_mib: float
    wall_s: float

    @property
    def output(self) -> str:
        return (self.stdout + self.stderr).decode("utf-8", "replace")


def start_measured(args: list[str], *, cwd: Path,
                   env: Mapping[str, str] | None = None) -> tuple[subprocess.Popen, IO, IO]:
    """`start_litmus` with its output in files (a pipe nobody reads would fill and block it)."""
    stdout, stderr = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    return start_litmus(cwd, *args, env=env, stdout=stdout, stderr=stderr), stdout, stderr


def finish(proc: subprocess.Popen, stdout, stderr, started: float, timeout: float = 120) -> Ran:
    """Wait for the process, sampling its peak RSS (VmHWM) meanwhile.

    Not wait4's ru_maxrss: on Linux a child's maxrss starts at the parent's RSS at fork time (exec keeps
    the high-water mark of the copied address space), so a large test process would inflate every figure.
    """
    deadline = time.monotonic() + timeout
    peak_kib = 0
    usage = None
    while proc.returncode is None:  # set already when the caller's poll() reaped it
        peak_kib = max(peak_kib, _vm_hwm_kib(proc.pid))
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            raise AssertionError(f"litmus hung: still running after {timeout} s")
        time.sleep(0.01)
    wall = time.monotonic() - started
    outputs = []
    for f in (stdout, stderr):
        f.seek(0)
        outputs.append(f.read())
        f.close()
    if not peak_kib and usage is not None:  # no /proc: the upper bound wait4 gives
        peak_kib = usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss // 1024
    return Ran(proc.returncode, outputs[0], outputs[1], peak_kib / 1024, wall)


def _vm_hwm_kib(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def run_litmus(args: list[str], *, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 120) -> Ran:
    """`litmus *args` run to its end, with its peak RSS and wall time; `env` as `support.cli.litmus`'s."""
    started = time.monotonic()
    proc, out, err = start_measured(args, cwd=cwd, env=env)
    return finish(proc, out, err, started, timeout)


def interrupt(args: list[str], *, cwd: Path, env: Mapping[str, str] | None = None, signum: int, after: float) -> Ran:
    """Start a run and send it `signum` after `after` seconds."""
    started = time.monotonic()
    proc, out, err = start_measured(args, cwd=cwd, env=env)
    time.sleep(after)
    if proc.poll() is None:
        proc.send_signal(signum)
    return finish(proc, out, err, started)


SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}


def write_suite(root: Path, name: str, text: str) -> Path:
    path = root / "probes" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def check_run(out: Path) -> RunResult:
    """Every report written and well-formed, results.json valid, every assertion an outcome with a reason."""
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["results.json", *REPORT_FILES]), f"unexpected files in {out}: {names}"
    document = json.loads((out / "results.json").read_text("utf-8"))
    assert validate(document) == []
    result = load_results(out / "results.json")
    sarif = json.loads((out / "litmus.sarif").read_text("utf-8"))
    assert sarif["version"] == "2.1.0"
    ET.fromstring((out / "junit.xml").read_bytes())
    assert (out / "report.html").read_text("utf-8").rstrip().endswith("</html>")
    for name in ("comment.md", "summary.md"):
        assert (out / name).read_text("utf-8").strip()
    for *_, outcome in result.iter_outcomes():
        assert outcome.status in OUTCOMES
        assert outcome.status == "passed" or outcome.reason.strip(), outcome
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            for step in flow_run.steps:
                assert step.status != "error" or step.error, step
    return result


def peak_rss_limit_mib() -> float:
    """The memory bound a run must stay under: the interpreter and libraries plus a few body caps."""
    return 160.0


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in sorted(root.rglob("*")) if p.is_file()]


def leftovers(root: Path) -> list[Path]:
    """Temporary files an atomic write left behind."""
    return [p for p in files_under(root) if p.name.startswith(".") or p.suffix in (".tmp", ".part")]

