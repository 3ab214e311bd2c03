"""The secrets fuzz test: random secrets (1-64 characters of printable ASCII and newline) sent through
a raw URL, a query, a header, a cookie, a JSON body and a form; a real target on 127.0.0.1 echoes each
back raw and in every encoding (percent either case and with `/` kept, `+` form, base64, base64url,
JSON with `\\/` and `\\u003c`, repr, HTML). Nothing the run writes or prints holds a secret's encoded
form or any 5-character piece of it, and every verdict is that of the same run with a long random
secret.

A piece that the run with the long secret prints too (a word of the document's own text when the
secret is `passed`, `": "` or a run of digits) is no leak; digits are compared as 0 since timings and
sizes differ from run to run. Secrets of fewer than 5 characters are checked for verdicts and for
well-formed outputs only: a 1-character secret occurs in any text.

LITMUS_FUZZ_EXAMPLES raises the example count (see tests/support/fuzz.py).
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import json
import os
import random
import re
import string
from pathlib import Path
from urllib.parse import parse_qs, quote, quote_plus

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pipeline import REPORT_FILES, check_run

from litmus.cli import main
from support.fuzz import fuzz_settings
from support.target import Target

ALPHABET = "".join(chr(c) for c in range(32, 127)) + "\n"
PIECE = 5

SUITE = """version: 1
suite: Fuzz
flows:
  - name: echo
    steps:
      - name: json
        request:
          method: POST
          url: /json
          json: {token: "{{ secrets.TOK }}"}
        assertions:
          - {type: status_code, expected: 200}
          - {type: json_path, path: $.token, expected: "{{ secrets.TOK }}"}
          - {type: json_path, path: $.token, expected: "not it"}
          - {type: json_path, path: $.encoded, json_type: string}
      - name: text
        request:
          method: POST
          url: "/text?raw={{ secrets.TOK }}"
          query: {q: "{{ secrets.TOK }}"}
          form: {f: "{{ secrets.TOK }}"}
        extract:
          head: {regex: "^tok=([\\\\s\\\\S]*)"}
        assertions:
          - {type: contains, value: "{{ secrets.TOK }}"}
          - {type: not_contains, value: "{{ secrets.TOK }}"}
          - {type: json_path, path: $.x, expected: 1}
          - {type: extract_match, variable: head, expected: "not it"}
      - name: header
        request:
          url: /header
          headers: {X-Token: "{{ secrets.TOK }}", Cookie: "sid={{ secrets.TOK }}"}
        assertions:
          - {type: status_code, expected: 200}
          - {type: json_path, path: $.header, expected: "not it"}
"""


def encoded(value: str) -> list[str]:
    """The value as targets write it back."""
    escaped = json.dumps(value)[1:-1]
    return [
        value, quote(value, safe=""), re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), quote(value, safe="")),
        quote(value), quote_plus(value),
        base64.b64encode(value.encode()).decode(), base64.urlsafe_b64encode(value.encode()).decode(),
        escaped, escaped.replace("/", "\\/"), json.dumps(value, ensure_ascii=False)[1:-1],
        escaped.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"),
        repr(value)[1:-1], html.escape(value),
    ]


def _echo_json(req):
    token = req.json()["token"]
    lines = "\n".join(encoded(token))
    return 200, {"Content-Type": "application/json", "X-Echo": quote(token)}, \
        json.dumps({"token": token, "encoded": lines}).encode()


def _echo_text(req):
    form = parse_qs(req.body.decode(), keep_blank_values=True)
    values = [form["f"][0], *req.query.get("q", []), *req.query.get("raw", [])]
    body = "tok=" + values[0] + "\n" + "\n".join(e for v in values for e in encoded(v))
    return 200, {"Content-Type": "text/plain; charset=utf-8"}, body.encode()


def _echo_header(req):
    seen = f"{req.headers.get('X-Token')} / {req.headers.get('Cookie')}"
    return 200, {"Content-Type": "application/json"}, json.dumps({"header": seen, "all": encoded(seen)}).encode()


@pytest.fixture(scope="module")
def echo_target():
    with Target() as target:
        target.route("/json", _echo_json)
        target.route("/text", _echo_text)
        target.route("/header", _echo_header)
        yield target


def run_once(root: Path, base_url: str, secret: str) -> tuple[int, dict[str, str], dict]:
    """One in-process `litmus run` with TOK=secret: exit status, every byte printed and written, verdicts."""
    out = root / "out"
    stdout, stderr = io.StringIO(), io.StringIO()
    saved = os.environ.get("TOK")
    os.environ["TOK"] = secret
    cwd = Path.cwd()
    try:
        os.chdir(root)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(["run", "--out", "out", "--base-url", base_url, "--concurrency", "1"])
    finally:
        os.chdir(cwd)
        os.environ.pop("TOK") if saved is None else os.environ.__setitem__("TOK", saved)
    texts = {"stdout": stdout.getvalue(), "stderr": stderr.getvalue()}
    texts.update({p.name: p.read_text("utf-8", "replace") for p in sorted(out.iterdir())})
    assert sorted(texts) == sorted(["stdout", "stderr", "results.json", *REPORT_FILES])
    result = check_run(out)
    verdicts = {
        "suites": [s.verdict for s in result.suites],
        "steps": [(st.name, st.status) for s in result.suites for f in s.flow_runs for st in f.steps],
        "outcomes": [(o.type, o.line, o.status) for *_, o in result.iter_outcomes()],
    }
    return code, texts, verdicts


def long_secret_like(secret: str, rng: random.Random) -> str:
    """A long random secret that HTTP treats like `secret`: a header value cannot start with
    whitespace nor hold a newline, and a URL cannot hold a newline; the verdicts those cause stay."""
    core = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(48))
    lead = " " if secret[0].isspace() else ""
    return lead + core + ("\n" + core[:8] if "\n" in secret else "")


def leaks(secret: str, texts: dict[str, str], baseline: dict[str, str]) -> list[str]:
    def norm(text: str) -> str:
        return re.sub(r"\d", "0", text)

    reference = norm("\n".join(baseline.values()))
    pieces = set(encoded(secret)) | {secret[i:i + PIECE] for i in range(len(secret) - PIECE + 1)}
    return [f"{where}: {piece!r}" for where, text in texts.items() for piece in sorted(pieces)
            if norm(piece) in norm(text) and norm(piece) not in reference]


secrets = st.text(alphabet=ALPHABET, min_size=1, max_size=64)


@fuzz_settings(default_examples=12)
@given(secret=secrets)
@example(secret="error")
@example(secret="e")
@example(secret='pass word/1"+%2f')
@example(secret="tok=SUPERSECRET-Zq8xWv-7Kp2Rt9m&more#frag\n")
def test_no_secret_leaks_and_none_changes_a_verdict(tmp_path_factory, echo_target, secret):
    rng = random.Random(secret)
    baseline_secret = long_secret_like(secret, rng)
    root = tmp_path_factory.mktemp("fuzz")
    (root / "probes").mkdir()
    (root / "probes" / "fuzz.yaml").write_text(SUITE, encoding="utf-8")
    base_code, base_texts, base_verdicts = run_once(root, echo_target.base_url, baseline_secret)
    code, texts, verdicts = run_once(root, echo_target.base_url, secret)
    assert (code, verdicts) == (base_code, base_verdicts)
    assert code == 1  # the failing assertions failed: the run really compared the echoed secret
    if len(secret) >= PIECE:
        assert leaks(secret, texts, base_texts) == []
