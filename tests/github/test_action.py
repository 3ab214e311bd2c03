"""`litmus action` in process (the container tests run the real entrypoint): sharding + merge,
changed-only, invalid probes and missing inputs."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from litmus.commands.action import main
from litmus.demo.target import start_demo_target, stop_demo_target
from support.checkout import trusted_checkout
from support.fake_github import parse_output_file

FIXTURE = Path(__file__).parent / "workspace"
EVENTS = Path(__file__).parent / "events"
REPO = "acme/shop"


@pytest.fixture(scope="module")
def target():
    server, url = start_demo_target()
    yield url
    stop_demo_target(server)


@pytest.fixture
def workspace(tmp_path, fake_github):
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    trusted_checkout(root, fake_github)
    return root


def action(workspace: Path, gh_url: str, event: str = "pull_request", **inputs) -> tuple[int, str, dict]:
    output = workspace.parent / "output"
    output.write_text("")
    environ = {
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_PATH": str(EVENTS / f"{event}.json"),
        "GITHUB_EVENT_NAME": event if event in ("push", "deployment_status") else "pull_request",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": gh_url, "GITHUB_OUTPUT": str(output), "INPUT_GITHUB-TOKEN": "ghs_t",
        "LITMUS_DEMO_TOKEN": "demo-api-token",
        **{f"INPUT_{name.replace('_', '-').upper()}": value for name, value in inputs.items()},
    }
    out = io.StringIO()
    code = main(environ, out)
    return code, out.getvalue(), parse_output_file(output.read_text())


def test_shards_then_merge_report_once(target, workspace, fake_github):
    fake_github.state.pr_files[(REPO, 42)] = [{"filename": "probes/chat.yaml", "status": "modified"}]
    for k in (1, 2):
        code, _, outputs = action(workspace, fake_github.base_url, base_url=target, shard=f"{k}/2", comment="false",
                                  check_run="false", annotations="none", fail_on="never", output_dir=f"shards/{k}")
        assert code == 0 and outputs["results-path"] == f"shards/{k}/results.json"
        assert json.loads((workspace / outputs["results-path"]).read_text())["run"]["shard"] == f"{k}/2"
    assert fake_github.state.calls == [] or all(c.method == "GET" for c in fake_github.state.calls)
    code, stdout, outputs = action(workspace, fake_github.base_url, merge="shards")
    assert code == 1 and "merged 2 shard result(s): verdict failed" in stdout
    merged = json.loads((workspace / outputs["results-path"]).read_text())
    assert merged["run"]["shard"] is None and {s["name"] for s in merged["suites"]} == {"Chat", "Catalog"}
    assert sum(len(s["flow_runs"]) for s in merged["suites"]) == 2
    assert len(fake_github.state.comments[(REPO, 42)]) == 1 and len(fake_github.state.check_runs) == 1


def test_merge_refuses_a_missing_shard(target, workspace, fake_github):
    action(workspace, fake_github.base_url, base_url=target, shard="1/2", comment="false", check_run="false",
           fail_on="never", output_dir="shards/1")
    code, stdout, _ = action(workspace, fake_github.base_url, merge="shards")
    assert code == 2 and stdout.count("::error title=Litmus::merge: ") == 1


def test_changed_only_runs_the_suites_the_pr_touched(target, workspace, fake_github):
    fake_github.state.pr_files[(REPO, 42)] = [{"filename": "probes/catalog.yaml", "status": "modified"}]
    code, stdout, outputs = action(workspace, fake_github.base_url, base_url=target, changed_only="true",
                                   comment="false", check_run="false")
    results = json.loads((workspace / outputs["results-path"]).read_text())
    assert [s["name"] for s in results["suites"]] == ["Catalog"]
    assert "changed-only: 1 of 2 suites touched by this PR" in stdout
    # The one finding, on a changed file, is annotated through the log (no check run asked for).
    (error,) = [line for line in stdout.splitlines() if line.startswith("::error")]
    assert "file=probes/catalog.yaml,line=11" in error and code == 1


HEALTH = {
    "probes/health.yaml": """\
