"""Issue 20's attacks on what Litmus writes, through `litmus run` and the `litmus action` entrypoint.

Attack 9: a pull request commits `litmus-report` (or a folder above `output-dir`) as a symlink, and
every report would be written where it points, outside the workspace. The output folder is refused
before any request, naming the link, and nothing appears at its target.
"""

from __future__ import annotations

import pytest
from test_trust_attacks import fork_commit, make_repository, pull_request_target_event, run_action

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

    code, log, _ = run_action(workspace, event, fake_github.url, base_url=target.base_url, output_dir=output_dir)

    assert code == 2, log
    assert f"output-dir: output folder {workspace / output_dir}: {workspace / link} is a symbolic link" in log
    assert target.requests == [] and fake_github.state.calls == []  # refused before any request
    assert list(outside.iterdir()) == []
