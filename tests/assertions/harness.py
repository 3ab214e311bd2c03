"""Running a probe suite through `litmus run` (a subprocess) against a real target on 127.0.0.1,
and reading each assertion's outcome back from results.json by its `name`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from support.cli import litmus


class HeaderLines(list):
    """Response headers for `Target` routes where a name repeats: `[(name, value), ...]`."""

    def items(self):
        return iter(self)


def run_suite(root: Path, suite: dict, base_url: str, *, extra_files: dict[str, str] | None = None,
              environ: dict[str, str] | None = None, timeout: float = 120) -> tuple[subprocess.CompletedProcess, dict]:
    """Write `suite` to root/probes/suite.yaml (and `extra_files`, relative to root), run it, return
    (the finished process, results.json)."""
    (root / ".git").mkdir(exist_ok=True)  # the repository root the "inside the repo" rule uses
    probes = root / "probes"
    probes.mkdir(exist_ok=True)
    (probes / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    for relative, text in (extra_files or {}).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    done = litmus(root, "run", "probes/suite.yaml", "--base-url", base_url, "--out", "out",
                  "--format", "sarif,markdown", "--fail-on", "never", env=environ, timeout=timeout)
    results_file = root / "out" / "results.json"
    assert results_file.exists(), done.stdout + done.stderr
    return done, json.loads(results_file.read_text())


def outcomes(results: dict) -> dict[str, dict]:
    """Assertion name -> its outcome in results.json (names are unique in these tests)."""
    found = {}
    for suite in results["suites"]:
        for flow_run in suite["flow_runs"]:
            for step in flow_run["steps"]:
                for outcome in step["assertions"]:
                    assert outcome["name"] not in found, outcome["name"]
                    found[outcome["name"]] = outcome
    return found


def suite_of(steps: list[dict], variables: dict | None = None, **extra) -> dict:
    return {"version": 1, "suite": "Predicates", "variables": variables or {"unused": 0}, **extra,
            "flows": [{"name": "checks", "steps": steps}]}
