from pathlib import Path

import pytest

from litmus.github.context import (
    GitHubContext,
    InputError,
    input_env_name,
    read_bool_input,
    read_choice_input,
    read_input,
)

EVENTS = Path(__file__).parent / "events"


def context(event: str, name: str, **extra) -> GitHubContext:
    environ = {"GITHUB_EVENT_PATH": str(EVENTS / f"{event}.json"), "GITHUB_EVENT_NAME": name,
               "GITHUB_REPOSITORY": "acme/shop", "GITHUB_SHA": "9" * 40, **extra}
    return GitHubContext.from_environ(environ)


def test_input_names_follow_the_runner():
    assert input_env_name("base-url") == "INPUT_BASE-URL"
    assert input_env_name("my input") == "INPUT_MY_INPUT"
    environ = {"INPUT_BASE-URL": "  https://x.test \n", "INPUT_COMMENT": "False", "INPUT_FAIL-ON": "bogus"}
    assert read_input(environ, "base-url") == "https://x.test"
    assert read_input(environ, "probes", "probes") == "probes"
    assert read_bool_input(environ, "comment", True) is False
    assert read_bool_input(environ, "check-run", True) is True
    with pytest.raises(InputError, match="fail-on.*suite, assertion, never.*'bogus'"):
        read_choice_input(environ, "fail-on", ("suite", "assertion", "never"), "suite")
    with pytest.raises(InputError, match="true or false"):
        read_bool_input({"INPUT_COMMENT": "yes"}, "comment", True)


def test_pull_request_same_repository():
    ctx = context("pull_request", "pull_request")
    pr = ctx.pull_request()
    assert (pr.number, pr.head_sha[:4], pr.base_sha[:4], pr.from_fork) == (42, "1111", "2222", False)
    assert ctx.head_sha() == "1" * 40
    assert ctx.deployment_url() is None


def test_pull_request_from_a_fork_is_detected():
    pr = context("pull_request_fork", "pull_request_target").pull_request()
    assert (pr.number, pr.from_fork, pr.head_repository) == (7, True, "mallory/shop")


def test_deployment_status_gives_the_url_and_the_deployed_sha():
    ctx = context("deployment_status", "deployment_status")
    assert ctx.pull_request() is None
    assert ctx.deployment_url() == "https://shop-git-probes-acme.vercel.app"
    assert ctx.deployment_state() == "success"
    assert ctx.head_sha() == "4" * 40


def test_push_has_no_pull_request_unless_the_ref_names_one():
    assert context("push", "push").pull_request() is None
    assert context("push", "push").head_sha() == "9" * 40
    pr = context("push", "workflow_dispatch", GITHUB_REF="refs/pull/17/merge").pull_request()
    assert pr.number == 17 and pr.head_sha is None


def test_runner_paths_and_urls(tmp_path):
    ctx = GitHubContext.from_environ({
        "GITHUB_OUTPUT": str(tmp_path / "out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "sum"),
        "GITHUB_API_URL": "http://127.0.0.1:9/", "GITHUB_SERVER_URL": "https://ghe.test/",
        "GITHUB_REPOSITORY": "acme/shop", "GITHUB_RUN_ID": "77", "GITHUB_WORKSPACE": str(tmp_path),
    })
    assert ctx.api_url == "http://127.0.0.1:9" and ctx.output_path == tmp_path / "out"
    assert ctx.run_url == "https://ghe.test/acme/shop/actions/runs/77"
    assert GitHubContext.from_environ({}).event == {}
