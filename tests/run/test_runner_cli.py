"""`litmus run` end to end: YAML probes through the loader, a real target, files and terminal output."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import time

import pytest

from litmus.cli import main
from litmus.console import Console, clean
from litmus.results import load_results
from support.cli import start_litmus
from support.target import Target

CANARY = "CANARY-9f3b-secret"

SUITE = """\
version: 1
suite: Orders
pass_threshold: 100
defaults:
  headers:
    Authorization: "Bearer {{ secrets.API_TOKEN }}"
flows:
  - name: Ask
    steps:
      - name: ask
        request:
          url: /order
          query: {token: "{{ secrets.API_TOKEN }}"}
        assertions:
          - type: status_code
            expected: 200
          - type: json_path
            path: $.order.status
            expected: delayed
          - type: contains
            value: "{{ secrets.API_TOKEN }}x"
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "orders.yaml").write_text(SUITE)
    monkeypatch.setenv("API_TOKEN", CANARY)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for name in [n for n in os.environ if n.startswith("LITMUS_")]:
        monkeypatch.delenv(name)
    with Target() as target:
        target.route("/order", lambda req: (200, {"Content-Type": "application/json"}, json.dumps(
            {"order": {"status": "shipped"}, "echo": req.headers.get("Authorization"),
             "note": "\x1b[2J\x1b]0;pwned\x07 evil"}).encode()))
        yield tmp_path, target


def test_run_prints_failures_at_their_position_and_writes_results_and_reports(project, capsys):
    tmp_path, target = project
    code = main(["run", "--base-url", target.base_url])
    out, err = capsys.readouterr()
    assert code == 1
    lines = out.splitlines()
    assert 'probes/orders.yaml:17:13 Ask › ask › json_path $.order.status: expected "delayed", got "shipped"' in lines
    assert any(line.startswith("Orders") and line.endswith("failed") and "0/1" in line for line in lines)
    assert lines[-1] == "FAILED: 0 of 1 suite passed; results in litmus-report/results.json"
    result = load_results(tmp_path / "litmus-report" / "results.json")  # validates against the schema
    assert result.suites[0].flow_runs[0].steps[0].assertions[1].mismatches[0].path == "$.order.status"
    assert {p.name for p in (tmp_path / "litmus-report").iterdir()} >= {"results.json"}
    assert target.requests[0].headers["Authorization"] == f"Bearer {CANARY}"


def test_canary_secret_never_appears_in_output_or_any_written_file(project, capsys):
    tmp_path, target = project
    main(["run", "--base-url", target.base_url, "--verbose", "--out", "out"])
    out, err = capsys.readouterr()
    assert CANARY not in out + err
    assert "***" in out  # the contains value was redacted in its reason
    files = list((tmp_path / "out").rglob("*"))
    assert len(files) > 1
    for path in files:
        assert CANARY not in path.read_text("utf-8", errors="replace"), path


EVIL_SUITE = """\
version: 1
suite: Evil
flows:
  - name: F
    steps:
      - name: s
        request: {url: /evil}
        assertions:
          - {type: json_path, path: "$.*", gt: 5}
"""


def test_untrusted_text_never_reaches_the_terminal_raw(project, capsys):
    tmp_path, target = project
    (tmp_path / "probes" / "orders.yaml").write_text(EVIL_SUITE)
    target.json("/evil", {"\x1b[2J\x1b]0;pwned\x07": "s"})
    main(["run", "--base-url", target.base_url, "--verbose"])
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out
    assert "\\u001b[2J" in out
    assert clean("a\x1b[31mb\u202ec\nd") == "a\\u001b[31mb\\u202ec\\nd"


