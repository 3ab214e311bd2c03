"""`litmus review` in a real pseudo-terminal (the command as a user runs it, its controlling terminal a pty):
single keypresses, the reason prompt, a window resize (TIOCSWINSZ and SIGWINCH) mid-review that draws the
screen again at the new width without losing the answers given, under TERM=dumb and TERM=xterm-256color;
and the line prompts it falls back to without a terminal."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import termios
import time
from pathlib import Path

import pytest
import yaml

from support.cli import litmus, start_litmus, write_judge_config
from support.fake_judge import API_KEY

SUITE = """\
version: 1
suite: Orders
flows:
  - name: ask
    steps:
      - name: one
        request: {url: /answer}
        assertions:
          - {type: llm_rubric, rubric: "Says when the parcel arrives"}
          - {type: tone, tone: "polite about the parcel"}
"""


@pytest.fixture
def reviewed_run(tmp_path, target, fake_judge) -> Path:
    """A project whose last run has two judged outcomes that need review."""
    target.text("/answer", "Your parcel 1042 arrives on Monday.")
    fake_judge.when("parcel", text="no verdict here")
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "orders.yaml").write_text(SUITE)
    write_judge_config(tmp_path, fake_judge.openai_base_url)
    done = litmus(tmp_path, "run", "probes", "--base-url", target.base_url, "--out", "out",
                  env={"JUDGE_KEY": API_KEY})
    assert done.returncode == 1, done.stdout + done.stderr
    return tmp_path


def set_size(fd: int, columns: int, rows: int = 40) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))


class Terminal:
    """The review command with a pty as its controlling terminal."""

    def __init__(self, cwd: Path, term: str, columns: int) -> None:
        self.master, slave = os.openpty()
        set_size(slave, columns)
        # start_litmus's stdin is empty; the pty is this process's terminal on all three streams.
        self.process = start_litmus(
            cwd, "review", "out/results.json", "--by", "tester", env={"TERM": term},
            stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, timeout: float = 60) -> str:
        """Everything read up to and including `text` (what was read after it is kept for the next call)."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"never saw {text!r} in {self.seen!r}"
            ready, _, _ = select.select([self.master], [], [], min(remaining, 0.5))
            if ready:
                try:
                    self.seen += os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:  # the command ended: the pty is closed
                    break
        assert text in self.seen, f"never saw {text!r} in {self.seen!r}"
        upto = self.seen.index(text) + len(text)
        read, self.seen = self.seen[:upto], self.seen[upto:]
        return read

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def resize(self, columns: int) -> None:
        set_size(self.master, columns)
        os.killpg(self.process.pid, signal.SIGWINCH)

    def close(self) -> int:
        code = self.process.wait(timeout=60)
        os.close(self.master)
        return code


@pytest.mark.parametrize("term, rule", [("dumb", "="), ("xterm-256color", "─")])
def test_keys_reason_and_a_resize_mid_review(reviewed_run, term, rule):
    terminal = Terminal(reviewed_run, term, 80)
    first = terminal.expect("[q] quit")
    assert rule * 80 in first and rule * 81 not in first
    assert "[1/2] Orders › ask › one › llm_rubric" in first
    assert "Says when the parcel arrives" in first and "Your parcel 1042 arrives on Monday." in first
    assert "unparseable verdict" in first  # the tier's reason
    assert ("\x1b[2J" in first) == (term != "dumb")  # a dumb terminal gets no escape sequences

    terminal.send("p")  # one keypress, no Enter
    terminal.expect("Reason (Enter for none): ")
    terminal.send("says Monday\n")
    second = terminal.expect("[q] quit")
    assert "recorded pass" in second and "[2/2] Orders › ask › one › tone" in second

    terminal.resize(120)
    redrawn = terminal.expect("[q] quit")
    assert rule * 120 in redrawn and "[2/2]" in redrawn and "polite about the parcel" in redrawn
    terminal.send("f")
    terminal.expect("Reason (Enter for none): ")
    terminal.send("\n")
    assert "1 passed, 1 failed, 0 skipped" in terminal.expect("skipped")
    assert terminal.close() == 0

    entries = yaml.safe_load((reviewed_run / ".litmus" / "decisions.yaml").read_text("utf-8"))
    assert [(e["verdict"], e["by"], e["reason"]) for e in entries] == [("pass", "tester", "says Monday"),
                                                                       ("fail", "tester", "")]


def test_quit_keeps_the_answers_given(reviewed_run):
    terminal = Terminal(reviewed_run, "xterm-256color", 100)
    terminal.expect("[q] quit")
    terminal.send("s")
    terminal.expect("[2/2]")
    terminal.send("q")
    assert "0 passed, 0 failed, 1 skipped" in terminal.expect("skipped")
    assert terminal.close() == 0
    assert not (reviewed_run / ".litmus" / "decisions.yaml").exists()


def test_without_a_terminal_it_reads_one_line_per_answer(reviewed_run):
    done = litmus(reviewed_run, "review", "out/results.json", "--by", "ci", input="fail\nwrong date\ns\n")
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout
    assert "0 passed, 1 failed, 1 skipped" in done.stdout
    (entry,) = yaml.safe_load((reviewed_run / ".litmus" / "decisions.yaml").read_text("utf-8"))
    assert (entry["verdict"], entry["reason"]) == ("fail", "wrong date")
