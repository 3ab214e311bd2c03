"""`cookies:` and `auth: {digest: ...}` through `litmus run`, against targets that check what arrived:
the one Cookie header (the flow session's cookies kept), and a real RFC 7616 digest exchange whose
response hash the server computes itself."""

from __future__ import annotations

import hashlib
import json

import pytest
from requests.utils import parse_dict_header

from support.cli import litmus
from support.target import Target

SECRET = "sid-s3cr3t-4711"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "probes").mkdir()
    return tmp_path


def written(project) -> str:
    return "".join(p.read_text("utf-8") for p in (project / "litmus-report").iterdir() if p.is_file())


def results(project) -> dict:
    return json.loads((project / "litmus-report" / "results.json").read_text())


def _cookie_gate(request):
    """200 when the Cookie header carries the session cookie, else 403."""
    cookies = dict(part.split("=", 1) for part in request.headers.get("Cookie", "").split("; ") if part)
    return (200 if cookies.get("sid") == SECRET else 403), {"Content-Type": "text/plain"}, b"gate"


COOKIE_SUITE = """\
version: 1
suite: Cookies
variables: {{lang: en}}
flows:
  - name: f
    steps:
      - name: login
        request: {{url: /login}}
      - name: gated
        request:
          url: /gated
          cookies: {{sid: "{sid}", lang: "{{{{ lang }}}}"}}
        assertions: [{{type: status_code, expected: 200}}]
"""


