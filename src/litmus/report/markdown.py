"""The Markdown report: the sticky PR comment (`comment.md`), and the body of the job summary.

From the comment alone a reviewer sees: a heading that agrees with the table under it ("1 suite
passed with 3 findings", never a bare "all passed" above failures); failing suites first; then for
every finding, worst first within its suite: the probe line (linked when repository, server and
commit are known), the request, per path what was expected and what came back (values as JSON, so
`"12.50"` is a string), the judge's score, reason and deciding tier when a judge ran, and a curl
that replays the request (see `findings.curl_command`). Each thing is said once. Step warnings (a
request that does not conform to its OpenAPI operation) are counted on the facts line and the suite's
row and listed after the table, at most MAX_WARNINGS of them: they decide nothing.

Size: GitHub refuses comments over 65,536 characters, so the comment is built within a budget of
60,000 (a margin in case GitHub counts UTF-16 units): the header and suite table always, then whole
findings in order while they fit; a finding too large on its own is shown shortened (headline,
location, request) so the ones after it still appear; then a line saying how many more the
artifact holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from litmus.compare import headline
from litmus.report import findings as fd
from litmus.report.markdown_text import cell, code, fenced, link, prose
from litmus.report.options import Options, probe_url
from litmus.results import RunResult, StepResult, SuiteResult
from litmus.text import clip, count
from litmus.usage import run_totals_line
from litmus.verdict import skipped_note

MARKER = "<!-- litmus-report -->"
COMMENT_LIMIT = 65_536
SUMMARY_LIMIT = 1_048_576  # bytes: GitHub's per-step job summary limit


@dataclass(frozen=True)
class Flavour:
    marker: bool  # the hidden sticky-comment marker
    budget: int  # the most the document may measure; whole findings are cut past it
    measure: Callable[[str], int] = len
    mismatch_rows: int = 20  # rows shown per finding
    text_limit: int = 600  # characters of a judge reason or error shown
    curl_body: int = 2_000  # characters of a request body in the curl
    cell_limit: int = 300  # characters of a mismatch value or reason

    @property
    def finding_share(self) -> int:
        """The most one finding may take before it is shown compacted: a tenth of the budget."""
        return self.budget // 10

    def compact(self) -> Flavour:
        return replace(self, mismatch_rows=3, text_limit=200, curl_body=300, cell_limit=80)


COMMENT = Flavour(marker=True, budget=60_000)
SUMMARY = Flavour(marker=False, budget=SUMMARY_LIMIT - 48_576, measure=lambda text: len(text.encode("utf-8")))
ICON = {"passed": "✅", "passed_with_findings": "⚠️", "failed": "❌", "nothing": "➖"}


def render(result: RunResult, **options) -> str:
    """The sticky PR comment."""
    return document(result, Options(**options), COMMENT)


@dataclass(frozen=True)
class Section:
    """A run of findings under one heading: `opening` before the first, `closing` after the last shown."""

    title: str
    findings: list[fd.Finding]
    opening: str = ""
    closing: str = ""


def document(result: RunResult, options: Options, flavour: Flavour, extra: tuple[str, ...] = ()) -> str:
    """The header (and `extra` blocks after it), then whole findings while they fit the budget. A
    finding too large to fit on its own is shown shortened rather than ending the list.

    Compared with a baseline, the findings come in three sections: "New in this PR" (with the flows
    whose pass rate regressed), "Fixed", then "Already failing on the base branch", folded."""
    findings = fd.reading_order(fd.collect(result))
    head = "\n\n".join([*_head(result, options, findings, flavour), *extra]) + "\n"
    parts = [head]
    used = flavour.measure(head)
    sections = _sections(result, findings)
    footer_room = flavour.measure(_footer(len(findings), options)) + sum(
        flavour.measure(section.closing) for section in sections)
    shown = 0
    for section in sections:
        opening = section.opening or (f"\n## {section.title} ({len(section.findings)})\n" if section.findings else "")
        if used + flavour.measure(opening) + footer_room > flavour.budget:
            break
        parts.append(opening)
        used += flavour.measure(opening)
        complete = True
        for finding, heading in _headed(section.findings):
            block = heading + _finding(result, options, finding, flavour)
            if flavour.measure(block) > flavour.finding_share:
                block = heading + _finding(result, options, finding, flavour.compact(), cut=True)
            if used + flavour.measure(block) + footer_room > flavour.budget:
                block = heading + _finding(result, options, finding, flavour, shortened=True)
                if used + flavour.measure(block) + footer_room > flavour.budget:
                    complete = False
                    break
            parts.append(block)
            used += flavour.measure(block)
            shown += 1
        parts.append(section.closing)
        if not complete:
            break
    if shown < len(findings):
        parts.append(_footer(len(findings) - shown, options))
    return "".join(parts)


def _sections(result: RunResult, findings: list[fd.Finding]) -> list[Section]:
    summary = result.baseline
    if summary is None:
        return [Section("Findings", findings)]
    new = [f for f in findings if f.baseline != "unchanged"]
    unchanged = [f for f in findings if f.baseline == "unchanged"]
    regressed = [flow for flow in summary.flows if flow.verdict == "regressed"]
    opening = f"\n## New in this PR ({count(len(new), 'finding')}"
    opening += f", {count(len(regressed), 'regressed flow')})\n" if regressed else ")\n"
    if regressed:
        rows = ["", "| Flow | Pass rate here | On the base branch | |", "|---|---|---|---|"]
        rows += [f"| {cell(flow.suite)} › {cell(flow.flow)} | {fd.rate_text(flow.here)} | "
                 f"{fd.rate_text(flow.baseline)} | {fd.regression_reason(flow, summary.max_cost_increase)} |"
                 for flow in regressed]
        opening += "\n".join(rows) + "\n"
    usage, more = fd.usage_rows(summary)
    if usage:
        rows = ["", "**Tokens and cost per flow** (here · on the base branch · change per flow run):", "",
                "| Flow | Here | On the base branch | Change |", "|---|---|---|---|"]
        # Only the flow's name is the probe's text; the figures are Litmus's own.
        rows += [f"| {cell(name)} | {here} | {base} | {change} |" for name, here, base, change in usage]
        rows += [f"\n… and {count(more, 'more flow')}."] if more else []
        opening += "\n".join(rows) + "\n"
    if not new and not regressed:
        opening += "\nNothing: every finding below was failing on the base branch already.\n"
    fixed = ""
    if summary.fixed_findings:
        lines = [f"\n## Fixed ({len(summary.fixed_findings)})\n", "Failing on the base branch, holding here:", ""]
        lines += [f"- ✅ {prose(' › '.join(p for p in (item.suite, item.flow, item.step) if p))}"
                  f"{f' [{prose(item.scenario)}]' if item.scenario else ''}: {code(item.label)} "
                  f"(was: {prose(clip(item.reason, 160))})" for item in summary.fixed_findings]
        fixed = "\n".join(lines) + "\n"
    sections = [Section("New in this PR", new, opening=opening), Section("Fixed", [], opening=fixed)]
    if unchanged:
        sections.append(Section(
            "Already failing on the base branch", unchanged,
            opening=f"\n<details><summary>Already failing on the base branch ({len(unchanged)})</summary>\n",
            closing="\n</details>\n"))
    return sections


def _footer(remaining: int, options: Options) -> str:
    where = link("the report artifact", options.artifact_url)
    return (f"\n---\n\n**{count(remaining, 'more finding')} not shown here** (size limit). "
            f"Every finding is in {where}: `results.json` and `junit.xml` (all), `report.html` and "
            "`litmus.sarif` (the first thousands).\n")


# ---- header: verdict and per-suite table ----

KIND_WORDS = {"failed": "failed", "transport_error": "no response", "error": "could not be evaluated",
              "needs_review": "need human review"}


def _head(result: RunResult, options: Options, findings: list[fd.Finding], flavour: Flavour) -> Iterator[str]:
    if flavour.marker:
        yield MARKER
    verdict = fd.run_verdict(result, findings)
    yield f"## {ICON[verdict.status]} Litmus: {verdict.text}"
    facts = [f"**{count(len(findings), 'finding')}**"]
    facts += [f"{n} {KIND_WORDS[kind]}" for kind in KIND_WORDS if (n := sum(f.kind == kind for f in findings))]
    facts.append(count(sum(len(s.flow_runs) for s in result.suites), "flow run"))
    if skipped := skipped_note(result.suites):
        facts.append(skipped)
    warnings = fd.step_warnings(result.suites)
    if warnings:
        facts.append(count(len(warnings), "warning"))
    sha = options.sha or result.run.git_sha
    if sha:
        facts.append(f"commit {code(sha[:12])}")
    if result.run.base_url:
        facts.append(f"target {code(result.run.base_url)}")
    if result.run.shard:
        facts.append(f"shard {result.run.shard}")
    lines = [" · ".join(facts)]
    if result.baseline is not None:
        lines.append(f"**Compared with the base branch** ({code(clip(result.baseline.source, 120))}): "
                     f"{headline(result.baseline)}.")
    if result.run.interrupted:
        lines.append("⚠️ **The run was interrupted**: results are incomplete.")
    if result.run.trusted is False:
        lines.append(f"🔒 **Untrusted commit**: {prose(clip(result.run.trust_reason or '', 300))}. Its python "
                     "checks did not run, its litmus.yaml was not applied, and it could send requests only to the "
                     "allowed origins (docs/security.md).")
    yield "\n\n".join(lines)
    own = _own_checks(result)
    if own:
        yield own
    decided = _human_decisions(result)
    if decided:
        yield decided
    if result.suites:
        judged = fd.judge_ran(result)
        yield _suite_table(result, options, findings, warnings, judged)
        yield from (_coverage_line(suite) for suite in result.suites if suite.openapi is not None)
        if warnings:
            yield _warnings(result, options, warnings)
        if judged:
            totals = result.judge
            yield (f"Judge, whole run: {totals.calls} calls · {totals.cached} cached · {totals.escalated} escalated · "
                   f"{totals.needs_review} need review · {totals.input_tokens:,} input + {totals.output_tokens:,} "
                   "output tokens")
        if spent := run_totals_line(result):
            yield spent
    if not findings:
        yield "No findings: every evaluated assertion passed."


def _coverage_line(suite: SuiteResult) -> str:
    counts, missing, more = fd.coverage_parts(suite.openapi)
    line = f"OpenAPI coverage of {code(suite.openapi.spec)} ({prose(suite.name)}): {counts}"
    if missing:
        line += "; not exercised: " + ", ".join(map(code, missing)) + (f" and {more} more" if more else "")
    return line


# Files listed under "This pull request changes its own checks" before "and N more".
MAX_CHANGED_CHECKS = 30


def _own_checks(result: RunResult) -> str:
    """The PR's changes to the files that decide this check, for a reviewer to read before trusting a green."""
    changed, notes = result.run.changed_checks, result.run.trust_notes
    if not (changed or notes):
        return ""
    lines = [f"### This pull request changes its own checks ({count(len(changed), 'file')})", "",
             "These files decide what this check says: review their changes with the code."]
    lines += [""] + [f"- {code(path)}" for path in changed[:MAX_CHANGED_CHECKS]]
    if len(changed) > MAX_CHANGED_CHECKS:
        lines.append(f"- and {len(changed) - MAX_CHANGED_CHECKS} more")
    lines += [f"- ⚠️ {prose(clip(note, 300))}" for note in notes]
    return "\n".join(lines)


