"""setup, teardown and serial through `litmus run`, against a stateful target on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time

import pytest

from litmus.cli import main
from litmus.results import load_results
from support.cli import start_litmus
from support.target import Target

# Flow "create" adds an item (slowly); flow "list" expects to see it. Run concurrently, "list" runs
# before "create" has finished; serial runs them in file order.
CREATE_THEN_LIST = """\
version: 1
suite: Items
serial: {serial}
setup:
  - name: log in
    request: {{method: POST, url: /login}}
    extract: {{token: {{json_path: $.token}}}}
    assertions: [{{type: status_code, expected: 200}}]
teardown:
  - name: clean up
    request: {{method: DELETE, url: "/items?token={{{{ setup.token | urlencode }}}}"}}
    assertions: [{{type: status_code, expected: 204}}]
flows:
  - name: create
    steps:
      - name: add
        request: {{method: POST, url: /items, headers: {{X-Token: "{{{{ setup.token }}}}"}}, json: {{name: widget}}}}
        assertions: [{{type: status_code, expected: 201}}]
  - name: list
    steps:
      - name: list
        request: {{url: /items, headers: {{X-Token: "{{{{ setup.token }}}}"}}}}
        assertions: [{{type: json_path, path: $.items, length: 1}}]
"""


class Store:
    def __init__(self, target: Target) -> None:
        self.items: list = []
        self.logins = 0
        self.cleanups = 0
        self.create_seconds = 0.15
        self.lock = threading.Lock()
        target.route("/login", self.login)
        target.route("/items", self.handle)

    def login(self, req):
        with self.lock:
            self.logins += 1
        return 200, {"Content-Type": "application/json"}, json.dumps({"token": "tok/1 2"}).encode()

    def handle(self, req):
        if req.method == "POST":
            assert req.headers["X-Token"] == "tok/1 2"
            time.sleep(self.create_seconds)
            with self.lock:
                self.items.append(req.json())
            return 201, {}, b""
        if req.method == "DELETE":
            with self.lock:
                self.cleanups += 1
                self.items.clear()
            return (204 if req.query == {"token": ["tok/1 2"]} else 400), {}, b""
        with self.lock:
            body = json.dumps({"items": list(self.items)}).encode()
        return 200, {"Content-Type": "application/json"}, body


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probes").mkdir()
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for name in [n for n in os.environ if n.startswith("LITMUS_")]:
        monkeypatch.delenv(name)
    with Target() as target:
        yield tmp_path, target, Store(target)


def findings(tmp_path) -> int:
    result = load_results(tmp_path / "litmus-report" / "results.json")
    return sum(o.status != "passed" for *_, o in result.iter_outcomes())


def test_serial_create_then_list_has_no_spurious_findings_over_20_runs(project):
    tmp_path, target, store = project
    (tmp_path / "probes" / "items.yaml").write_text(CREATE_THEN_LIST.format(serial="true"))
    spurious = 0
    for run in range(20):
        code = main(["run", "--base-url", target.base_url, "--concurrency", "8", "--format", "summary", "-q"])
        spurious += findings(tmp_path)
        assert code == 0, run
        assert (store.logins, store.cleanups) == (run + 1, run + 1)  # setup once, teardown once, each run
    assert spurious == 0
    result = load_results(tmp_path / "litmus-report" / "results.json")
    suite = result.suites[0]
    assert [s.name for s in suite.setup] == ["log in"] and suite.setup[0].extracted == {"token": "tok/1 2"}
    assert [s.status for s in suite.teardown] == ["passed"]


def test_without_serial_the_same_suite_races(project):
    tmp_path, target, store = project
    (tmp_path / "probes" / "items.yaml").write_text(CREATE_THEN_LIST.format(serial="false"))
    store.create_seconds = 1.0  # plenty for "list" to start meanwhile, even on a loaded machine
    assert main(["run", "--base-url", target.base_url, "--concurrency", "8", "--format", "summary", "-q"]) == 1
    assert findings(tmp_path) == 1  # list ran while create was still adding


def test_a_failing_setup_skips_the_flow_runs_fails_the_suite_and_still_tears_down(project, capsys):
    tmp_path, target, store = project
    (tmp_path / "probes" / "items.yaml").write_text(
        CREATE_THEN_LIST.format(serial="true").replace("expected: 200}]\nteardown", "expected: 418}]\nteardown"))
    assert main(["run", "--base-url", target.base_url, "--format", "summary"]) == 1
    assert "probes/items.yaml:8:18 setup › log in › status_code" in capsys.readouterr().out
    result = load_results(tmp_path / "litmus-report" / "results.json")
    suite = result.suites[0]
    assert suite.verdict == "failed" and suite.setup[0].status == "failed"
    assert [run.flow for run in suite.flow_runs] == ["create", "list"]
    for flow_run in suite.flow_runs:
        assert all(step.status == "skipped" for step in flow_run.steps)
        assert "setup step 'log in'" in flow_run.intent_evaluation.reason
    assert store.items == [] and store.cleanups == 1
    assert [r.method for r in target.requests] == ["POST", "DELETE"]  # no flow run sent anything


def test_setup_values_are_checked_at_load(project, capsys):
    tmp_path, target, store = project
    (tmp_path / "probes" / "items.yaml").write_text(
        CREATE_THEN_LIST.format(serial="true").replace('"{{ setup.token }}"}, json', '"{{ setup.tokn }}"}, json'))
    assert main(["run", "--base-url", target.base_url]) == 2
    err = capsys.readouterr().err
    assert "probes/items.yaml:17:66:" in err and "setup extracts no 'tokn'" in err and "did you mean 'token'" in err
    assert target.requests == []


SLOW = """\
version: 1
suite: Slow
teardown:
  - name: clean up
    request: {method: DELETE, url: /items}
