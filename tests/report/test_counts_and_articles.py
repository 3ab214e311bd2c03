"""Counts agree with their nouns ("1 flow run", "2 flow runs") and articles with the sound of the word
("an xpath assertion"), in the terminal, the Markdown and HTML reports and the loader's messages."""

from __future__ import annotations

import pytest

from litmus.text import count, noun_for, with_article
from support.cli import litmus

ONE_RUN = """\
version: 1
suite: One
flows:
  - name: page
    steps:
      - name: get
        request: {url: /page}
        assertions:
          - {type: status_code, expected: 201}
"""


@pytest.mark.parametrize(("n", "noun", "plural", "said"), [
    (0, "flow run", None, "0 flow runs"), (1, "flow run", None, "1 flow run"), (2, "finding", None, "2 findings"),
    (1, "entry", "entries", "1 entry"), (3, "entry", "entries", "3 entries"),
])
def test_count(n, noun, plural, said):
    assert count(n, noun, plural) == said
    assert noun_for(n, noun, plural) == said.split(" ", 1)[1]


@pytest.mark.parametrize(("phrase", "said"), [
    ("xpath assertion", "an xpath assertion"), ("llm_rubric", "an llm_rubric"),
    ("answers_question", "an answers_question"),
    ("extract_match", "an extract_match"), ("intent", "an intent"), ("HTML page", "an HTML page"),
    ("json_path assertion", "a json_path assertion"), ("header", "a header"), ("unique id", "a unique id"),
    ("unknown key", "an unknown key"), ("schema", "a schema"), ("status_code", "a status_code"),
])
def test_with_article(phrase, said):
    assert with_article(phrase) == said


def test_one_flow_run_and_one_finding_read_in_the_singular(tmp_path, target):
    target.json("/page", {"ok": True})
    (tmp_path / ".git").mkdir()
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "one.yaml").write_text(ONE_RUN)
    done = litmus(tmp_path, "run", "--base-url", target.base_url, "--out", "out")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0 of 1 suite passed" in done.stdout
    for name in ("comment.md", "summary.md"):
        text = (tmp_path / "out" / name).read_text()
        assert "**1 finding**" in text and " · 1 flow run · " in text.replace("\n", " · "), text
        assert "1 flow runs" not in text
    html = (tmp_path / "out" / "report.html").read_text()
    assert "1 finding ·" in html and "1 flow run × 1 step." in html and "each of 1 flow run of page" in html
    assert "1 flow runs" not in html and "1 findings" not in html


def test_the_loader_says_an_xpath_assertion(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "s.yaml").write_text(ONE_RUN.replace("{type: status_code, expected: 201}", "{type: xpath}"))
    done = litmus(tmp_path, "validate", "s.yaml")
    assert done.returncode == 2
    assert "s.yaml:9:13: error: an xpath assertion needs" in done.stdout + done.stderr