# Human decisions and decision notices listed before "and N more".
MAX_DECISIONS = 30


def _human_decisions(result: RunResult) -> str:
    """The outcomes a human decided (who, when, why; a critical check says it was overridden), and the
    decisions that took no effect: ignored (the pull request's own, a deterministic check) or stale."""
    decided = fd.human_decided(result)
    summary = result.decisions
    notes = [*(summary.ignored if summary else []), *(summary.stale if summary else [])]
    if not decided and not notes:
        return ""
    lines = []
    if decided:
        lines += [f"### Decided by a human ({len(decided)})", ""]
        lines += [f"- {'✅' if d.record.status == 'passed' else '❌'} {prose(d.where)}: {code(d.label)}: "
                  f"{prose(clip(d.text(), 400))}" for d in decided[:MAX_DECISIONS]]
        if len(decided) > MAX_DECISIONS:
            lines.append(f"- and {len(decided) - MAX_DECISIONS} more")
    if notes:
        lines += ["", f"### Decisions not applied ({len(notes)})", ""]
        lines += [f"- ⚠️ {code(note.where)} by {prose(note.by)} on {code(note.finding)}: {prose(clip(note.why, 300))}"
                  for note in notes[:MAX_DECISIONS]]
        if len(notes) > MAX_DECISIONS:
            lines.append(f"- and {len(notes) - MAX_DECISIONS} more")
    return "\n".join(lines).strip("\n")


