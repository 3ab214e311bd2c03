"""Intent Evaluation: the transcript a judge reads to decide whether a flow run achieved the intent.

The transcript is built from the flow run's results (already redacted by the runner): each step's
request, its response cut to a bounded size, and its assertion outcomes with reasons. It is
bounded as a whole too, so a long flow cannot blow up a judge call's cost. It leaves out what changes
from run to run without changing the story (timings, the target's host), so an unchanged run hits the verdict cache.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from litmus.results import AssertionOutcome, FlowRunResult
from litmus.text import MARK

MAX_BODY_CHARS = 2_000
MAX_TRANSCRIPT_CHARS = 16_000


def transcript(flow_run: FlowRunResult) -> str:
    lines = [f"Flow: {flow_run.flow} (run {flow_run.run_index}"
             + (f", scenario {flow_run.scenario})" if flow_run.scenario else ")")]
    for step in flow_run.steps:
        lines.append("")
        request = step.request
        lines.append(f"Step {step.name!r}: {request.method} {_target_path(request.url)}" if request
                     else f"Step {step.name!r}")
        if request and request.body:
            lines.append("Request body: " + _cut(request.body))
        if step.error:
            lines.append(f"No response: {step.error}")
        elif step.response:
            response = step.response
            # No timings: they differ on every run and would defeat the verdict cache.
            lines.append(f"Response: HTTP {response.status}")
            if response.body is not None:
                lines.append("Response body: " + _cut(response.body))
        if step.status == "skipped":
            lines.append("(step skipped)")
        for outcome in step.assertions:
            label = f"{outcome.type}" + (f" {outcome.name!r}" if outcome.name else "")
            score = f" (score {outcome.score:g} / {outcome.threshold:g})" if outcome.score is not None else ""
            # A passed check's reason adds nothing for the judge, and may hold a timing (see above).
            why = "" if outcome.status == "passed" else f": {_reason(outcome)}"
            lines.append(f"- assertion {label}: {outcome.status}{score}{why}")
    text = "\n".join(lines)
    if len(text) > MAX_TRANSCRIPT_CHARS:
        more = len(text) - MAX_TRANSCRIPT_CHARS
        text = text[:MAX_TRANSCRIPT_CHARS] + f"\n[{MARK} transcript cut: {more} more characters]"
    return text


def _reason(outcome: AssertionOutcome) -> str:
    """Why the outcome is what it is; for a judged one the judges' own words, without which provider and
    model gave them: that depends on the run's judge settings, and a cassette recorded with one judge must
    replay under another (and an intent verdict cached under one tier-2 model stay valid for another)."""
    if outcome.judge and outcome.judge.tiers:
        return " / ".join(tier.reason for tier in outcome.judge.tiers)
    return outcome.reason


def _target_path(url: str) -> str:
    """The URL without scheme and host: a preview deployment's (or the demo's) address changes from run
    to run without changing the story, and would defeat the verdict cache and the cassettes."""
    parts = urlsplit(url)
    return urlunsplit(("", "", parts.path or "/", parts.query, "")) if parts.netloc else url


def _cut(text: str) -> str:
    text = text.strip()
    more = len(text) - MAX_BODY_CHARS
    return text if more <= 0 else text[:MAX_BODY_CHARS] + f" [{MARK} {more} more]"
