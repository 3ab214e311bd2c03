"""The curl of a multipart body, a body_file, a followed redirect and basic auth replays what the run
sent: run through the CLI against a real target, each step's curl (Debian's real `curl`, run from the
project root as the notes say) makes the target see the same parts, the same bytes, the same final
status and the same credentials, which the target checks."""

from __future__ import annotations

import base64
import email.parser
import email.policy
import shutil

import pytest
from report_fixtures import litmus_run, replay_curl

from litmus.report import findings as fd
from litmus.results import load_results
from support.target import Target

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed (apt-get install curl)")

USER, PASSWORD = "probe-user", "pa:ss 'w\"ord-9f3e"
# Bytes no text body holds: a NUL, invalid UTF-8, CR LF, a quote.
PAYLOAD = b"\x00\xff\xfe{\"order\": 1042}\r\n'\x80 end"

SUITE = """\
version: 1
suite: Bodies
flows:
  - name: Upload
    steps:
      - name: upload
        request:
          method: POST
          url: /upload
          multipart:
            title: "@not-a-file <neither"
            note: {value: "semi; colon \\"quoted\\" back\\\\slash", content_type: "text/plain; charset=utf-8"}
            attachment: {file: fixtures/report.bin, content_type: application/pdf, filename: "q3 \\"final\\".pdf"}
            raw: {file: fixtures/payload.bin}
        assertions:
          - {type: status_code, expected: 201}
  - name: Payload
    steps:
      - name: send
        request: {method: PUT, url: /payload, body_file: fixtures/payload.bin}
        assertions:
          - {type: status_code, expected: 201}
  - name: Moved
    steps:
      - name: follow
        request: {method: POST, url: /old, json: {n: 1}}
        assertions:
          - {type: body, contains: never}
  - name: Login
    steps:
      - name: me
        request:
          url: /me
          auth: {basic: {username: "{{ secrets.API_USER }}", password: "{{ secrets.API_PASS }}"}}
        assertions:
          - {type: json_path, path: $.user, expected: someone-else}
"""


def _parts(req) -> list[tuple]:
    """(name, filename, content type, bytes) of each part of a multipart request, in order."""
    head = f"Content-Type: {req.headers['Content-Type']}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + req.body)
    return [(p.get_param("name", header="content-disposition"), p.get_filename(), p.get("Content-Type"),
             p.get_payload(decode=True)) for p in message.iter_parts()]


def _me(req):
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    if req.headers.get("Authorization") != expected:
        return 401, {"Content-Type": "application/json"}, b'{"error": "bad credentials"}'
    return 200, {"Content-Type": "application/json"}, b'{"user": "probe-user"}'


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    project = tmp_path_factory.mktemp("bodies")
    (project / "probes" / "fixtures").mkdir(parents=True)
    (project / "probes" / "bodies.yaml").write_text(SUITE)
    (project / "probes" / "fixtures" / "payload.bin").write_bytes(PAYLOAD)
    (project / "probes" / "fixtures" / "report.bin").write_bytes(b"%PDF-1.7 " + bytes(range(256)))
    with Target() as target:
        target.route("/upload", lambda req: (200, {}, b"stored"))
        target.route("/payload", lambda req: (200, {}, b"stored"))
        target.route("/old", lambda req: (302, {"Location": "/new"}, b"moved"))
        target.route("/new", lambda req: (200, {"Content-Type": "text/plain"}, b"landed " + req.method.encode()))
        target.route("/me", _me)
        done, env = litmus_run(project, target.base_url, {"API_USER": USER, "API_PASS": PASSWORD})
        assert done.returncode == 1, done.stderr  # every step fails on purpose: each is a finding with its curl
        yield load_results(project / "out" / "results.json"), env, project, target


def _step(result, flow):
    (flow_run,) = [f for f in result.suites[0].flow_runs if f.flow == flow]
    return flow_run, flow_run.steps[0]


def _sent(target, path, since=0):
    return [r for r in target.requests[since:] if r.path == path]


def test_multipart_replays_the_same_parts(recorded):
    result, env, cwd, target = recorded
    flow_run, step = _step(result, "Upload")
    command = fd.step_curl(flow_run, step)
    assert "[multipart/form-data]" not in command and "--data-raw" not in command
    assert "# run from the repository root" in command
    before = len(target.requests)
    assert replay_curl(command, env, cwd) == (step.response.status, step.response.body)
    (by_litmus,), (by_curl,) = _sent(target, "/upload")[:1], _sent(target, "/upload", before)
    assert _parts(by_curl) == _parts(by_litmus)
    assert [p[0] for p in _parts(by_curl)] == ["title", "note", "attachment", "raw"]
    assert _parts(by_curl)[0][3] == b"@not-a-file <neither"  # text, never read as a file by curl
    assert _parts(by_curl)[3][3] == PAYLOAD


def test_body_file_replays_the_same_bytes(recorded):
    result, env, cwd, target = recorded
    flow_run, step = _step(result, "Payload")
    command = fd.step_curl(flow_run, step)
    assert "--data-binary @probes/fixtures/payload.bin" in command.replace("'", "")
    before = len(target.requests)
    assert replay_curl(command, env, cwd) == (step.response.status, step.response.body)
    (by_litmus,), (by_curl,) = _sent(target, "/payload")[:1], _sent(target, "/payload", before)
    assert by_curl.method == by_litmus.method == "PUT"
    assert by_curl.body == by_litmus.body == PAYLOAD


def test_a_followed_redirect_reaches_the_same_final_status(recorded):
    result, env, cwd, target = recorded
    flow_run, step = _step(result, "Moved")
    assert [r.status for r in step.response.redirects] == [302]
    command = fd.step_curl(flow_run, step)
    assert "-L --max-redirs 30" in command and "-X" not in command
    before = len(target.requests)
    # The run's POST became a GET at the 302 (as browsers and requests do); so does curl's.
    assert replay_curl(command, env, cwd) == (step.response.status, step.response.body) == (200, "landed GET")
    assert [(r.method, r.path) for r in target.requests[before:]] == [("POST", "/old"), ("GET", "/new")]


def test_basic_auth_reads_both_secrets_from_the_environment(recorded):
    result, env, cwd, _ = recorded
    flow_run, step = _step(result, "Login")
    command = fd.step_curl(flow_run, step)
    assert PASSWORD not in command and USER not in command and "Authorization" not in command
    assert "-u " in command and '"$API_USER"' in command and '"$API_PASS"' in command
    assert step.request.secrets == ["API_USER", "API_PASS"]
    status, body = replay_curl(command, env, cwd)
    assert (status, body) == (step.response.status, '{"user": "probe-user"}')  # the record masks the user
    without = {k: v for k, v in env.items() if k != "API_PASS"}
    assert replay_curl(command, without, cwd)[0] == 401  # the target checks what curl sent
