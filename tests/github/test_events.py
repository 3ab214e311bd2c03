"""Real-shaped GitHub inputs: the event fixtures validate against GitHub's webhook schemas, generated
schema-valid events go through the context parser without a crash, and the fake GitHub holds the
action to GitHub's REST schemas (tests/schemas/, see SOURCES.md there)."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path

import jsonschema
import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from litmus.github.context import GitHubContext, InputError
from support.fake_github import FakeGitHub

EVENTS = Path(__file__).parent / "events"
SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
# Fixture -> (GITHUB_EVENT_NAME, the webhook schema it is an instance of)
# (`pull_request_target` is sent the `pull_request` payload: pull_request_fork.json is the fork PR of both events.)
FIXTURES = {
    "pull_request.json": ("pull_request", "pull-request-synchronize"),
    "pull_request_fork.json": ("pull_request_target", "pull-request-opened"),
    "push.json": ("push", "push"),
    "deployment_status.json": ("deployment_status", "deployment-status-created"),
    "deployment_status_fork.json": ("deployment_status", "deployment-status-created"),
    "workflow_run_fork.json": ("workflow_run", "workflow-run-completed"),
    "issue_comment_pr.json": ("issue_comment", "issue-comment-created"),
}
HEX = st.from_regex(r"\A[0-9a-f]{40}\Z")


@cache
def webhook_schemas() -> dict:
    return json.loads((SCHEMAS / "github-webhook-events.json").read_text("utf-8"))["events"]


def fixture(name: str) -> dict:
    return json.loads((EVENTS / name).read_text("utf-8"))


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_every_event_fixture_is_a_real_shaped_event(name):
    errors = list(jsonschema.Draft7Validator(webhook_schemas()[FIXTURES[name][1]]).iter_errors(fixture(name)))
    assert errors == []


def test_every_event_fixture_in_the_folder_is_checked():
    assert sorted(p.name for p in EVENTS.glob("*.json")) == sorted(FIXTURES)


def leaf_schema(event_schema: dict, path: tuple[str, ...]) -> tuple[dict, bool]:
    """GitHub's schema for one field of an event, and whether its object requires it."""
    schema, required = event_schema, True
    for name in path:
        required = name in schema.get("required", [])
        schema = schema["properties"][name]
    return schema, required


ABSENT = object()


def events_varying(name: str, paths: list[tuple[str, ...]]) -> st.SearchStrategy[dict]:
    """The fixture with the fields the parser reads drawn from GitHub's own schema for them (an optional
    one may be absent; a SHA is also drawn as hex, so valid events are generated too). Every other field
    keeps the fixture's value, so each event is valid against the whole webhook schema, and generating
    one takes milliseconds, not the second a whole 95 KB schema costs."""
    event_schema = webhook_schemas()[FIXTURES[name][1]]
    fields = {}
    for path in paths:
        schema, required = leaf_schema(event_schema, path)
        strategy = from_schema(schema)
        if path[-1] == "sha":
            strategy = strategy | HEX
        fields[path] = strategy if required else strategy | st.just(ABSENT)

    def build(values: dict) -> dict:
        event = copy.deepcopy(fixture(name))
        for path, value in values.items():
            parent = event
            for part in path[:-1]:
                parent = parent[part]
            if value is ABSENT:
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = value
        return event

    return st.fixed_dictionaries(fields).map(build)


def parse(tmp_path_factory, event: dict, event_name: str) -> GitHubContext:
    path = tmp_path_factory.mktemp("event") / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    return GitHubContext.from_environ({"GITHUB_EVENT_PATH": str(path), "GITHUB_EVENT_NAME": event_name,
                                       "GITHUB_REPOSITORY": "acme/shop", "GITHUB_SHA": "9" * 40})


