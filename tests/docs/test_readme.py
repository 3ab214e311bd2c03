"""The README's examples are real: its probe suite loads, its workflow is valid, its commands match CI."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from litmus.load import load_suites

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")


def fenced(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, re.DOTALL | re.MULTILINE)


def test_readme_suite_loads_cleanly(tmp_path):
    (suite,) = [block for block in fenced("yaml") if block.lstrip().startswith("# yaml-language-server")]
    path = tmp_path / "readme.yaml"
    path.write_text(suite)
    result = load_suites([path], root=tmp_path, environ={"API_TOKEN": "t"})
    assert [s.name for s in result.suites] == ["Checkout assistant"]
    assert result.warnings == []
    types = [a.type for a in result.suites[0].flows[0].steps[0].assertions]
    assert types == ["status_code", "json_path", "schema", "response_time", "consistent_with_scenario_data", "tone"]


def test_readme_workflow_is_a_valid_github_workflow():
    (workflow,) = [block for block in fenced("yaml") if "runs-on:" in block]
    data = yaml.safe_load(workflow)
    data["on"] = data.pop(True)  # PyYAML reads the key `on` as the boolean true
    schema = json.loads((ROOT / "tests" / "schemas" / "github-workflow.json").read_text("utf-8"))
    jsonschema.Draft7Validator(schema).validate(data)


def test_ci_runs_exactly_the_readme_test_command():
    (commands,) = fenced("sh")
    test_command = [line for line in commands.splitlines() if "pytest" in line][0].strip()
    assert test_command in (ROOT / ".ci" / "run").read_text("utf-8")


@pytest.mark.parametrize("failing", ["pip install", "pytest", "ruff check"])
def test_ci_stops_with_the_status_of_a_failing_test_command(failing):
    """.ci/run runs under `set -e`, which lets a failure inside an && list pass: its line must end the script
    with that failure's status, whichever of the three commands fails (a failing suite once gave exit 0)."""
    (line,) = [line for line in (ROOT / ".ci" / "run").read_text("utf-8").splitlines() if "-m pytest &&" in line]
    stubbed = " && ".join("(exit 3)" if failing in part else "true" for part in line.split(" || ")[0].split(" && "))
    script = f"set -euo pipefail\n{stubbed}{line[len(line.split(' || ')[0]):]}\necho went on\n"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (3, "")


def test_reports_doc_shows_a_real_comment():
    doc = (ROOT / "docs" / "reports.md").read_text("utf-8")
    (excerpt,) = re.findall(r"^````markdown\n(.*?)^````", doc, re.DOTALL | re.MULTILINE)
    golden = (ROOT / "tests" / "report" / "golden" / "comment.md").read_text("utf-8")
    assert golden.startswith(excerpt), "docs/reports.md's excerpt drifted from tests/report/golden/comment.md"


def test_the_two_commands_run_in_a_virtual_environment():
    """Debian's system Python refuses `pip install` outside a virtual environment (PEP 668)."""
    (commands,) = fenced("sh")
    lines = [line for line in commands.splitlines() if line and not line.startswith("#")]
    assert lines[0] == "python3 -m venv .venv && . .venv/bin/activate"
    assert [line.split(" && ")[0] for line in lines[1:]] == ["python3 -m pip install -e .",
                                                             "python3 -m pip install -e '.[test]'"]
