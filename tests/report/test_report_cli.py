from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from report_fixtures import RESULTS

from litmus.cli import main
from litmus.report import FORMATS, write_reports


def test_report_writes_every_format(tmp_path, capsys):
    assert main(["report", str(RESULTS), "--out", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(f.filename for f in FORMATS.values())
    assert "sarif     " in capsys.readouterr().out


def test_report_chosen_formats_and_options(tmp_path):
    code = main(["report", str(RESULTS), "--format", "sarif,markdown", "--out", str(tmp_path),
                 "--sarif-category", "probes/staging"])
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["comment.md", "litmus.sarif"]
    sarif = json.loads((tmp_path / "litmus.sarif").read_text("utf-8"))
    assert sarif["runs"][0]["automationDetails"]["id"] == "probes/staging/"


def test_report_refuses_a_sarif_category_with_a_control_character(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["report", str(RESULTS), "--out", str(tmp_path), "--sarif-category", "staging\x1b[2J"])
    assert exited.value.code == 2
    assert "--sarif-category: a SARIF category is printable text such as api-probes/staging, but 'staging\\x1b[2J' " \
           "has a control character (U+001B) at character 8" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_report_stdout(capsys):
    assert main(["report", str(RESULTS), "--format", "markdown", "--stdout"]) == 0
    assert capsys.readouterr().out.startswith("<!-- litmus-report -->")


def test_bad_input_exits_2(tmp_path, capsys):
    assert main(["report", str(RESULTS), "--format", "pdf", "--out", str(tmp_path)]) == 2
    assert "unknown report format 'pdf'" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 1}')
    assert main(["report", str(broken), "--out", str(tmp_path)]) == 2
    assert "not a valid results document" in capsys.readouterr().err
    assert not (tmp_path / "litmus.sarif").exists()


def test_write_reports_api(result, tmp_path):
    paths = write_reports(result, tmp_path / "out", ["junit", "html"])
    assert paths == {"junit": tmp_path / "out" / "junit.xml", "html": tmp_path / "out" / "report.html"}
    assert all(p.stat().st_size > 0 for p in paths.values())


def test_report_run_demo_and_the_action_write_to_the_same_default_folder(tmp_path, monkeypatch):
    """One default, litmus-report/: `litmus report` once wrote litmus-reports/ beside run's litmus-report/."""
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(RESULTS), "--format", "markdown"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["litmus-report"]
    assert (tmp_path / "litmus-report" / "comment.md").exists()
    action = yaml.safe_load((Path(__file__).resolve().parents[2] / "action.yml").read_text())
    assert action["inputs"]["output-dir"]["default"] == "litmus-report"
