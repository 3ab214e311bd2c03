"""The address checked is the address connected to (litmus.net's pinned connections), for every client:
a name is resolved once per connection, refused when any answer is blocked, and connected to at that
answer only, so a resolver that answers differently the second time (DNS rebinding) gets no say.

The resolver is injected as the system's (`socket.getaddrinfo`, which urllib3 and litmus.net call):
names from a table, one answer per call, literals as the real one reads them; no real DNS. An audit
hook records, and refuses, every connection to an address other than 127.0.0.1. Servers on 127.0.0.1;
the probe's first request also runs through the `litmus` command."""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))

from pipeline import run_litmus, write_suite  # noqa: E402

from litmus import net  # noqa: E402
from litmus.config import ProviderConfig  # noqa: E402
from litmus.github.api import GitHubClient  # noqa: E402
from litmus.github.wait import NotReady, wait_until_ready  # noqa: E402
from litmus.judges.prompts import Prompt  # noqa: E402
from litmus.judges.providers import OpenAIProvider, ProviderError  # noqa: E402
from support.fake_judge import API_KEY  # noqa: E402
from support.raw_server import RawServer  # noqa: E402
from support.target import Target  # noqa: E402

PROMPT = Prompt(kind="tone", system="s", user="u", summary="tone", version="1")
IMDS = "169.254.169.254"
REFUSED = "connection to a link-local or cloud metadata address refused"


class _Connects:
    """Connections attempted to anything but 127.0.0.1 while `on`; each is refused (an audit hook cannot
    be removed: it stays, idle, for the rest of the session)."""

    on = False
    elsewhere: list = []

    @classmethod
    def hook(cls, event, args):
        if cls.on and event == "socket.connect" and isinstance(args[1], tuple) and args[1][0] != "127.0.0.1":
            cls.elsewhere.append(args[1])
            raise ConnectionRefusedError("blocked by the test: only 127.0.0.1")


sys.addaudithook(_Connects.hook)

# The injected resolver, for a sitecustomize too: each name's answers in turn, the last one repeated.
RESOLVER = """\
import socket

_real = socket.getaddrinfo
ANSWERS = {answers!r}
asked = {{}}

def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
    if host in ANSWERS:
        answers = ANSWERS[host]
        address = answers[min(asked.get(host, 0), len(answers) - 1)]
        asked[host] = asked.get(host, 0) + 1
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port or 0))]
    import ipaddress
    ipaddress.ip_address(host.split("%")[0])  # any other name is a test bug: it would ask real DNS
    return _real(host, port, family, type, proto, flags)

socket.getaddrinfo = getaddrinfo
"""


@pytest.fixture
def names(monkeypatch):
    """Install the resolver with a table of answers; returns how often each name was asked."""
    def install(answers: dict[str, list[str]]) -> dict[str, int]:
        # The text installs itself (as the sitecustomize must): recorded first, so the real one comes back.
        monkeypatch.setattr(socket, "getaddrinfo", socket.getaddrinfo)
        scope: dict = {}
        exec(RESOLVER.format(answers=answers), scope)  # noqa: S102 - the same text as the sitecustomize
        return scope["asked"]
    _Connects.elsewhere = []
    _Connects.on = True
    yield install
    _Connects.on = False


def test_a_rebinding_name_connects_to_the_checked_answer_and_never_to_the_second(names):
    asked = names({"rebind.test": ["127.0.0.1", IMDS]})
    with Target() as target:
        target.text("/ok", "ok")
        with net.Session() as session:
            assert session.get(f"http://rebind.test:{target.port}/ok", timeout=5).status_code == 200
        assert asked == {"rebind.test": 1}  # one lookup: the connection went where the check looked
        with net.Session() as session, pytest.raises(net.RequestRefused) as refused:
            session.get(f"http://rebind.test:{target.port}/ok", timeout=5)  # a new connection: asked again
        assert str(refused.value) == f"{REFUSED}: {IMDS} (rebind.test resolves to it)"
        assert len(target.requests) == 1
    assert _Connects.elsewhere == []


def test_a_redirect_hop_to_a_rebinding_name_lands_where_it_was_checked(names):
    asked = names({"rebind.test": ["127.0.0.1", IMDS], "imds.test": [IMDS]})
    with Target() as target:
        target.route("/hop", lambda req: (302, {"Location": f"http://rebind.test:{target.port}/land"}, b""))
        target.route("/imds", lambda req: (302, {"Location": "http://imds.test/latest/meta-data/"}, b""))
        target.text("/land", "landed")
        with net.Session() as session:
            assert session.get(target.url("/hop"), timeout=5).url.endswith("/land")
            with pytest.raises(net.RequestRefused, match=f"{REFUSED}: {IMDS} \\(imds.test resolves to it\\)"):
                session.get(target.url("/imds"), timeout=5)
    assert asked == {"rebind.test": 1, "imds.test": 1}
    assert _Connects.elsewhere == []


