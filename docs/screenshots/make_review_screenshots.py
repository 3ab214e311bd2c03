"""Make docs/images/review-terminal.png and docs/images/review-comment.png from the real tool.

    pip install -e '.[test,docs]'
    python docs/screenshots/make_review_screenshots.py

It starts the tests' target and fake judge on 127.0.0.1, runs `litmus run` on a suite whose judged check
needs review, runs `litmus review` in a pseudo-terminal (100x30), renders what the terminal shows with pyte
and then in headless Chromium; accepts the outcome with `litmus review --accept`, runs again, and renders
the sticky comment before and after (cmarkgfm, GitHub's Markdown) in Chromium.
"""

from __future__ import annotations

import html
import json
import os
import select
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cmarkgfm
import pyte

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from support.chromium import start_chromium  # noqa: E402
from support.cli import litmus, write_judge_config  # noqa: E402
from support.fake_judge import API_KEY, FakeJudge  # noqa: E402
from support.target import Target  # noqa: E402

IMAGES = ROOT / "docs" / "images"
COLUMNS, ROWS = 100, 30
SUITE = """\
version: 1
suite: Support bot
flows:
  - name: Where is my parcel
    steps:
      - name: ask
        request: {method: POST, url: /chat, json: {message: "Where is parcel 1042?"}}
        assertions:
          - {type: status_code, expected: 200}
          - {type: llm_rubric, rubric: "Says when the parcel arrives, without promising a refund"}
"""


def terminal_screen(project: Path) -> pyte.Screen:
    """What `litmus review` shows in a 100x30 xterm, read through a pty into pyte."""
    import fcntl
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | {"TERM": "xterm-256color"}
    process = subprocess.Popen([sys.executable, "-m", "litmus", "review", "out/results.json", "--by", "ann"],
                               cwd=project, env=environ, stdin=slave, stdout=slave, stderr=slave,
                               start_new_session=True, preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    os.close(slave)
    screen = pyte.Screen(COLUMNS, ROWS)
    stream = pyte.Stream(screen)
    seen, deadline = "", time.monotonic() + 60
    while "[q] quit" not in seen and time.monotonic() < deadline:
        if select.select([master], [], [], 0.5)[0]:
            chunk = os.read(master, 65536).decode("utf-8", "replace")
            seen += chunk
            stream.feed(chunk.replace("\r\n", "\n").replace("\n", "\r\n"))
    os.write(master, b"q")
    process.wait(timeout=30)
    os.close(master)
    return screen


def screen_html(screen: pyte.Screen) -> str:
    rows = []
    for y in range(screen.lines):
        line = screen.buffer[y]
        cells = []
        for x in range(screen.columns):
            char = line[x]
            text = html.escape(char.data or " ")
            cells.append(f"<b>{text}</b>" if char.bold else text)
        rows.append("".join(cells).rstrip())
    return ("<html><body style='margin:0;background:#1e1e1e'><pre style='margin:0;padding:16px;color:#ddd;"
            "font:15px/1.35 DejaVu Sans Mono,monospace;background:#1e1e1e'>" + "\n".join(rows) + "</pre></body></html>")


def shoot(page: str, out: Path, width: int, height: int) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False, encoding="utf-8") as handle:
        handle.write(page)
    browser = start_chromium(f"--window-size={width},{height}")
    try:
        browser.get(Path(handle.name).as_uri())
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(width, min(height + 120, 2400))
        browser.save_screenshot(str(out))
    finally:
        browser.quit()
        os.unlink(handle.name)
    print(f"wrote {out.relative_to(ROOT)}")


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with Target() as target, FakeJudge() as judge, tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        target.json("/chat", {"reply": "Parcel 1042 left our depot today; you will have it by Monday."})
        judge.when("parcel", text="I cannot tell whether Monday is a promise.")  # unparseable: needs review
        (project / "probes").mkdir()
        (project / "probes" / "support.yaml").write_text(SUITE)
        write_judge_config(project, judge.openai_base_url)
        env = {"JUDGE_KEY": API_KEY}
        litmus(project, "run", "probes", "--base-url", target.base_url, "--out", "out", env=env)
        shoot(screen_html(terminal_screen(project)), IMAGES / "review-terminal.png", 960, 640)

        document = json.loads((project / "out" / "results.json").read_text("utf-8"))
        finding = document["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][1]["id"]
        litmus(project, "review", "out/results.json", "--accept", finding, "--reason", "Monday is the depot's ETA",
               "--by", "ann")
        litmus(project, "run", "probes", "--base-url", target.base_url, "--out", "out2", env=env)
        before, after = ((project / out / "comment.md").read_text("utf-8") for out in ("out", "out2"))
        body = "<hr>".join(cmarkgfm.github_flavored_markdown_to_html(text) for text in (before, after))
        page = ("<html><head><style>body{font:14px/1.5 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;"
                "max-width:900px;margin:24px}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;"
                "padding:4px 10px}code{background:#eff1f3;padding:1px 4px;border-radius:4px}details{display:none}"
                "</style></head><body>" + body + "</body></html>")
        shoot(page, IMAGES / "review-comment.png", 980, 900)


if __name__ == "__main__":
    main()
