"""`litmus validate` as users run it: a real subprocess, exit codes, text and JSON output."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.cli import litmus

HERE = Path(__file__).parent
GOOD_SUITE = (HERE / "good" / "checkout.yaml").read_text()


def validate(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return litmus(cwd, "validate", *args, timeout=60)


def make_repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # the repository root, as git marks it
    probes = tmp_path / "probes"
    (probes / "schemas").mkdir(parents=True)
    (probes / "checkout.yaml").write_text(GOOD_SUITE)
    (probes / "schemas" / "order.yaml").write_text("type: object\n")  # no `suite:`: skipped silently
    return tmp_path


def test_valid_suites_exit_0_with_summary_and_env_warning(tmp_path: Path):
    out = validate(cwd=make_repo(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1 suite, 1 flow, 5 assertions: OK (1 warning)"
    assert "probes/checkout.yaml:10:28: warning: environment variable API_TOKEN" in out.stderr
    assert "Traceback" not in out.stderr


def test_errors_exit_2_compiler_style(tmp_path: Path):
    repo = make_repo(tmp_path)
    (repo / "probes" / "checkout.yaml").write_text(GOOD_SUITE.replace("type: json_path\n", "type: json_pth\n", 1))
    out = validate("probes", cwd=repo)
    assert out.returncode == 2
    lines = out.stderr.splitlines()
    first = next(i for i, line in enumerate(lines) if ": error: " in line)
    assert lines[first:first + 3] == [
        "probes/checkout.yaml:44:19: error: unknown assertion type 'json_pth' (did you mean 'json_path'?)",
        " 44 |           - type: json_pth",
        "    |                   ^^^^^^^^",
    ]
    assert out.stdout.strip() == "1 error, 1 warning: FAILED"


def test_json_format_for_machines(tmp_path: Path):
    repo = make_repo(tmp_path)
    (repo / "probes" / "bad.yaml").write_text("version: 2\nsuite: B\nflows: []\n")
    out = validate("--format", "json", cwd=repo)
    assert out.returncode == 2
    document = json.loads(out.stdout)
    assert document["ok"] is False
    errors = [d for d in document["diagnostics"] if d["severity"] == "error"]
    positions = {(d["path"], d["line"], d["column"]) for d in errors}
    assert positions == {("probes/bad.yaml", 1, 10), ("probes/bad.yaml", 3, 8)}


def test_missing_path_and_unparseable_file(tmp_path: Path):
    repo = make_repo(tmp_path)
    assert validate("nowhere", cwd=repo).returncode == 2
    (repo / "probes" / "broken.yml").write_text("suite: [unclosed\n")
    out = validate(cwd=repo)
    assert out.returncode == 2 and "probes/broken.yml:2:1: error: invalid YAML" in out.stderr