PROPERTY = settings(max_examples=100, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@PROPERTY
@given(event=events_varying("pull_request.json", [
    ("number",), ("pull_request", "number"), ("pull_request", "head", "sha"),
    ("pull_request", "head", "repo", "full_name"), ("pull_request", "base", "sha"),
]))
def test_generated_pull_request_events_parse_or_are_refused_clearly(tmp_path_factory, event):
    assert jsonschema.Draft7Validator(webhook_schemas()["pull-request-synchronize"]).is_valid(event)
    try:
        ctx = parse(tmp_path_factory, event, "pull_request")
        pr = ctx.pull_request()
    except InputError as exc:
        # Names the file and the field the action could not use, and is one short line.
        message = str(exc)
        assert message.startswith("event file ") and "pull_request." in message
        assert "\n" not in message and len(message) < 600
        return
    assert pr.number == event["pull_request"]["number"] >= 1
    assert pr.head_sha == event["pull_request"]["head"]["sha"] == ctx.head_sha()
    assert pr.base_sha == event["pull_request"]["base"]["sha"]
    assert all(c in "0123456789abcdef" for c in pr.head_sha + pr.base_sha)


@PROPERTY
@given(event=events_varying("deployment_status.json", [
    ("deployment_status", "state"), ("deployment_status", "environment_url"),
    ("deployment_status", "target_url"), ("deployment", "sha"),
]))
def test_generated_deployment_status_events_parse_or_are_refused_clearly(tmp_path_factory, event):
    assert jsonschema.Draft7Validator(webhook_schemas()["deployment-status-created"]).is_valid(event)
    try:
        ctx = parse(tmp_path_factory, event, "deployment_status")
    except InputError as exc:
        message = str(exc)
        assert message.startswith("event file ") and ("deployment_status." in message or "deployment." in message)
        assert "\n" not in message and len(message) < 600
        return
    assert ctx.pull_request() is None
    assert ctx.head_sha() == ctx.deployed_sha() == event["deployment"]["sha"]
    url = ctx.deployment_url()
    assert url is None or url.startswith(("http://", "https://"))
    assert ctx.deployment_state() == event["deployment_status"]["state"]


def test_the_fake_github_answers_a_body_github_would_refuse_with_422_and_fails_the_test():
    with pytest.raises(AssertionError, match="check-runs request"):
        with FakeGitHub() as gh:
            reply = requests.post(f"{gh.base_url}/repos/acme/shop/check-runs", timeout=5,
                                  json={"name": "Litmus", "head_sha": "1" * 40, "conclusion": "fine"})
            assert reply.status_code == 422 and gh.state.check_runs == {}
    with pytest.raises(AssertionError, match="comments request"):
        with FakeGitHub() as gh:
            reply = requests.post(f"{gh.base_url}/repos/acme/shop/issues/1/comments", json={"text": "hi"}, timeout=5)
            assert reply.status_code == 422


def test_the_fake_githubs_own_answers_are_real_shaped(fake_github):
    """Every route, with its data filled in, answers what GitHub's schema says (checked at teardown)."""
    state = fake_github.state
    state.pats["pat"] = "octocat"
    state.add_comment("acme/shop", 42, "hello", "octocat")
    state.pr_files[("acme/shop", 42)] = [{"filename": "probes/a.yaml", "status": "added"}]
    state.add_pull("acme/shop", "4" * 40, 42)
    base, auth = fake_github.base_url, {"Authorization": "Bearer pat"}
    assert requests.get(f"{base}/user", headers=auth, timeout=5).json()["login"] == "octocat"
    assert requests.get(f"{base}/repos/acme/shop/issues/42/comments", timeout=5).json()[0]["body"] == "hello"
    assert requests.get(f"{base}/repos/acme/shop/pulls/42/files", timeout=5).json()[0]["filename"] == "probes/a.yaml"
    assert requests.get(f"{base}/repos/acme/shop/commits/{'4' * 40}/pulls", timeout=5).json()[0]["number"] == 42
    created = requests.post(f"{base}/repos/acme/shop/check-runs", timeout=5, json={
        "name": "Litmus", "head_sha": "1" * 40, "status": "completed", "conclusion": "cancelled",
        "output": {"title": "t", "summary": "s", "annotations": []}}).json()
    assert created["conclusion"] == "cancelled"
    assert state.violations == []


def test_the_fake_githubs_trust_routes_are_real_shaped(fake_github):
    """Branches, comparisons, a run by id, its artifacts and a permission: GitHub's shapes (checked at teardown)."""
    state, base = fake_github.state, f"{fake_github.base_url}/repos/acme/shop"
    state.parents = {"a" * 40: [], "b" * 40: ["a" * 40], "c" * 40: ["a" * 40]}
    state.branches = {"main": "b" * 40}
    run = state.add_run(6, event="pull_request", head_repository=("mallory/shop", 4343))
    state.add_artifact(run, b"zip", artifact_id=61)
    state.permissions["octocat"] = "write"
    get = lambda path: requests.get(base + path, timeout=5)  # noqa: E731
    assert [b["name"] for b in get(f"/commits/{'b' * 40}/branches-where-head").json()] == ["main"]
    assert get(f"/commits/{'c' * 40}/branches-where-head").json() == []
    assert [get(f"/compare/main...{sha * 40}").json()["status"] for sha in "bac"] == ["identical", "behind", "diverged"]
    assert get(f"/compare/{'a' * 40}...main").json()["status"] == "ahead"
    assert get(f"/compare/main...{'d' * 40}").status_code == 404
    shown = get("/actions/runs/6").json()
    assert (shown["event"], shown["head_repository"]["id"], shown["repository"]["id"]) == ("pull_request", 4343,
                                                                                           186853002)
    (listed,) = get("/actions/runs/6/artifacts").json()["artifacts"]
    assert listed["workflow_run"]["head_repository_id"] == 4343 and listed["digest"].startswith("sha256:")
    assert get("/collaborators/octocat/permission").json()["permission"] == "write"
    assert get("/collaborators/mallory/permission").json()["permission"] == "read"
    state.fail["compare"] = 500
    assert get(f"/compare/main...{'b' * 40}").status_code == 500
