"""The conformance corpus: checks ported from Hurl, Step CI and Tavern suites, each expected to give
the outcome its file's `x-expected` states, run through `litmus run` against a local target."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from peer_target import serve

from support.cli import litmus
from support.target import Target

HERE = Path(__file__).parent
FILES = sorted(HERE.glob("*.yaml"))
EXPECTED = {check: (path.name, outcome) for path in FILES
            for check, outcome in yaml.safe_load(path.read_text())["x-expected"].items()}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    root = tmp_path_factory.mktemp("conformance")
    (root / ".git").mkdir()
    shutil.copytree(HERE, root / "probes", ignore=shutil.ignore_patterns("*.py[co]", "__pycache__", "test_*.py"))
    with Target() as target:
        serve(target)
        done = litmus(root, "run", "probes", "--base-url", target.base_url, "--out", "out", "--format", "junit",
                      "--fail-on", "never")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "out" / "results.json").read_text())
    found = {}
    for suite in results["suites"]:
        for flow_run in suite["flow_runs"]:
            for step in flow_run["steps"]:
                for outcome in step["assertions"]:
                    found[outcome["name"]] = outcome
    return found


def test_the_corpus_is_large_enough():
    assert len(EXPECTED) >= 40
    assert {file for file, _ in EXPECTED.values()} == {"hurl.yaml", "stepci.yaml", "tavern.yaml"}


def test_every_check_has_an_expectation_and_the_peer_form_it_ports():
    for path in FILES:
        suite = yaml.safe_load(path.read_text())
        names = [a["name"] for flow in suite["flows"] for step in flow["steps"] for a in step["assertions"]]
        assert sorted(names) == sorted(suite["x-expected"]), path.name
        text = path.read_text()
        for name in names:  # the line above each check (or its block) quotes the peer's own syntax
            before = text[:text.index(f"name: {name}")].rstrip().splitlines()
            assert any(line.strip().startswith("#") for line in before[-3:]), name


def test_the_corpus_satisfies_the_editor_schema():
    from jsonschema import Draft202012Validator

    schema = json.loads((HERE.parents[1] / "src" / "litmus" / "schemas" / "probe-suite.schema.json").read_text())
    for path in FILES:
        assert [e.message for e in Draft202012Validator(schema).iter_errors(yaml.safe_load(path.read_text()))] == []


@pytest.mark.parametrize("check", sorted(EXPECTED), ids=sorted(EXPECTED))
def test_check(outcomes, check):
    _, expected = EXPECTED[check]
    outcome = outcomes[check]
    status, _, path = expected.partition(" at ")
    assert outcome["status"] == status, outcome
    if path:
        assert [m["path"] for m in outcome["mismatches"]] == [path]
