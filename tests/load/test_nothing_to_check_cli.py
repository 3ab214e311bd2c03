"""Loading through the CLI (`litmus validate` / `litmus run` in a subprocess): what would check nothing
is an error, referenced files stay out of version-control metadata, litmus.yaml is validated like a
probe file, and long source lines are shown as a window."""

from __future__ import annotations

import json

import pytest

from support.cli import litmus

SUITE = """\
version: 1
suite: Orders
flows:
  - name: List
    steps:
      - name: list
        request: {url: /orders}
        assertions:
          - type: status_code
            expected: 200
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "probes").mkdir()
    return tmp_path


@pytest.mark.parametrize("command", [["validate"], ["run", "--base-url", "http://127.0.0.1:9"]])
@pytest.mark.parametrize("files", [{}, {"schema.yaml": "type: object\nproperties: {}\n"}])
def test_finding_no_suite_exits_2_saying_so(project, command, files):
    for name, text in files.items():
        (project / "probes" / name).write_text(text)
    done = litmus(project, *command)
    assert done.returncode == 2
    assert "error: no probe suite found in probes/" in done.stderr
    assert ("none with a top-level 'suite:'" if files else "no .yaml or .yml files") in done.stderr
    assert not (project / "litmus-report").exists()


@pytest.mark.parametrize("command", [["validate"], ["run", "--base-url", "http://127.0.0.1:9"]])
def test_a_misspelt_suite_key_is_an_error_at_the_key_not_a_skipped_file(project, command):
    (project / "probes" / "orders.yaml").write_text(SUITE)
    (project / "probes" / "typo.yaml").write_text(SUITE.replace("suite: Orders", "suit: Orders"))
    done = litmus(project, *command)
    assert done.returncode == 2
    assert ("probes/typo.yaml:1:1: error: looks like a probe suite but has no 'suite:' key (it has 'version:') "
            "(is 'suit:' meant to be 'suite:'?)") in done.stderr


@pytest.mark.parametrize("reference", ["../.git/config", "../sub/../.git/config", "link/config", ".hg/hgrc"])
def test_referenced_files_are_never_read_from_vcs_metadata(project, reference):
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text('[http]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW4=\n')
    (project / "probes" / ".hg").mkdir()
    (project / "probes" / ".hg" / "hgrc").write_text("[auth]\n")
    (project / "probes" / "link").symlink_to(project / ".git")
    (project / "sub").mkdir()
    (project / "probes" / "orders.yaml").write_text(SUITE.replace("flows:", f"""\
context:
  scenarios:
    - id: leak
      reference_response_file: {reference}
flows:"""))
    for command in (["validate"], ["run", "--base-url", "http://127.0.0.1:9"]):
        done = litmus(project, *command)
        assert done.returncode == 2
        assert f"probes/orders.yaml:6:32: error: '{reference}' is inside ." in done.stderr
        assert "extraheader" not in done.stdout + done.stderr


def test_validate_reports_every_litmus_yaml_error_positioned_like_probe_errors(project):
    (project / "probes" / "orders.yaml").write_text(SUITE)
    (project / "litmus.yaml").write_text(
        "judge:\n  provider: mistral\n  modle: x\n  threshold: 200\n  concurrency: 0\nreports: {}\n")
    done = litmus(project, "validate")
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert [line.split(": error: ")[0] for line in errors] == [
        "litmus.yaml:2:13", "litmus.yaml:3:3", "litmus.yaml:4:14", "litmus.yaml:5:16", "litmus.yaml:6:1"]
    assert all(line.count("error:") == 1 for line in errors)
    assert " 3 |   modle: x" in done.stderr  # the source line, as for probe files
    assert done.stdout.strip() == "5 errors, 0 warnings: FAILED"
    as_json = json.loads(litmus(project, "validate", "--format", "json").stdout)
    assert [d["line"] for d in as_json["diagnostics"]] == [2, 3, 4, 5, 6]

    run = litmus(project, "run", "--base-url", "http://127.0.0.1:9")
    assert run.returncode == 2
    assert [line for line in run.stderr.splitlines() if ": error: " in line] == errors


def test_a_valid_litmus_yaml_is_named_in_the_summary(project):
    (project / "probes" / "orders.yaml").write_text(SUITE)
    (project / "litmus.yaml").write_text("judge:\n  provider: none\n")
    done = litmus(project, "validate")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1 suite, 1 flow, 1 assertion, config litmus.yaml: OK"


def test_a_long_source_line_is_shown_as_a_window_around_the_column(project):
    padding = "x" * 10_000
    (project / "probes" / "orders.yaml").write_text(
        SUITE.replace("url: /orders}", f"url: /orders, headers: {{X-Pad: {padding}}}, methd: GET}}"))
    done = litmus(project, "validate")
    assert done.returncode == 2
    head, source, carets = done.stderr.splitlines()[:3]
    assert head.startswith("probes/orders.yaml:7:10053: error: unknown key 'methd'")
    assert len(source) < 120
    assert "methd" in source
    assert source.index("methd") == carets.index("^")