def test_cookies_are_sent_in_one_header_with_the_session_cookies_and_a_secret_stays_masked(project):
    (project / "probes" / "s.yaml").write_text(COOKIE_SUITE.format(sid="{{ secrets.SID }}"))
    with Target() as target:
        target.route("/login", lambda req: (200, {"Set-Cookie": "server=from-jar; Path=/"}, b"ok"))
        target.route("/gated", _cookie_gate)
        done = litmus(project, "run", "--base-url", target.base_url, "--format", "markdown,html",
                      env={"SID": SECRET})
        cookie = target.requests[1].headers["Cookie"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(cookie.split("; ")) == sorted(["server=from-jar", f"sid={SECRET}", "lang=en"])
    # The header also holds the server's session cookie: masked whole, as every Cookie header the probe
    # did not build alone.
    assert SECRET not in done.stdout + done.stderr + written(project) and "from-jar" not in written(project)
    sent = results(project)["suites"][0]["flow_runs"][0]["steps"][1]["request"]
    assert "Cookie" in sent["probe_headers"] and sent["headers"]["Cookie"] == "***"


def test_a_cookie_header_the_probe_built_alone_keeps_its_shape_with_the_secret_masked(project):
    (project / "probes" / "s.yaml").write_text(COOKIE_SUITE.format(sid="{{ secrets.SID }}"))
    with Target() as target:
        target.route("/login", lambda req: (200, {}, b"ok"))
        target.route("/gated", lambda req: (418, {}, b"no"))
        done = litmus(project, "run", "--base-url", target.base_url, "--format", "markdown", env={"SID": SECRET})
    assert done.returncode == 1
    sent = results(project)["suites"][0]["flow_runs"][0]["steps"][1]["request"]
    assert sent["headers"]["Cookie"] == "sid=***; lang=en" and sent["secrets"] == ["SID"]
    assert """-H 'Cookie: sid='"$SID"'; lang=en'""" in written(project) and SECRET not in written(project)


def test_a_wrong_cookie_fails_the_step_and_a_rendered_semicolon_is_the_steps_error(project):
    (project / "probes" / "s.yaml").write_text(COOKIE_SUITE.format(sid="wrong"))
    with Target() as target:
        target.route("/login", lambda req: (200, {}, b"ok"))
        target.route("/gated", _cookie_gate)
        done = litmus(project, "run", "--base-url", target.base_url, "--format", "markdown")
        assert done.returncode == 1, done.stdout + done.stderr
        # The curl reproduction sends the header, masked like any Cookie header that holds no declared secret.
        assert "/gated -H 'Cookie: ***'" in written(project)
        (project / "probes" / "s.yaml").write_text(COOKIE_SUITE.format(sid="{{ env.INJECTED }}"))
        done = litmus(project, "run", "--base-url", target.base_url, "--format", "markdown",
                      env={"INJECTED": f"{SECRET}; admin=1"})
        assert done.returncode == 1
        assert all("admin" not in r.headers.get("Cookie", "") for r in target.requests)
    assert "renders to a value holding ';'" in written(project)


PASSWORD = "dig-s3cr3t-pass"
REALM = "litmus@127.0.0.1"


def _digest_gate(algorithm: str, verified: list[str]):
    """An RFC 7616 server: challenges with qop=auth and `algorithm`, and checks the client's response itself:
    response = H(H(user:realm:pass) : nonce : nc : cnonce : qop : H(method:uri)) (section 3.4.1)."""
    hash_name = {"SHA-256": "sha256", "MD5": "md5"}[algorithm]
    nonce = hashlib.sha256(algorithm.encode()).hexdigest()[:32]

    def h(text: str) -> str:
        return hashlib.new(hash_name, text.encode()).hexdigest()

    def gate(request):
        given = request.headers.get("Authorization", "")
        if given.startswith("Digest "):
            fields = parse_dict_header(given[len("Digest "):])
            ha1 = h(f"{fields['username']}:{REALM}:{PASSWORD}")
            ha2 = h(f"{request.method}:{fields['uri']}")
            expected = h(f"{ha1}:{nonce}:{fields['nc']}:{fields['cnonce']}:auth:{ha2}")
            if fields.get("algorithm") == algorithm and fields.get("qop") == "auth" and fields["nonce"] == nonce \
                    and fields["realm"] == REALM and fields["username"] == "probe" and fields["response"] == expected:
                verified.append(algorithm)
                return 200, {"Content-Type": "text/plain"}, b"welcome"
        challenge = f'Digest realm="{REALM}", qop="auth", nonce="{nonce}", algorithm={algorithm}, opaque="xyz"'
        return 401, {"WWW-Authenticate": challenge, "Content-Type": "text/plain"}, b"who are you?"

    return gate


DIGEST_SUITE = """\
version: 1
suite: Digest
flows:
  - name: f
    steps:
      - name: sha256
        request: {{url: /sha256, auth: {{digest: {{username: probe, password: "{password}"}}}}}}
        assertions: [{{type: status_code, expected: 200}}, {{type: body, expected: welcome}}]
      - name: md5
        request: {{url: /md5, auth: {{digest: {{username: probe, password: "{password}"}}}}}}
        assertions: [{{type: status_code, expected: 200}}]
"""


def test_digest_auth_answers_sha256_and_md5_challenges_and_masks_the_password(project):
    (project / "probes" / "s.yaml").write_text(DIGEST_SUITE.format(password="{{ secrets.DIGEST_PASS }}"))
    verified: list[str] = []
    with Target() as target:
        target.route("/sha256", _digest_gate("SHA-256", verified))
        target.route("/md5", _digest_gate("MD5", verified))
        done = litmus(project, "run", "--base-url", target.base_url, "--format", "markdown,html,sarif,junit",
                      env={"DIGEST_PASS": PASSWORD})
    assert done.returncode == 0, done.stdout + done.stderr
    assert verified == ["SHA-256", "MD5"]
    assert PASSWORD not in done.stdout + done.stderr + written(project)
    sent = results(project)["suites"][0]["flow_runs"][0]["steps"][0]["request"]
    assert sent["digest_auth"] == {"username": "probe", "password": "***"} and sent["secrets"] == ["DIGEST_PASS"]


def test_a_wrong_digest_password_fails_and_the_curl_answers_the_challenge_with_digest(project):
    (project / "probes" / "s.yaml").write_text(DIGEST_SUITE.format(password="not-the-password"))
    verified: list[str] = []
    with Target() as target:
        target.route("/sha256", _digest_gate("SHA-256", verified))
        target.route("/md5", _digest_gate("MD5", verified))
        done = litmus(project, "run", "--base-url", target.base_url, "--format", "markdown")
        answered = [r for r in target.requests if r.headers.get("Authorization", "").startswith("Digest ")]
    assert done.returncode == 1, done.stdout + done.stderr
    assert verified == [] and len(answered) == 2  # each challenge answered once, refused, not retried
    report = written(project)
    assert "--digest -u 'probe:***'" in report and "not-the-password" not in report + done.stdout


def test_a_redirect_to_another_origin_carries_neither_the_cookies_nor_a_digest_answer(project):
    """The attacker's origin (`localhost`, another host than the target's 127.0.0.1) challenges for digest
    and records what arrives: the probe's secret cookie and a hash of the password must not."""
    (project / "probes" / "s.yaml").write_text("""\
version: 1
suite: Redirected
flows:
  - name: f
    steps:
      - name: away
        request:
          url: /away
          cookies: {sid: "{{ secrets.SID }}"}
          auth: {digest: {username: probe, password: "{{ secrets.DIGEST_PASS }}"}}
        assertions: [{type: status_code, expected: 200}]
""")
    verified: list[str] = []
    with Target() as target, Target() as elsewhere:
        elsewhere.route("/loot", _digest_gate("SHA-256", verified))
        target.route("/away", lambda req: (302, {"Location": f"http://localhost:{elsewhere.port}/loot"}, b""))
        done = litmus(project, "run", "--base-url", target.base_url, "--format", "markdown",
                      env={"SID": SECRET, "DIGEST_PASS": PASSWORD})
        assert target.requests[0].headers["Cookie"] == f"sid={SECRET}"
        arrived = elsewhere.requests
    assert done.returncode == 1, done.stdout + done.stderr  # the other origin's 401 is the answer
    assert len(arrived) == 1 and "Cookie" not in arrived[0].headers and "Authorization" not in arrived[0].headers
