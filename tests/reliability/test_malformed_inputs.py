"""Malformed inputs to `merge`, `report` and `action`, through the CLI: each is exit 2 with one clear
`error:` line (an `::error` annotation for the action), never a traceback or exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipeline import run_litmus

from support.cli import litmus

ROOT = Path(__file__).resolve().parents[1]
GOOD_RESULTS = json.loads((ROOT / "report" / "results.json").read_text("utf-8"))
EVENTS = ROOT / "github" / "events"


def results_file(tmp_path: Path, name: str, **run) -> Path:
    document = json.loads(json.dumps(GOOD_RESULTS))
    document["run"].update(run)
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def refused(ran, command: str) -> str:
    assert ran.code == 2, ran.output
    assert "Traceback" not in ran.output
    (line,) = [line for line in ran.stderr.decode().splitlines() if line.startswith(f"litmus {command}: error: ")]
    return line


@pytest.mark.parametrize("started_at", ["yesterday", "2026-11-30T10:00:00", "2026-13-45T99:00:00Z"],
                         ids=["not-a-timestamp", "no-utc-offset", "impossible-date"])
def test_merge_refuses_bad_timestamps(tmp_path, started_at):
    one = results_file(tmp_path, "1.json", shard="1/2", started_at=started_at)
    two = results_file(tmp_path, "2.json", shard="2/2")
    json_two = json.loads(two.read_text())
    json_two["suites"] = []  # the other shard's flow runs: none, so the two do not overlap
    two.write_text(json.dumps(json_two))
    ran = run_litmus(["merge", str(one), str(two), "-o", "merged.json"], cwd=tmp_path)
    assert "1.json: run.started_at" in refused(ran, "merge")
    assert not (tmp_path / "merged.json").exists()


@pytest.mark.parametrize("content", [
    b"[" * 100_000 + b"]" * 100_000,
    b"not json at all",
    b"\xff\xfe\x00garbage",
    json.dumps({"schema_version": 1, "suites": "many"}).encode(),
    json.dumps({**GOOD_RESULTS, "verdict": "mostly"}).encode(),
    json.dumps(GOOD_RESULTS).replace('"Checkout assistant"', '"bad \\ud800 name"').encode(),
], ids=["deep-json", "not-json", "not-utf8", "wrong-schema", "bad-verdict", "lone-surrogate"])
def test_report_refuses_what_is_not_a_results_document(tmp_path, content):
    (tmp_path / "results.json").write_bytes(content)
    ran = run_litmus(["report", "results.json", "--out", "reports"], cwd=tmp_path)
    assert "results.json" in refused(ran, "report")
    assert not (tmp_path / "reports").exists() or not any((tmp_path / "reports").iterdir())


def test_merge_and_report_say_when_they_cannot_write(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    good = results_file(tmp_path, "r.json")
    ran = run_litmus(["report", str(good), "--out", str(blocker / "reports")], cwd=tmp_path)
    # One clear line naming where it could not write (refused() checks exit 2 and no traceback).
    assert str(blocker / "reports") in refused(ran, "report")
    ran = run_litmus(["merge", str(good), "-o", str(blocker / "m.json")], cwd=tmp_path)
    assert str(blocker / "m.json") in refused(ran, "merge")


def action(tmp_path: Path, event: bytes | None, event_name: str = "pull_request", **inputs: str):
    workspace = tmp_path / "ws"
    (workspace / "probes").mkdir(parents=True, exist_ok=True)
    (workspace / "probes" / "s.yaml").write_text(
        "version: 1\nsuite: S\nflows:\n  - name: f\n    steps:\n      - name: s\n        request: {url: /x}\n")
    event_path = tmp_path / "event.json"
    if event is not None:
        event_path.write_bytes(event)
    done = litmus(workspace, "action", env={
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_PATH": str(event_path), "GITHUB_EVENT_NAME": event_name,
        "GITHUB_REPOSITORY": "acme/shop", "INPUT_BASE-URL": "http://127.0.0.1:9", "INPUT_COMMENT": "false",
        **{f"INPUT_{k.replace('_', '-').upper()}": v for k, v in inputs.items()}})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    (error,) = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert not (workspace / "litmus-report").exists()  # refused before anything ran
    return error


def event_with(change) -> bytes:
    event = json.loads((EVENTS / "pull_request.json").read_text())
    change(event)
    return json.dumps(event).encode()


@pytest.mark.parametrize("event, field", [
    (b"{not json", "not JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b"[]", "expected a JSON object"),
    (None, "cannot be read"),
    (event_with(lambda e: e.pop("pull_request")), "the payload"),
    (event_with(lambda e: e["pull_request"].update(number="42")), "pull_request.number"),
    (event_with(lambda e: e["pull_request"]["head"].update(sha=None)), "pull_request.head.sha"),
    (event_with(lambda e: e["pull_request"]["base"].update(sha="--output=/tmp/pwned")), "pull_request.base.sha"),
    (event_with(lambda e: e["pull_request"]["head"].update(sha="1" * 40 + "\n")), "pull_request.head.sha"),
], ids=["not-json", "not-utf8", "deep", "array", "missing-file", "no-pull_request", "number-as-text",
        "null-head-sha", "option-as-base-sha", "sha-with-newline"])
def test_the_action_refuses_an_event_it_cannot_use(tmp_path, event, field):
    error = action(tmp_path, event)
    assert "event file" in error and field in error


def test_a_deployment_status_without_the_deployed_commit_is_refused(tmp_path):
    event = json.loads((EVENTS / "deployment_status.json").read_text())
    event["deployment"]["sha"] = "main"
    error = action(tmp_path, json.dumps(event).encode(), event_name="deployment_status")
    assert "deployment.sha" in error


@pytest.mark.parametrize("value", ["nan", "-1", "1e9", "inf", "soon"])
def test_wait_timeout_must_be_a_sane_number_of_seconds(tmp_path, value):
    """Before, `nan` polled forever (no comparison with nan is ever true)."""
    error = action(tmp_path, (EVENTS / "push.json").read_bytes(), event_name="push", wait_for="/health",
                   wait_timeout=value)
    assert "wait-timeout" in error and repr(value) in error
