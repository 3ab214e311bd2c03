"""Every file probe content names goes through one resolver (litmus.files), through `litmus` as a
user runs it: a symlink out of the repository, a path into .git, a FIFO, a link to /dev/zero or a `../`
escape is a positioned error at the field that named it, its content never appears in any output,
and the command ends promptly (a FIFO is never opened blocking, /dev/zero never read)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from litmus.errors import ProbeError
from litmus.load import load_suites
from litmus.run.runner import RunOptions, run_suites
from support.cli import litmus

TOKEN = "c2VjcmV0LXRva2VuLWZyb20tZ2l0"  # what actions/checkout persists in .git/config, base64
OUTSIDE = "OUTSIDE-SECRET-7f3a"

STEP = """\
version: 1
suite: S
{context}flows:
  - name: f
    steps:
      - name: s
        request:
          method: POST
          url: http://127.0.0.1:9/x
{request}        assertions:
          - {{type: status_code, expected: 200}}
{assertion}"""

# input -> (suffix the named file needs, where the path goes in the suite, which field of STEP)
INPUTS = {
    "schema_file": (".json", "          - {type: schema, schema_file: '@@'}\n", "assertion"),
    "$ref": (".json", "          - {type: schema, schema_file: 'ref.json'}\n", "assertion"),
    "scenarios_file": (".csv", "context:\n  scenarios_file: '@@'\n", "context"),
    "python": (".py", "          - {type: python, function: '@@:check'}\n", "assertion"),
    "reference_response_file": (".txt", "context:\n  scenarios:\n    - id: a\n      reference_response_file: '@@'\n",
                                "context"),
    "body_file": (".bin", "          body_file: '@@'\n", "request"),
    "multipart": (".bin", "          multipart:\n            up: {file: '@@'}\n", "request"),
    "tool_calls schema_file": (".json", "          - {type: tool_calls, schema_file: '@@'}\n", "assertion"),
    "tool_calls $ref": (".json", "          - {type: tool_calls, schema_file: 'tools.json'}\n", "assertion"),
}
ATTACKS = ("outside_symlink", "dot_git", "fifo", "dev_zero", "dotdot_escape")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with a persisted token in .git/config, and a secret just outside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for suffix in {suffix for suffix, _, _ in INPUTS.values()} | {".yaml"}:
        (outside / f"secret{suffix}").write_text(f"{OUTSIDE}\n")
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(f"[http]\n\textraheader = AUTHORIZATION: basic {TOKEN}\n")
    (root / ".git" / "check.py").write_text(f"def check(response, context):\n    return '{TOKEN}'\n")
    (root / "probes").mkdir()
    return root


def plant(project: Path, attack: str, suffix: str) -> str:
    """Plant the attack's file; the path the suite writes (relative to probes/)."""
    probes = project / "probes"
    if attack == "outside_symlink":
        (probes / f"link{suffix}").symlink_to(project.parent / "outside" / f"secret{suffix}")
        return f"link{suffix}"
    if attack == "dot_git":
        return "../.git/check.py" if suffix == ".py" else "../.git/config"
    if attack == "fifo":
        os.mkfifo(probes / f"pipe{suffix}")
        return f"pipe{suffix}"
    if attack == "dev_zero":
        (probes / f"zero{suffix}").symlink_to("/dev/zero")
        return f"zero{suffix}"
    return f"../../outside/secret{suffix}"


REASONS = {"outside_symlink": "resolves outside the repository root", "dot_git": "is inside .git/",
           "fifo": "is not a regular file (a FIFO)", "dev_zero": "resolves outside the repository root",
           "dotdot_escape": "resolves outside the repository root"}


def write_suite(project: Path, field: str, written: str) -> tuple[int, int]:
    """probes/s.yaml naming `written` in `field`; the line and column of the field's value."""
    suffix, snippet, where = INPUTS[field]
    parts = {"context": "", "request": "", "assertion": ""}
    if field == "$ref":
        (project / "probes" / "ref.json").write_text(json.dumps({"$ref": written}))
        parts[where] = snippet
        marker = "'ref.json'"
    elif field == "tool_calls $ref":  # a tool's parameters refer to the file
        tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"$ref": written}}}]
        (project / "probes" / "tools.json").write_text(json.dumps(tools))
        parts[where] = snippet
        marker = "'tools.json'"
    else:
        parts[where] = snippet.replace("@@", written)
        marker = f"'{written}" + ("'" if field != "python" else "")
    text = STEP.format(**parts)
    (project / "probes" / "s.yaml").write_text(text)
    index = text.index(marker)
    return text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index)


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("field", INPUTS)
def test_a_referenced_file_the_resolver_refuses_is_a_positioned_error(project, field, attack):
    written = plant(project, attack, INPUTS[field][0])
    line, column = write_suite(project, field, written)
    commands = [["validate"]] + ([["run", "--base-url", "http://127.0.0.1:9"]] if attack == "fifo" else [])
    for command in commands:
        done = litmus(project, *command, timeout=60)  # a FIFO opened blocking would hang here
        output = done.stdout + done.stderr
        assert done.returncode == 2, output
        assert f"probes/s.yaml:{line}:{column}: error: " in output, output
        assert REASONS[attack] in output, output
        assert TOKEN not in output and OUTSIDE not in output
        assert not (project / "litmus-report").exists()


