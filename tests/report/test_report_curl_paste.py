"""Attack 3: a results.json a workflow downloaded (`litmus report`, `merge:`) is not ours, and its curl
commands are meant to be pasted into a shell. Every curl of every format that carries one (comment,
summary, HTML, JUnit) is pasted into real `bash` with `curl` a recording stub on PATH (so nothing is
sent): nothing the document holds runs, and the stub gets exactly the request the document records,
each secret read from the variable the command's notes name for it.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest
from report_fixtures import RESULTS

from litmus.results import MASK
from support.cli import litmus

# Each of these would run `touch` (or redirect into a file) if it reached the shell unquoted.
HOSTILE = ["$(touch pwned-1)", "`touch pwned-2`", "'; touch pwned-3; '", '"; touch pwned-4; "',
           "\ntouch pwned-5\n", "; >pwned-6", "\\'$(touch pwned-7)\\", "$HOME ${IFS} !!"]
SECRET_NAMES = ["X$(touch pwned-name)", "MY-KEY", "A\ntouch pwned-name-2\u2028B", "API_TOKEN",
                "`touch pwned-name-3`"]


# What tells each step's curl apart (the first step's url, the second's, the third's, the fourth's).
STEP_MARKERS = ["shop.example.com/chat", "--url", "upload.example.com", "file.example.com"]


def _hostile_document() -> dict:
    data = json.loads(RESULTS.read_text("utf-8"))
    suite = data["suites"][0]
    data["suites"], suite["flow_runs"] = [suite], suite["flow_runs"][:1]
    flow_run = suite["flow_runs"][0]
    step = flow_run["steps"][0]
    first = step["request"]
    first["method"] = "POST'; >PWNED-METHOD; '"  # upper-cased by the curl: a redirect needs no command name
    first["url"] = f"https://shop.example.com/chat?a={HOSTILE[0]}&k={MASK}&b={HOSTILE[1]}&m={MASK}"
    first["headers"] = {f"X-Evil{HOSTILE[2]}": "ignored", "X-Quote": HOSTILE[2] + MASK + HOSTILE[3],
                        "X-Lines": HOSTILE[4] + HOSTILE[5], "Authorization": f"Bearer {MASK}",
                        "@/etc/passwd": "would read a file"}
    first["probe_headers"] = list(first["headers"])
    first["body"] = json.dumps({"m": HOSTILE[6], "n": HOSTILE[7]}) + MASK + "\n```\n</pre>" + MASK
    first["secrets"] = SECRET_NAMES[:4] + SECRET_NAMES[:2]  # the body repeats the first two
    second = json.loads(json.dumps(step))
    second["name"] = "follow"
    second["request"] = {"method": "GET", "url": f"-o{HOSTILE[0]}", "headers": {"X-S": MASK},
                         "probe_headers": ["X-S"], "secrets": [SECRET_NAMES[4]]}
    # The request record's curl-only fields: parts, a body file, basic auth, a redirect limit.
    third = json.loads(json.dumps(step))
    third["name"] = "upload"
    third["request"] = {
        "method": "POST", "url": "https://upload.example.com/u", "headers": {}, "probe_headers": [],
        "max_redirects": 30, "secrets": SECRET_NAMES[:3] + [SECRET_NAMES[3]],
        "multipart": [
            {"name": "plain", "value": f"@/etc/passwd {HOSTILE[0]} {MASK}"},
            {"name": "typed", "value": f'{HOSTILE[3]} \\ ;type=x {MASK}', "content_type": "text/plain; charset=utf-8"},
            {"name": "file", "file": f"fixtures/{HOSTILE[2]}\".pdf", "filename": f"{HOSTILE[1]}\";type=x",
             "content_type": "application/pdf"},
            {"name": "a=b", "value": "a name curl cannot send"},
            {"name": "t", "value": "v", "content_type": "text/plain;headers=@/etc/passwd"},
            {"name": "key", "file": "/home/me/.ssh/id_rsa", "filename": "k", "content_type": "text/plain"},
            {"name": "git", "file": "sub/.git/config", "filename": "c", "content_type": "text/plain"},
        ],
        "basic_auth": {"username": f"{MASK}{HOSTILE[4]}", "password": MASK}}
    fourth = json.loads(json.dumps(step))
    fourth["name"] = "file"
    fourth["request"] = {"method": "PUT", "url": "https://file.example.com/f", "headers": {}, "probe_headers": [],
                         "body_file": "../../etc/shadow", "secrets": []}
    flow_run["steps"] = [step, second, third, fourth]
    return data


def _expected(request: dict, step_index: int, values: dict[str, str]) -> list[str]:
    """The arguments the document's request means: its words, each mask the value of its secret."""
    secrets = iter(request["secrets"])

    def fill(text: str) -> str:
        return re.sub(re.escape(MASK), lambda _: values[next(secrets)], text)

    jar = ["-b", "cookies.txt", "-c", "cookies.txt"] if step_index else ["-c", "cookies.txt"]
    follow = ["-L", "--max-redirs", str(request["max_redirects"])] if request.get("max_redirects") else []
    method = [] if request["method"] == "GET" or (follow and request["method"] == "POST") else [
        "-X", request["method"].upper()]
    url = fill(request["url"])
    headers = []
    for name in request["probe_headers"]:
        header = fill(f"{name}: {request['headers'][name]}")
        if re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
            headers += ["-H", header]
    body = ["--data-raw", fill(request["body"])] if request.get("body") is not None else []
    if request.get("body_file") is not None:
        body = []  # outside the repository: left out
    if request.get("multipart") is not None:
        body = []
        for part in request["multipart"]:
            if part["name"] in ("a=b", "t", "key", "git"):
                continue  # left out: curl cannot send it as recorded, or the file is not the repository's
            if part.get("file"):
                body += ["-F", fill(f'{part["name"]}=@{_quoted(part["file"])};filename={_quoted(part["filename"])}'
                                    f';type={part["content_type"]}')]
            elif part.get("content_type"):
                body += ["-F", fill(f'{part["name"]}={_quoted(part["value"])};type={part["content_type"]}')]
            else:
                body += ["--form-string", fill(f'{part["name"]}={part["value"]}')]
    auth = request.get("basic_auth")
    login = ["-u", fill(f'{auth["username"]}:{auth["password"]}')] if auth else []
    return [*jar, *follow, *method, *([url] if url.startswith("https://") else ["--url", url]), *headers, *body,
            *login]


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _curls_in_markdown(text: str) -> list[str]:
    return [m.group(2) for m in re.finditer(r"(`{3,})sh\n(.*?)\n\1(?!`)", text, re.DOTALL)]


