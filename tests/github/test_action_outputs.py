"""The action's output folder: refused before any request when it cannot be written, and a report
that cannot be written is an error annotation (exit 2) that keeps results.json and the other reports."""

from __future__ import annotations

import io
from pathlib import Path

from litmus.commands.action import main
from litmus.report import FORMATS
from support.target import Target

EVENTS = Path(__file__).parent / "events"
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


def action(tmp_path: Path, target: Target, output_dir: str) -> tuple[int, str]:
    workspace = tmp_path / "ws"
    (workspace / "probes").mkdir(parents=True)
    (workspace / "probes" / "out.yaml").write_text(SUITE)
    (tmp_path / "output").write_text("")
    environ = {
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_PATH": str(EVENTS / "push.json"),
        "GITHUB_EVENT_NAME": "push", "GITHUB_REPOSITORY": "acme/shop", "GITHUB_OUTPUT": str(tmp_path / "output"),
        "INPUT_BASE-URL": target.base_url, "INPUT_OUTPUT-DIR": output_dir, "INPUT_COMMENT": "false",
        "INPUT_CHECK-RUN": "false",
    }
    out = io.StringIO()
    return main(environ, out), out.getvalue()


def test_an_output_dir_that_is_a_file_is_refused_before_any_request(tmp_path, target):
    target.json("/ok", {})
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "taken").write_text("a file")
    code, stdout = action(tmp_path, target, "taken")
    assert code == 2 and "::error title=Litmus::output-dir: " in stdout, stdout
    assert target.requests == []


def test_a_report_that_cannot_be_written_keeps_results_and_the_other_reports(tmp_path, target):
    target.json("/ok", {})
    out = tmp_path / "ws" / "litmus-report"
    (out / "report.html").mkdir(parents=True)
    code, stdout = action(tmp_path, target, "litmus-report")
    assert code == 2 and "::error title=Litmus::output-dir: " in stdout and "report.html" in stdout, stdout
    assert len(target.requests) == 1
    written = {p.name for p in out.iterdir() if p.is_file()}
    assert written == {"results.json", *(f.filename for f in FORMATS.values())} - {"report.html"}
