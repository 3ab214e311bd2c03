"""A suite's setup and teardown in the reports: a setup that fails is a finding at its line (the suite
fails, its flow runs were skipped); a teardown error is a warning finding and changes no verdict
(the contract: "Teardown outcomes are reported but do not change the verdict, except an error that
is shown as a warning finding")."""

from __future__ import annotations

import json
import textwrap

from support.cli import litmus
from support.server import refused_port
from support.target import Target

SUITE = textwrap.dedent("""\
    version: 1
    suite: Lifecycle
    setup:
      - name: log in
        request: {method: POST, url: /login}
        assertions:
          - {type: status_code, expected: 200}
    teardown:
      - name: clean up
        request: {method: DELETE, url: "http://127.0.0.1:{closed}/data"}
    flows:
      - name: list
        steps:
          - name: get
            request: {url: /items}
            assertions:
              - {type: status_code, expected: 200}
    """)


def run(tmp_path, target, closed: int):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "life.yaml").write_text(SUITE.replace("{closed}", str(closed)))
    done = litmus(tmp_path, "run", "--base-url", target.base_url)
    out = tmp_path / "litmus-report"
    sarif = json.loads((out / "litmus.sarif").read_text("utf-8"))["runs"][0]["results"]
    return done, sarif, (out / "comment.md").read_text("utf-8")


def test_a_failed_setup_and_a_teardown_error_are_findings_at_their_lines(tmp_path):
    with Target() as target, refused_port() as closed:
        target.json("/login", {"error": "nope"}, status=500)
        target.json("/items", [])
        done, sarif, comment = run(tmp_path, target, closed)
    assert done.returncode == 1, done.stderr
    by_line = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r for r in sarif}
    assert by_line[7]["level"] == "error" and by_line[7]["ruleId"] == "status_code"  # setup's check
    assert by_line[9]["level"] == "warning"  # teardown got no response: a warning, not a failure
    assert "Lifecycle › setup › log in" in comment and "Lifecycle › teardown › clean up" in comment


def test_a_teardown_error_alone_changes_no_verdict(tmp_path):
    with Target() as target, refused_port() as closed:
        target.json("/login", {"token": "t"})
        target.json("/items", [])
        done, sarif, comment = run(tmp_path, target, closed)
    assert done.returncode == 0, done.stdout + done.stderr
    (warning,) = sarif
    assert warning["level"] == "warning" and warning["locations"][0]["physicalLocation"]["region"]["startLine"] == 9
    assert "passed with 1 finding" in comment
