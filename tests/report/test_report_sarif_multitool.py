"""litmus.sarif as Microsoft's SARIF Multitool judges it: `validate` with the GitHub (`Gh`), GitHub
Advanced Security (`Ghas`) and SARIF-spec (`Sarif`) rule kinds finds no error and no warning."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from report_fixtures import RESULTS

from litmus.report import render
from litmus.results import load_results
from support.cli import litmus
from support.target import Target
from support.tools import sarif_multitool

SUITE = """\
version: 1
suite: Orders
flows:
  - name: Read an order
    steps:
      - name: get
        request: {url: /orders/1}
        assertions:
          - {type: status_code, expected: 200}
          - {type: json_path, path: $.status, expected: delayed}
          - {type: contains, value: "estimated delivery"}
          - {type: header, header: content-type, matches: "^text/html"}
          - {type: schema, schema: {type: object, required: [id, total]}}
      - name: refused
        request: {url: "http://127.0.0.1:9/nothing-listens-here"}
"""
SHA = "0123456789abcdef0123456789abcdef01234567"
# Warnings the Multitool gives on a local run outside git (no repository, no commit), each with why it
# is left: none.
LOCAL_RUN_WARNINGS: dict[str, str] = {}


def validate(logs: list[Path], out: Path) -> dict[str, list[str]]:
    """Each file's errors and warnings (`RULE: message`) as `Sarif.Multitool validate` reports them."""
    done = subprocess.run([str(sarif_multitool()), "validate", "--rule-kind", "Gh", "Ghas", "Sarif",
                           "--output", str(out), *map(str, logs)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    run = json.loads(out.read_text("utf-8"))["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"].get("rules", [])}
    found: dict[str, list[str]] = {log.name: [] for log in logs}
    for result in run.get("results", []):
        rule = rules.get(result["ruleId"], {})
        if result.get("level", rule.get("defaultConfiguration", {}).get("level", "warning")) in ("error", "warning"):
            uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            text = _text(result["message"], rule)
            found[Path(uri.removeprefix("file://")).name].append(f"{result['ruleId']}: {text}")
    return found


def _text(message: dict, rule: dict) -> str:
    """A result's message: its text, or its rule's message string with the arguments put in."""
    if "text" in message:
        return message["text"]
    text = rule["messageStrings"][message["id"]]["text"]
    for index, argument in enumerate(message.get("arguments", [])):
        text = text.replace(f"{{{index}}}", argument)
    return text


def test_the_multitool_finds_no_error_and_no_warning(tmp_path):
    project = tmp_path / "project"
    (project / "probes").mkdir(parents=True)
    (project / "probes" / "orders.yaml").write_text(SUITE)
    with Target() as target:
        target.json("/orders/1", {"id": 1, "status": "shipped"})
        in_ci = litmus(project, "run", "--base-url", target.base_url, "--out", "ci",
                       "--sarif-category", "litmus-staging",
                       env={"GITHUB_REPOSITORY": "octo-org/shop", "GITHUB_SHA": SHA, "GITHUB_SERVER_URL": "https://github.com"})
        local = litmus(project, "run", "--base-url", target.base_url, "--out", "local")
    assert in_ci.returncode == local.returncode == 1, in_ci.stderr + local.stderr
    ci_run = json.loads((project / "ci" / "results.json").read_text("utf-8"))["run"]
    assert (ci_run["repository"], ci_run["git_sha"]) == ("octo-org/shop", SHA)
    assert json.loads((project / "local" / "results.json").read_text("utf-8"))["run"]["git_sha"] is None
    logs = {"ci.sarif": project / "ci" / "litmus.sarif", "local.sarif": project / "local" / "litmus.sarif"}
    ci = json.loads(logs["ci.sarif"].read_text("utf-8"))["runs"][0]
    assert ci["automationDetails"] == {"id": "litmus-staging/"}
    assert {r["ruleId"] for r in ci["results"]} == {"json_path", "contains", "header", "schema", "transport_error"}
    # The fixture's run also has judged outcomes: needs_review, a judge's intent evaluation, a skipped check.
    (tmp_path / "fixture.sarif").write_text(render("sarif", load_results(RESULTS)), encoding="utf-8")
    for name, path in logs.items():
        (tmp_path / name).write_bytes(path.read_bytes())
    found = validate([tmp_path / "ci.sarif", tmp_path / "fixture.sarif", tmp_path / "local.sarif"],
                     tmp_path / "multitool.sarif")
    assert found == {"ci.sarif": [], "fixture.sarif": [], "local.sarif": list(LOCAL_RUN_WARNINGS)}