version: 1
suite: Health
flows:
  - name: f
    steps:
      - name: health
        request: {url: /health}
        assertions:
          - {type: python, function: checks/health.py:ok}
          - {type: schema, schema_file: ../schemas/health.yaml}
""",
    "probes/checks/health.py": "def ok(response, context):\n    return response.json()['status'] == 'ok'\n",
    "schemas/health.yaml": "type: object\nproperties: {status: {$ref: 'defs/status.yaml'}}\n",
    "schemas/defs/status.yaml": "enum: [ok]\n",
}


@pytest.mark.parametrize("changed", ["probes/checks/health.py", "schemas/defs/status.yaml"])
def test_changed_only_runs_the_suite_whose_python_check_or_refd_schema_alone_changed(target, workspace, fake_github,
                                                                                    changed):
    """B4: before, changes.py derived a suite's files again and missed python check files and the files a schema's
    `$ref`s name, so a PR changing only one of them ran no suite."""
    for relative, text in HEALTH.items():
        (workspace / relative).parent.mkdir(parents=True, exist_ok=True)
        (workspace / relative).write_text(text)
    trusted_checkout(workspace, fake_github)
    fake_github.state.pr_files[(REPO, 42)] = [{"filename": changed, "status": "modified"}]
    code, stdout, outputs = action(workspace, fake_github.base_url, base_url=target, changed_only="true",
                                   comment="false", check_run="false")
    results = json.loads((workspace / outputs["results-path"]).read_text())
    assert [s["name"] for s in results["suites"]] == ["Health"] and results["verdict"] == "passed" and code == 0
    assert "changed-only: 1 of 3 suites touched by this PR" in stdout


@pytest.mark.parametrize("fail_on", ["suite", "assertion", "new", "never"])
def test_changed_only_selecting_no_suite_is_nothing_checked_never_a_pass(target, workspace, fake_github, fail_on):
    """B4: before, a PR changing no probe ran 0 suites and its check run read "0 suite(s) passed" (a `success` under
    fail-on new); under fail-on suite the step failed the PR. Now: neutral, verdict failed, the step not failed."""
    fake_github.state.pr_files[(REPO, 42)] = [{"filename": "src/app.py", "status": "modified"}]
    code, stdout, outputs = action(workspace, fake_github.base_url, base_url=target, changed_only="true",
                                   fail_on=fail_on)
    (check,) = fake_github.state.check_runs.values()
    assert check["conclusion"] == "neutral"
    assert check["output"]["title"].startswith("nothing checked")
    results = json.loads((workspace / outputs["results-path"]).read_text())
    assert results["suites"] == [] and results["verdict"] == outputs["verdict"] == "failed"
    assert "::warning::Litmus: nothing checked: changed-only selected no suite" in stdout and code == 0


def test_changed_only_with_githubs_capped_file_list_runs_every_suite(target, workspace, fake_github):
    """GitHub lists at most 3,000 files of a PR: a change past them is unknown, never taken for none."""
    fake_github.state.pr_files[(REPO, 42)] = [{"filename": f"src/f{i}.py", "status": "modified"} for i in range(3000)]
    code, stdout, outputs = action(workspace, fake_github.base_url, base_url=target, changed_only="true",
                                   comment="false", check_run="false", fail_on="never")
    results = json.loads((workspace / outputs["results-path"]).read_text())
    assert [s["name"] for s in results["suites"]] == ["Catalog", "Chat"] and code == 0
    assert "::notice::Litmus: GitHub lists at most 3,000 files of a pull request" in stdout
    assert "::warning::Litmus: changed-only needs the PR's changed files, which are unknown: running every suite" \
        in stdout


def test_an_invalid_probe_file_is_annotated_on_its_line(target, workspace, fake_github):
    (workspace / "probes" / "broken.yaml").write_text("version: 1\nsuite: Broken\nflows: []\n")
    code, stdout, outputs = action(workspace, fake_github.base_url, base_url=target)
    assert code == 2 and outputs == {}
    assert any(line.startswith("::error title=Litmus%3A invalid probe file,file=probes/broken.yaml,line=3,")
               for line in stdout.splitlines())


def test_base_url_is_required_without_a_deployment_event(workspace, fake_github):
    code, stdout, _ = action(workspace, fake_github.base_url, event="push")
    assert code == 2 and "::error title=Litmus::no base URL for suites 'Catalog', 'Chat': set the input 'base-url'" \
        in stdout


def test_vars_input_sets_run_variables(workspace, fake_github):
    from support.target import Target

    shutil.rmtree(workspace / "probes")
    (workspace / "probes").mkdir()
    (workspace / "probes" / "vars.yaml").write_text(
        "version: 1\nsuite: Vars\nflows: [{name: f, steps: [{name: s, request: "
        "{url: \"/t/{{ vars.tenant | urlencode }}?region={{ vars.region }}\"}}]}]\n")
    with Target() as server:
        server.json("/t/acme%20corp", {"ok": True})
        code, _, outputs = action(workspace, fake_github.base_url, base_url=server.base_url, comment="false",
                                  check_run="false", annotations="none",
                                  vars="# run variables\ntenant=acme corp\n\nregion=eu-west-1\n")
        assert code == 0, outputs
        assert [(r.path, r.query) for r in server.requests] == [("/t/acme%20corp", {"region": ["eu-west-1"]})]
    code, stdout, _ = action(workspace, fake_github.base_url, base_url="http://127.0.0.1:9", vars="not an assignment")
    assert code == 2 and "input 'vars'" in stdout


@pytest.mark.timing  # the spacing of requests is measured; a lenient bound
def test_the_rate_limit_input_spaces_the_requests_to_the_target(workspace, fake_github):
    """`rate-limit: 5` holds a run of 6 requests to one origin to at least 5 intervals of 200 ms (measured
    when the target got them, so with a lenient bound); without the input the same run is not held."""
    import time

    from support.target import Target

    shutil.rmtree(workspace / "probes")
    (workspace / "probes").mkdir()
    (workspace / "probes" / "limited.yaml").write_text(
        "version: 1\nsuite: Limited\nflows: [{name: f, runs: 6, steps: [{name: s, request: {url: /limited}, "
        "assertions: [{type: status_code, expected: 200}]}]}]\n")
    for given, held in (("5", True), ("", False)):
        with Target() as server:
            arrivals: list[float] = []
            server.route("/limited",
                         lambda req, arrivals=arrivals: arrivals.append(time.monotonic()) or (200, {}, b"ok"))
            code, _, outputs = action(workspace, fake_github.base_url, base_url=server.base_url, comment="false",
                                      check_run="false", annotations="none", rate_limit=given)
        assert code == 0 and outputs["verdict"] == "passed", outputs
        assert len(arrivals) == 6
        span = arrivals[-1] - arrivals[0]
        assert (span >= 5 / 5 - 0.2) if held else (span < 0.8), (given, span)


def test_a_rate_limit_input_that_is_not_a_rate_is_an_error_naming_it(workspace, fake_github):
    for hostile in ("0", "-3", "nan", "inf", "fast", "100001"):
        code, stdout, outputs = action(workspace, fake_github.base_url, base_url="http://127.0.0.1:9",
                                       rate_limit=hostile)
        assert code == 2 and outputs == {}, hostile
        assert f"::error title=Litmus::input 'rate-limit': expected a number above 0 to 100,000, got {hostile!r}" \
            in stdout
        assert not (workspace / "litmus-report").exists()


def test_a_run_whose_only_problems_are_step_warnings_passes_everywhere_and_shows_them(workspace, fake_github):
    """A probe request that does not conform to its OpenAPI operation is a warning: exit 0, the verdict output,
    the check run and the comment all say passed, and the comment lists the warning."""
    from support.target import Target

    shutil.rmtree(workspace / "probes")
    (workspace / "probes").mkdir()
    (workspace / "api").mkdir()
    (workspace / "api" / "users.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: Users, version: '1'}\npaths:\n  /users:\n    get:\n      parameters:\n"
        "        - {name: limit, in: query, schema: {type: integer, maximum: 100}}\n"
        "      responses: {'200': {description: users}}\n")
    (workspace / "probes" / "users.yaml").write_text(
        "version: 1\nsuite: Users\nopenapi: ../api/users.yaml\nflows: [{name: list, steps: [{name: many, "
        "request: {url: /users?limit=500}, assertions: [{type: openapi}]}]}]\n")
    with Target() as server:
        server.text("/users", "")
        code, stdout, outputs = action(workspace, fake_github.base_url, base_url=server.base_url,
                                       fail_on="assertion", annotations="all")
    assert code == 0 and outputs["verdict"] == "passed", stdout
    (check,) = fake_github.state.check_runs.values()
    assert check["conclusion"] == "success"
    (comment,) = fake_github.state.comments[(REPO, 42)]
    assert "## ✅ Litmus: 1 suite passed\n" in comment["body"] and "### Warnings (1)\n" in comment["body"]
    assert "query parameter \\'limit\\'\\: expected at most 100\\, got integer 500" in comment["body"]


def test_the_sarif_category_input_names_the_sarif_run(target, workspace, fake_github):
    code, _, outputs = action(workspace, fake_github.base_url, base_url=target, comment="false", check_run="false",
                              sarif_category="litmus-staging")
    assert code == 1
    sarif = json.loads((workspace / outputs["sarif-path"]).read_text("utf-8"))
    assert sarif["runs"][0]["automationDetails"] == {"id": "litmus-staging/"}
    code, _, outputs = action(workspace, fake_github.base_url, base_url=target, comment="false", check_run="false")
    # Empty: the file names no category, so upload-sarif's `category:` applies (it fills only a missing id).
    assert "automationDetails" not in json.loads((workspace / outputs["sarif-path"]).read_text("utf-8"))["runs"][0]


def test_a_sarif_category_that_would_issue_a_workflow_command_is_refused(workspace, fake_github):
    """A category is printed in no log and written only as a JSON string; one holding a line break (which
    could start a `::command::` line wherever it were echoed) or any other unprintable character is
    refused before any request, naming the input and the character."""
    for hostile, said in (("staging\n::warning::PWNED", "a control character (U+000A) at character 8"),
                          ("staging\u2028::warning::PWNED", "a line separator (U+2028) at character 8")):
        code, stdout, outputs = action(workspace, fake_github.base_url, base_url="http://127.0.0.1:9",
                                       sarif_category=hostile)
        assert code == 2 and outputs == {}
        assert "input 'sarif-category': a SARIF category is printable text" in stdout and said in stdout
        assert not [line for line in stdout.splitlines() if line.lstrip().startswith("::warning::PWNED")]
        assert not (workspace / "litmus-report").exists()


def test_a_deployment_of_a_commit_no_open_pr_heads_gets_no_comment(target, workspace, fake_github):
    """deployment_status: the PR is looked up by the deployed commit; none (or only a closed one) means no comment,
    and with no change set every finding is annotated."""
    fake_github.state.add_pull(REPO, "4" * 40, 40, state="closed")
    code, stdout, outputs = action(workspace, fake_github.base_url, event="deployment_status", base_url=target)
    assert "no open pull request has the deployed commit 444444444444 as its head: no PR comment" in stdout
    assert fake_github.state.comments == {} and outputs["comment-url"] == ""
    (check,) = fake_github.state.check_runs.values()
    assert check["head_sha"] == "4" * 40
    assert {"probes/catalog.yaml", "probes/chat.yaml"} <= {a["path"] for a in check["annotations"]}


def test_a_refused_lookup_of_the_deployed_commits_pr_is_a_warning(target, workspace, fake_github):
    fake_github.state.deny.add("commit-pulls")
    code, stdout, _ = action(workspace, fake_github.base_url, event="deployment_status", base_url=target)
    assert "::warning::Litmus: could not find the pull request of the deployed commit 444444444444 (HTTP 403)" in stdout
    assert fake_github.state.comments == {} and code == 1
