import subprocess
from pathlib import Path

from litmus.errors import Position
from litmus.github.api import GitHubClient
from litmus.github.changes import git_changed_files, pull_request_files, referenced_files, suites_touched
from litmus.model import Assertion, Context, Flow, Scenario, Step, Suite

REPO = "acme/shop"


def test_pull_request_files_are_paginated_and_include_renames(fake_github):
    files = [{"filename": f"src/f{i}.py", "status": "modified"} for i in range(250)]
    files.append({"filename": "probes/new.yaml", "status": "renamed", "previous_filename": "probes/old.yaml"})
    fake_github.state.pr_files[(REPO, 42)] = files
    changed = pull_request_files(GitHubClient(fake_github.url, "t", retries=0), REPO, 42)
    assert len(changed) == 252 and {"probes/new.yaml", "probes/old.yaml", "src/f249.py"} <= changed
    assert len(fake_github.calls("GET", r"/pulls/42/files$")) == 3


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_git_fallback_against_base_and_first_parent(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@t")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / "a.txt").write_text("1")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "x.yaml").write_text("suite: x")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "change")
    assert git_changed_files(tmp_path, base) == {"probes/x.yaml"}
    assert git_changed_files(tmp_path, None) == {"probes/x.yaml"}
    assert git_changed_files(tmp_path, "f" * 40) == {"probes/x.yaml"}  # unknown base: first parent
    assert git_changed_files(tmp_path / "probes" / "nope", None) is None


def suite(root: Path, name: str, file: str, schema_file=None, data_file=None) -> Suite:
    pos = Position(file)
    assertions = (Assertion(pos=pos, type="schema", params={"schema_file": schema_file}),) if schema_file else ()
    context = Context(pos=pos, scenarios=(Scenario(pos=pos, id="s", data_file=data_file),)) if data_file else None
    return Suite(pos=pos, name=name, file=file, abs_path=root / file, context=context,
                 flows=(Flow(pos=pos, name="f", steps=(Step(pos=pos, name="s", assertions=assertions),)),))


def test_suites_touched_by_their_own_or_referenced_files(tmp_path):
    a = suite(tmp_path, "A", "probes/a.yaml", schema_file="../schemas/order.json")
    b = suite(tmp_path, "B", "probes/b.yaml", data_file="scenarios/b.json")
    c = suite(tmp_path, "C", "probes/c.yaml")
    assert referenced_files(a, tmp_path) == {"schemas/order.json"}
    assert referenced_files(b, tmp_path) == {"probes/scenarios/b.json"}
    assert suites_touched([a, b, c], {"schemas/order.json"}, tmp_path) == [a]
    assert suites_touched([a, b, c], {"probes/scenarios/b.json", "probes/c.yaml"}, tmp_path) == [b, c]
    assert suites_touched([a, b, c], {"README.md"}, tmp_path) == []


def test_files_a_suite_sends_or_reads_rows_from_count_as_referenced(tmp_path):
    from litmus.load import load_suites

    (tmp_path / "probes" / "f").mkdir(parents=True)
    for name in ("rows.csv", "body.json", "doc.pdf", "login.json"):
        (tmp_path / "probes" / "f" / name).write_text("id\na\n" if name.endswith(".csv") else "{}")
    (tmp_path / "probes" / "s.yaml").write_text("""\
version: 1
suite: S
context: {scenarios_file: f/rows.csv}
setup: [{name: login, request: {method: POST, url: /l, body_file: f/login.json}}]
flows:
  - name: f
    steps:
      - {name: put, request: {method: PUT, url: /p, body_file: f/body.json}}
      - {name: up, request: {method: POST, url: /u, multipart: {doc: {file: f/doc.pdf}, title: t}}}
""")
    (suite_,) = load_suites([tmp_path / "probes"], root=tmp_path, environ={}).suites
    assert referenced_files(suite_, tmp_path) == {"probes/f/rows.csv", "probes/f/body.json", "probes/f/doc.pdf",
                                                  "probes/f/login.json"}


def test_a_crafted_base_sha_is_never_an_option_to_git(tmp_path):
    """Before, base `--output=FILE` made `git diff --output=FILE...HEAD` write that file."""
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@t")
    git(tmp_path, "config", "user.name", "t")
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(name)
        git(tmp_path, "add", ".")
        git(tmp_path, "commit", "-qm", name)
    planted = tmp_path / "planted"
    assert git_changed_files(tmp_path, f"--output={planted}") == {"b.txt"}  # refused as a revision: first parent
    assert not planted.exists() and not (tmp_path / f"--output={planted}...HEAD").exists()
