"""action.yml, the Dockerfile and the documented workflows, checked against GitHub's rules and schemas."""

import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "tests" / "schemas"
WORKFLOWS = sorted((ROOT / "docs" / "workflows").glob("*.yml"))
COMMANDS = ROOT / "docs" / "workflows" / "litmus-commands.yml"
# The workflows that run probes (the commands workflow only decides on their results).
PROBE_WORKFLOWS = [path for path in WORKFLOWS if path != COMMANDS]


def validate(document, schema_name: str) -> list[str]:
    schema = json.loads((SCHEMAS / schema_name).read_text("utf-8"))
    return [f"{list(e.absolute_path)}: {e.message}" for e in Draft7Validator(schema).iter_errors(document)]


def action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))


def test_action_yml_is_valid_against_the_schema():
    assert validate(action(), "github-action.json") == []


def test_action_yml_declares_the_documented_interface():
    meta = action()
    assert meta["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert meta["branding"]["icon"] and meta["branding"]["color"]
    inputs = meta["inputs"]
    assert {
        "probes", "base-url", "config", "judge-provider", "judge-model", "judge-base-url", "judge-api-key",
        "fail-on", "comment", "annotations", "changed-only", "shard", "output-dir", "wait-for", "wait-timeout",
        "github-token", "check-run", "merge", "vars", "baseline", "baseline-url", "baseline-artifact",
        "allow-fork-code", "env-allow", "allowed-origins", "deployment-hosts", "sarif-category", "results-workflow",
        "results-artifact", "max-cost-increase", "rate-limit",
    } == set(inputs)
    assert all(re.fullmatch(r"[a-z][a-z0-9-]*", name) for name in inputs)  # kebab-case
    assert all(spec["description"] and "default" in spec for spec in inputs.values())
    defaults = {name: spec["default"] for name, spec in inputs.items()}
    assert defaults["probes"] == "probes" and defaults["output-dir"] == "litmus-report"
    assert defaults["fail-on"] == "suite" and defaults["annotations"] == "changed"
    assert defaults["comment"] == "true" and defaults["changed-only"] == "false" and defaults["check-run"] == "true"
    assert defaults["github-token"] == "${{ github.token }}"
    assert defaults["allow-fork-code"] == "false"  # the dangerous opt-out is never the default
    assert {"verdict", "passed", "failed", "needs-review", "results-path", "sarif-path", "junit-path",
            "markdown-path", "html-path", "comment-url"} <= set(meta["outputs"])


def test_every_input_is_read_by_the_entrypoint():
    source = (ROOT / "src" / "litmus" / "commands" / "action.py").read_text("utf-8")
    read = set(re.findall(r'(?:read_(?:bool_|choice_)?input|_parsed)\(environ, "([a-z-]+)"', source))
    assert read == set(action()["inputs"])


def test_every_input_and_output_is_documented():
    doc = (ROOT / "docs" / "github-action.md").read_text("utf-8")
    meta = action()
    missing = [name for name in [*meta["inputs"], *meta["outputs"]] if f"`{name}`" not in doc]
    assert missing == []


def test_dockerfile_follows_githubs_container_action_rules():
    lines = [line.strip() for line in (ROOT / "Dockerfile").read_text("utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    instructions = [line.split()[0] for line in lines if re.match(r"^[A-Z]+\s", line)]
    assert instructions[0] == "FROM" and re.fullmatch(r"FROM python:3\.\d+-slim(-\w+)?", lines[0])
    assert "USER" not in instructions and "WORKDIR" not in instructions
    entrypoint = next(line for line in lines if line.startswith("ENTRYPOINT"))
    command = json.loads(entrypoint.removeprefix("ENTRYPOINT"))
    assert command[0].startswith("/") and command[1:] == ["action"]  # exec form, absolute
    text = "\n".join(lines)
    # Cache-friendly order: the pinned dependencies are installed before the source is copied.
    assert text.index("requirements.lock") < text.index("COPY src") < text.index("--no-deps")
    ignore = (ROOT / ".dockerignore").read_text("utf-8").split()
    assert ignore[ignore.index("*") + 1:][:4] == ["!requirements.lock", "!pyproject.toml", "!README.md", "!src/"]


def test_lock_pins_every_runtime_dependency_exactly():
    pins = dict(line.split("==") for line in (ROOT / "requirements.lock").read_text("utf-8").splitlines()
                if line and not line.startswith("#"))
    names = {name.lower().replace("_", "-") for name in pins}
    assert {"pyyaml", "jsonpath-ng", "requests", "junit-xml", "markdown-it-py", "jsonschema", "urllib3"} <= names
    # The image serves every judge provider: the extras' libraries are pinned too.
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["optional-dependencies"]
    for requirement in extras["bedrock"] + extras["vertex"]:
        assert re.match(r"[A-Za-z0-9_.-]+", requirement).group().lower() in names
    assert all(re.fullmatch(r"\d+(\.\d+)*(\.post\d+)?", version) for version in pins.values())


@pytest.mark.parametrize("path", PROBE_WORKFLOWS, ids=lambda p: p.name)
def test_documented_workflows_are_valid(path):
    workflow = yaml.safe_load(path.read_text("utf-8"))
    # PyYAML reads YAML 1.1, where the key `on` is the boolean True.
    workflow["on"] = workflow.pop(True)
    assert validate(workflow, "github-workflow.json") == []
    # What every documented workflow needs; one may ask for more (the baseline one reads artifacts).
    assert workflow["permissions"].items() >= {"contents": "read", "pull-requests": "write", "checks": "write",
                                               "security-events": "write"}.items()
    steps = [step.get("uses", "") for job in workflow["jobs"].values() for step in job["steps"]]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in steps)
    assert any(u.startswith("actions/upload-artifact@") for u in steps)
    assert any(u.startswith("actions/cache") for u in steps)
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if step.get("uses", "").startswith("github/codeql-action/upload-sarif@"):
                assert step["with"]["category"]
            if step.get("uses", "").startswith("litmus-lab/litmus@"):
                assert set(step.get("with", {})) <= set(action()["inputs"])


def test_the_documented_workflows_exist():
    names = {p.name for p in WORKFLOWS}
    assert {"litmus-pull-request.yml", "litmus-deployment-status.yml", "litmus-sharded.yml",
            "litmus-baseline.yml", "litmus-fork-pull-request.yml", "litmus-commands.yml"} <= names


def test_the_commands_workflow_runs_no_pull_request_code_with_the_least_permissions():
    """docs/review.md: `issue_comment` runs with this repository's token for anyone's comment, so the job
    checks out nothing, asks only for what a command does, takes new comments only and one at a time per PR."""
    workflow = yaml.safe_load(COMMANDS.read_text("utf-8"))
    workflow["on"] = workflow.pop(True)
    assert validate(workflow, "github-workflow.json") == []
    assert workflow["on"] == {"issue_comment": {"types": ["created"]}}
    assert workflow["permissions"] == {"contents": "write", "issues": "write", "pull-requests": "read",
                                       "checks": "write", "actions": "read"}
    assert "github.event.issue.number" in workflow["concurrency"]["group"]
    assert workflow["concurrency"]["cancel-in-progress"] is False  # a cancelled command would be lost
    (job,) = workflow["jobs"].values()
    uses = [step.get("uses", "") for step in job["steps"]]
    assert not [u for u in uses if u.startswith("actions/checkout@")] and all("run" not in s for s in job["steps"])
    (litmus,) = [step for step in job["steps"] if step.get("uses", "").startswith("litmus-lab/litmus@")]
    assert set(litmus["with"]) <= set(action()["inputs"]) and litmus["with"]["results-workflow"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_documented_workflows_pin_actions_and_leave_no_token_behind(path):
    """docs/security.md: `uses:` pinned by commit SHA (a tag can be moved to other code), and checkout with
    `persist-credentials: false` (else the token waits in .git/config for anything the job runs later)."""
    workflow = yaml.safe_load(path.read_text("utf-8"))
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    for step in steps:
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False


def test_the_fork_workflow_checks_out_the_base_branch_on_pull_request_target():
    workflow = yaml.safe_load((ROOT / "docs/workflows/litmus-fork-pull-request.yml").read_text("utf-8"))
    assert list(workflow.pop(True)) == ["pull_request_target"]
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                # No ref: the event's default, the base branch. A `ref:` naming the head would run the fork's code.
                assert "ref" not in step.get("with", {})