def test_quiet_passing_run_and_fail_on(project, capsys):
    tmp_path, target = project
    target.json("/order", {"order": {"status": "delayed"}, "t": CANARY + "x"})
    assert main(["run", "--base-url", target.base_url, "-q"]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines() == ["PASSED: 1 of 1 suite passed; results in litmus-report/results.json"]
    target.json("/order", {"order": {"status": "shipped"}})
    assert main(["run", "--base-url", target.base_url, "-q", "--fail-on", "never"]) == 0
    assert main(["run", "--base-url", target.base_url, "-q", "--fail-on", "assertion"]) == 1


@pytest.mark.parametrize("argv, message", [
    (["--suite", "Nope"], "no suite named 'Nope'; suites: Orders"),
    (["--flow", "Nope"], "no flow named 'Nope'; flows: Ask"),
    (["--format", "pdf"], "unknown report format 'pdf'"),
    ([], "no base URL for suite 'Orders'"),
])
def test_usage_errors_exit_2(project, capsys, argv, message):
    assert main(["run", *argv] + (["--base-url", "http://x"] if argv else [])) == 2
    assert message in capsys.readouterr().err


def test_probe_errors_are_printed_like_validate_and_exit_2(project, capsys):
    tmp_path, _ = project
    (tmp_path / "probes" / "orders.yaml").write_text(SUITE.replace("type: contains", "type: containz"))
    assert main(["run", "--base-url", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "probes/orders.yaml:20:19: error: unknown assertion type 'containz'" in err


def test_bad_shard_is_a_usage_error(project, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--shard", "3/2"])
    assert exc.value.code == 2


class TTY(io.StringIO):
    def isatty(self):
        return True


def test_console_colors_only_on_a_tty_without_no_color_and_groups_on_github(project, capsys):
    tmp_path, target = project
    main(["run", "--base-url", target.base_url, "-q", "--format", "sarif"])
    capsys.readouterr()
    result = load_results(tmp_path / "litmus-report" / "results.json")
    tty = TTY()
    Console(tty, TTY(), environ={}).report(result)
    assert "\x1b[31m" in tty.getvalue()
    plain = TTY()
    Console(plain, TTY(), environ={"NO_COLOR": "1"}).report(result)
    assert "\x1b" not in plain.getvalue()
    gha = io.StringIO()
    Console(gha, io.StringIO(), environ={"GITHUB_ACTIONS": "true"}).report(result)
    lines = gha.getvalue().splitlines()
    assert lines[0] == "::group::Orders: 2 findings" and lines[3] == "::endgroup::"


SLOW_SUITE = """\
version: 1
suite: Slow
flows:
  - name: F
    runs: 40
    steps:
      - {name: one, request: {url: /slow}, assertions: [{type: status_code, expected: 200}]}
      - {name: two, request: {url: /slow}, assertions: [{type: status_code, expected: 200}]}
"""


@pytest.mark.timing  # a signal once the run is under way
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_run_cleanly_and_partial_results_are_written(tmp_path, signum, code):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "slow.yaml").write_text(SLOW_SUITE)
    with Target() as target:
        target.route("/slow", lambda req: time.sleep(0.2) or (200, {}, b"ok"))
        proc = start_litmus(tmp_path, "run", "--base-url", target.base_url, "--concurrency", "2", "--format",
                            "summary", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        while len(target.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == code, err
    result = load_results(tmp_path / "litmus-report" / "results.json")
    assert result.run.interrupted is True and result.verdict == "failed"
    runs = result.suites[0].flow_runs
    assert len(runs) in range(1, 40)  # some flow runs done, not all
    assert "interrupted" in out
    assert (tmp_path / "litmus-report" / "summary.md").exists()


def test_results_file_gets_the_umask_mode_like_the_reports(tmp_path):
    import stat

    from litmus.results import write_json_atomic

    write_json_atomic(tmp_path / "results.json", {"a": 1})
    (tmp_path / "report.txt").write_text("x")
    mode = stat.S_IMODE((tmp_path / "results.json").stat().st_mode)
    assert mode == stat.S_IMODE((tmp_path / "report.txt").stat().st_mode) != 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
