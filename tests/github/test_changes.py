import subprocess
from pathlib import Path

import pytest

from litmus.github.api import GitHubClient
from litmus.github.changes import changed_checks, git_changed_files, pull_request_files, suites_touched
from litmus.load import load_suites

REPO = "acme/shop"


def test_pull_request_files_are_paginated_and_include_renames(fake_github):
    files = [{"filename": f"src/f{i}.py", "status": "modified"} for i in range(250)]
    files.append({"filename": "probes/new.yaml", "status": "renamed", "previous_filename": "probes/old.yaml"})
    fake_github.state.pr_files[(REPO, 42)] = files
    changed = pull_request_files(GitHubClient(fake_github.base_url, "t", retries=0), REPO, 42)
    assert len(changed) == 252 and {"probes/new.yaml", "probes/old.yaml", "src/f249.py"} <= changed
    assert len(fake_github.calls("GET", r"/pulls/42/files$")) == 3


@pytest.mark.parametrize("listed, known", [(2999, True), (3000, False)])
def test_a_listing_at_githubs_cap_of_3000_files_is_unknown(fake_github, listed, known):
    """Before, the 3,000 files GitHub lists at most read as the PR's whole change: one past them was no change."""
    fake_github.state.pr_files[(REPO, 7)] = [{"filename": f"src/f{i}.py", "status": "modified"} for i in range(listed)]
    changed = pull_request_files(GitHubClient(fake_github.base_url, "t", retries=0), REPO, 7)
    assert (changed is not None) == known and (not known or len(changed) == listed)


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


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


SUITE = """\
version: 1
suite: {name}
flows:
  - name: f
    steps:
      - name: s
        request: {{url: /x}}
        assertions: [{assertion}]
"""


def test_the_loader_records_every_file_a_suite_reads(tmp_path):
    """Before, changes.py derived these again, without python check files nor the files a `$ref` names."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, {
        "probes/checks/orders.py": "def total(response, context):\n    return True\n",
        "schemas/order.yaml": "type: object\nproperties: {line: {$ref: 'defs/line.json'}}\n",
        "schemas/defs/line.json": '{"$ref": "price.json"}',
        "schemas/defs/price.json": '{"type": "number"}',
        "probes/f/rows.csv": "id\na\n", "probes/f/body.json": "{}", "probes/f/doc.pdf": "%PDF",
        "probes/f/login.json": "{}", "probes/f/data.yaml": "k: v\n", "probes/f/ref.txt": "fine\n",
        "probes/py.yaml": SUITE.format(name="Py", assertion="{type: python, function: checks/orders.py:total}"),
        "probes/schema.yaml": SUITE.format(name="Schema",
                                           assertion="{type: schema, schema_file: ../schemas/order.yaml}"),
        "probes/plain.yaml": SUITE.format(name="Plain", assertion="{type: status_code, expected: 200}"),
        "probes/sends.yaml": """\
version: 1
suite: Sends
context:
  scenarios_file: f/rows.csv
  scenarios: [{id: x, data_file: f/data.yaml, reference_response_file: f/ref.txt}]
setup: [{name: login, request: {method: POST, url: /l, body_file: f/login.json}}]
flows:
  - name: f
    steps:
      - {name: put, request: {method: PUT, url: /p, body_file: f/body.json}}
      - {name: up, request: {method: POST, url: /u, multipart: {doc: {file: f/doc.pdf}, title: t}}}
""",
    })
    (tmp_path / "probes" / "linked.json").symlink_to(tmp_path / "schemas" / "defs" / "price.json")
    write(tmp_path, {"probes/link.yaml": SUITE.format(name="Link",
                                                      assertion="{type: schema, schema_file: linked.json}")})
    suites = {s.name: s for s in load_suites([tmp_path / "probes"], root=tmp_path, environ={}).suites}
    assert suites["Py"].referenced_files == ("probes/py.yaml", "probes/checks/orders.py")
    assert suites["Schema"].referenced_files == ("probes/schema.yaml", "schemas/order.yaml", "schemas/defs/line.json",
                                                 "schemas/defs/price.json")
    assert suites["Plain"].referenced_files == ("probes/plain.yaml",)
    assert set(suites["Sends"].referenced_files) == {
        "probes/sends.yaml", "probes/f/rows.csv", "probes/f/data.yaml", "probes/f/ref.txt", "probes/f/login.json",
        "probes/f/body.json", "probes/f/doc.pdf"}
    # A symlink: both its own name and what it leads to.
    assert suites["Link"].referenced_files == ("probes/link.yaml", "probes/linked.json", "schemas/defs/price.json")

    ordered = list(suites.values())
    touched = suites_touched(ordered, {"probes/checks/orders.py"})
    assert [s.name for s in touched] == ["Py"]
    assert [s.name for s in suites_touched(ordered, {"schemas/defs/price.json"})] == ["Link", "Schema"]
    assert suites_touched(ordered, {"README.md", "src/app.py"}) == []
    assert changed_checks({"probes/checks/orders.py", "schemas/defs/line.json", "src/app.py", "litmus.yaml"},
                          ordered, ["probes"]) == ["litmus.yaml", "probes/checks/orders.py", "schemas/defs/line.json"]


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
