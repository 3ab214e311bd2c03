"""Tokens and cost: what a target's response says it used, priced by `pricing:` in litmus.yaml, and summed.

Where a step's usage is read (the first that applies):
- the request's `usage: {input_path, output_path}`: JSONPaths into the response's JSON, or for a stream into
  the document `json_path` sees (`{events, text, done, tool_calls}`); the last value a path finds counts
  (a stream's counts grow event by event);
- `stream: openai`: the last chunk's `usage` (sent when the request sets `stream_options.include_usage`;
  Litmus never changes the request body), `prompt_tokens` / `completion_tokens`;
- `stream: anthropic`: `message_start`'s `message.usage` (input, and the output so far), then the last
  `message_delta`'s `usage` (the final output count);
- a JSON body with a `usage` object: OpenAI's `prompt_tokens` / `completion_tokens`, or the
  `input_tokens` / `output_tokens` of Anthropic's Messages and OpenAI's Responses API.
Anthropic's cache reads and writes (`cache_read_input_tokens`, `cache_creation_input_tokens`) count as
input, as OpenAI's `prompt_tokens` include its cached tokens: the input is what the model read.

A price is looked up by the model the response names (`model`), or, when the table has no price for it
(or it names none), by `pricing_model:` on the request: the entry of that exact name, else the longest
entry that the model starts with (`gpt-4o-mini` prices `gpt-4o-mini-2024-07-18`). The step records the
model priced (`usage.model`) and the entry used (`usage.price_key`).
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from litmus.assertions._jsonpaths import find
from litmus.model import Request
from litmus.response import Response
from litmus.results import RunResult, SuiteResult, Usage, UsageChange, UsageTotals
from litmus.run.stream import StreamedResponse
from litmus.text import count

# Prices are per million tokens.
PER = 1_000_000
# Costs are kept to a millionth of a cent: a short step costs a few millionths of a dollar.
COST_DIGITS = 8


@dataclass(frozen=True)
class Price:
    """USD per million tokens, from `pricing:` in litmus.yaml."""

    input_per_mtok: float
    output_per_mtok: float


@dataclass(frozen=True)
class Metered:
    """A step's usage, or why it has none (what a `tokens` or `cost` check names when it cannot decide)."""

    usage: Usage | None
    missing: str = ""


def meter(response: Response, request: Request, pricing: Mapping[str, Price]) -> Metered:
    """The usage `response` (the API's own, for a conversation turn) reports, priced; or why there is none."""
    # An error status is read as a plain body even when the request says `stream:` (litmus.run.http).
    stream = request.stream.format if request.stream and hasattr(response, "stream") else None
    if request.usage is not None:
        try:
            document = response.json()
        except ValueError as exc:
            return Metered(None, f"the response reports no token usage: {exc}")
        found = _from_paths(document, request.usage.input_path, request.usage.output_path)
        if found is None:
            paths = " / ".join(p for p in (request.usage.input_path, request.usage.output_path) if p)
            return Metered(None, f"the usage paths {paths} found no token count in the response")
        counts, source = found, "paths"
    elif stream in ("openai", "anthropic"):
        counts, source = _from_stream(stream, _usage_events(response)), stream
        if counts is None:
            hint = (" (an OpenAI stream sends it in its last chunk only when the request sets "
                    "stream_options: {include_usage: true})") if stream == "openai" else ""
            return Metered(None, f"the {stream} stream reports no token usage{hint}")
    elif stream is not None:
        return Metered(None, f"a '{stream}' stream has no usage Litmus knows how to read: give the request "
                             "usage: {input_path, output_path}")
    else:
        # Read as JSON only when it mentions usage: most bodies do not, and a large one is not parsed for nothing.
        document = None
        if b'"usage"' in response.body:
            with contextlib.suppress(ValueError):
                document = response.json()
        counts, source = _from_body(document), "body"
        if counts is None:
            return Metered(None, "the response reports no token usage (no 'usage' object with OpenAI's or "
                                 "Anthropic's token counts; for another API give the request usage: "
                                 "{input_path, output_path})")
    input_tokens, output_tokens, reported_model = counts
    if source == "body":
        source = "openai" if isinstance(document.get("usage"), dict) and "prompt_tokens" in document["usage"] \
            else "anthropic"
    # The model the response names, when it has a price, wins over the request's pricing_model: a probe cannot
    # price a reply of an expensive model as a cheap one (the table, litmus.yaml's, is the operator's).
    model = reported_model if price_key(reported_model, pricing) or not request.pricing_model \
        else request.pricing_model
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, source=source, model=model)
    price(usage, pricing)
    return Metered(usage)


