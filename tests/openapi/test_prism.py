"""Starter suites against an independent mock: for each real spec, `litmus init --from-openapi --include-unsafe`
writes a suite that `litmus validate` accepts and `litmus run` runs against Stoplight's Prism serving that spec's
own examples. Where the spec's examples (or a placeholder that cannot meet a `pattern`) violate the spec, the
failures are listed, one by one, in prism_expected.json: the test fails on one more or one fewer.

Prism is started once per spec (GitHub's 11 MB description takes about 13 s to load, and its run of 1223 flows
about a minute on two busy cores).
"""

import json
from collections import Counter
from pathlib import Path

import pytest

from support.cli import litmus
from support.openapi_specs import copy_spec
from support.prism import PrismMock

EXPECTED = {name: spec for name, spec in json.loads(Path(__file__).with_name("prism_expected.json").read_text()).items()
            if not name.startswith("_")}
# The credentials the specs' security schemes ask for (Prism checks they are there, not what they are).
SECRETS = {"OPENAPI_API_KEY": "prism-api-key", "OPENAPI_PETSTORE_AUTH": "prism-token"}


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def starter(request, tmp_path_factory):
    name = request.param
    repo = tmp_path_factory.mktemp(name.split(".json")[0])
    (repo / ".git").mkdir()
    copy_spec(name, repo, f"api/{name}")
    written = litmus(repo, "init", "--from-openapi", f"api/{name}", "--include-unsafe", "-o", "probes/starter.yaml")
    checked = litmus(repo, "validate", "probes/starter.yaml", env=SECRETS, timeout=600)
    with PrismMock(repo / "api" / name, base_path=EXPECTED[name]["base_path"]) as prism:
        ran = litmus(repo, "run", "probes/starter.yaml", "--base-url", prism.base_url, "--out", "out", env=SECRETS,
                     timeout=900)
    results = json.loads((repo / "out" / "results.json").read_text()) if ran.returncode in (0, 1) else None
    return name, written, checked, ran, results


def test_the_starter_suite_is_written_and_validates(starter):
    name, written, checked, _, _ = starter
    flows = EXPECTED[name]["flows"]
    assert written.returncode == 0, written.stderr
    assert written.stdout.startswith(f"wrote probes/starter.yaml: {flows} flows.")
    assert (checked.returncode, checked.stdout.strip()) == (0, f"1 suite, {flows} flows, {2 * flows} assertions: OK"), \
        checked.stderr


def test_against_prism_only_the_specs_own_violations_fail(starter):
    name, _, _, ran, results = starter
    expected = EXPECTED[name]
    assert results is not None, ran.stderr
    suite = results["suites"][0]
    failed = sorted(f"{run['flow']} | {outcome['type']}" for run in suite["flow_runs"] for step in run["steps"]
                    for outcome in step["assertions"] if outcome["status"] != "passed")
    assert failed == sorted(expected["failed"])
    assert Counter(line.split(" | ")[1] for line in failed) == Counter(expected["counts"])
    assert len(suite["flow_runs"]) == expected["flows"]
    # Each operation has its flow, so coverage misses none: where two templates match one request (GitHub's
    # `compare/{basehead}` and `compare/{base}...{head}`), it exercises both.
    assert suite["openapi"]["missing"] == expected["missing"]
    assert suite["openapi"]["exercised"] == expected["flows"] - len(expected["missing"])
    assert ran.returncode == (1 if failed else 0)
