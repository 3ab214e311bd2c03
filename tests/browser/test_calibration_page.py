"""calibration.html (`litmus calibrate`, a subprocess against a planted fake judge) in real Chromium: the sweep is
drawn as inline SVG where the figures say, the page loads nothing from elsewhere, fits a phone's width, and a
label file named like markup (a fork can name files) stays text."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judges"))
from test_calibrate import THRESHOLD, calibrate, planted, scripted, write_jsonl  # noqa: E402

from support.cli import write_judge_config  # noqa: E402

HOSTILE = "<img src=x onerror=window.pwned=1>.jsonl"


def test_the_sweep_is_drawn_offline_and_markup_in_a_source_name_stays_text(page, tmp_path, fake_judge):
    items = planted(60, seed=5)
    scripted(fake_judge, items)
    write_judge_config(tmp_path, fake_judge.openai_base_url, threshold=THRESHOLD, cache="cache")
    write_jsonl(tmp_path / HOSTILE, items[:30])
    write_jsonl(tmp_path / "rest.jsonl", items[30:])
    done = calibrate(tmp_path, HOSTILE, "rest.jsonl")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "litmus-calibration"
    document = json.loads((out / "calibration.json").read_text("utf-8"))
    html = (out / "calibration.html").read_text("utf-8")
    assert "http://" not in html and "https://" not in html.replace("http://www.w3.org", "")  # no external asset

    page.open(html, width=1280, name="calibration.html")
    assert page.js("return typeof window.pwned") == "undefined"
    assert page.js("return document.querySelectorAll('img').length") == 0
    assert HOSTILE in page.js("return document.querySelector('table.sources').textContent")
    figure = page.js("""
        const svg = document.querySelector('figure.sweep[data-type="tone"] svg');
        const line = svg.querySelector('polyline.false-pass');
        const box = svg.viewBox.baseVal;
        return {points: line.points.numberOfItems, label: svg.getAttribute('aria-label'),
                suggested: svg.querySelector('path.suggested title').textContent,
                width: svg.getBoundingClientRect().width, box: box.width,
                first: [line.points.getItem(0).x, line.points.getItem(0).y]};
    """)
    assert figure["points"] == 101
    suggestion = document["types"]["tone"]["suggestion"]["threshold"]
    assert figure["suggested"] == f"suggested threshold {suggestion}"
    assert f"configured {THRESHOLD}" in figure["label"]
    # At threshold 0 the judge passes everything: the false-pass rate is 1, drawn at the top of the plot.
    assert document["types"]["tone"]["sweep"][0]["false_pass"] == 1.0
    assert figure["first"] == [40, 10]
    assert page.console_errors() == []
    page.screenshot("calibration-wide")

    page.open(html, width=375, name="calibration.html")
    assert page.js("return document.documentElement.scrollWidth") <= 375
    page.screenshot("calibration-phone")