# Step warnings listed in the comment and the summary before "and N more": they decide nothing, so they
# take a bounded share of the page whatever their number (report.html lists 2,000, results.json all).
MAX_WARNINGS = 10
WARNING_CHARS = 300


def _warnings(result: RunResult, options: Options, warnings: list[fd.StepWarning]) -> str:
    """The step warnings, which decide nothing: where (linked), on which runs, and what."""
    lines = [f"### Warnings ({len(warnings)})", "", "Worth a look; they do not change the verdict.", ""]
    for warning in warnings[:MAX_WARNINGS]:
        where = link(code(warning.location), probe_url(result, options, warning.suite.file, warning.step.line))
        runs = f", {prose(warning.runs_text())}" if warning.runs_text() else ""
        lines.append(f"- ⚠️ {where} {prose(clip(warning.where, WARNING_CHARS))}{runs}: "
                     f"{prose(clip(warning.text, WARNING_CHARS))}")
    if len(warnings) > MAX_WARNINGS:
        lines.append(f"- and {len(warnings) - MAX_WARNINGS} more in `report.html` and `results.json`")
    return "\n".join(lines)


def _suite_table(result: RunResult, options: Options, findings: list[fd.Finding], warnings: list[fd.StepWarning],
                 judged: bool) -> str:
    columns = ["Suite", "Verdict", "Flow runs passed", "Assertions"] + (["Judge"] if judged else [])
    rows = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for suite in sorted(result.suites, key=lambda s: s.verdict != "failed"):
        stats = fd.suite_stats(suite)
        name = link(prose(suite.name), probe_url(result, options, suite.file, suite.line))
        runs = (f"{stats.runs_passed} / {stats.runs_total} = {suite.pass_rate:g}% "
                f"(needs {suite.pass_threshold:g}%)")
        order = ["passed", "failed", "error", "needs_review", "skipped"]
        assertions = " · ".join(f"{stats.assertions[s]} {s.replace('_', ' ')}" for s in order if stats.assertions[s])
        verdict = fd.suite_verdict(suite, findings)
        icon = ICON["passed_with_findings" if verdict.startswith("passed with") else suite.verdict]
        # What the pass rate alone does not say (LLM checks no judge evaluated, a failed setup).
        why = f": {prose(suite.reason)}" if suite.reason else ""
        warned = sum(warning.suite is suite for warning in warnings)
        warned_text = f" · ⚠️ {count(warned, 'warning')}" if warned else ""
        cells = [name, f"{icon} {verdict}{why}{warned_text}", runs, assertions or "—"]
        if judged:
            cells.append(f"{stats.judge_calls} calls · {stats.judge_cached} cached · {stats.judge_escalated} "
                         f"escalated · {stats.judge_needs_review} need review · {stats.judge_tokens:,} tokens")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


