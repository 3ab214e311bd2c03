"""The target fault matrix: one flow per fault, each with steps before and after it and several assertions.

`serve_faults` scripts a `support.target.Target`; `fault_suite` is the probe file exercising it;
`EXPECTED` says what each fault's step must record. Shared by tests/reliability and bench/reliability.py.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

MIB = 1024 * 1024
INVALID_HOST = "litmus-probe.invalid"  # RFC 2606/6761: never resolves, so it must fail without a lookup


@dataclass(frozen=True)
class Expect:
    """What the fault step records: a transport error (its message), or assertion outcomes."""

    error: str | None = None
    outcomes: tuple[str, ...] = ()
    reason: str = ""  # in the first non-passing outcome's reason
    truncated: bool = False


EXPECTED: dict[str, Expect] = {
    "connection refused": Expect(error="connection refused"),
    "reset mid-headers": Expect(error="connection"),
    "reset mid-body": Expect(error="connection broken while reading the body after"),
    "read timeout": Expect(error="no response within 300 ms"),
    "trickle 1 byte/s": Expect(error="timed out after 1500 ms reading the body"),
    # A 500: a 503 (like a 429) is waited out and sent again (litmus.run.rate), tested in tests/run/test_rate_limits.py.
    "5xx": Expect(outcomes=("failed", "failed", "passed"), reason="expected status 200, got 500"),
    "invalid JSON": Expect(outcomes=("passed", "error", "passed"), reason="body is not JSON"),
    "non-UTF-8": Expect(outcomes=("passed", "error", "passed"), reason="\\xe9"),
    "50 MB body": Expect(outcomes=("passed", "error", "passed"), reason="cut at the size cap", truncated=True),
    "gzip bomb": Expect(outcomes=("passed", "error", "failed"), reason="cut at the size cap", truncated=True),
    "redirect loop": Expect(error="redirect loop: more than 30 redirects"),
    "unresolvable .invalid host": Expect(error="is a reserved name that never resolves (RFC 6761)"),
}


def serve_faults(target, refused: int) -> dict[str, str]:
    """Script every fault on `target`; returns fault name -> URL of the faulty request. `refused` is a port
    that refuses connections (`support.server.refused_port`)."""
    ok = json.dumps({"ok": True}).encode()
    target.route("/ok", lambda req: (200, {"Content-Type": "application/json"}, ok))
    target.fault("/reset-headers", "reset_mid_headers")
    target.fault("/reset-body", "reset_mid_body")
    target.route("/slow", lambda req: time.sleep(2) or (200, {"Content-Type": "application/json"}, ok))
    target.fault("/trickle", "trickle_slow")
    target.json("/500", {"ok": False}, status=500)
    target.text("/badjson", '{"ok": true,,}', content_type="application/json")
    target.text("/latin1", '{"ok": "caf\xe9"}'.encode("latin-1"), content_type="application/json")
    big = b"ok" + b"a" * (50 * MIB)
    target.route("/big", lambda req: (200, {"Content-Type": "application/json"}, big))
    target.fault("/bomb", "gzip_bomb")
    target.fault("/loop", "redirect_loop")
    return {
        "connection refused": f"http://127.0.0.1:{refused}/x",
        "reset mid-headers": "/reset-headers",
        "reset mid-body": "/reset-body",
        "read timeout": "/slow",
        "trickle 1 byte/s": "/trickle",
        "5xx": "/500",
        "invalid JSON": "/badjson",
        "non-UTF-8": "/latin1",
        "50 MB body": "/big",
        "gzip bomb": "/bomb",
        "redirect loop": "/loop",
        "unresolvable .invalid host": f"http://{INVALID_HOST}/x",
    }


TIMEOUTS_MS = {"read timeout": 300, "trickle 1 byte/s": 1500}


def fault_suite(urls: dict[str, str], runs: int = 2) -> str:
    """Each fault between a passing step before and one after, then a sentinel flow that must pass."""
    flows = []
    for name, url in urls.items():
        timeout = TIMEOUTS_MS.get(name, 5000)
        flows.append(f"""
  - name: {json.dumps(name)}
    runs: {runs}
    steps:
      - name: before
        request: {{url: /ok}}
        assertions:
          - {{type: status_code, expected: 200}}
          - {{type: json_path, path: $.ok, expected: true}}
      - name: fault
        request: {{url: {json.dumps(url)}, timeout_ms: {timeout}}}
        assertions:
          - {{type: status_code, expected: 200}}
          - {{type: json_path, path: $.ok, expected: true}}
          - {{type: contains, value: ok}}
      - name: after
        request: {{url: /ok}}
        assertions:
          - {{type: status_code, expected: 200}}
""")
    flows.append("""
  - name: sentinel
    steps:
      - name: still running
        request: {url: /ok}
        assertions:
          - {type: json_path, path: $.ok, expected: true}
""")
    return "version: 1\nsuite: Faults\nflows:" + "".join(flows)
