"""Intent Evaluation: the transcript a judge reads to decide whether a flow run achieved the intent,
and the deterministic fallback used when there is no intent or no judge.

The transcript is built from the flow run's results (already redacted by the runner): each step's
request, its response cut to a bounded size, and its assertion outcomes with reasons. It is
bounded as a whole too, so a long flow cannot blow up a judge call's cost.
"""

from __future__ import annotations

from litmus.results import FlowRunResult, IntentEvaluation

MAX_BODY_CHARS = 2_000
MAX_TRANSCRIPT_CHARS = 16_000


def transcript(flow_run: FlowRunResult) -> str:
    lines = [f"Flow: {flow_run.flow} (run {flow_run.run_index}"
             + (f", scenario {flow_run.scenario})" if flow_run.scenario else ")")]
    for step in flow_run.steps:
        lines.append("")
        request = step.request
        lines.append(f"Step {step.name!r}: {request.method} {request.url}" if request else f"Step {step.name!r}")
        if request and request.body:
            lines.append("Request body: " + _cut(request.body))
        if step.error:
            lines.append(f"No response: {step.error}")
        elif step.response:
            response = step.response
            lines.append(f"Response: HTTP {response.status} in {response.elapsed_ms:.0f} ms")
            if response.body is not None:
                lines.append("Response body: " + _cut(response.body))
        if step.status == "skipped":
            lines.append("(step skipped)")
        for outcome in step.assertions:
            label = f"{outcome.type}" + (f" {outcome.name!r}" if outcome.name else "")
            score = f" (score {outcome.score:g} / {outcome.threshold:g})" if outcome.score is not None else ""
            lines.append(f"- assertion {label}: {outcome.status}{score}: {outcome.reason}")
    text = "\n".join(lines)
    if len(text) > MAX_TRANSCRIPT_CHARS:
        text = text[:MAX_TRANSCRIPT_CHARS] + f"\n[… transcript cut: {len(text) - MAX_TRANSCRIPT_CHARS} more characters]"
    return text


def deterministic(flow_run: FlowRunResult, why: str) -> IntentEvaluation:
    """The documented fallback: the run passes when none of its assertions failed or errored (and, as
    `needs_review` is never a pass, none awaits review)."""
    outcomes = [o for step in flow_run.steps for o in step.assertions]
    bad = [o for o in outcomes if o.status in ("failed", "error")]
    step_errors = [s for s in flow_run.steps if s.status == "error"]
    review = [o for o in outcomes if o.status == "needs_review"]
    if bad or step_errors:
        count = len(bad) + len(step_errors)
        return IntentEvaluation("failed", "deterministic", f"{why}: {count} assertion(s) or step(s) failed or errored")
    if review:
        return IntentEvaluation("needs_review", "deterministic", f"{why}: {len(review)} assertion(s) need review")
    return IntentEvaluation("passed", "deterministic", f"{why}: no assertion failed or errored")


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_BODY_CHARS else text[:MAX_BODY_CHARS] + f" [… {len(text) - MAX_BODY_CHARS} more]"
