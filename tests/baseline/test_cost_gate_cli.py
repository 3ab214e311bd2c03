"""The baseline cost gate end to end: `litmus run --baseline URL` runs the suite against the base deployment and
the PR's, on two targets on 127.0.0.1 whose replies report usage; a rise beyond --max-cost-increase is a regressed
flow that fails the run, and the comment and the HTML report show each flow's change."""

from __future__ import annotations

import json

import pytest

from litmus.results import load_results
from support.cli import litmus
from support.target import Target

SUITE = """\
version: 1
suite: Assistant
flows:
  - name: Answer
    steps:
      - name: ask
        request: {method: POST, url: /v1/chat/completions, json: {model: shop}}
        assertions: [{type: status_code, expected: 200}]
"""
PRICING = "pricing:\n  shop: {input_per_mtok: 1, output_per_mtok: 4}\n"


def reply(output_tokens: int) -> dict:
    return {"model": "shop-2025", "choices": [{"message": {"role": "assistant", "content": "hi"}}],
            "usage": {"prompt_tokens": 200, "completion_tokens": output_tokens}}


def run(tmp_path, *args: str, priced: bool = True):
    """The suite against the PR's deployment (150 output tokens) with the base's (100) as the baseline."""
    (tmp_path / "probes").mkdir(exist_ok=True)
    (tmp_path / "probes" / "s.yaml").write_text(SUITE)
    (tmp_path / "litmus.yaml").write_text(PRICING if priced else "")
    with Target() as base, Target() as head:
        base.json("/v1/chat/completions", reply(100))
        head.json("/v1/chat/completions", reply(150))
        done = litmus(tmp_path, "run", "probes", "--base-url", head.base_url, "--baseline", base.base_url,
                      "--out", "out", *args)
    assert done.returncode in (0, 1), done.stderr
    out = tmp_path / "out"
    return done, load_results(out / "results.json"), (out / "comment.md").read_text("utf-8"), \
        (out / "report.html").read_text("utf-8")


def heading(comment: str) -> str:
    return next(line for line in comment.splitlines() if line.startswith("## "))


def test_a_50_percent_rise_in_output_tokens_fails_at_20_percent_and_shows_in_the_comment(tmp_path):
    done, result, comment, html = run(tmp_path, "--max-cost-increase", "20")
    # Per run: 200 + 100 tokens at $1/$4 per million = $0.0006 on the base; 200 + 150 = $0.0008 here: +33.33%.
    (flow,) = result.baseline.flows
    assert (flow.verdict, flow.usage.measure, flow.usage.change_pct, flow.usage.over_limit) == (
        "regressed", "cost", 33.33, True)
    assert (flow.usage.baseline.output_tokens, flow.usage.here.output_tokens) == (100, 150)
    assert result.baseline.regressed == 1 and result.baseline.max_cost_increase == 20
    assert done.returncode == 1, done.stdout
    assert "FAILED: 1 of 1 suite passed (1 flow over --max-cost-increase 20%)" in done.stdout
    change = "cost +33.33% per flow run ($0.0006 → $0.0008 in all), beyond --max-cost-increase 20%"
    assert f"regressed: {change}" in comment
    assert "**Tokens and cost per flow**" in comment
    assert "| `Assistant › Answer` | 350 tokens (200 input + 150 output), $0.0008 | 300 tokens (200 input + " \
           f"100 output), $0.0006 | {change} |" in comment
    assert heading(comment) == "## ❌ Litmus: 1 suite passed, 1 flow over --max-cost-increase 20%"
    assert "Tokens and cost per flow" in html and "+33.33%" in html and "beyond --max-cost-increase 20%" in html


def test_the_same_rise_passes_at_60_percent(tmp_path):
    done, result, comment, _ = run(tmp_path, "--max-cost-increase", "60")
    (flow,) = result.baseline.flows
    assert (flow.verdict, flow.usage.change_pct, flow.usage.over_limit) == ("within noise", 33.33, False)
    assert done.returncode == 0, done.stdout
    assert "cost +33.33% per flow run ($0.0006 → $0.0008 in all) |" in comment
    assert heading(comment) == "## ✅ Litmus: 1 suite passed"


