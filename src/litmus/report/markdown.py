"""The Markdown report: the sticky PR comment (`comment.md`), and the body of the summary and HTML.

From the comment alone a reviewer sees, for every finding: the probe line (linked when repository,
server and commit are known), the request, per path what was expected and what came back and why,
the judge's score, reason and deciding tier, and a curl to reproduce it.

Size: GitHub refuses comments over 65,536 characters, so the comment is built within a budget of
60,000 (a margin in case GitHub counts UTF-16 units): the header and suite table always, then whole
findings in order while they fit, then a line saying how many more the artifact holds. A finding
is never cut half-way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from litmus.report import findings as fd
from litmus.report.markdown_text import cell, code, fenced, prose
from litmus.report.options import Options, probe_url
from litmus.results import JudgeRecord, RunResult, StepResult, SuiteResult

MARKER = "<!-- litmus-report -->"
COMMENT_LIMIT = 65_536
SUMMARY_LIMIT = 1_048_576  # bytes: GitHub's per-step job summary limit


@dataclass(frozen=True)
class Flavour:
    marker: bool  # the hidden sticky-comment marker
    details: bool  # fold long parts in <details> (our own raw HTML; never untrusted text)
    excerpts: bool  # full request/response excerpts, every judge tier, every flow run
    budget: int  # the most the document may measure; whole findings are cut past it
    measure: Callable[[str], int] = len
    mismatch_rows: int | None = 20  # rows shown per finding (None: all)
    text_limit: int = 600  # characters of a judge reason or error shown


COMMENT = Flavour(marker=True, details=True, excerpts=False, budget=60_000)
SUMMARY = Flavour(marker=False, details=True, excerpts=False, budget=SUMMARY_LIMIT - 48_576,
                  measure=lambda text: len(text.encode("utf-8")))
# The HTML report: no GitHub limit, but markdown-it renders about 0.2 MB of Markdown a second, so a
# run with tens of thousands of findings is cut too (the first few hundred tell the story; the
# rest are in results.json, junit.xml and litmus.sarif).
FULL = Flavour(marker=False, details=False, excerpts=True, budget=1_000_000, mismatch_rows=None, text_limit=100_000)


def render(result: RunResult, **options) -> str:
    """The sticky PR comment."""
    return document(result, Options(**options), COMMENT)


def document(result: RunResult, options: Options, flavour: Flavour) -> str:
    findings = fd.collect(result)
    head = "\n\n".join(_head(result, options, findings, flavour)) + "\n"
    parts = [head]
    used = flavour.measure(head)
    footer_room = flavour.measure(_footer(len(findings), options))
    shown = 0
    for block in _blocks(result, options, findings, flavour):
        size = flavour.measure(block)
        if used + size + footer_room > flavour.budget:
            break
        parts.append(block)
        used += size
        shown += 1
    if shown < len(findings):
        parts.append(_footer(len(findings) - shown, options))
    return "".join(parts)


def _footer(remaining: int, options: Options) -> str:
    where = f"[the report artifact]({options.artifact_url})" if options.artifact_url else "the report artifact"
    return (f"\n---\n\n**{remaining} more finding{'s' if remaining != 1 else ''} not shown here** (size limit). "
            f"Every finding is in {where}: `results.json` and `junit.xml` (all), `report.html` and "
            "`litmus.sarif` (the first thousands).\n")


# ---- header: verdict and per-suite table ----

def _head(result: RunResult, options: Options, findings: list[fd.Finding], flavour: Flavour) -> Iterator[str]:
    if flavour.marker:
        yield MARKER
    failed = [s for s in result.suites if s.verdict == "failed"]
    icon = "✅" if result.verdict == "passed" else "❌"
    if not result.suites:
        verdict = "no suites ran"
    elif failed:
        verdict = f"{len(failed)} of {len(result.suites)} suite{'s' if len(result.suites) != 1 else ''} failed"
    else:
        verdict = f"all {len(result.suites)} suite{'s' if len(result.suites) != 1 else ''} passed"
    yield f"## {icon} Litmus: {verdict}"
    kinds = {kind: sum(f.kind == kind for f in findings) for kind in fd.LEVELS}
    facts = [f"**{len(findings)} finding{'s' if len(findings) != 1 else ''}**"]
    named = {"failed": "failed", "transport_error": "no response", "error": "could not be evaluated",
             "needs_review": "need review"}
    facts += [f"{count} {named[kind]}" for kind, count in kinds.items() if count]
    facts.append(f"{sum(len(s.flow_runs) for s in result.suites)} flow runs")
    sha = options.sha or result.run.git_sha
    if sha:
        facts.append(f"commit {code(sha[:12])}")
    if result.run.base_url:
        facts.append(f"target {code(result.run.base_url)}")
    if result.run.shard:
        facts.append(f"shard {result.run.shard}")
    lines = [" · ".join(facts)]
    if result.run.interrupted:
        lines.append("⚠️ **The run was interrupted**: results are incomplete.")
    yield "\n\n".join(lines)
    if result.suites:
        yield _suite_table(result, options)
        totals = result.judge
        yield (f"Judge, whole run: {totals.calls} calls · {totals.cached} cached · {totals.escalated} escalated · "
               f"{totals.needs_review} need review · {totals.input_tokens:,} input + {totals.output_tokens:,} "
               "output tokens")
    if flavour.excerpts:
        for suite in result.suites:
            yield _flow_run_table(suite)
    if not findings:
        yield "No findings: every evaluated assertion passed."


def _suite_table(result: RunResult, options: Options) -> str:
    rows = ["| Suite | Verdict | Flow runs passed | Assertions | Judge |", "|---|---|---|---|---|"]
    for suite in result.suites:
        stats = fd.suite_stats(suite)
        name = prose(suite.name)
        url = probe_url(result, options, suite.file, suite.line)
        name = f"[{name}]({url})" if url else name
        runs = (f"{stats.runs_passed} / {stats.runs_total} = {suite.pass_rate:g}% "
                f"(needs {suite.pass_threshold:g}%)")
        order = ["passed", "failed", "error", "needs_review", "skipped"]
        assertions = " · ".join(f"{stats.assertions[s]} {s.replace('_', ' ')}" for s in order if stats.assertions[s])
        judge = (f"{stats.judge_calls} calls · {stats.judge_cached} cached · {stats.judge_escalated} escalated · "
                 f"{stats.judge_needs_review} need review · {stats.judge_tokens:,} tokens")
        verdict = f"{fd.ICONS[suite.verdict]} {suite.verdict}" + (f": {prose(suite.reason)}" if suite.reason else "")
        rows.append(f"| {name} | {verdict} | {runs} | {assertions or '—'} | {judge} |")
    return "\n".join(rows)


def _flow_run_table(suite: SuiteResult) -> str:
    rows = [f"### Flow runs of {prose(suite.name)}", "",
            "| Flow | Scenario | Run | Intent Evaluation | Score | Reason |", "|---|---|---|---|---|---|"]
    for run in suite.flow_runs:
        intent = run.intent_evaluation
        score = "—" if intent.score is None else f"{intent.score:g}"
        rows.append(f"| {cell(run.flow)} | {cell(run.scenario) if run.scenario else '—'} | {run.run_index} | "
                    f"{fd.ICONS.get(intent.status, '🧐')} {intent.status} ({intent.method}) | {score} | "
                    f"{cell(intent.reason)} |")
    return "\n".join(rows)


# ---- findings ----

def _blocks(result: RunResult, options: Options, findings: list[fd.Finding], flavour: Flavour) -> Iterator[str]:
    """One self-contained Markdown block per finding, carrying any section/group heading it opens."""
    sections = [("Findings", [f for f in findings if f.kind != "needs_review"]),
                ("Needs human review", [f for f in findings if f.kind == "needs_review"])]
    for title, members in sections:
        group = None
        for index, finding in enumerate(members):
            heading = ""
            if index == 0:
                heading += f"\n## {title} ({len(members)})\n"
            if finding.where != group:
                group = finding.where
                heading += f"\n### {prose(group)}\n"
            yield heading + _finding(result, options, finding, flavour)


def _finding(result: RunResult, options: Options, finding: fd.Finding, flavour: Flavour) -> str:
    out = [f"\n#### {finding.icon} {prose(fd.clip(fd.summary_sentence(finding), 200))}"]
    location = f"{finding.suite.file}:{finding.line}:{finding.column}"
    url = probe_url(result, options, finding.suite.file, finding.line)
    facts = [f"[{code(location)}]({url})" if url else code(location), f"rule {code(finding.rule)}"]
    if finding.scenario:
        facts.append(f"scenario {code(finding.scenario)}")
    if finding.runs_text():
        facts.append(prose(finding.runs_text()))
    out.append(" · ".join(facts))
    step = finding.step
    if step is not None:
        out.append(_request_line(step))
    out.append(f"**Why:** {prose(fd.clip(finding.reason, flavour.text_limit))}")
    if finding.outcome is not None and finding.outcome.mismatches:
        out.append(_mismatch_table(finding, flavour))
    judge = fd.judge_text(finding)
    if judge:
        reason = fd.judge_reason(finding)
        line = f"**Judge:** {prose(judge)}"
        if reason:
            line += f". {prose(fd.clip(reason, flavour.text_limit))}"
        out.append(line)
        if flavour.excerpts:
            out.append(_tier_table(finding.judge))
    if step is not None and step.request is not None:
        body_limit = None if flavour.excerpts else 2_000
        out.append(_fold("Reproduce with curl", fenced(fd.curl_command(step.request, body_limit), "sh"), flavour))
    if flavour.excerpts and step is not None:
        out.extend(_excerpts(step))
    return "\n\n".join(out) + "\n"


def _request_line(step: StepResult) -> str:
    if step.request is None:
        return f"**Request:** none was sent ({prose(step.error or 'skipped')})"
    response = prose(fd.response_text(step))
    attempts = f" after {step.attempts} attempts" if step.attempts > 1 else ""
    return f"**Request:** {code(f'{step.request.method} {step.request.url}')} → {response}{attempts}"


def _mismatch_table(finding: fd.Finding, flavour: Flavour) -> str:
    mismatches = finding.outcome.mismatches
    shown = mismatches if flavour.mismatch_rows is None else mismatches[: flavour.mismatch_rows]
    limit = 100_000 if flavour.excerpts else 300
    rows = ["| path | expected | actual | reason |", "|---|---|---|---|"]
    rows += [f"| {cell(m.path)} | {cell(fd.show(m.expected, limit))} | {cell(fd.show(m.actual, limit))} | "
             f"{cell(fd.clip(m.reason, limit))} |" for m in shown]
    table = "\n".join(rows)
    if len(shown) < len(mismatches):
        table += f"\n\n*{len(mismatches) - len(shown)} more mismatches in `report.html`.*"
    if len(mismatches) > 5:
        return _fold(f"{len(mismatches)} mismatches", table, flavour)
    return table


def _tier_table(record: JudgeRecord) -> str:
    rows = ["| Tier | Judge | Score | Cached | Latency | Tokens in / out | Reason |", "|---|---|---|---|---|---|---|"]
    for index, tier in enumerate(record.tiers):
        score = "unparseable" if tier.score is None else f"{tier.score:g}"
        rows.append(f"| {index + 1} | {cell(f'{tier.provider}/{tier.model}')} | {score} | "
                    f"{'yes' if tier.cached else 'no'} | {tier.latency_ms:g} ms | "
                    f"{tier.input_tokens} / {tier.output_tokens} | {cell(tier.reason)} |")
    return "\n".join(rows)


def _excerpts(step: StepResult) -> Iterator[str]:
    request, response = step.request, step.response
    if request is not None:
        head = "\n".join([f"{request.method} {request.url}"] + [f"{k}: {v}" for k, v in request.headers.items()])
        body = f"\n\n{request.body}" if request.body else ""
        note = " (body shortened)" if request.body_truncated else ""
        yield f"**Request excerpt{note}:**\n\n" + fenced(head + body, "http")
    if response is not None:
        head = "\n".join([f"HTTP {response.status} ({response.elapsed_ms:g} ms, {response.size} bytes)"]
                         + [f"{k}: {v}" for k, v in response.headers.items()])
        body = f"\n\n{response.body}" if response.body else ""
        note = " (body shortened)" if response.truncated or response.body_excerpt_truncated else ""
        yield f"**Response excerpt{note}:**\n\n" + fenced(head + body, "http")
    if step.extracted:
        yield "**Extracted:**\n\n" + "\n".join(f"- {code(name)} = {code(fd.show(value, 100_000))}"
                                              for name, value in step.extracted.items())


def _fold(summary: str, body: str, flavour: Flavour) -> str:
    if flavour.details:
        return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"
    return f"**{summary}:**\n\n{body}"
