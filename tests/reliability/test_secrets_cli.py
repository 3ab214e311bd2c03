"""Secrets through `litmus run`, as a user starts it: a secret never changes a verdict nor breaks an
output, whatever its value; its encodings, the fragments cuts leave of it, and session cookies never
reach the terminal or a file."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote, unquote_plus

import pytest
from pipeline import check_run, files_under, run_litmus, write_suite

from litmus.run.redact import encodings
from support.server import refused_port


def outputs(ran, out: Path) -> dict[str, str]:
    found = {"stdout": ran.stdout.decode("utf-8", "replace"), "stderr": ran.stderr.decode("utf-8", "replace")}
    found.update({str(p): p.read_text("utf-8", "replace") for p in files_under(out)})
    return found


def leaks(texts: dict[str, str], secret: str, fragment: int = 5) -> list[str]:
    """Where a form of the secret, or a piece of it of `fragment` characters, was written. A piece that
    the reports' own fixed text holds (`pass threshold`, a script's `words`) is not a leak of it."""
    pieces = {secret[i:i + fragment] for i in range(len(secret) - fragment + 1)} - _report_text_pieces(fragment)
    pieces |= encodings(secret)
    return [f"{where}: {piece!r}" for where, text in texts.items() for piece in pieces if piece in text]


def _report_text_pieces(fragment: int) -> set[str]:
    """Every `fragment`-character piece of the reports rendered from the fixed test results (no secrets)."""
    from litmus.report import FORMATS, render
    from litmus.results import load_results

    fixture = load_results(Path(__file__).parents[1] / "report" / "results.json")
    text = "\n".join(render(name, fixture) for name in FORMATS)
    return {text[i:i + fragment] for i in range(len(text) - fragment + 1)}


REFUSED = """version: 1
suite: Refused
base_url: http://127.0.0.1:{port}
flows:
  - name: call
    steps:
      - name: send
        request:
          url: /x
          headers: {{X-Token: "{{{{ secrets.TOK }}}}"}}
        assertions:
          - {{type: status_code, expected: 200}}
"""


@pytest.mark.parametrize("secret", ["error", "fail", "failed", "a", "e", "status", "code", "passed", "x",
                                    "a-long-secret-value-0123456789"])
def test_a_secret_never_turns_a_refused_connection_into_a_pass(tmp_path, secret):
    with refused_port() as port:
        write_suite(tmp_path, "refused.yaml", REFUSED.format(port=port))
        ran = run_litmus(["run", "--out", "out"], cwd=tmp_path, env={"TOK": secret})
    assert ran.code == 1, ran.output
    assert "0 of 1 suite passed" in ran.stdout.decode()
    result = check_run(tmp_path / "out")
    step = result.suites[0].flow_runs[0].steps[0]
    assert (result.verdict, step.status, step.assertions[0].status) == ("failed", "error", "skipped")
    warnings = [line for line in ran.stderr.decode().splitlines() if line.startswith("warning: secret TOK")]
    assert len(warnings) == (1 if len(secret) < 4 else 0), ran.output


ENCODED = """version: 1
suite: Encoded
flows:
  - name: echo
    steps:
      - name: url
        request:
          url: "/json?key={{ secrets.TOK }}"
        assertions:
          - {type: status_code, expected: 201}
          - {type: json_path, path: $.echo, expected: "other"}
          - {type: contains, value: "absent"}