def test_without_prices_the_gate_compares_tokens_and_says_so(tmp_path):
    done, result, comment, _ = run(tmp_path, "--max-cost-increase", "15", priced=False)
    (flow,) = result.baseline.flows
    # 300 tokens per run on the base, 350 here: +16.67%.
    assert (flow.usage.measure, flow.usage.change_pct, flow.verdict) == ("tokens", 16.67, "regressed")
    assert "tokens +16.67% per flow run (300 → 350 tokens in all), beyond --max-cost-increase 15%" in comment
    assert done.returncode == 1


def test_without_the_flag_the_change_is_shown_and_gates_nothing(tmp_path):
    done, result, comment, _ = run(tmp_path)
    (flow,) = result.baseline.flows
    assert (flow.verdict, flow.usage.over_limit, result.baseline.max_cost_increase) == ("within noise", False, None)
    assert done.returncode == 0
    assert "cost +33.33% per flow run" in comment


@pytest.mark.parametrize("fail_on", ["never", "new"])
def test_litmus_compare_records_the_gate_and_fails_under_new(tmp_path, fail_on):
    run(tmp_path)
    head = tmp_path / "out" / "results.json"
    base = tmp_path / "out" / "baseline.json"
    done = litmus(tmp_path, "compare", str(base), str(head), "-o", "compared.json", "--fail-on", fail_on,
                  "--max-cost-increase", "20")
    compared = json.loads((tmp_path / "compared.json").read_text("utf-8"))
    assert compared["baseline"]["flows"][0]["usage"]["over_limit"] is True
    assert done.returncode == (1 if fail_on == "new" else 0), done.stdout + done.stderr


def test_max_cost_increase_without_a_baseline_is_a_usage_error(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "s.yaml").write_text(SUITE)
    done = litmus(tmp_path, "run", "probes", "--base-url", "http://127.0.0.1:9", "--max-cost-increase", "20")
    assert done.returncode == 2 and "--max-cost-increase compares with a baseline: give --baseline too" in done.stderr


def test_a_flow_the_gate_cannot_measure_is_named_not_passed_silently(tmp_path):
    """The base deployment reports no usage (an older API, or none at all): the gate cannot compare the flow, and
    the run says so rather than letting the limit pass unnoticed."""
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "s.yaml").write_text(SUITE)
    (tmp_path / "litmus.yaml").write_text(PRICING)
    with Target() as base, Target() as head:
        base.json("/v1/chat/completions", {"choices": [{"message": {"role": "assistant", "content": "hi"}}]})
        head.json("/v1/chat/completions", reply(150))
        done = litmus(tmp_path, "run", "probes", "--base-url", head.base_url, "--baseline", base.base_url,
                      "--out", "out", "--max-cost-increase", "20")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("--max-cost-increase: 1 flow reported no token usage here or in the baseline, so its cost was not "
            "compared: Assistant › Answer") in done.stdout + done.stderr
    assert load_results(tmp_path / "out" / "results.json").baseline.flows[0].usage is None


def test_a_rise_from_nothing_is_beyond_any_limit_and_says_so():
    from litmus.compare import flow_verdict, pass_rate, usage_change
    from litmus.results import UsageTotals
    from litmus.usage import change_text

    nothing = UsageTotals(input_tokens=0, output_tokens=0, cost_usd=None, count=1, unpriced=1)
    some = UsageTotals(input_tokens=5, output_tokens=5, cost_usd=None, count=1, unpriced=1)
    rate = pass_rate(1, 1)
    rose = usage_change(some, 1, nothing, 1)
    assert (rose.measure, rose.change_pct) == ("tokens", None)
    assert flow_verdict(rate, rate, rose, 1000) == "regressed" and rose.over_limit
    assert change_text(rose, 1000) == ("tokens up from 0 per flow run (0 → 10 tokens in all), "
                                       "beyond --max-cost-increase 1000%")
    same = usage_change(nothing, 1, nothing, 1)
    assert flow_verdict(rate, rate, same, 0) == "within noise" and not same.over_limit
    assert change_text(same, 0) == "tokens ±0% per flow run (0 → 0 tokens in all)"