flows:
  - name: f
    runs: 4
    steps:
      - {name: slow, request: {url: /slow}}
"""


@pytest.mark.timing  # a signal once the run is under way
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_teardown_runs_after_an_interruption(project, signum, code):
    tmp_path, target, store = project
    (tmp_path / "probes" / "slow.yaml").write_text(SLOW)
    target.route("/slow", lambda req: time.sleep(0.5) or (200, {}, b"ok"))
    proc = start_litmus(tmp_path, "run", "--base-url", target.base_url, "--concurrency", "1", "--format", "summary",
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not target.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert store.cleanups == 1
    result = load_results(tmp_path / "litmus-report" / "results.json")
    assert result.run.interrupted and len(result.suites[0].flow_runs) < 4
    assert [s.status for s in result.suites[0].teardown] == ["passed"]


def test_a_suite_with_nothing_to_run_here_runs_no_setup_or_teardown(project):
    tmp_path, target, store = project
    (tmp_path / "probes" / "items.yaml").write_text(CREATE_THEN_LIST.format(serial="true"))
    (tmp_path / "probes" / "other.yaml").write_text(
        "version: 1\nsuite: Other\nflows: [{name: ping, steps: [{name: s, request: {url: /login, method: POST}}]}]\n")
    assert main(["run", "--base-url", target.base_url, "--flow", "ping", "--format", "summary", "-q"]) == 0
    assert (store.logins, store.cleanups) == (1, 0)  # only Other's ping; Items planned nothing


def test_a_failed_setup_fails_the_suite_even_at_pass_threshold_0_and_after_merging_shards(project):
    tmp_path, target, store = project
    text = CREATE_THEN_LIST.format(serial="false").replace("expected: 200}]\nteardown", "expected: 418}]\nteardown")
    (tmp_path / "probes" / "items.yaml").write_text(text.replace("suite: Items\n", "suite: Items\npass_threshold: 0\n"))
    for k in (1, 2):
        assert main(["run", "--base-url", target.base_url, "--shard", f"{k}/2", "--out", f"shard-{k}",
                     "--format", "summary", "-q"]) == 1
    assert main(["merge", "shard-1/results.json", "shard-2/results.json", "-o", "merged.json"]) in (0, 1)
    merged = load_results(tmp_path / "merged.json")
    (suite,) = merged.suites
    assert suite.verdict == "failed" and merged.verdict == "failed"
    assert [s.name for s in suite.setup] == ["log in", "log in"]  # each shard logged in once
    assert store.logins == 2 and store.cleanups == 2
