"""B3: a `schema_file` (and each file its `$ref`s name) is read once, at load, by the one YAML reader, and the
run validates with what was read. Before, the run read the files again with another YAML reader, which made
unquoted dates `datetime.date`s: a schema `litmus validate` accepted then errored at every use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from litmus.load import load_suites
from litmus.run.runner import RunOptions, run_suites
from support.cli import litmus
from support.target import Target

SCHEMA = """\
type: object
required: [eta]
properties:
  eta: {type: string, format: date, enum: [2026-12-03, 2026-12-04]}
  since: {$ref: 'defs/day.yaml#/$defs/launch'}
"""
DEFS = "$defs:\n  launch: {const: 2026-01-01, examples: [2026-01-01]}\n"
SUITE = """\
version: 1
suite: Dates
flows:
  - name: f
    steps:
      - name: on time
        request: {url: /ok}
        assertions: [{type: schema, name: on time, schema_file: ../schemas/eta.yaml}]
      - name: late
        request: {url: /late}
        assertions: [{type: schema, name: late, schema_file: ../schemas/eta.yaml}]
"""


@pytest.fixture
def target():
    with Target() as served:
        served.json("/ok", {"eta": "2026-12-03", "since": "2026-01-01"})
        served.json("/late", {"eta": "2026-12-05", "since": "2026-01-02"})
        yield served


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / ".git").mkdir()
    files = {"schemas/eta.yaml": SCHEMA, "schemas/defs/day.yaml": DEFS, "probes/dates.yaml": SUITE}
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    return tmp_path


def outcomes(steps) -> dict[str, tuple[str, list]]:
    return {o["name"]: (o["status"], [(m["path"], m["reason"]) for m in o["mismatches"]])
            for step in steps for o in step["assertions"]}


LATE = [("$.eta", 'expected one of ["2026-12-03", "2026-12-04"], got string "2026-12-05"'),
        ("$.since", 'expected "2026-01-01", got string "2026-01-02"')]


def test_unquoted_dates_in_a_schema_file_mean_the_same_to_validate_and_run(project, target):
    assert litmus(project, "validate", "probes").returncode == 0
    done = litmus(project, "run", "probes", "--base-url", target.base_url, "--out", "out", "--fail-on", "never")
    assert done.returncode == 0, done.stderr
    (flow_run,) = json.loads((project / "out" / "results.json").read_text())["suites"][0]["flow_runs"]
    # The dates are the text they read as (docs/probe-format.md), so a body's date strings match them.
    assert outcomes(flow_run["steps"]) == {"on time": ("passed", []), "late": ("failed", LATE)}


def test_the_run_reads_no_schema_file(project, target):
    (suite,) = load_suites([project / "probes"], root=project, environ={}).suites
    # Changed after the load: the run validates with what was read and checked then.
    (project / "schemas" / "eta.yaml").write_text("type: number\n")
    (project / "schemas" / "defs" / "day.yaml").unlink()
    result = run_suites([suite], RunOptions(base_url=target.base_url), environ={})
    (flow_run,) = result.to_dict()["suites"][0]["flow_runs"]
    assert outcomes(flow_run["steps"]) == {"on time": ("passed", []), "late": ("failed", LATE)}
    assert set(suite.schema_documents) == {str((project / "schemas" / name).resolve())
                                           for name in ("eta.yaml", "defs/day.yaml")}
