"""Issue 20's attacks on what Litmus prints and writes, through `litmus run`, `litmus validate` and the
`litmus action` entrypoint.

Attack 8: on a runner (GITHUB_ACTIONS=true) a printed line whose first non-whitespace characters are
`::` is a workflow command, and Litmus printed suite names at the start of a line. Names of suites,
flows, steps and checks, and a reason quoting the target's reply, are built to start a line with a
command after whitespace as the runner trims it (NBSP, U+2028...) or after a line break a log viewer
honours (U+2028, U+2029, U+0085). The output is read as the runner reads it: no command is issued
but those Litmus means (none of which starts with the hostile text).

Attack 9: a pull request commits `litmus-report` (or a folder above `output-dir`) as a symlink, and
every report would be written where it points, outside the workspace. The output folder is refused
before any request, naming the link, and nothing appears at its target.
"""

from __future__ import annotations

import re

import pytest
from test_trust_attacks import fork_commit, make_repository, pull_request_target_event, run_action

from support.checkout import trusted_checkout
from support.cli import litmus

SUITE = """\
version: 1
suite: Orders
flows:
  - name: Read an order
    steps:
      - name: get
        request: {method: GET, url: /orders/1}
        assertions: [{type: status_code, expected: 200}]
"""


# YAML double-quoted escapes: \_ is NBSP, \L U+2028, \P U+2029, \N U+0085.
HOSTILE_SUITE = """\
version: 1
suite: "::warning::PWNED suite"
flows:
  - name: "\\_::error::PWNED flow"
    steps:
      - name: "a\\L::error::PWNED step"
        request: {method: GET, url: /orders/1}
        assertions:
          - {type: status_code, expected: 200, name: "b\\P::notice::PWNED check"}
          - {type: json_path, path: $.status, expected: delivered, name: "\\N\\t ::error::PWNED named"}
  - name: "\\u3000::group::PWNED flow two"
    steps:
      - name: "\\u200b::warning::PWNED step two"
        request: {method: GET, url: /orders/1}
        assertions: [{type: json_path, path: $.status, expected: delivered}]
"""
# The target's reply puts a command after a line separator in the json_path reason.
REPLY = {"id": 1, "status": "shipped\u2028::error::PWNED reply"}


def issued_commands(log: str) -> list[str]:
    """The workflow commands a runner issues from `log` (each line trimmed of whitespace, command
    parsing off between `::stop-commands::TOKEN` and `::TOKEN::`), lines also split where a log viewer
    breaks them (U+2028, U+2029, U+0085)."""
    commands, stopped = [], None
    for line in log.splitlines():
        text = line.strip().lstrip("\u200b\ufeff")
        if stopped:
            stopped = None if text == f"::{stopped}::" else stopped
        elif text.startswith("::"):
            commands.append(text)
            match = re.match(r"::stop-commands::(.+)", text)
            stopped = match.group(1) if match else None
    return commands


def assert_no_hostile_command(log: str, printed: str = "PWNED suite") -> None:
    commands = issued_commands(log)
    assert not [c for c in commands if re.match(r"::[\w-]+( [^:]*)?::\s*PWNED", c)], log
    assert printed in log  # the hostile text is printed, as text


def _hostile_project(root):
    (root / "probes").mkdir(parents=True)
    (root / "probes" / "orders.yaml").write_text(HOSTILE_SUITE)
    return root


@pytest.mark.parametrize("verbosity", [[], ["-v"]])
def test_litmus_run_on_a_runner_prints_no_command_of_a_suites_names(tmp_path, target, verbosity):
    target.json("/orders/1", REPLY)
    project = _hostile_project(tmp_path / "project")
    done = litmus(project, "run", "--base-url", target.base_url, *verbosity, env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert_no_hostile_command(done.stdout + done.stderr)
    assert any(c.startswith("::group::") for c in issued_commands(done.stdout))  # Litmus's own still work


def test_litmus_validate_on_a_runner_prints_no_command_of_a_probe_files_text(tmp_path):
    project = _hostile_project(tmp_path / "project")
    # An unknown field, named to start a line with a command: the diagnostic quotes its name.
    text = HOSTILE_SUITE.replace("    steps:\n", '    "\\L::error::PWNED field": 1\n    steps:\n', 1)
    (project / "probes" / "orders.yaml").write_text(text)
    done = litmus(project, "validate", env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert_no_hostile_command(done.stdout + done.stderr, printed="PWNED field")


def test_the_action_prints_no_command_of_a_suites_names(tmp_path, fake_github, target):
    target.json("/orders/1", REPLY)
    workspace = _hostile_project(tmp_path / "ws")
    head = trusted_checkout(workspace, fake_github)
    event = pull_request_target_event(tmp_path / "event.json", head, head)
    code, log, _ = run_action(workspace, event, fake_github.base_url, base_url=target.base_url)
    assert code == 1, log
    assert "trusted:" in log
    assert_no_hostile_command(log)


@pytest.mark.parametrize(("link", "out"), [("litmus-report", None), ("reports", "reports/litmus")])
def test_litmus_run_refuses_an_output_folder_under_a_symlink(tmp_path, target, link, out):
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    (project / "probes").mkdir(parents=True)
    (project / "probes" / "orders.yaml").write_text(SUITE)
    (project / link).symlink_to(outside, target_is_directory=True)

    done = litmus(project, "run", "--base-url", target.base_url, *(["--out", out] if out else []))

    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{project / link} is a symbolic link" in done.stderr
    assert target.requests == [] and list(outside.iterdir()) == []


@pytest.mark.parametrize(("link", "output_dir"), [("litmus-report", "litmus-report"), ("reports", "reports/litmus")])
def test_the_action_refuses_a_committed_symlink_at_its_output_dir(tmp_path, fake_github, target, link, output_dir):
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace, main_sha = make_repository(tmp_path)
    (workspace / link).symlink_to(outside, target_is_directory=True)
    head = fork_commit(workspace, {})  # the fork's commit adds the link
    fake_github.state.load_git(workspace, branches=["main"])
    event = pull_request_target_event(tmp_path / "event.json", head, main_sha)

    code, log, _ = run_action(workspace, event, fake_github.base_url, base_url=target.base_url, output_dir=output_dir)

    assert code == 2, log
    assert f"output-dir: output folder {workspace / output_dir}: {workspace / link} is a symbolic link" in log
    assert target.requests == [] and fake_github.state.calls == []  # refused before any request
    assert list(outside.iterdir()) == []
