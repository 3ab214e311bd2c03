"""Terminal output of a run: a progress line, one line per failure pointing at the probe, a summary.

Everything printed that came from outside (response bodies, reasons, names from probe files) goes
through `clean()` first: ANSI escapes and control characters are shown escaped, never interpreted,
so a response cannot rewrite the terminal or forge CI log commands.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import TextIO

from litmus import verdict
from litmus.github.workflow import WorkflowCommands
from litmus.identity import INTENT, TRANSPORT
from litmus.openapi.coverage import summary
from litmus.results import FlowRunResult, RunResult, run_label, runs_per_flow
from litmus.text import count
from litmus.usage import run_totals_line

# C0 and C1 controls, DEL, and the bidirectional overrides that can reorder what a line appears to say.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def clean(text: object) -> str:
    return _UNSAFE.sub(lambda m: _NAMED.get(m.group(), f"\\u{ord(m.group()):04x}"), str(text))


class Console:
    """`verbosity`: -1 quiet (the verdict line only), 0 normal, 1 verbose (every flow run, all mismatches)."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *, verbosity: int = 0,
                 environ: Mapping[str, str] = os.environ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.verbosity = verbosity
        self.github = environ.get("GITHUB_ACTIONS") == "true"
        self.color = _isatty(self.out) and not environ.get("NO_COLOR") and environ.get("TERM") != "dumb"
        self.progress = verbosity >= 0 and _isatty(self.err) and not self.github
        self._failed = 0

    def warning(self, message: str) -> None:
        print(f"warning: {clean(message)}", file=self.err)

    # -- while running
    def on_event(self, event) -> None:
        if event.kind == "flow_run":
            if event.flow_run.status != "passed":
                self._failed += 1
            if self.verbosity > 0:
                fr = event.flow_run
                self._clear_progress()
                print(f"{event.done}/{event.total} {self._status(fr.status)} "
                      f"{clean(event.suite.name)} › {clean(fr.flow)}{_where(fr, _flow_runs(event.suite, fr.flow))}",
                      file=self.out)
        if self.progress and event.kind in ("started", "flow_run"):
            failed = f", {self._failed} failed" if self._failed else ""
            self.err.write(f"\r\x1b[K  {event.done}/{count(event.total, 'flow run')}{failed}")
            self.err.flush()
        if event.kind == "finished":
            self._clear_progress()

    def note(self, text: str) -> None:
        """A line about the run itself (not a finding), unless quiet."""
        if self.verbosity >= 0:
            self._clear_progress()
            print(clean(text), file=self.out)

    def _clear_progress(self) -> None:
        if self.progress:
            self.err.write("\r\x1b[K")
            self.err.flush()

    # -- after the run
    def report(self, result: RunResult, results_path: str | None = None) -> None:
        if self.verbosity >= 0:
            for title, body in self.failures(result):
                if self.github:  # one foldable group per suite in the job log

                    commands = WorkflowCommands(self.out)
                    with commands.group(title):
                        commands.log("\n".join(body))
                else:
                    print("\n".join(body), file=self.out)
            for line in self.summary_lines(result):
                print(line, file=self.out)
        print(self.verdict_line(result, results_path), file=self.out)

    def failures(self, result: RunResult) -> list[tuple[str, list[str]]]:
        """Per suite with findings (`litmus.verdict`): a title and one line per finding, then the flow runs'
        and the suite's own reasons."""
        groups: list[tuple[str, list[str]]] = []
        for suite in result.suites:
            runs = runs_per_flow(suite)
            body: list[str] = []
            items = [item for item in verdict.checked([suite]) if item.is_finding or (
                self.verbosity > 0 and item.status == "skipped" and item.part not in (TRANSPORT, INTENT)
                and (item.step is None or item.step.status != "error"))]
            found = sum(item.is_finding for item in items)
            for item in items:
                body.extend(self._item_lines(suite, item, runs))
            for fr in suite.flow_runs:
                where = f"{clean(suite.file)}:{fr.line} {clean(fr.flow)}{_where(fr, runs[fr.flow, fr.scenario])}"
                body.extend(f"{clean(suite.file)}:{step.line} {clean(fr.flow)}{_where(fr, runs[fr.flow, fr.scenario])}"
                            f" › {clean(step.name)} › {self._status('needs_review', 'warning')}: {clean(warning)}"
                            for step in fr.steps for warning in step.warnings)
                if fr.reason:
                    body.append(f"{where} › {self._status(fr.status)}: {clean(fr.reason)}")
                elif fr.overruled_failures:
                    body.append(f"{where} › passed by intent despite {count(fr.overruled_failures, 'failed check')} "
                                "(mark the checks no judge may overrule critical: true)")
            if suite.reason:
                body.append(f"{clean(suite.file)}:{suite.line} {clean(suite.name)}: {clean(suite.reason)}")
            if body:
                groups.append((f"{clean(suite.name)}: {count(found, 'finding')}", body))
        return groups

    def _item_lines(self, suite, item: verdict.Checked, runs) -> list[str]:
        fr = item.flow_run
        where = clean(fr.flow) + ("" if item.phase else _where(fr, runs[fr.flow, fr.scenario]))
        status = "error" if item.part == TRANSPORT else item.kind or item.status
        if item.phase == verdict.TEARDOWN and item.is_finding:
            status += " in teardown (warning: the verdict ignores it)"
        if item.part == INTENT:
            return [f"{clean(suite.file)}:{fr.line} {where} › intent {self._status(item.status)}: "
                    f"{clean(item.record.reason)}"]
        # A conversation assertion belongs to the flow run's transcript, not to a step.
        head = f"{where} › {clean(item.step.name) if item.step else 'conversation'}"
        if item.part == TRANSPORT:
            return [f"{clean(suite.file)}:{item.step.line} {head} › {self._status('error', status)}: "
                    f"{clean(item.step.error)}"]
        o = item.record
        label = f"{o.type} ({clean(o.name)})" if o.name else o.type
        tag = "" if status == "failed" else f"{self._status(o.status, status)}: "
        lines = [f"{clean(suite.file)}:{o.line}:{o.column} {head} › {label} {tag}{clean(o.reason)}"]
        if self.verbosity > 0:
            lines.extend(f"    {clean(m.path)}: {clean(m.reason)}" for m in o.mismatches[1:])
        return lines

    def summary_lines(self, result: RunResult) -> list[str]:
        rows = [("Suite", "Flow runs passed", "Pass rate", "Threshold", "Verdict")]
        for s in result.suites:
            passed = sum(1 for f in s.flow_runs if f.status == "passed")
            rows.append((clean(s.name), f"{passed}/{len(s.flow_runs)}", f"{s.pass_rate:g}%",
                         f"{s.pass_threshold:g}%", s.verdict))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = [""]
        for i, row in enumerate(rows):
            cells = [c.ljust(w) for c, w in zip(row[:-1], widths, strict=False)]
            verdict = row[-1] if i == 0 else self._status(row[-1])
            lines.append("  ".join([*cells, verdict]).rstrip())
        for s in result.suites:
            if s.openapi is not None:
                missing = f"; {len(s.openapi.missing)} not, listed in results.json" if s.openapi.missing else ""
                lines.append(f"OpenAPI coverage of {clean(s.openapi.spec)} ({clean(s.name)}): {summary(s.openapi)}"
                             f"{missing}")
        if spent := run_totals_line(result):
            lines.append(spent)
        return lines

    def verdict_line(self, result: RunResult, results_path: str | None) -> str:
        failed = sum(1 for s in result.suites if s.verdict == "failed")
        total = len(result.suites)
        over = verdict.over_cost_limit_text(result)
        # A flow over --max-cost-increase fails the run though its suites passed: the line says so first.
        shown = "failed" if over else result.verdict
        word = self._status(shown, shown.upper())
        text = f"{word}: {total - failed} of {count(total, 'suite')} passed"
        if result.run.interrupted:
            text += " (interrupted: partial results)"
        if over:
            text += f" ({over})"
        if skipped := verdict.skipped_note(result.suites):
            text += f" ({skipped})"
        turned_off = sum(o.judge_skip == "disabled" for *_, o in result.iter_outcomes())
        if turned_off:
            text += f" ({count(turned_off, 'LLM-based assertion')} skipped: judging turned off)"
        if result.run.shard:
            text += f" (shard {result.run.shard})"
        if results_path:
            text += f"; results in {clean(results_path)}"
        return text

    def _status(self, status: str, text: str | None = None) -> str:
        text = text or status
        code = {"passed": "32", "failed": "31", "error": "31", "needs_review": "33", "skipped": "90"}.get(status)
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and code else text


def _flow_runs(suite, flow: str) -> int:
    """Runs of a flow per scenario, from the model suite a progress event carries."""
    return next((f.runs for f in suite.flows if f.name == flow), 1)


def _where(fr: FlowRunResult, runs: int) -> str:
    parts = [clean(fr.scenario)] if fr.scenario else []
    if runs > 1:
        parts.append(run_label(fr.run_index, runs))
    return f" [{', '.join(parts)}]" if parts else ""


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