def test_wait_for_and_a_judge_connect_where_they_checked(names, fake_judge):
    names({"preview.test": ["127.0.0.1", IMDS], "judge.test": ["127.0.0.1", IMDS], "imds.test": [IMDS]})
    with Target() as target:
        target.text("/health", "ok")
        wait_until_ready(f"http://preview.test:{target.port}/health", 5, interval_s=0.1, log=lambda _: None)
        base = fake_judge.openai_base_url.replace("127.0.0.1", "judge.test")
        judge = OpenAIProvider(ProviderConfig("openai", "m", base_url=base), API_KEY, timeout_ms=5000, retries=0,
                               max_tokens=10, pool_size=1)
        judge.complete(PROMPT)
        judge.close()
        with pytest.raises(NotReady, match=f"{REFUSED}: {IMDS}"):
            wait_until_ready("http://imds.test/health", 5, interval_s=0.1, log=lambda _: None)
        judge = OpenAIProvider(ProviderConfig("openai", "m", base_url="http://imds.test/v1"), API_KEY,
                               timeout_ms=5000, retries=2, max_tokens=10, pool_size=1)
        with pytest.raises(ProviderError, match=f"{REFUSED}: {IMDS}"):
            judge.complete(PROMPT)
    assert _Connects.elsewhere == []


def test_a_probe_to_a_name_of_a_blocked_address_is_refused_before_connecting(tmp_path):
    guard = tmp_path / "guard"
    guard.mkdir()
    log = tmp_path / "connects.log"
    (guard / "sitecustomize.py").write_text(
        RESOLVER.format(answers={"imds.example.test": [IMDS], "rebind.example.test": ["127.0.0.1", IMDS]})
        + f"""
import sys

def _guard(event, args):
    if event == "socket.connect" and isinstance(args[1], tuple) and args[1][0] != "127.0.0.1":
        with open({str(log)!r}, "a") as out:
            out.write(repr(args[1]) + "\\n")
        raise ConnectionRefusedError("blocked by the test")

sys.addaudithook(_guard)
""")
    with Target() as target:
        target.text("/ok", "ok")
        rebind = f"http://rebind.example.test:{target.port}/ok"
        write_suite(tmp_path, "s.yaml", f"""\
version: 1
suite: Names
flows:
  - name: f
    steps:
      - name: rebinding
        request: {{url: "{rebind}"}}
        assertions: [{{type: status_code, expected: 200}}]
      - name: imds
        request: {{url: "http://imds.example.test/latest/meta-data/"}}
""")
        env = {"PYTHONPATH": os.pathsep.join([str(guard), os.environ.get("PYTHONPATH", "")])}
        ran = run_litmus(["run", "--base-url", target.base_url, "--out", "out"], cwd=tmp_path, env=env)
    assert (tmp_path / "out" / "results.json").exists(), ran.output
    steps = json.loads((tmp_path / "out" / "results.json").read_text())["suites"][0]["flow_runs"][0]["steps"]
    assert steps[0]["status"] == "passed", steps[0]
    assert steps[1]["status"] == "error"
    assert steps[1]["error"] == f"{REFUSED}: {IMDS} (imds.example.test resolves to it)"
    assert ran.code == 1 and not log.exists()


@pytest.mark.parametrize("addresses, refuse_loopback, refused", [
    (["203.0.113.7"], True, None),
    (["203.0.113.7", IMDS], False, f"{REFUSED}: {IMDS} (h resolves to it)"),
    (["::ffff:a9fe:a9fe"], False, f"{REFUSED}: ::ffff:a9fe:a9fe (h resolves to it)"),
    (["fd00:ec2::254"], False, f"{REFUSED}: fd00:ec2::254 (h resolves to it)"),
    (["127.0.0.1"], False, None),
    (["203.0.113.7", "127.0.0.1"], True, "connection to loopback after a redirect from a non-loopback address "
                                         "refused: 127.0.0.1 (h resolves to it)"),
    (["0.0.0.0"], True, "refused: 0.0.0.0 (h resolves to it)"),
])
def test_the_address_rule(addresses, refuse_loopback, refused):
    reason = net.address_refusal("h", [ipaddress.ip_address(a) for a in addresses], refuse_loopback=refuse_loopback)
    assert reason == refused or (refused is not None and reason is not None and reason.endswith(refused))


def test_github_and_wait_for_never_read_netrc(tmp_path, monkeypatch):
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine 127.0.0.1 login someone password from-netrc\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETRC", str(netrc))
    with Target() as target:
        target.text("/health", "ok")
        target.text("/repos/o/r", "{}")
        wait_until_ready(target.url("/health"), 5, interval_s=0.1, log=lambda _: None)
        GitHubClient(target.base_url, "", retries=0).get("/repos/o/r")
    assert [r.headers.get("Authorization") for r in target.requests] == [None, None]


def test_a_proxy_is_the_address_checked(names, monkeypatch):
    names({"proxy.test": [IMDS]})
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.test:3128")
    with Target() as target:
        target.text("/health", "ok")
        with pytest.raises(NotReady, match=f"{REFUSED}: {IMDS} \\(proxy.test resolves to it\\)"):
            wait_until_ready(target.url("/health"), 3, interval_s=0.1, log=lambda _: None)
        assert target.requests == []
    assert _Connects.elsewhere == []


def test_an_untrusted_run_sends_nothing_through_a_proxy(monkeypatch):
    from build import check, flow, request, step, suite

    from litmus.run.runner import RunOptions, run_suites
    from litmus.trust import Trust, origin

    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with Target() as target, RawServer({}) as proxy:
        target.text("/ok", "ok")
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
        trust = Trust(False, "test: a fork's pull request", allowed_origins=frozenset({origin(target.base_url)}))
        s = suite("S", flow("f", step("s", request("/ok"), check("status_code", expected=200))))
        result = run_suites([s], RunOptions(base_url=target.base_url, trust=trust), environ={})
        [[probe]] = [run.steps for run in result.suites[0].flow_runs]
        assert probe.status == "error" and "untrusted" in probe.error and "proxy" in probe.error
        assert proxy.connections == 0 and target.requests == []