@pytest.mark.parametrize("attack", ["outside_symlink", "dot_git", "fifo", "dev_zero"])
def test_a_discovered_probe_file_the_resolver_refuses_is_an_error_for_that_file(project, attack):
    probes = project / "probes"
    if attack == "dot_git":
        (probes / "evil.yaml").symlink_to(project / ".git" / "config")
    elif attack == "fifo":
        os.mkfifo(probes / "evil.yaml")
    else:
        plant(project, attack, ".yaml")
        (probes / f"{'link' if attack == 'outside_symlink' else 'zero'}.yaml").rename(probes / "evil.yaml")
    for command in (["validate"], ["run", "--base-url", "http://127.0.0.1:9"]):
        done = litmus(project, *command, timeout=60)
        output = done.stdout + done.stderr
        assert done.returncode == 2, output
        assert f"probes/evil.yaml:1:1: error: 'probes/evil.yaml' {REASONS[attack]}" in output, output
        assert TOKEN not in output and OUTSIDE not in output


def test_a_symlinked_directory_is_not_searched(project):
    outside = project.parent / "outside"
    (outside / "leak.yaml").write_text(f"version: 1\nsuite: {OUTSIDE}\nflows: []\n")
    (project / "probes" / "linked").symlink_to(outside)
    done = litmus(project, "validate", timeout=60)
    assert done.returncode == 2
    assert "no probe suite found in probes/ (no .yaml or .yml files)" in done.stderr
    assert OUTSIDE not in done.stdout + done.stderr


def test_a_probe_path_the_action_names_outside_the_workspace_is_refused(project):
    """The action passes the workspace as the root: what it names must resolve inside it."""
    outside = project.parent / "outside"
    (outside / "suite.yaml").write_text("version: 1\nsuite: Outside\nflows: []\n")
    with pytest.raises(ProbeError) as raised:
        load_suites([outside / "suite.yaml"], root=project)
    (diagnostic,) = raised.value.diagnostics
    assert "resolves outside the repository root" in diagnostic.message


def test_an_inline_schema_ref_to_a_url_or_absolute_file_is_refused_before_any_connection(project, target):
    refs = {"http": target.url("/schema.json"), "file": "file:///etc/passwd", "absolute": "/etc/passwd"}
    lines = "".join(f"          - {{type: schema, schema: {{$ref: '{ref}'}}}}\n" for ref in refs.values())
    (project / "probes" / "s.yaml").write_text(STEP.format(context="", request="", assertion=lines))
    done = litmus(project, "validate", timeout=60)
    assert done.returncode == 2
    for ref in refs.values():
        assert f"schema $ref '{ref}' is not a relative file reference" in done.stderr
    assert target.requests == []


def test_a_request_file_swapped_after_load_is_refused_when_sent_not_followed(project, target):
    """Resolved at load, opened again at send: a FIFO or a symlink put in its place since is refused."""
    probes = project / "probes"
    step = STEP.replace("http://127.0.0.1:9/x", "/x")  # to the target, were anything sent
    (probes / "body.bin").write_text("body")
    (probes / "part.bin").write_text("part")
    suite = step.format(context="", assertion="", request="          body_file: body.bin\n")
    (probes / "a.yaml").write_text(suite.replace("suite: S", "suite: A"))
    suite = step.format(context="", assertion="", request="          multipart:\n            up: {file: part.bin}\n")
    (probes / "b.yaml").write_text(suite.replace("suite: S", "suite: B"))
    (probes / "check.py").write_text("def check(response, context):\n    return True\n")
    marker = project.parent / "outside" / "ran"
    (project.parent / "outside" / "evil.py").write_text(
        f"open({str(marker)!r}, 'w').close()\ndef check(response, context):\n    return True\n")
    suite = step.format(context="", request="", assertion="          - {type: python, function: 'check.py:check'}\n")
    (probes / "c.yaml").write_text(suite.replace("suite: S", "suite: C"))
    suites = load_suites([probes], root=project).suites
    (probes / "check.py").unlink()
    (probes / "check.py").symlink_to(project.parent / "outside" / "evil.py")
    (probes / "body.bin").unlink()
    os.mkfifo(probes / "body.bin")
    (probes / "part.bin").unlink()
    (probes / "part.bin").symlink_to(project.parent / "outside" / "secret.bin")
    target.json("/x", {})
    result = run_suites([s for s in suites if s.name != "C"], RunOptions(base_url=target.base_url), environ={})
    errors = {s.name: s.flow_runs[0].steps[0].error for s in result.suites}
    assert "is not a regular file (a FIFO)" in errors["A"]
    assert "is now a symbolic link" in errors["B"] or "symbolic link is now on its path" in errors["B"]
    assert target.requests == [] and OUTSIDE not in json.dumps(errors)
    result = run_suites([s for s in suites if s.name == "C"], RunOptions(base_url=target.base_url), environ={})
    (outcome,) = result.suites[0].flow_runs[0].steps[0].assertions[1:]
    assert outcome.status == "error" and "symbolic link" in outcome.reason
    assert not marker.exists()  # the file swapped in was never run


def test_litmus_yaml_linked_out_of_the_repository_is_refused_not_read(project):
    (project / "probes" / "s.yaml").write_text(STEP.format(context="", request="", assertion=""))
    (project / "litmus.yaml").symlink_to(project.parent / "outside" / "secret.yaml")
    done = litmus(project, "run", "--base-url", "http://127.0.0.1:9", timeout=60)
    assert done.returncode == 2
    assert "resolves outside the repository root" in done.stderr
    assert OUTSIDE not in done.stdout + done.stderr