def price(usage: Usage, pricing: Mapping[str, Price]) -> None:
    """Set `usage`'s price key and cost, when its model has a price and both counts are known."""
    key = price_key(usage.model, pricing)
    if key is None or usage.input_tokens is None or usage.output_tokens is None:
        return
    usage.price_key = key
    usage.cost_usd = cost(usage.input_tokens, usage.output_tokens, pricing[key])


def price_key(model: str | None, pricing: Mapping[str, Price]) -> str | None:
    """The `pricing:` entry for `model`: its own name, else the longest entry it starts with."""
    if not model:
        return None
    if model in pricing:
        return model
    return max((key for key in pricing if model.startswith(key)), key=len, default=None)


def cost(input_tokens: int, output_tokens: int, rate: Price) -> float:
    return round((input_tokens * rate.input_per_mtok + output_tokens * rate.output_per_mtok) / PER, COST_DIGITS)


def unpriced_reason(usage: Usage, pricing: Mapping[str, Price]) -> str:
    """Why `usage` has no cost (for a `cost` check's error)."""
    if usage.input_tokens is None or usage.output_tokens is None:
        side = "input" if usage.input_tokens is None else "output"
        return f"the response reports no {side} tokens, so the step's cost is unknown"
    if not usage.model:
        return ("the response names no model: set pricing_model on the request to one of litmus.yaml's "
                "'pricing:' entries")
    if not pricing:
        return f"no price for model {usage.model!r}: litmus.yaml has no 'pricing:' section"
    return f"no price for model {usage.model!r} in litmus.yaml's 'pricing:' (no entry is it or a prefix of it)"


def total(usages: Iterable[Usage | None]) -> UsageTotals | None:
    """The usages summed (the `None`s left out); None when there is none."""
    summed = UsageTotals()
    for usage in usages:
        if usage is None:
            continue
        summed.count += 1
        summed.input_tokens += usage.input_tokens or 0
        summed.output_tokens += usage.output_tokens or 0
        if usage.cost_usd is None:
            summed.unpriced += 1
        else:
            summed.cost_usd = round((summed.cost_usd or 0) + usage.cost_usd, COST_DIGITS)
    return summed if summed.count else None


def target_totals(suites: Iterable[SuiteResult]) -> UsageTotals:
    """Every step's usage summed: setup, flow runs (a conversation's turns each) and teardown."""
    return total(step.usage for suite in suites
                 for steps in (suite.setup, *(flow_run.steps for flow_run in suite.flow_runs), suite.teardown)
                 for step in steps) or UsageTotals()


def add(into: UsageTotals, more: UsageTotals) -> None:
    """Sum `more` into `into` (shards merged, flow runs summed)."""
    into.input_tokens += more.input_tokens
    into.output_tokens += more.output_tokens
    into.count += more.count
    into.unpriced += more.unpriced
    if more.cost_usd is not None:
        into.cost_usd = round((into.cost_usd or 0) + more.cost_usd, COST_DIGITS)


def measured(totals: UsageTotals, measure: str) -> float:
    """What a baseline comparison compares (`UsageChange.measure`): the cost, or input + output tokens."""
    return (totals.cost_usd or 0) if measure == "cost" else totals.input_tokens + totals.output_tokens


def judge_totals(calls_by_model: Mapping[str, tuple[int, int, int]], pricing: Mapping[str, Price]) -> UsageTotals:
    """The judge's usage: `calls_by_model` is model -> (calls, input tokens, output tokens) of the calls
    made (a cached or replayed verdict cost nothing in this run, and is not counted)."""
    summed = UsageTotals()
    for model, (calls, input_tokens, output_tokens) in calls_by_model.items():
        usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, model=model)
        price(usage, pricing)
        add(summed, UsageTotals(input_tokens, output_tokens, usage.cost_usd, calls,
                                calls if usage.cost_usd is None else 0))
    return summed


def _from_paths(document: Any, input_path: str | None, output_path: str | None) -> tuple | None:
    input_tokens = _last_count(input_path, document)
    output_tokens = _last_count(output_path, document)
    if input_tokens is None and output_tokens is None:
        return None
    model = _model(document) if isinstance(document, dict) else None
    return input_tokens, output_tokens, model


def _last_count(path: str | None, document: Any) -> int | None:
    if not path:
        return None
    counts = [value for _, value in find(path, document) if _is_count(value)]
    return int(counts[-1]) if counts else None


def _usage_events(response: StreamedResponse) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """A stream's events that may hold usage (their data mentions it) or the model (the first one), parsed: a
    long stream's events are not all parsed again, nor kept."""
    for index, (event_type, raw, _) in enumerate(response.stream.received):
        if index == 0 or '"usage"' in raw:
            with contextlib.suppress(ValueError):
                data = json.loads(raw)
                if isinstance(data, dict):
                    yield event_type, data


