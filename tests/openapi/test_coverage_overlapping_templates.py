"""OpenAPI coverage when two path templates match one request (GitHub's `/compare/{basehead}` and
`/compare/{base}...{head}`): the request exercises both; only a concrete path beats a templated one."""

from __future__ import annotations

import json

import yaml

from support.cli import litmus
from support.target import Target

OK = {"responses": {"200": {"description": "ok"}}}
SPEC = {"openapi": "3.0.3", "info": {"title": "compare", "version": "1"}, "paths": {
    "/repos/{owner}/{repo}/compare/{basehead}": {"get": OK},
    "/repos/{owner}/{repo}/compare/{base}...{head}": {"get": OK},
    "/status": {"get": OK},
    "/{page}": {"get": OK},
    "/never": {"get": OK},
}}


def test_a_request_two_templates_match_exercises_both_and_a_concrete_path_only_itself(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "probes").mkdir()
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    steps = [{"name": url, "request": {"url": url}, "assertions": [{"type": "status_code", "expected": 200}]}
             for url in ("/repos/octo/hello/compare/main...topic", "/status")]
    suite = {"version": 1, "suite": "S", "openapi": "../spec.json", "flows": [{"name": "f", "steps": steps}]}
    (tmp_path / "probes" / "s.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    with Target() as target:
        target.json("/repos/octo/hello/compare/main...topic", {})
        target.json("/status", {})
        done = litmus(tmp_path, "run", "probes", "--base-url", target.base_url, "--out", "out", timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    coverage = json.loads((tmp_path / "out" / "results.json").read_text())["suites"][0]["openapi"]
    assert coverage["exercised"] == 3
    assert coverage["missing"] == ["GET /{page}", "GET /never"]
    assert "3 of 5 operations exercised (60%)" in done.stdout
