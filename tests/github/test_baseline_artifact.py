"""`baseline: artifact`: the base branch's last results.json through the Actions artifacts API, against
the fake GitHub, whose responses here are built from and checked against GitHub's own REST schemas."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from litmus.github.api import GitHubClient
from litmus.github.artifacts import fetch_baseline, workflow_path, workflow_run_provenance
from support.fake_github import FORK, REPOSITORY, WORKFLOW

ROOT = Path(__file__).resolve().parents[1]
OPERATIONS = json.loads((ROOT / "schemas" / "github-rest-subset.json").read_text("utf-8"))["operations"]
RUNS = "GET /repos/{owner}/{repo}/actions/runs"
ARTIFACTS = "GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"
RESULTS = (ROOT / "report" / "results.json").read_bytes()
REPO = REPOSITORY[0]
# What a forger uploads (recognisable here by its trust_reason); test_action_baseline.py forges real failures.
FORGED = json.dumps({**json.loads(RESULTS), "run": {**json.loads(RESULTS)["run"], "trust_reason": "forged"}}).encode()


def response_schema(operation: str) -> dict:
    return OPERATIONS[operation]["responses"]["200"]["schema"]


def zipped(**members: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name, data in members.items():
            # A fixed time: these bytes are test ids, which every xdist worker must collect alike.
            bundle.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


@pytest.fixture
def github(fake_github):
    """Oldest first: run 5, the genuine run 6 (a push to main), then runs that must not be taken: another
    branch's, another workflow's, a failed one."""
    state = fake_github.state
    state.add_artifact(state.add_run(5), zipped(**{"results.json": b"{}"}))
    genuine = state.add_run(6)
    state.add_artifact(genuine, zipped(**{"report.html": b"<p>"}), name="other")
    state.add_artifact(genuine, zipped(**{"results.json": RESULTS}), artifact_id=61)
    state.add_run(7, head_branch="feature")
    state.add_run(8, path=".github/workflows/ci.yml")
    state.add_run(9, conclusion="failure")
    return fake_github


def fetch(github, tmp_path, **kwargs):
    client = GitHubClient(github.base_url, "ghs_token", retries=0)
    return fetch_baseline(client, REPO, workflow=kwargs.pop("workflow", WORKFLOW), branch=kwargs.pop("branch", "main"),
                          save_to=tmp_path / "baseline.json", **kwargs)


def test_fake_responses_are_shaped_like_githubs(github):
    client = GitHubClient(github.base_url, "t", retries=0)
    Draft7Validator(response_schema(RUNS)).validate(client.get(f"/repos/{REPO}/actions/runs"))
    Draft7Validator(response_schema(ARTIFACTS)).validate(client.get(f"/repos/{REPO}/actions/runs/6/artifacts"))


def test_the_latest_successful_push_run_of_this_workflow_on_the_base_branch(github, tmp_path):
    found = fetch(github, tmp_path)
    assert found.result is not None and "run 6" in found.source
    assert (tmp_path / "baseline.json").read_bytes() == RESULTS
    (runs_call,) = github.calls("GET", r"/actions/runs$")
    assert runs_call.query["branch"] == "main" and runs_call.query["status"] == "success"
    assert [c.path for c in github.calls("GET", r"/actions/runs/6$")] == [f"/repos/{REPO}/actions/runs/6"]
    downloads = [c.path for c in github.calls("GET") if "artifacts/61" in c.path or "_storage" in c.path]
    assert downloads == [f"/repos/{REPO}/actions/artifacts/61/zip", "/_storage/61.zip"]


def forged_fork_run(state, run_id: int = 10) -> None:
    """The attack: a fork's PR from a branch named `main` runs the workflow (its own edited copy) and uploads
    a results.json marking everything already failing; it is the newest run "on main"."""
    fork_run = state.add_run(run_id, event="pull_request", head_repository=FORK, head_sha="3" * 40)
    state.add_artifact(fork_run, zipped(**{"results.json": FORGED}), artifact_id=run_id * 10 + 1)


def test_a_forks_run_on_a_branch_named_main_is_passed_over_for_the_genuine_one(github, tmp_path):
    forged_fork_run(github.state)
    found = fetch(github, tmp_path)
    assert "run 6" in found.source and (tmp_path / "baseline.json").read_bytes() == RESULTS
    assert not github.calls("GET", r"/runs/10/|artifacts/101")  # the fork's artifact is never even listed


def test_a_forks_run_is_never_a_baseline(github, tmp_path):
    github.state.workflow_runs.clear()
    forged_fork_run(github.state)
    found = fetch(github, tmp_path)
    assert found.result is None and not (tmp_path / "baseline.json").exists()
    assert found.notice == (
        "no baseline: no successful run of .github/workflows/litmus.yml on main that this repository's own push "
        "made, among the last 300 runs (refused run 10: its event is 'pull_request', not push, schedule, "
        "workflow_dispatch)")


@pytest.mark.parametrize(("run", "why"), [
    # A fork's push-like run (a fork cannot make one in this repository; the check holds whatever the event says).
    ({"head_repository": FORK}, "its head repository 'mallory/shop' (id 4343) is not 'acme/shop' (id 186853002)"),
    ({"event": "pull_request_target"}, "its event is 'pull_request_target'"),
    ({"event": "workflow_run"}, "its event is 'workflow_run'"),
])
def test_every_run_that_is_not_the_repositorys_own_push_is_refused(github, tmp_path, run, why):
    github.state.workflow_runs.clear()
    github.state.add_artifact(github.state.add_run(11, **run), zipped(**{"results.json": FORGED}))
    found = fetch(github, tmp_path)
    assert found.result is None and f"refused run 11: {why}" in found.notice


@pytest.mark.parametrize(("change", "why"), [
    (lambda a: a.update(digest="sha256:" + "0" * 64), "do not match its digest sha256:0000"),
    (lambda a: a.update(digest=None), "no sha256 digest to check its bytes against (upload it with "
                                      "actions/upload-artifact v4 or newer)"),
    (lambda a: a["workflow_run"].update(head_repository_id=FORK[1]), "workflow_run.head_repository_id is 4343"),
    (lambda a: a["workflow_run"].update(id=10), "workflow_run.id is 10, not the run's 6"),
    (lambda a: a["workflow_run"].update(head_sha="3" * 40), "workflow_run.head_sha"),
    (lambda a: a.update(expired=True), "expired"),
    (lambda a: a.update(size_in_bytes=2**40), "more than 64 MiB"),
])
def test_an_artifact_that_is_not_the_runs_own_intact_upload_is_refused(github, tmp_path, change, why):
    change(next(a for a in github.state.artifacts[6] if a["id"] == 61))
    found = fetch(github, tmp_path)
    assert found.result is None and why in found.notice and not (tmp_path / "baseline.json").exists()


def link_member() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        info = zipfile.ZipInfo("results.json")
        info.external_attr = 0o120777 << 16  # a symbolic link, as zip stores one
        bundle.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.mark.parametrize(("archive", "why"), [
    (zipped(**{"results.json": RESULTS, "../../.github/workflows/x.yml": b"on: push"}), "'../../.github"),
    (zipped(**{"results.json": RESULTS, "/etc/cron.d/x": b"* * * * * root sh"}), "'/etc/cron.d/x'"),
    (link_member(), "is an absolute path, climbs out with '..' or is a link"),
])
def test_an_archive_that_could_write_outside_a_folder_is_refused(github, tmp_path, archive, why):
    github.state.workflow_runs.clear()
    github.state.add_artifact(github.state.add_run(12), archive)
    found = fetch(github, tmp_path)
    assert found.result is None and "refused: its member" in found.notice and why in found.notice


@pytest.mark.parametrize(("change", "why"), [
    (lambda s: s.workflow_runs.clear(), "no successful run"),
    (lambda s: s.artifacts[6].pop(), "no artifact named"),
    (lambda s: s.gone.add(61), "expired"),
    (lambda s: s.deny.add("artifacts"), "HTTP 403"),
    (lambda s: s.fail.update(workflow_run=500), "GET /repos/acme/shop/actions/runs/6: HTTP 500"),
])
def test_no_baseline_is_a_notice_saying_why(github, tmp_path, change, why):
    change(github.state)
    found = fetch(github, tmp_path)
    assert found.result is None and found.notice.startswith("no baseline:") and why in found.notice


def patched_member(*, flag_bits: int = 0, method: int = zipfile.ZIP_STORED) -> bytes:
    """results.json stored, then its headers (local and central) rewritten as an uploader could write them:
    `flag_bits` (bit 0: encrypted) and the compression `method` (9: Deflate64, which zipfile cannot read)."""
    archive = bytearray(zipped(**{"results.json": RESULTS}))
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = archive.index(signature) + flags_at
        archive[start:start + 4] = struct.pack("<HH", flag_bits, method)
    return bytes(archive)


@pytest.mark.parametrize(("archive", "why"), [
    (b"not a zip", "not a readable zip"),
    (patched_member(flag_bits=0x1), "refused: its results.json is encrypted"),
    (patched_member(method=9), "compression method 9"),
    (zipped(**{"report.html": b"<p>"}), "holds no results.json"),
    (zipped(**{"results.json": b"{\"schema_version\": 7}"}), "schema_version"),
], ids=["not-a-zip", "encrypted", "deflate64", "no-results", "schema-version"])
def test_an_unreadable_artifact_is_a_notice_saying_why(github, tmp_path, archive, why):
    github.state.workflow_runs.clear()
    github.state.add_artifact(github.state.add_run(13), archive)
    found = fetch(github, tmp_path)
    assert found.result is None and found.notice.startswith("no baseline:") and why in found.notice


def test_unknown_workflow_or_branch(github, tmp_path):
    assert fetch(github, tmp_path, branch="").result is None
    assert not github.calls()  # nothing asked without knowing what to ask for


def test_workflow_path_from_the_workflow_ref():
    assert workflow_path("octo/shop/.github/workflows/litmus.yml@refs/pull/7/merge") == WORKFLOW
    assert workflow_path("") == ""


# --- a workflow_run event's triggering run as a source of results (the `merge:` rule)

def workflow_run_event(**run) -> dict:
    """tests/github/events/workflow_run_fork.json (a fork PR's run, head branch `main`), with `run` laid over."""
    event = json.loads((ROOT / "github" / "events" / "workflow_run_fork.json").read_text("utf-8"))
    event["workflow_run"].update(run)
    return event


def own_head() -> dict:
    return workflow_run_event()["workflow_run"]["repository"]


def test_a_fork_pull_requests_run_named_main_is_not_a_trusted_source_of_results():
    trusted, why = workflow_run_provenance(workflow_run_event())
    assert not trusted and why.startswith("untrusted: run ") and "is not 'acme/shop' (id 186853002): a fork's" in why


@pytest.mark.parametrize("event", ["push", "schedule", "workflow_dispatch", "pull_request"])
def test_the_repositorys_own_runs_are_a_trusted_source_of_results(event):
    trusted, why = workflow_run_provenance(workflow_run_event(event=event, head_repository=own_head()))
    assert trusted and why.endswith(f"this repository's own {event} of .github/workflows/litmus.yml")


@pytest.mark.parametrize(("run", "why"), [
    ({"event": "pull_request_target"}, "its event is not push"),
    ({"event": "workflow_run"}, "its event is not push"),
    ({"path": "dynamic/github-code-scanning/codeql"}, "its workflow file 'dynamic/"),
    ({"path": ".github/workflows/other.yml"}, "is not the event's workflow"),
    ({"repository": {**own_head(), "id": 1}}, "did not run in this repository"),
    ({"head_repository": None}, "its head repository None"),
])
def test_anything_else_is_not(run, why):
    trusted, reason = workflow_run_provenance(workflow_run_event(**{"head_repository": own_head(), **run}))
    assert not trusted and why in reason
    assert workflow_run_provenance({"action": "completed"}) == (False, "untrusted: the event carries no workflow_run")
