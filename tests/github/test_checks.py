import pytest

from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.github.checks import publish_check_run
from litmus.github.findings import Annotation

REPO = "acme/shop"


def findings(n):
    return [Annotation("error" if i % 3 else "warning", "probes/a.yaml", i + 1, 3, f"t{i}", f"m{i}") for i in range(n)]


def test_all_annotations_arrive_in_batches_of_fifty(fake_github):
    gh = GitHubClient(fake_github.base_url, "t", retries=0)
    run = publish_check_run(gh, REPO, "a" * 40, conclusion="failure", title="2 of 3 suites failed",
                            summary="## Litmus\nsummary", findings=findings(123), details_url="https://x.test/run")
    stored = fake_github.state.check_runs[run.id]
    assert run.requests == 3 and run.url.endswith(f"/runs/{run.id}")
    assert (stored["name"], stored["head_sha"], stored["status"], stored["conclusion"]) == (
        "Litmus", "a" * 40, "completed", "failure")
    assert stored["details_url"] == "https://x.test/run"
    assert [a["start_line"] for a in stored["annotations"]] == list(range(1, 124))
    assert stored["annotations"][0] == {
        "path": "probes/a.yaml", "start_line": 1, "end_line": 1, "start_column": 3, "end_column": 3,
        "annotation_level": "warning", "title": "t0", "message": "m0"}
    assert stored["annotations"][1]["annotation_level"] == "failure"
    sizes = [len(c.body["output"]["annotations"]) for c in fake_github.state.calls]
    assert sizes == [50, 50, 23]
    assert all(c.body["output"]["title"] == "2 of 3 suites failed" for c in fake_github.state.calls)


def test_no_findings_is_one_request(fake_github):
    gh = GitHubClient(fake_github.base_url, "t", retries=0)
    run = publish_check_run(gh, REPO, "b" * 40, conclusion="success", title="ok", summary="x" * 70_000,
                            findings=[])
    assert run.requests == 1
    assert len(fake_github.state.check_runs[run.id]["output"]["summary"]) == 65_535


def test_read_only_token_is_forbidden(fake_github):
    fake_github.state.deny.add("check-write")
    with pytest.raises(GitHubAPIError) as info:
        publish_check_run(GitHubClient(fake_github.base_url, "t", retries=0), REPO, "c" * 40, conclusion="success",
                          title="ok", summary="s", findings=findings(2))
    assert info.value.forbidden
