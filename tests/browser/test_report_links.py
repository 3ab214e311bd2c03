"""Attack 7: a results.json `litmus report` reads may not be ours, and its `run.server_url` and
`run.repository` make every probe link. A `javascript:` server (in any spelling a browser accepts)
made each link run script when clicked. Built by `litmus report` (a subprocess) and opened in real
Chromium: every anchor's href is http(s) or a fragment of the page, clicking each leaves
`window.pwned` unset, and the Markdown reports link only http(s) URLs too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support.cli import litmus

TESTS = Path(__file__).resolve().parents[1]
RESULTS = TESTS / "report" / "results.json"

# Each makes `<server>/<repository>/blob/<sha>/<file>#L<line>` a script: `//x` comments out the rest.
SERVERS = ["javascript:window.pwned=1;//x", " JavaScript:window.pwned=1;//x", "java\tscript:window.pwned=1;//x",
           "\x01javascript:window.pwned=1;//x", "data:text/html,<script>parent.pwned=1</script>",
           "vbscript:x", "/relative"]


def _report(tmp_path: Path, name: str, run: dict) -> Path:
    data = json.loads(RESULTS.read_text("utf-8"))
    data["run"].update(run)
    results = tmp_path / f"{name}.json"
    results.write_text(json.dumps(data), "utf-8")
    out = tmp_path / name
    done = litmus(tmp_path, "report", str(results), "--out", str(out), "--format", "html,markdown,summary",
                  timeout=60)
    assert done.returncode == 0, done.stderr
    return out


def _click_every_link_but_http(page) -> str:
    """Clicks each anchor that would not leave for an http(s) page; `typeof window.pwned` once the
    navigations the clicks queued (a `javascript:` URL runs in a task of its own) have run."""
    return page.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        document.querySelectorAll('details').forEach(d => d.open = true);
        document.querySelectorAll('a').forEach(a => { if (!/^https?:/.test(a.href)) a.click(); });
        setTimeout(() => setTimeout(() => done(typeof window.pwned), 0), 0);
    """)


@pytest.mark.parametrize("server", SERVERS)
def test_a_hostile_server_url_makes_no_link_that_runs_script(page, tmp_path, server):
    out = _report(tmp_path, "hostile", {"server_url": server})
    page.open((out / "report.html").read_text("utf-8"))
    hrefs = page.js("return Array.from(document.querySelectorAll('[href]')).map(a => a.getAttribute('href'))")
    assert hrefs, "the page has its fragment links"
    assert [h for h in hrefs if not h.startswith(("http://", "https://", "#"))] == []
    assert _click_every_link_but_http(page) == "undefined"
    assert "Checkout" in page.js("return document.body.innerText")  # the suite's name is still shown, as text
    for name in ("comment.md", "summary.md"):
        targets = re.findall(r"\]\(([^)]*)\)", (out / name).read_text("utf-8"))
        assert [t for t in targets if not t.startswith(("http://", "https://"))] == [], name


def test_a_repository_cannot_end_the_link_it_is_part_of(page, tmp_path):
    repository = 'o/r) [click](javascript:window.pwned=1) "><img src=x onerror=window.pwned=1>'
    out = _report(tmp_path, "repository", {"repository": repository, "server_url": "https://github.com"})
    page.open((out / "report.html").read_text("utf-8"))
    hrefs = page.js("return Array.from(document.querySelectorAll('a[href^=http]')).map(a => a.href)")
    assert hrefs and all(h.startswith("https://github.com/o/r") for h in hrefs)
    assert page.js("return document.querySelectorAll('img').length") == 0
    assert _click_every_link_but_http(page) == "undefined"
    comment = (out / "comment.md").read_text("utf-8")
    targets = re.findall(r"\]\(([^)]*)\)", comment)
    assert targets and all(t.startswith("https://github.com/o/r") and " " not in t for t in targets)
    assert "javascript:" not in comment
