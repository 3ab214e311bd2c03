"""Redirects: credentials never cross origins, and some targets are refused before any connection.

Two real servers on 127.0.0.1, on two ports (a different port is a different origin). The run goes
through the CLI with a `sitecustomize` that records, and blocks, every connection to an address other
than 127.0.0.1: the link-local refusal is proven to happen without connecting, and a bug could not
reach another address either.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))

from pipeline import check_run, run_litmus, write_suite  # noqa: E402

from litmus.config import ProviderConfig  # noqa: E402
from litmus.judges.prompts import Prompt  # noqa: E402
from litmus.judges.providers import AnthropicProvider, ProviderError  # noqa: E402
from litmus.net import host_addresses, redirect_refusal  # noqa: E402
from support.raw_server import RawServer  # noqa: E402
from support.target import Target  # noqa: E402

LOOPBACK_ONLY = """\
import sys

def _guard(event, args):
    if event == "socket.connect":
        address = args[1]
        if isinstance(address, tuple) and address[0] not in ("127.0.0.1",):
            with open({log!r}, "a") as log:
                log.write(repr(address) + "\\n")
            raise ConnectionRefusedError("blocked by the test: only 127.0.0.1")

sys.addaudithook(_guard)
"""

SECRET_HEADERS = {"X-Api-Key": "k-123", "X-Auth-Token": "t-456", "Authorization": "Bearer b-789"}

SUITE = """\
version: 1
suite: Redirects
flows:
  - name: {name}
    steps:
      - name: hop
        request:
          method: {method}
          url: {path}
          headers: {{X-Api-Key: k-123, X-Auth-Token: t-456, Authorization: Bearer b-789, X-Plain: p}}
          {body}
          follow_redirects: {follow}
        assertions:
          - {{type: status_code, expected: {status}}}
