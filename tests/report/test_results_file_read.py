"""A results file the operator names (`litmus report`, `calibrate --results`, ...) may lie anywhere, but it is read
only if it is a regular file of at most 64 MiB: a FIFO would block the command for ever, /dev/zero would fill its
memory. Each is refused at once with an error naming the file."""

from __future__ import annotations

import json
import os

import pytest

from support.cli import litmus, write_judge_config
from support.fake_judge import API_KEY

MAX_RESULTS_BYTES = 64 * 1024 * 1024
# Far below what a blocked read would take (for ever), far above what a refusal takes.
NO_HANG_S = 60


def _decisions(project) -> None:
    (project / ".litmus").mkdir()
    (project / ".litmus" / "decisions.yaml").write_text(json.dumps([{
        "finding": "0" * 32, "content": "0" * 64, "verdict": "pass", "by": "ann", "at": "2026-05-04T12:00:00Z"}]),
        "utf-8")


def _command(kind: str, project, name: str) -> tuple[str, ...]:
    if kind == "report":
        return "report", name, "--out", "out"
    write_judge_config(project, "http://127.0.0.1:9", threshold=75)
    _decisions(project)
    return "calibrate", "--results", name


def _fifo(path) -> str:
    os.mkfifo(path)
    return "a FIFO"


def _oversize(path) -> str:
    with open(path, "wb") as handle:
        handle.truncate(MAX_RESULTS_BYTES + 1)  # sparse: no disk, no time
    return "results files are limited to 64 MiB"


@pytest.mark.parametrize("kind", ["report", "calibrate"])
@pytest.mark.parametrize("make", [_fifo, _oversize], ids=["fifo", "oversize"])
def test_a_results_file_that_is_no_regular_file_or_too_large_is_refused_at_once(tmp_path, kind, make):
    project = tmp_path / "repo"
    project.mkdir()
    outside = tmp_path / "downloaded"  # outside the repository, like an artifact saved to /tmp
    outside.mkdir()
    why = make(outside / "results.json")
    done = litmus(project, *_command(kind, project, str(outside / "results.json")), env={"JUDGE_KEY": API_KEY},
                  timeout=NO_HANG_S)
    assert done.returncode == 2, done.stderr
    assert f"'{outside / 'results.json'}'" in done.stderr and why in done.stderr
    assert not (project / "out").exists()


def test_dev_zero_as_results_is_refused_not_read(tmp_path):
    done = litmus(tmp_path, "report", "/dev/zero", "--out", "out", timeout=NO_HANG_S)
    assert done.returncode == 2
    assert "'/dev/zero' is not a regular file (a character device)" in done.stderr
