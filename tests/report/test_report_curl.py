"""The "Reproduce with curl" command replays the request: run through the CLI against a real target,
then each step's curl (Debian's real `curl`) gets the same status and body the run recorded.

Covers a GET whose target gzips (so `--compressed` must be there), a JSON POST with a secret header
(the secret is `"$API_TOKEN"`, read from the environment of the shell running the command), and a
cookie flow (the second step only succeeds with the cookie the first one set).
"""

from __future__ import annotations

import gzip
import json
import shutil

import pytest
from report_fixtures import litmus_run, replay_curl

from litmus.report import findings as fd
from litmus.results import load_results
from support.target import Target

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed (apt-get install curl)")

TOKEN = "tok-5e1b-curl-secret"
SESSION = "sess-42"

SUITE = """\
version: 1
suite: Replay
pass_threshold: 100
flows:
  - name: Catalogue
    steps:
      - name: list
        request: {url: /items, headers: {X-Trace: "abc 'quoted' $HOME"}}
        assertions:
          - {type: status_code, expected: 201}
  - name: Chat
    steps:
      - name: ask
        request:
          method: POST
          url: /chat
          headers: {Authorization: "Bearer {{ secrets.API_TOKEN }}"}
          json: {message: "Where is order 1042? It's late"}
        assertions:
          - {type: json_path, path: $.reply, expected: "no"}
  - name: Session
    steps:
      - name: login
        request: {method: POST, url: /login, form: {user: probe}}
      - name: me
        request: {url: /me}
        assertions:
          - {type: json_path, path: $.user, expected: someone-else}
"""


def _items(req):
    body = json.dumps({"items": [1, 2, 3]}).encode()
    if "gzip" in req.headers.get("Accept-Encoding", ""):
        return 200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, gzip.compress(body)
    return 200, {"Content-Type": "application/json"}, body


def _chat(req):
    if req.headers.get("Authorization") != f"Bearer {TOKEN}":
        return 401, {"Content-Type": "application/json"}, b'{"error": "bad token"}'
    reply = json.dumps({"reply": f"you said {req.json()['message']}"})
    return 200, {"Content-Type": "application/json"}, reply.encode()


def _me(req):
    if f"session={SESSION}" not in req.headers.get("Cookie", ""):
        return 401, {"Content-Type": "application/json"}, b'{"error": "no session"}'
    return 200, {"Content-Type": "application/json"}, b'{"user": "probe"}'


@pytest.fixture
def recorded(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "replay.yaml").write_text(SUITE)
    with Target() as target:
        target.route("/items", _items)
        target.route("/chat", _chat)
        target.route("/login", lambda req: (200, {"Content-Type": "application/json",
                                                  "Set-Cookie": f"session={SESSION}; Path=/"}, b'{"ok": true}'))
        target.route("/me", _me)
        done, env = litmus_run(tmp_path, target.base_url, {"API_TOKEN": TOKEN}, "--format", "markdown")
        assert done.returncode == 1, done.stderr  # the probes fail on purpose: every step is a finding
        result = load_results(tmp_path / "out" / "results.json")
        yield result, env, tmp_path, target


def _steps(result, flow):
    (flow_run,) = [f for f in result.suites[0].flow_runs if f.flow == flow]
    return flow_run, flow_run.steps


def test_get_replays_with_compressed_and_only_the_probes_headers(recorded):
    result, env, cwd, target = recorded
    flow_run, (step,) = _steps(result, "Catalogue")
    command = fd.step_curl(flow_run, step)
    assert "--compressed" in command
    assert "python-requests" not in command and "Accept-Encoding" not in command
    before = len(target.requests)
    assert replay_curl(command, env, cwd) == (step.response.status, step.response.body)
    assert target.requests[before].headers["X-Trace"] == "abc 'quoted' $HOME"  # quoted, not expanded


def test_json_post_with_a_secret_header_reads_the_secret_from_the_environment(recorded):
    result, env, cwd, _ = recorded
    flow_run, (step,) = _steps(result, "Chat")
    command = fd.step_curl(flow_run, step)
    assert TOKEN not in command and '"$API_TOKEN"' in command
    assert step.request.secrets == ["API_TOKEN"]
    status, body = replay_curl(command, env, cwd)
    assert (status, body) == (200, step.response.body)
    assert (status, body) == (step.response.status, step.response.body)
    without = {k: v for k, v in env.items() if k != "API_TOKEN"}
    assert replay_curl(command, without, cwd)[0] == 401  # the secret really comes from the environment


def test_cookie_flow_replays_through_a_shared_cookie_jar(recorded):
    result, env, cwd, _ = recorded
    flow_run, (login, me) = _steps(result, "Session")
    first, second = fd.step_curl(flow_run, login), fd.step_curl(flow_run, me)
    assert "-c cookies.txt" in first and "-b cookies.txt -c cookies.txt" in second
    assert "Cookie" not in second.splitlines()[0]  # the jar sends it, not a recorded (masked) header
    assert replay_curl(first, env, cwd) == (login.response.status, login.response.body)
    assert replay_curl(second, env, cwd) == (me.response.status, me.response.body) == (200, '{"user": "probe"}')


def test_the_comment_shows_the_same_commands(recorded):
    result, _, cwd, _ = recorded
    comment = (cwd / "out" / "comment.md").read_text("utf-8")
    for flow_run in result.suites[0].flow_runs:
        for step in flow_run.steps:
            if any(o.status == "failed" for o in step.assertions):
                assert fd.step_curl(flow_run, step) in comment
