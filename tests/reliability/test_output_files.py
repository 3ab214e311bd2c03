"""Output files through `litmus run`: written whole, never through a symlink a pull request planted
in the output folder; an output folder that cannot be written is refused before any request; a
report that cannot be written loses neither results.json nor the other reports."""

from __future__ import annotations

import contextlib
import os
import subprocess

import pytest
from pipeline import REPORT_FILES, check_run, run_litmus, write_suite

from litmus.results import load_results

SUITE = """version: 1
suite: Out
flows:
  - name: get
    steps:
      - name: get
        request: {url: /ok}
        assertions:
          - {type: status_code, expected: 200}
"""


@pytest.fixture
def project(tmp_path, target):
    target.json("/ok", {"ok": True})
    write_suite(tmp_path, "out.yaml", SUITE)
    return tmp_path


def run(project, target, *args):
    return run_litmus(["run", "--base-url", target.base_url, *args], cwd=project)


def test_symlinks_planted_in_the_output_folder_are_replaced_not_followed(project, target):
    out = project / "litmus-report"
    out.mkdir()
    victims = {}
    for name in ["results.json", *REPORT_FILES]:
        victim = project / f"victim-{name}"
        victim.write_text("untouched")
        (out / name).symlink_to(victim)
        victims[name] = victim
    ran = run(project, target)
    assert ran.code == 0, ran.output
    assert all(v.read_text() == "untouched" for v in victims.values())
    assert not any((out / name).is_symlink() for name in victims)
    check_run(out)


@pytest.mark.parametrize("kind", ["a file", "under a file"])
def test_an_output_folder_that_cannot_be_a_folder_is_refused_before_any_request(project, target, kind):
    (project / "taken").write_text("a file")
    out = "taken" if kind == "a file" else "taken/reports"
    ran = run(project, target, "--out", out)
    assert ran.code == 2, ran.output
    assert "--out" in ran.stderr.decode() and "taken" in ran.stderr.decode()
    assert "Traceback" not in ran.output
    assert target.requests == []


@contextlib.contextmanager
def mounted(path, options):
    """A small tmpfs at `path` (root only, where mounting is allowed): the read-only or full disk a
    user's --out can be on, which no chmod reproduces for root."""
    path.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root); the read-only and full cases need one")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def _fill(path):
    with contextlib.suppress(OSError), open(path / "filler", "wb") as f:
        while True:
            f.write(b"\0" * 65536)
            f.flush()


@pytest.mark.parametrize("state", ["read-only", "full"])
def test_an_output_folder_on_a_read_only_or_full_disk_is_refused_before_any_request(project, target, state):
    with mounted(project / "disk", "size=256k" + (",ro" if state == "read-only" else "")) as disk:
        if state == "full":
            _fill(disk)
        ran = run(project, target, "--out", str(disk / "reports" if state == "read-only" else disk))
    assert ran.code == 2, ran.output
    assert "--out" in ran.stderr.decode() and "Traceback" not in ran.output
    assert target.requests == []


def test_a_report_that_cannot_be_written_loses_neither_the_run_nor_the_other_reports(project, target):
    out = project / "litmus-report"
    (out / "report.html").mkdir(parents=True)  # a folder where the file goes: replacing it fails
    ran = run(project, target)
    assert ran.code == 2, ran.output
    assert "report.html" in ran.stderr.decode() and "Traceback" not in ran.output
    assert "PASSED: 1 of 1 suite passed" in ran.stdout.decode()
    assert load_results(out / "results.json").verdict == "passed"
    written = {p.name for p in out.iterdir() if p.is_file()}
    assert written == {"results.json", *REPORT_FILES} - {"report.html"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder all the same")
def test_a_read_only_output_folder_is_refused_for_a_normal_user(project, target):
    out = project / "ro"
    out.mkdir()
    out.chmod(0o555)
    try:
        ran = run(project, target, "--out", "ro")
    finally:
        out.chmod(0o755)
    assert ran.code == 2 and target.requests == [], ran.output