# ---- findings ----

def _headed(findings: list[fd.Finding]) -> Iterator[tuple[fd.Finding, str]]:
    """Each finding with the group heading it opens (empty when it opens none)."""
    group = None
    for finding in findings:
        heading = ""
        if finding.where != group:
            group = finding.where
            heading += f"\n### {prose(group)}\n"
        yield finding, heading


def _finding(result: RunResult, options: Options, finding: fd.Finding, flavour: Flavour,
             shortened: bool = False, cut: bool = False) -> str:
    headline = fd.summary_sentence(finding)
    out = [f"\n#### {finding.icon} {prose(clip(headline, 200))}"]
    location = f"{finding.suite.file}:{finding.line}:{finding.column}"
    facts = [link(code(location), probe_url(result, options, finding.suite.file, finding.line)),
             f"rule {code(finding.rule)}"]
    if finding.scenario:
        facts.append(f"scenario {code(finding.scenario)}")
    if finding.runs_text():
        facts.append(prose(finding.runs_text()))
    out.append(" · ".join(facts))
    step = finding.step
    if step is not None:
        out.append(_request_line(step))
    whole = "*This finding is too large for this page; `report.html` and `results.json` hold it whole.*"
    if shortened:
        out.append(whole)
        return "\n\n".join(out) + "\n"
    reason = fd.extra_reason(finding)
    if reason:
        out.append(prose(clip(reason, flavour.text_limit)))
    if finding.outcome is not None and finding.outcome.mismatches:
        out.append(_mismatch_table(finding, flavour))
    judge = fd.judge_text(finding)
    if judge:
        line = f"**Judge:** {prose(judge)}"
        judge_reason = fd.judge_reason(finding)
        if judge_reason:
            line += f". {prose(clip(judge_reason, flavour.text_limit))}"
        out.append(line)
    if finding.decided_by is not None:
        decided = fd.HumanDecided(finding.suite, finding.flow_run, finding.step, finding.outcome or finding.intent)
        out.append(f"**Decided by a human:** {prose(clip(decided.text(), flavour.text_limit))}")
    if finding.decidable_id:
        accept, reject = fd.decide_commands(finding.decidable_id)
        out.append(f"**Decide it:** comment {code(accept)} or {code(reject)} (optionally followed by a reason), "
                   f"or run {code('litmus review --accept ' + finding.decidable_id)}")
    transcript = finding.flow_run.transcript
    if transcript:
        at_fault = fd.turns_at_fault(finding)
        blamed = f", turn {', '.join(map(str, sorted(at_fault)))} at fault" if at_fault else ""
        turns = len(fd.transcript_turns(transcript)[1])
        out.append(_fold(f"Conversation ({count(turns, 'turn')}{blamed})",
                         fenced(fd.transcript_text(transcript, at_fault))))
    curl = fd.step_curl(finding.flow_run, step, flavour.curl_body) if step is not None else None
    if curl:
        out.append(_fold("Reproduce with curl", fenced(curl, "sh")))
    if cut:
        out.append(whole.replace("too large for this page", "shortened here"))
    return "\n\n".join(out) + "\n"