"""

CASES = {
    # name: (method, path, body, follow, expected status)
    "cross-origin 307": ("POST", "/to-b-307", 'json: {password: hunter2}', "true", 200),
    "cross-origin 302": ("GET", "/to-b-302", "", "true", 200),
    "same origin": ("POST", "/to-a-307", 'json: {password: hunter2}', "true", 200),
    "link-local": ("GET", "/to-metadata", "", "true", 200),
    "decimal link-local": ("GET", "/to-decimal-metadata", "", "true", 200),
    "non-http": ("GET", "/to-file", "", "true", 200),
    "unfollowed endless redirect": ("GET", "/endless-302", "", "false", 302),
}


def _endless_redirect(sock: socket.socket) -> None:
    sock.sendall(b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"r" * 65536
    for _ in range(10_000):  # 640 MB at most; the client hangs up at its size cap
        sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("redirects")
    guard_dir = root / "guard"
    guard_dir.mkdir()
    blocked_log = root / "blocked.log"
    (guard_dir / "sitecustomize.py").write_text(LOOPBACK_ONLY.format(log=str(blocked_log)))
    with Target() as a, Target() as b, RawServer({"/endless-302": _endless_redirect}) as raw:
        a.route("/to-b-307", lambda req: (307, {"Location": b.url("/land")}, b""))
        a.route("/to-b-302", lambda req: (302, {"Location": b.url("/land")}, b""))
        a.route("/to-a-307", lambda req: (307, {"Location": "/land"}, b""))
        a.route("/to-metadata", lambda req: (302, {"Location": "http://169.254.169.254/latest/meta-data/"}, b""))
        a.route("/to-decimal-metadata", lambda req: (302, {"Location": "http://2852039166/latest/"}, b""))
        a.route("/to-file", lambda req: (302, {"Location": "file:///etc/passwd"}, b""))
        a.route("/endless-302", lambda req: (307, {"Location": raw.url("/endless-302")}, b""))
        a.text("/land", "landed on a")
        b.text("/land", "landed on b")
        for i, (name, (method, path, body, follow, status)) in enumerate(CASES.items()):
            write_suite(root, f"r{i}.yaml", SUITE.format(name=name, method=method, path=path, body=body,
                                                          follow=follow, status=status).replace(
                "suite: Redirects", f"suite: Redirects {i}"))
        # The unfollowed endless redirect is asked of the raw server directly.
        suite_file = root / "probes" / f"r{len(CASES) - 1}.yaml"
        suite_file.write_text(suite_file.read_text().replace("url: /endless-302", f"url: {raw.url('/endless-302')}"))
        env = {"PYTHONPATH": os.pathsep.join([str(guard_dir), os.environ.get("PYTHONPATH", "")])}
        ran = run_litmus(["run", "--base-url", a.base_url, "--out", "out", "--max-body-bytes", "100000"],
                         cwd=root, env=env)
        a_requests, b_requests = list(a.requests), list(b.requests)
    document = json.loads((root / "out" / "results.json").read_text("utf-8"))
    steps = {s["flow_runs"][0]["flow"]: s["flow_runs"][0]["steps"][0] for s in document["suites"]}
    blocked = blocked_log.read_text() if blocked_log.exists() else ""
    return ran, steps, a_requests, b_requests, blocked, root


def test_a_cross_origin_307_drops_every_probe_header_and_the_body(run):
    _, steps, a_requests, b_requests, _, _ = run
    sent = next(r for r in a_requests if r.path == "/to-b-307")
    assert sent.headers["X-Api-Key"] == "k-123" and sent.json() == {"password": "hunter2"}
    [landed] = [r for r in b_requests if r.method == "POST"]
    lowered = {k.lower() for k in landed.headers}
    assert not lowered & {"x-api-key", "x-auth-token", "authorization", "x-plain", "content-type"}
    assert landed.body == b""
    step = steps["cross-origin 307"]
    assert step["status"] == "passed"
    [hop] = step["response"]["redirects"]
    assert hop["status"] == 307 and hop["url"].endswith("/land") and hop["body_dropped"] is True
    assert sorted(h.lower() for h in hop["dropped_headers"]) == ["authorization", "x-api-key", "x-auth-token",
                                                                 "x-plain"]


def test_a_cross_origin_302_drops_the_headers_and_records_it(run):
    _, steps, _, b_requests, _, _ = run
    [landed] = [r for r in b_requests if r.method == "GET"]
    assert not {k.lower() for k in landed.headers} & {"x-api-key", "x-auth-token", "authorization", "x-plain"}
    [hop] = steps["cross-origin 302"]["response"]["redirects"]
    assert hop["status"] == 302 and hop["body_dropped"] is False and len(hop["dropped_headers"]) == 4


def test_a_same_origin_redirect_keeps_headers_and_body(run):
    _, steps, a_requests, _, _, _ = run
    landed = [r for r in a_requests if r.path == "/land"]
    assert len(landed) == 1
    assert landed[0].headers["X-Api-Key"] == "k-123" and landed[0].json() == {"password": "hunter2"}
    [hop] = steps["same origin"]["response"]["redirects"]
    assert hop["dropped_headers"] == [] and hop["body_dropped"] is False


@pytest.mark.parametrize("name, error", [
    ("link-local", "redirect to a link-local or cloud metadata address refused: "
                   "http://169.254.169.254/latest/meta-data/"),
    ("decimal link-local", "redirect to a link-local or cloud metadata address refused: http://2852039166/latest/"),
    ("non-http", "redirect to a non-HTTP URL refused: file:///etc/passwd"),
])
def test_refused_redirects_are_step_errors_and_never_connect(run, name, error):
    _, steps, _, _, blocked, _ = run
    step = steps[name]
    assert step["status"] == "error" and step["error"] == error
    assert step["response"]["status"] == 302  # the refused redirect itself is kept for debugging
    assert blocked == ""  # no connection to any address but 127.0.0.1 was even attempted


def test_an_unfollowed_redirect_with_an_endless_body_stops_at_the_cap(run):
    step = run[1]["unfollowed endless redirect"]
    assert step["status"] == "passed", step
    assert step["response"]["status"] == 302 and step["response"]["truncated"] is True
    assert step["response"]["size"] == 100000 and step["response"]["redirects"] == []


def test_the_run_writes_everything(run):
    ran, _, _, _, _, root = run
    assert ran.code == 1 and "Traceback" not in ran.output
    check_run(root / "out")


# Names resolve from this table; literals and `localhost` go through the real function, which reads
# them without a lookup. Any other name is a test bug (it would ask a resolver), so it fails.
NAMES = {"api.example.test": "203.0.113.7", "other.example.test": "203.0.113.8",
         "metadata.example.test": "169.254.169.254"}


def _lookup(host):
    if host in NAMES:
        return [ipaddress.ip_address(NAMES[host])]
    if host != "localhost":
        ipaddress.ip_address(host)  # raises for a name
    return host_addresses(host)


@pytest.mark.parametrize("source, target, refused", [
    ("http://api.example.test/", "http://127.0.0.1:8080/admin", "from a non-loopback origin to loopback"),
    ("http://api.example.test/", "http://localhost/admin", "from a non-loopback origin to loopback"),
    ("http://api.example.test/", "http://0.0.0.0/", "from a non-loopback origin to loopback"),
    ("http://api.example.test/", "http://[fe80::1]/", "link-local"),
    ("http://api.example.test/", "http://[::ffff:169.254.169.254]/", "link-local"),
    ("http://api.example.test/", "http://metadata.example.test/", "link-local"),
    ("http://api.example.test/", "ftp://files.example.test/", "non-HTTP"),
    ("http://api.example.test/", "http://x.invalid/", "never resolves"),
    ("http://127.0.0.1:1/", "http://127.0.0.1:2/", None),
    ("http://127.0.0.1:1/", "http://localhost:2/", None),
    ("http://api.example.test/", "https://other.example.test/", None),
])
def test_the_redirect_policy(source, target, refused):
    reason = redirect_refusal(source, target, resolve=_lookup)
    if refused is None:
        assert reason is None
    else:
        assert reason is not None and refused in reason


def test_judge_providers_never_follow_redirects():
    with Target() as a, Target() as b:
        a.route("/v1/messages", lambda req: (307, {"Location": b.url("/v1/messages")}, b""))
        provider = AnthropicProvider(ProviderConfig("anthropic", "m", base_url=a.base_url), "sk-secret",
                                     timeout_ms=2000, retries=0, max_tokens=10, pool_size=1)
        prompt = Prompt(kind="tone", system="s", user="u", summary="tone", version="1")
        with pytest.raises(ProviderError) as raised:
            provider.complete(prompt)
        provider.close()
        assert raised.value.status == 307
        assert len(a.requests) == 1 and b.requests == []


CHAIN = """\
version: 1
suite: Chains
flows:
""" + "".join(f"""\
  - name: {hops} hops
    steps:
      - name: follow
        request: {{url: /hop{hops}}}
        assertions:
          - {{type: status_code, expected: 200}}
""" for hops in (1, 2, 3))


HOP_STATUS = {1: 302, 2: 301, 3: 307}


def test_n_hops_are_n_redirect_entries(tmp_path):
    # requests builds a `Response.next` for each hop it follows; those unsent requests were recorded too.
    write_suite(tmp_path, "chains.yaml", CHAIN)
    with Target() as target:
        for hop in (1, 2, 3):
            target.route(f"/hop{hop}", lambda req, hop=hop: (HOP_STATUS[hop], {"Location": f"/hop{hop - 1}"}, b""))
        target.text("/hop0", "landed")
        ran = run_litmus(["run", "--base-url", target.base_url, "--out", "out"], cwd=tmp_path)
    assert ran.code == 0, ran.output
    document = json.loads((tmp_path / "out" / "results.json").read_text("utf-8"))
    for flow_run in document["suites"][0]["flow_runs"]:
        hops = int(flow_run["flow"].split()[0])
        redirects = flow_run["steps"][0]["response"]["redirects"]
        assert [(urlsplit(r["url"]).path, r["status"]) for r in redirects] == [
            (f"/hop{hop - 1}", HOP_STATUS[hop]) for hop in range(hops, 0, -1)], flow_run["flow"]