def _curls_in_html(text: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(r"<h4>Reproduce with curl</h4><pre>(.*?)</pre>", text, re.DOTALL)]


def _curls_in_junit(text: str) -> list[str]:
    bodies = [element.text or "" for element in ET.fromstring(text).iter() if element.tag in ("failure", "error")]
    return [body.split("\nreproduce:\n", 1)[1] for body in bodies if "\nreproduce:\n" in body]


@pytest.fixture
def stub_path(tmp_path):
    """A `curl` on PATH that records its arguments (NUL-separated) and sends nothing."""
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "curl").write_text("#!/bin/bash\n"
                               "printf '%s\\0' \"$@\" > \"$CURL_RECORD\"\n"
                               "echo call >> \"$CURL_RECORD.calls\"\n")
    (stub / "curl").chmod(0o755)
    return f"{stub}:{os.environ['PATH']}"


def _paste(command: str, cwd, path: str, values: dict[str, str]) -> list[str]:
    """`command` typed into bash as a user pastes it; the arguments curl received."""
    record = cwd / "record"
    env = {"PATH": path, "HOME": str(cwd), "CURL_RECORD": str(record), **values}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-s"], input=command + "\n", cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=30)
    assert (cwd / "record.calls").read_text() == "call\n", "one curl per command, nothing else"
    arguments = record.read_bytes().decode().split("\0")[:-1]
    record.unlink()
    (cwd / "record.calls").unlink()
    assert done.returncode == 0, done.stderr
    return arguments


def _variables(command: str) -> dict[str, str]:
    """Each secret's variable, as the command's notes name it (an identifier name is its own)."""
    named = {json.loads(f'"{m.group(2)}"'): m.group(1)
             for m in re.finditer(r'^# "\$(LITMUS_SECRET_\d+)" is the secret "((?:[^"\\]|\\.)*)"', command, re.M)}
    return {name: named.get(name, name) for name in SECRET_NAMES}


def test_every_curl_of_hostile_results_pastes_into_bash_as_the_recorded_request(tmp_path, stub_path):
    document = _hostile_document()
    results = tmp_path / "results.json"
    results.write_text(json.dumps(document), "utf-8")
    done = litmus(tmp_path, "report", str(results), "--out", str(tmp_path / "r"), timeout=60)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "r"
    curls = {
        "comment": _curls_in_markdown((out / "comment.md").read_text("utf-8")),
        "summary": _curls_in_markdown((out / "summary.md").read_text("utf-8")),
        "html": _curls_in_html((out / "report.html").read_text("utf-8")),
        "junit": _curls_in_junit((out / "junit.xml").read_text("utf-8")),
    }
    steps = document["suites"][0]["flow_runs"][0]["steps"]
    shell = tmp_path / "shell"
    shell.mkdir()
    for source, commands in curls.items():
        pasted = set()
        for command in commands:
            index = next(i for i, marker in enumerate(STEP_MARKERS) if marker in command)
            request = steps[index]["request"]
            variables = _variables(command)
            values = {name: f"value {i} of secret" for i, name in enumerate(SECRET_NAMES)}
            environment = {variables[name]: value for name, value in values.items()
                           if name in request["secrets"]}
            received = _paste(command, shell, stub_path, environment)
            assert sorted(p.name for p in shell.iterdir()) == [], f"{source}: the paste ran code"
            assert received == _expected(request, index, values), source
            pasted.add(index)
        assert pasted == {0, 1, 2, 3}, f"{source}: every step of the hostile flow is a finding with its curl"
