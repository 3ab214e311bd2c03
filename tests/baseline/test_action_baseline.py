"""The action's `baseline: artifact` and `baseline-url` end to end: real targets, the fake GitHub (runs,
artifacts, zip download), the check run's title and conclusion under `fail-on: new`."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from test_compare import SUITE, serve

from litmus.commands.action import main
from support.checkout import trusted_checkout
from support.cli import litmus
from support.fake_github import FORK, parse_output_file
from support.target import Target

ROOT = Path(__file__).resolve().parents[1]
EVENT = ROOT / "github" / "events" / "pull_request.json"
REPO = "acme/shop"
WORKFLOW = ".github/workflows/litmus.yml"


@pytest.fixture
def workspace(tmp_path, fake_github):
    root = tmp_path / "ws"
    (root / "probes").mkdir(parents=True)
    (root / "probes" / "shop.yaml").write_text(SUITE.format(runs=1))
    trusted_checkout(root, fake_github)
    return root


def publish_baseline(fake_github, workspace: Path, base_url: str, **run) -> dict:
    """A workflow run (by default the base branch's push) with the results.json of the suites against
    `base_url` uploaded as its `litmus-results` artifact; the artifact, to tamper with."""
    done = litmus(workspace, "run", "--base-url", base_url, "--out", "base-run")
    assert done.returncode in (0, 1), done.stderr
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.write(workspace / "base-run" / "results.json", "results.json")
    state = fake_github.state
    return state.add_artifact(state.add_run(run.pop("run_id", 6), **run), buffer.getvalue(), artifact_id=61)


def action(workspace: Path, gh_url: str, **inputs) -> tuple[int, str, dict]:
    output = workspace.parent / "output"
    output.write_text("")
    environ = {
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_PATH": str(EVENT), "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": gh_url, "GITHUB_OUTPUT": str(output),
        "GITHUB_BASE_REF": "main", "GITHUB_WORKFLOW_REF": f"{REPO}/{WORKFLOW}@refs/pull/42/merge",
        "GITHUB_SHA": "a" * 40, "INPUT_GITHUB-TOKEN": "ghs_t", "INPUT_COMMENT": "false",
        **{f"INPUT_{name.replace('_', '-').upper()}": value for name, value in inputs.items()},
    }
    out = io.StringIO()
    code = main(environ, out)
    return code, out.getvalue(), parse_output_file(output.read_text())


def check_run(fake_github) -> dict:
    (run,) = fake_github.state.check_runs.values()
    return run


def test_artifact_baseline_fails_only_for_the_new_finding(workspace, fake_github):
    with serve(Target(), status="shipped", total=12.5) as base, serve(Target(), status="shipped", total="1") as head:
        publish_baseline(fake_github, workspace, base.base_url)
        code, stdout, outputs = action(workspace, fake_github.base_url, base_url=head.base_url, baseline="artifact",
                                       fail_on="new")
    assert code == 1, stdout
    run = check_run(fake_github)
    assert run["output"]["title"] == "1 new finding, 1 already failing, 0 fixed" and run["conclusion"] == "failure"
    results = json.loads((workspace / outputs["results-path"]).read_text())
    assert results["baseline"]["source"].startswith("artifact 'litmus-results' of run 6")
    assert json.loads((workspace / "litmus-report" / "baseline.json").read_text())["suites"]


def test_only_old_findings_pass_the_check(workspace, fake_github):
    with serve(Target(), status="shipped") as base, serve(Target(), status="shipped") as head:
        publish_baseline(fake_github, workspace, base.base_url)
        code, stdout, _ = action(workspace, fake_github.base_url, base_url=head.base_url, baseline="artifact",
                                 fail_on="new")
    assert code == 0, stdout
    run = check_run(fake_github)
    assert run["output"]["title"] == "0 new findings, 1 already failing, 0 fixed" and run["conclusion"] == "success"


def test_a_forks_forged_baseline_is_refused_and_its_new_failures_still_fail(workspace, fake_github):
    """The attack: a fork's PR from a branch named `main` runs the workflow and uploads results.json of its own
    failing deployment, so every failure of the PR would be "already failing" and `fail-on: new` would pass."""
    with serve(Target(), status="shipped", total="1") as head:
        publish_baseline(fake_github, workspace, head.base_url, run_id=10, event="pull_request",
                         head_repository=FORK, head_sha="3" * 40)
        code, stdout, outputs = action(workspace, fake_github.base_url, base_url=head.base_url, baseline="artifact",
                                       fail_on="new")
    assert code == 1, stdout
    notices = [line for line in stdout.splitlines() if line.startswith("::notice")]
    assert len(notices) == 1 and "refused run 10: its event is 'pull_request'" in notices[0]
    assert check_run(fake_github)["conclusion"] == "failure"
    assert not fake_github.calls("GET", r"/artifacts/61/zip")  # the forged results are never downloaded
    assert json.loads((workspace / outputs["results-path"]).read_text())["baseline"] is None


def test_a_baseline_whose_bytes_do_not_match_its_digest_is_refused(workspace, fake_github):
    with serve(Target(), status="shipped") as base, serve(Target(), status="shipped") as head:
        artifact = publish_baseline(fake_github, workspace, base.base_url)
        artifact["digest"] = "sha256:" + "0" * 64  # the bytes were swapped after upload
        code, stdout, _ = action(workspace, fake_github.base_url, base_url=head.base_url, baseline="artifact",
                                 fail_on="new")
    assert code == 1, stdout
    notices = [line for line in stdout.splitlines() if line.startswith("::notice")]
    assert len(notices) == 1 and "do not match its digest" in notices[0]


def test_a_missing_artifact_is_a_notice_and_every_finding_counts_as_new(workspace, fake_github):
    with serve(Target(), status="shipped") as head:
        code, stdout, _ = action(workspace, fake_github.base_url, base_url=head.base_url, baseline="artifact",
                                 fail_on="new")
    assert code == 1
    notices = [line for line in stdout.splitlines() if line.startswith("::notice")]
    assert len(notices) == 1 and "no baseline" in notices[0]


def test_baseline_url_runs_the_suites_against_the_base_deployment_too(workspace, fake_github):
    with serve(Target(), total=12.5) as base, serve(Target(), total="12.50") as head:
        code, stdout, _ = action(workspace, fake_github.base_url, base_url=head.base_url, baseline_url=base.base_url,
                                 fail_on="new")
        assert len(base.requests) == len(head.requests) == 2
    assert code == 1
    assert check_run(fake_github)["output"]["title"] == "1 new finding, 0 already failing, 0 fixed"