def _from_stream(fmt: str, events: Iterable[tuple[str | None, dict[str, Any]]]) -> tuple | None:
    input_tokens = output_tokens = model = None
    for event_type, data in events:
        if fmt == "openai":
            model = model or _model(data)
            if isinstance(data.get("usage"), dict):
                input_tokens, output_tokens = _openai_counts(data["usage"])
            continue
        kind = data.get("type") or event_type
        if kind == "message_start" and isinstance(data.get("message"), dict):
            message = data["message"]
            model = model or _model(message)
            if isinstance(message.get("usage"), dict):
                input_tokens, output_tokens = _anthropic_counts(message["usage"])
        elif kind == "message_delta" and isinstance(data.get("usage"), dict):
            more_input, more_output = _anthropic_counts(data["usage"])
            input_tokens = more_input if more_input is not None else input_tokens
            output_tokens = more_output if more_output is not None else output_tokens
    if input_tokens is None and output_tokens is None:
        return None
    return input_tokens, output_tokens, model


def _from_body(document: Any) -> tuple | None:
    if not isinstance(document, dict) or not isinstance(document.get("usage"), dict):
        return None
    reported = document["usage"]
    counts = _openai_counts(reported) if "prompt_tokens" in reported or "completion_tokens" in reported \
        else _anthropic_counts(reported)
    if counts == (None, None):
        return None
    return *counts, _model(document)


def _openai_counts(reported: Mapping[str, Any]) -> tuple[int | None, int | None]:
    return _count(reported.get("prompt_tokens")), _count(reported.get("completion_tokens"))


def _anthropic_counts(reported: Mapping[str, Any]) -> tuple[int | None, int | None]:
    parts = [_count(reported.get(key)) for key in
             ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    input_tokens = sum(p for p in parts if p is not None) if parts[0] is not None else None
    return input_tokens, _count(reported.get("output_tokens"))


def _count(value: Any) -> int | None:
    return int(value) if _is_count(value) else None


def _is_count(value: Any) -> bool:
    """A token count: a whole number >= 0 (a float like 12.0 included; never a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and value >= 0 and value == int(value)


def _model(document: Mapping[str, Any]) -> str | None:
    model = document.get("model")
    return model if isinstance(model, str) and model else None


# ---- how the reports say it (console, comment, job summary, HTML)

def usd(amount: float) -> str:
    """A cost as people read it: cents for a dollar or more, else to a millionth of a dollar."""
    if amount >= 1:
        return f"${amount:,.2f}"
    digits = f"{amount:.6f}".rstrip("0")
    return "$" + (digits + "0" * max(0, 2 - len(digits.split(".")[1])))


def totals_text(totals: UsageTotals, unit: str) -> str:
    """'1,234 tokens (1,000 input + 234 output), $0.0021 (1 of 3 steps unpriced)'; `unit` counts `count`."""
    text = (f"{totals.input_tokens + totals.output_tokens:,} tokens ({totals.input_tokens:,} input + "
            f"{totals.output_tokens:,} output)")
    if totals.cost_usd is not None:
        text += f", {usd(totals.cost_usd)}"
    if totals.unpriced:
        text += f" ({totals.unpriced} of {count(totals.count, unit)} unpriced)"
    return text


def run_totals_line(result: RunResult) -> str | None:
    """The run's tokens and cost, target then judge: None when neither reported any."""
    target, judge = result.totals.target, result.totals.judge
    parts = [f"target {totals_text(target, 'step')}"] if target.count else []
    if judge.count:
        parts.append(f"judge {totals_text(judge, 'call')}")
    return f"Tokens and cost: {'; '.join(parts)}" if parts else None


def change_text(change: UsageChange, limit: float | None) -> str:
    """'cost +50% per flow run ($0.0002 → $0.0003 in all)', then ', beyond --max-cost-increase 20%' when the
    flow regressed on it."""
    here, before = change.here, change.baseline
    if change.measure == "cost":
        values = f"{usd(before.cost_usd)} → {usd(here.cost_usd)}"
    else:
        values = f"{before.input_tokens + before.output_tokens:,} → {here.input_tokens + here.output_tokens:,} tokens"
    if change.change_pct is not None:
        shift = f"{change.change_pct:+g}%"
    else:  # the baseline's measure was 0: no percentage says how much
        shift = "up from 0" if measured(here, change.measure) else "±0%"
    text = f"{change.measure} {shift} per flow run ({values} in all)"
    if change.over_limit and limit is not None:
        text += f", beyond --max-cost-increase {limit:g}%"
    return text