"""


@pytest.mark.parametrize("secret", ["pass word/1", "sl/ash%2fcase", "new\\/line\u00e9<&>'\""])
def test_a_secret_in_the_url_is_masked_in_the_form_the_url_carries_it(tmp_path, target, secret):
    def echo(req):
        value = req.query["key"][0]
        body = json.dumps({"echo": value, "lower": quote(value, safe="").lower(),
                           "url": f"{req.path}?key={quote(value)}"})
        # As PHP writes JSON: `/` escaped as `\/`.
        body = body[:-1] + ', "escaped": ' + json.dumps(value).replace("/", "\\/") + "}"
        return 200, {"Content-Type": "application/json", "Location": f"/next?key={quote(value)}"}, body.encode()

    target.route("/json", echo)
    write_suite(tmp_path, "encoded.yaml", ENCODED)
    ran = run_litmus(["run", "--out", "out", "--base-url", target.base_url], cwd=tmp_path,
                     env={"TOK": secret})
    assert ran.code == 1, ran.output
    # It really went out, as far as a raw secret in a URL goes: `&` ends the value.
    assert target.requests[0].query["key"] == [unquote_plus(secret.split("&")[0])]
    check_run(tmp_path / "out")
    assert leaks(outputs(ran, tmp_path / "out"), secret) == []


SECRET = "SUPERSECRET-Zq8xWv-7Kp2Rt9m"
CUT = """version: 1
suite: Cut
flows:
  - name: cuts
    steps:
      - name: description
        request: {url: /text}
        assertions:
          - {type: json_path, path: $.a, expected: 1}
          - {type: contains, value: "absent"}
          - {type: not_contains, value: "needle"}
      - name: preview
        request: {url: /text}
        assertions:
          - {type: contains, value: "%s tok={{ secrets.TOK }} and more"}
      - name: excerpt
        request: {url: /long}
        extract:
          tail: {regex: "(x{1000}tok=.*)"}
        assertions:
          - {type: status_code, expected: 201}
          - {type: extract_match, variable: tail, expected: "x"}
""" % ("p" * 60)


def test_fragments_of_a_secret_left_by_cuts_are_masked(tmp_path, target):
    # The secret straddles the 60-byte body description, the 80-character preview, the not_contains
    # window, the 4 KiB excerpt and the 1 KiB bound of an extracted value.
    target.text("/text", "a" * 50 + f"tok={SECRET} " + "b" * 20 + " needle " + f"{SECRET} trailing")
    target.text("/long", "x" * (4096 - 8) + f"tok={SECRET}" + "y" * 100)
    write_suite(tmp_path, "cut.yaml", CUT)
    ran = run_litmus(["run", "--out", "out", "--base-url", target.base_url], cwd=tmp_path,
                     env={"TOK": SECRET})
    assert ran.code == 1, ran.output
    result = check_run(tmp_path / "out")
    statuses = [o.status for *_, o in result.iter_outcomes()]
    assert statuses == ["error", "failed", "failed", "failed", "failed", "failed"]
    texts = outputs(ran, tmp_path / "out")
    assert leaks(texts, SECRET) == []
    assert "tok=***" in texts[str(tmp_path / "out" / "results.json")]


COOKIES = """version: 1
suite: Cookies
flows:
  - name: login
    steps:
      - name: login
        request: {url: /login}
        extract:
          c: {header: Set-Cookie}
        assertions:
          - {type: json_path, path: $.echo, expected: "nothing"}
      - name: reuse
        request:
          url: /echo
          headers: {X-Session: "{{ c }}"}
        assertions:
          - {type: extract_match, variable: c, expected: "x"}
          - {type: json_path, path: $.seen, expected: "nothing"}
"""


def test_session_cookies_and_extracted_cookie_headers_are_masked(tmp_path, target):
    session, secure = "sess-4f9a1c77e2", "csrf-b81d0c3a95"

    def login(req):
        body = json.dumps({"echo": f"your session is {session}, token {secure}"}).encode()
        return 200, {"Content-Type": "application/json",
                     "Set-Cookie": f"sid={session}; Path=/; HttpOnly"}, body

    def echo(req):
        seen = f"{req.headers.get('X-Session')} / {req.headers.get('Cookie')}"
        return 200, {"Content-Type": "application/json"}, json.dumps({"seen": seen}).encode()

    target.route("/login", login)
    target.route("/echo", echo)
    write_suite(tmp_path, "cookies.yaml", COOKIES)
    ran = run_litmus(["run", "--out", "out", "--base-url", target.base_url, "-v"], cwd=tmp_path)
    assert ran.code == 1, ran.output
    assert session in target.requests[1].headers["X-Session"]  # the value really was extracted and sent
    check_run(tmp_path / "out")
    texts = outputs(ran, tmp_path / "out")
    assert leaks(texts, session) == []
    assert any(secure in text for text in texts.values())  # not a cookie: not a secret
