"""Step warnings (a probe request that does not conform to its OpenAPI operation) through a real `litmus run`:
every report shows them where reviewers look, masked like other free text, and they never change the verdict
or the exit status."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from litmus.report import render
from litmus.report.markdown import MAX_WARNINGS
from support.cli import litmus
from support.target import Target

SPEC = """\
openapi: 3.0.3
info: {title: Users, version: "1"}
paths:
  /users:
    get:
      parameters:
        - {name: limit, in: query, schema: {type: integer, maximum: 100}}
      responses:
        "200":
          description: users
          content:
            application/json:
              schema: {type: array, items: {type: object, required: [id], properties: {id: {type: integer}}}}
"""
SECRET = "tok-5ecret-91"
PREFIX = "request does not conform to GET /users in api/users.yaml: query parameter 'limit': "


def _run(root: Path, base_url: str) -> tuple[int, str, dict[str, str]]:
    (root / ".git").mkdir()
    (root / "api").mkdir()
    (root / "api" / "users.yaml").write_text(SPEC)
    (root / "probes").mkdir()
    steps = [{"name": name, "request": {"url": "/users", "query": {"limit": limit}},
              "assertions": [{"type": "status_code", "expected": 200}, {"type": "openapi"}]}
             for name, limit in (("too many", "500"), ("secret limit", "{{ secrets.USERS_LIMIT }}"), ("fine", "5"))]
    suite = {"version": 1, "suite": "Users", "openapi": "../api/users.yaml",
             "flows": [{"name": "list", "runs": 2, "steps": steps}]}
    (root / "probes" / "users.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    done = litmus(root, "run", "probes", "--base-url", base_url, "--out", "out", "--fail-on", "assertion",
                  "--format", "sarif,junit,markdown,html,summary", env={"USERS_LIMIT": SECRET})
    outputs = {path.name: path.read_text("utf-8") for path in (root / "out").iterdir() if path.is_file()}
    return done.returncode, done.stdout + done.stderr, outputs


def test_a_run_with_only_warnings_passes_and_every_report_shows_them_masked(tmp_path):
    with Target() as target:
        target.json("/users", [{"id": 1}])
        code, terminal, out = _run(tmp_path, target.base_url)
    assert code == 0, terminal
    results = json.loads(out["results.json"])
    assert results["verdict"] == "passed"
    too_many = PREFIX + "expected at most 100, got integer 500"
    masked = PREFIX + 'expected integer, got string "***"'
    steps = results["suites"][0]["flow_runs"][0]["steps"]
    assert [step["warnings"] for step in steps] == [[too_many], [masked], []]
    lines = {step["name"]: step["line"] for step in steps}

    # Every output says passed; the secret the warning quoted is in none of them.
    for name, text in out.items():
        assert SECRET not in text, name
    assert SECRET not in terminal and "PASSED: 1 of 1 suite passed" in terminal
    assert all("## ✅ Litmus: 1 suite passed\n" in out[name] for name in ("comment.md", "summary.md"))
    assert "<title>Litmus: 1 suite passed</title>" in out["report.html"]
    junit = ET.fromstring(out["junit.xml"])
    assert junit.get("failures") == "0" and junit.get("errors") == "0"

    # The comment and the summary: counted on the facts line and the suite's row, then listed (runs folded).
    for name in ("comment.md", "summary.md"):
        text = out[name]
        assert " · 2 warnings · " in text and "| ✅ passed · ⚠️ 2 warnings |" in text, name
        listed = [line for line in text.split("### Warnings (2)\n", 1)[1].splitlines() if line.startswith("- ")]
        assert [line.split(" Users", 1)[0] for line in listed] == [
            f"- ⚠️ `probes/users.yaml:{lines['too many']}`", f"- ⚠️ `probes/users.yaml:{lines['secret limit']}`"]
        assert "Users › list › too many, 2 of 2 runs \\(runs 1\\, 2\\): request does not conform" in listed[0]
        assert listed[1].endswith("got string \\\"\\*\\*\\*\\\"")  # the mask, escaped as Markdown text

    # The HTML report: counted in the header and the suite's card, listed with a link to each step's line.
    html = out["report.html"]
    assert '<a href="#warnings">2 warnings</a></p>' in html
    assert '<section id="warnings"><h2>Warnings (2)</h2>' in html
    assert "expected integer, got string &quot;***&quot;" in html

    # SARIF: a warning-level result of its own rule on each step's line; no error-level result at all.
    run = json.loads(out["litmus.sarif"])["runs"][0]
    assert run["properties"]["litmus"] == {"verdict": "passed", "findings": 0, "warnings": 2, "omittedResults": 0}
    assert [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in run["results"]] == [("request_nonconforming", "warning", lines["too many"]),
                                         ("request_nonconforming", "warning", lines["secret limit"])]
    assert run["results"][0]["message"]["text"] == (
        f"R{too_many[1:]}. In Users › list › too many, 2 of 2 runs (runs 1, 2).")
    rule = run["tool"]["driver"]["rules"][run["results"][0]["ruleIndex"]]
    assert rule["id"] == "request_nonconforming" and rule["defaultConfiguration"]["level"] == "warning"


def test_step_warnings_are_bounded_in_the_comment(result):
    """Warnings decide nothing: past MAX_WARNINGS the comment says how many more, however many there are."""
    step = result.suites[1].flow_runs[0].steps[0]
    step.name = "a step name a pull request made long " * 200
    step.warnings = [f"request does not conform to GET /users in api/openapi.yaml: problem {i} " + "x" * 2_000
                     for i in range(MAX_WARNINGS + 25)]
    comment = render("markdown", result)
    block = comment.split(f"### Warnings ({MAX_WARNINGS + 25})\n", 1)[1].split("\n\n## ", 1)[0]
    assert block.count("\n- ⚠️ ") == MAX_WARNINGS
    assert "- and 25 more in `report.html` and `results.json`" in block
    assert len(block) < MAX_WARNINGS * 1_000  # each line: a link, then the step's place and the text, both cut
