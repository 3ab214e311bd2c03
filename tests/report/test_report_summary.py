"""The job summary's Mermaid chart: one fixed template, checked against the grammar we emit and parsed
by Mermaid's own parser (pinned in tests/tools, installed by `support.tools` when missing).

GitHub renders ```mermaid blocks natively; a block it cannot parse shows as an error box, so every
line must match the `xychart-beta` subset below whatever the suite names hold.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from litmus.report import render
from litmus.report.summary import CHART_SUITES, pass_rate_chart
from support.tools import mermaid_parser

NUMBER = r"(?:100(?:\.0)?|\d{1,2}(?:\.\d)?)"  # 0-100, one decimal
LABEL = r'"(?!%%)[^"\\`<>;\[\]{}\x00-\x1f]{1,40}"'
GRAMMAR = [
    r"```mermaid",
    r"xychart-beta",
    r'    title "[^"]+"',
    rf"    x-axis \[{LABEL}(?:, {LABEL})*\]",
    r'    y-axis "percent" 0 --> 100',
    rf"    bar \[{NUMBER}(?:, {NUMBER})*\]",
    rf"    line \[{NUMBER}(?:, {NUMBER})*\]",
    r"```",
]


def parse(block: str) -> dict[str, list]:
    lines = block.split("\n")
    assert len(lines) == len(GRAMMAR)
    for line, rule in zip(lines, GRAMMAR, strict=True):
        assert re.fullmatch(rule, line), (line, rule)
    labels = json.loads(lines[3].split("x-axis ", 1)[1])
    bars = json.loads(lines[5].split("bar ", 1)[1])
    thresholds = json.loads(lines[6].split("line ", 1)[1])
    assert len(labels) == len(bars) == len(thresholds)
    return {"labels": labels, "bars": bars, "thresholds": thresholds}


def test_the_chart_shows_pass_rate_against_threshold_per_suite(result):
    chart = parse(pass_rate_chart(result))
    assert chart == {"labels": ["Checkout assistant", "Users API"], "bars": [50.0, 0.0], "thresholds": [80.0, 100.0]}
    summary = render("summary", result)
    assert pass_rate_chart(result) in summary
    assert summary.index("```mermaid") < summary.index("## Findings")


HOSTILE_NAMES = ['a "quoted" name', "back`tick`s ```", "`markdown string`", "<b>bold</b> & co", "line\nbreak",
                 "brackets [x], {y}", "]", "#1; @team", "#quot; and #35;", "x" * 200, '"', "\u2028", "%%",
                 "%% starts a comment", "50%% off", "%%{init: {'theme': 'dark'}}%%", "100% %", "a;b\r\nc"]


def mermaid_errors(diagrams: list[str]) -> list[str | None]:
    """Mermaid's own parse of each diagram (the lines inside its ```mermaid fence): None or the error."""
    command = mermaid_parser()
    bodies = ["\n".join(d.split("\n")[1:-1]) for d in diagrams]
    done = subprocess.run(command, input=json.dumps(bodies), capture_output=True,
                          text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def chart_named(result, name: str) -> str:
    result.suites[0].name = name
    result.suites[0].pass_rate = 33.333333
    return pass_rate_chart(result)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_suite_names_still_parse(result, name):
    chart = parse(chart_named(result, name))
    assert chart["bars"][0] == 33.3
    assert len(chart["labels"][0]) <= 40


def test_mermaid_parses_the_chart_whatever_the_suite_names(result):
    charts = [chart_named(result, name) for name in HOSTILE_NAMES]
    assert mermaid_errors(charts) == [None] * len(charts)


def test_the_parser_check_catches_a_comment_in_a_label(result):
    """The check above can fail: a label that starts with `%%` is a Mermaid comment to the end of the line."""
    chart = pass_rate_chart(result).replace('["Checkout', '["%%Checkout')
    (error,) = mermaid_errors([chart])
    assert error is not None


def test_labels_keep_what_can_be_said_safely(result):
    labels = parse(chart_named(result, 'a "b" [c] {d}; e %% f <g>'))["labels"]
    assert labels[0] == "a 'b' (c) (d), e % f g"


def test_many_suites_are_capped_and_no_suites_draw_no_chart(result):
    result.suites = result.suites * 40
    assert len(parse(pass_rate_chart(result))["labels"]) == CHART_SUITES
    result.suites = []
    assert pass_rate_chart(result) is None and "```mermaid" not in render("summary", result)