def _request_line(step: StepResult) -> str:
    if step.request is None:
        return f"**Request:** none was sent ({prose(step.error or 'skipped')})"
    response = prose(fd.response_text(step))
    attempts = f" after {step.attempts} attempts" if step.attempts > 1 else ""
    waits = f" ({prose(fd.rate_limited_text(step))})" if step.rate_limited else ""
    return f"**Request:** {code(f'{step.request.method} {step.request.url}')} → {response}{attempts}{waits}"


def _mismatch_table(finding: fd.Finding, flavour: Flavour) -> str:
    mismatches = finding.outcome.mismatches
    shown = mismatches[: flavour.mismatch_rows]
    rows = ["| path | expected | actual | reason |", "|---|---|---|---|"]
    limit = flavour.cell_limit
    rows += [f"| {cell(clip(m.path, limit))} | {cell(fd.show(m.expected, limit))} | "
             f"{cell(fd.show(m.actual, limit))} | {cell(clip(m.reason, limit))} |" for m in shown]
    table = "\n".join(rows)
    if len(shown) < len(mismatches):
        table += f"\n\n*{len(mismatches) - len(shown)} more mismatches in `report.html`.*"
    if len(mismatches) > 5:
        return _fold(f"{len(mismatches)} mismatches", table)
    return table


def _fold(summary: str, body: str) -> str:
    """Our own `<details>` (the summary is our text, never untrusted)."""
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"
