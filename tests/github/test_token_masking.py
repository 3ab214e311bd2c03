"""The forms of the GitHub token that git and actions/checkout use (`x-access-token:TOKEN` and its
base64, the `AUTHORIZATION: basic …` header persisted in .git/config) are masked like the token: in
the log (`::add-mask::`) and in every report, even when the target echoes them back."""

from __future__ import annotations

import base64
import io
from pathlib import Path

from litmus.commands.action import main

EVENTS = Path(__file__).parent / "events"
TOKEN = "ghs_derivedformstoken0123456789"
BASIC = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()


def test_the_tokens_basic_auth_forms_never_reach_the_log_or_a_report(tmp_path, target, fake_github):
    target.text("/echo", f"config: extraheader = AUTHORIZATION: basic {BASIC}\nuser x-access-token:{TOKEN}\n")
    workspace = tmp_path / "ws"
    (workspace / "probes").mkdir(parents=True)
    (workspace / "probes" / "echo.yaml").write_text(
        "version: 1\nsuite: Echo\nflows:\n  - name: f\n    steps:\n      - name: s\n        request: {url: /echo}\n"
        "        assertions:\n          - {type: contains, value: NOT-THERE}\n")
    summary = tmp_path / "summary.md"
    summary.write_text("")
    out = io.StringIO()
    code = main({"GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_PATH": str(EVENTS / "pull_request.json"),
                 "GITHUB_EVENT_NAME": "pull_request", "GITHUB_REPOSITORY": "acme/shop",
                 "GITHUB_API_URL": fake_github.base_url, "GITHUB_STEP_SUMMARY": str(summary),
                 "INPUT_GITHUB-TOKEN": TOKEN, "INPUT_BASE-URL": target.base_url}, out)
    assert code == 1
    log = out.getvalue().splitlines()
    assert f"::add-mask::{BASIC}" in log[:4] and f"::add-mask::x-access-token:{TOKEN}" in log[:4]
    written = [p.read_text("utf-8") for p in (workspace / "litmus-report").iterdir()] + [summary.read_text()]
    written += [c.body["body"] for c in fake_github.calls("POST") if c.body.get("body")]
    assert any("config: extraheader" in text for text in written)  # the echo is in the reports, masked
    for text in written:
        assert BASIC not in text and TOKEN not in text
