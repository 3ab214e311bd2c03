"""`baseline: artifact`: the base branch's last results.json through the Actions artifacts API, against
the fake GitHub, whose responses here are built from and checked against GitHub's own REST schemas."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from litmus.github.api import GitHubClient
from litmus.github.artifacts import fetch_baseline, workflow_path
from support.schema_instances import minimal

ROOT = Path(__file__).resolve().parents[1]
OPERATIONS = json.loads((ROOT / "schemas" / "github-rest-subset.json").read_text("utf-8"))["operations"]
RUNS = "GET /repos/{owner}/{repo}/actions/runs"
ARTIFACTS = "GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"
RESULTS = (ROOT / "report" / "results.json").read_bytes()
REPO = "octo/shop"
WORKFLOW = ".github/workflows/litmus.yml"


def response_schema(operation: str) -> dict:
    return OPERATIONS[operation]["responses"]["200"]["schema"]


def workflow_run(run_id: int, *, branch: str = "main", path: str = WORKFLOW, conclusion: str = "success") -> dict:
    item = response_schema(RUNS)["properties"]["workflow_runs"]["items"]
    return minimal(item, {"id": run_id, "head_branch": branch, "path": path, "conclusion": conclusion,
                          "status": "completed", "head_sha": f"{run_id:040x}"})


def artifact(artifact_id: int, *, name: str = "litmus-results", expired: bool = False) -> dict:
    item = response_schema(ARTIFACTS)["properties"]["artifacts"]["items"]
    return minimal(item, {"id": artifact_id, "name": name, "expired": expired})


def zipped(**members: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name, data in members.items():
            bundle.writestr(name, data)
    return buffer.getvalue()


@pytest.fixture
def github(fake_github):
    state = fake_github.state
    # Newest first: a failed run, a run of another workflow, another branch's, then the one to find.
    state.workflow_runs = [workflow_run(9, conclusion="failure"), workflow_run(8, path=".github/workflows/ci.yml"),
                           workflow_run(7, branch="feature"), workflow_run(6), workflow_run(5)]
    state.artifacts = {6: [artifact(60, name="other"), artifact(61)], 5: [artifact(51)]}
    state.artifact_zips = {61: zipped(**{"results.json": RESULTS}), 51: zipped(**{"results.json": b"{}"})}
    return fake_github


def fetch(github, tmp_path, **kwargs):
    client = GitHubClient(github.url, "ghs_token", retries=0)
    return fetch_baseline(client, REPO, workflow=kwargs.pop("workflow", WORKFLOW), branch=kwargs.pop("branch", "main"),
                          save_to=tmp_path / "baseline.json", **kwargs)


def test_fake_responses_are_shaped_like_githubs(github):
    client = GitHubClient(github.url, "t", retries=0)
    Draft7Validator(response_schema(RUNS)).validate(client.get(f"/repos/{REPO}/actions/runs"))
    Draft7Validator(response_schema(ARTIFACTS)).validate(client.get(f"/repos/{REPO}/actions/runs/6/artifacts"))


def test_the_latest_successful_run_of_this_workflow_on_the_base_branch(github, tmp_path):
    found = fetch(github, tmp_path)
    assert found.result is not None and "run 6" in found.source
    assert (tmp_path / "baseline.json").read_bytes() == RESULTS
    (runs_call,) = github.calls("GET", r"/actions/runs$")
    assert runs_call.query["branch"] == "main" and runs_call.query["status"] == "success"
    downloads = [c.path for c in github.calls("GET") if "artifacts/61" in c.path or "_storage" in c.path]
    assert downloads == [f"/repos/{REPO}/actions/artifacts/61/zip", "/_storage/61.zip"]


@pytest.mark.parametrize(("change", "why"), [
    (lambda s: s.workflow_runs.clear(), "no successful run"),
    (lambda s: s.artifacts.update({6: [artifact(60, name="other")]}), "no artifact named"),
    (lambda s: s.artifacts.update({6: [artifact(61, expired=True)]}), "expired"),
    (lambda s: s.gone.add(61), "expired"),
    (lambda s: s.deny.add("artifacts"), "HTTP 403"),
    (lambda s: s.artifact_zips.update({61: b"not a zip"}), "not a readable zip"),
    (lambda s: s.artifact_zips.update({61: zipped(**{"report.html": b"<p>"})}), "holds no results.json"),
    (lambda s: s.artifact_zips.update({61: zipped(**{"results.json": b"{\"schema_version\": 7}"})}), "schema_version"),
])
def test_no_baseline_is_a_notice_saying_why(github, tmp_path, change, why):
    change(github.state)
    found = fetch(github, tmp_path)
    assert found.result is None and found.notice.startswith("no baseline:") and why in found.notice


def test_unknown_workflow_or_branch(github, tmp_path):
    assert fetch(github, tmp_path, branch="").result is None
    assert not github.calls()  # nothing asked without knowing what to ask for


def test_workflow_path_from_the_workflow_ref():
    assert workflow_path("octo/shop/.github/workflows/litmus.yml@refs/pull/7/merge") == WORKFLOW
    assert workflow_path("") == ""
