"""The one run pipeline: load, configure the judge, run (the baseline first when asked), compare, write.

`litmus run` and `litmus action` differ in where their settings come from (flags or `INPUT_*`) and in
where they speak (a terminal or the workflow log, then GitHub); everything between is this module,
so a rule of the trust policy, a check before the first request or the order of writing holds for
both. The caller gives a `RunRequest` (what to run, with the run's `Trust` in its options) and a
`Channel` (how to say things); each stage reports through the channel and either returns or raises
`RunRefused` (exit status 2, with the message to show).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from litmus import assertions
from litmus.compare import compare, headline, unmetered_flows
from litmus.config import resolve_config
from litmus.decisions import DecisionSource, RunDecisions, decisions_for_run, summarize
from litmus.errors import ProbeError, render_diagnostics
from litmus.judges.service import JudgeConfigError, JudgeService
from litmus.load import load_suites
from litmus.model import Suite
from litmus.report import write_reports
from litmus.results import OutputError, RunResult, check_output_dir, write_results
from litmus.run.redact import Redactor
from litmus.run.runner import RunOptions, env_mask_notice, masked_env_items, run_suites, secret_values, selected_suites
from litmus.text import count, noun_for


class RunRefused(Exception):
    """Bad input or an unusable setting found before or around the run: exit status 2, with this message.
    `reported` when the details (positioned diagnostics) were already given to the channel."""

    def __init__(self, message: str, *, reported: bool = False) -> None:
        super().__init__(message)
        self.reported = reported


class Channel(Protocol):
    """Where the pipeline speaks: the terminal (`litmus run`) or the workflow log (`litmus action`)."""

    def diagnostics(self, diagnostics: list) -> None: ...
    def warning(self, text: str) -> None: ...
    def note(self, text: str) -> None: ...
    # Values that must be hidden before anything else is printed (the action's `::add-mask::`).
    def mask(self, values: Iterable[str | None]) -> None: ...
    def on_event(self, event) -> None: ...
    def phase(self, title: str) -> contextlib.AbstractContextManager: ...


@dataclass
class Baseline:
    """A baseline to compare with: a base deployment to run the same suites against (`url`), or an existing
    results document (`result`, named by `source`)."""

    url: str | None = None
    result: RunResult | None = None
    source: str | None = None


@dataclass
class RunRequest:
    paths: Sequence[str | Path]
    # The repository root: referenced files stay inside it; litmus.yaml is found there.
    root: Path
    out_dir: Path
    options: RunOptions
    # The judge settings given as flags or inputs (litmus.config.add_config_arguments' names).
    config_args: argparse.Namespace
    environ: Mapping[str, str]
    # Report formats (None: all).
    formats: list[str] | None = None
    # The SARIF run's category (None: the file names none; the uploader's applies).
    sarif_category: str | None = None
    baseline: Baseline | None = None
    # --max-cost-increase / input max-cost-increase: a flow whose tokens or cost per run rose more than this
    # percentage over the baseline's regressed (litmus.compare).
    max_cost_increase: float | None = None
    # How this front end names the output folder and the env-allow setting, and how it says "give a base URL".
    out_dir_setting: str = "--out"
    env_allow_setting: str = "--env-allow"
    base_url_hint: str = "pass --base-url (or set LITMUS_BASE_URL, or base_url in the suite)"
    # Values to mask in every output besides the suites' secrets and the judge keys (the GitHub token).
    extra_secrets: Sequence[str] = ()
    # Links in the reports (the action knows the repository and the commit).
    report_links: Mapping[str, str | None] = field(default_factory=dict)
    # Narrows the loaded suites (the action's changed-only), after the filters.
    select: Callable[[list], list] | None = None
    # Called once the run is set up, before the first request (the action's wait-for).
    before_requests: Callable[[str | None], None] | None = None
    # The command line's paths are the operator's own: a file named there may lie outside `root` (the
    # action's may not).
    named_anywhere: bool = False
    # A baseline found only after the run (the action's `baseline: artifact`).
    late_baseline: Callable[[], Baseline | None] | None = None
    # For the reports (results.json `run.changed_checks`, `run.trust_notes`): the PR's changes to its own
    # checks, and what the untrusted policy did with what the PR supplied.
    changed_checks: Sequence[str] = ()
    trust_notes: Sequence[str] = ()
    # Decisions that count beyond the files `litmus.decisions.decisions_for_run` reads (the action's own records).
    decision_sources: Sequence[DecisionSource] = ()
    # The decisions that count in this run, as `prepare` found them.
    decisions: RunDecisions | None = None


@dataclass
class RunOutput:
    result: RunResult
    # Where each file went ("results", "sarif", ...).
    paths: dict[str, Path]
    # Files that could not be written (the checks ran, but what they found is not all on disk).
    problems: list[str]


def prepare(request: RunRequest, channel: Channel) -> tuple[list, Any, Any]:
    """Load the suites, read the configuration and start the judge, checking everything a run needs
    before any request: (suites, RunConfig, JudgeService or None). RunRefused when something is wrong."""
    options, environ = request.options, request.environ
    try:
        loaded = load_suites(list(request.paths), root=request.root, environ=environ, strict_env=True,
                             run_vars=options.run_vars, trust=options.trust, named_anywhere=request.named_anywhere)
    except ProbeError as exc:
        channel.diagnostics(exc.diagnostics)
        raise RunRefused("the probe files have errors", reported=True) from None
    # Before any output that could echo them (the runner masks them in every report too).
    channel.mask(secret_values(loaded.suites, environ, options.trust))
    if loaded.warnings:
        channel.diagnostics(loaded.warnings)
    problem = check_selection(loaded.suites, options)
    if problem:
        raise RunRefused(problem)
    suites = selected_suites(loaded.suites, options)
    if request.select is not None:
        suites = request.select(suites)
    unset = [s.name for s in suites
             if not options.base_url and not s.base_url and s.name not in options.suite_base_urls]
    if unset:
        raise RunRefused(f"no base URL for {noun_for(len(unset), 'suite')} {', '.join(map(repr, unset))}: "
                         f"{request.base_url_hint}")
    try:
        check_output_dir(request.out_dir, request.root)  # a run that cannot be saved is not started
    except OutputError as exc:
        raise RunRefused(f"{request.out_dir_setting}: {exc}") from None
    try:
        config = resolve_config(request.config_args, environ, request.root, trust=options.trust)
    except ProbeError as exc:
        channel.diagnostics(exc.diagnostics)
        raise RunRefused("litmus.yaml has errors", reported=True) from None
    if config.judge:
        judge = config.judge
        tiers = [judge.tier1, judge.escalation.to if judge.escalation else None, judge.simulator, judge.embeddings]
        channel.mask(environ.get(name) for t in tiers if t for name in t.secret_variables)
    options.judge_disabled = config.judge_disabled
    options.pricing = config.pricing
    request.decisions = decisions = decisions_for_run(request.root, options.trust, request.decision_sources)
    if decisions.loaded.errors:
        channel.diagnostics(decisions.loaded.diagnostics)
        raise RunRefused("the decisions file has errors", reported=True)
    for note in decisions.ignored:
        channel.warning(f"{note.where}: the decision by {note.by} on finding {note.finding} is ignored: {note.why}")
    try:
        # A judge (and its API key) is needed only when a judged check or an intent runs.
        judge = JudgeService.from_config(config.judge if asks_a_judge(suites) else None, environ, trust=options.trust,
                                         decisions=decisions.book())
    except JudgeConfigError as exc:
        raise RunRefused(f"judge configuration: {exc}") from None
    notice = env_mask_notice((name for name, _ in masked_env_items(suites, environ, options.trust)),
                             request.env_allow_setting)
    if notice:
        channel.note(notice)
    # What the trust policy left out or ignored (the PR's litmus.yaml, committed cache entries): said now,
    # and listed in the reports.
    request.trust_notes = [*request.trust_notes, *config.notes, *(judge.notes if judge else ())]
    for note in request.trust_notes:
        channel.warning(note)
    return suites, config, judge


def asks_a_judge(suites: Iterable[Suite]) -> bool:
    """Whether running `suites` asks a judge anything: an intent to evaluate, an LLM-based check (of a step or
    of a conversation's transcript), or a simulated user."""
    return any(suite.intent or any(assertions.spec(a.type).llm_based for step in suite.steps for a in step.assertions)
               or any(flow.conversation_assertions or any(step.simulate for step in flow.steps) for flow in suite.flows)
               for suite in suites)


def execute(request: RunRequest, channel: Channel, suites: list, judge: Any) -> RunOutput:
    """Run the suites (the baseline deployment first), compare, and write results.json and every report.
    The judge is closed here, whatever happens."""
    options = request.options
    baseline = request.baseline
    try:
        if request.before_requests is not None and not options.stop.is_set():
            request.before_requests(options.base_url)
        if baseline is not None and baseline.url:
            # The base deployment first, with the same options and judge (so its cache is shared).
            with channel.phase(f"Litmus: running the baseline against {baseline.url}"):
                baseline.result = run_suites(suites, dataclasses.replace(options, base_url=baseline.url),
                                             judge=judge, environ=request.environ, on_event=channel.on_event,
                                             redactor=_redactor(request, channel))
            _keep_baseline(request.out_dir / "baseline.json", baseline.result)
        shard = f", shard {options.shard[0]}/{options.shard[1]}" if options.shard else ""
        # After a signal the runner starts nothing more: the run comes back interrupted.
        with channel.phase(f"Litmus: running {count(len(suites), 'suite')}{shard}"):
            result = run_suites(suites, options, judge=judge, environ=request.environ, on_event=channel.on_event,
                                redactor=_redactor(request, channel))
    finally:
        if judge is not None:
            judge.close(abandon=options.stop.is_set())
    links = request.report_links
    result.run.repository = result.run.repository or links.get("repository")
    result.run.server_url = result.run.server_url or links.get("server_url")
    result.run.git_sha = links.get("sha") or result.run.git_sha
    result.run.changed_checks = list(request.changed_checks)
    result.run.trust_notes = list(request.trust_notes)
    _summarize_decisions(request, channel, result)
    if (baseline is None or baseline.result is None) and request.late_baseline is not None:
        baseline = request.late_baseline()
    if baseline is not None and baseline.result is not None:
        compare(baseline.result, result, source=baseline.source or baseline.url,
                max_cost_increase=request.max_cost_increase)
        channel.note(f"compared with {baseline.source or baseline.url}: {headline(result.baseline)}")
        if request.max_cost_increase is not None and (unmeasured := unmetered_flows(result.baseline)):
            channel.warning(f"--max-cost-increase: {count(len(unmeasured), 'flow')} reported no token usage here or "
                            f"in the baseline, so {noun_for(len(unmeasured), 'its', 'their')} cost was not compared: "
                            f"{', '.join(unmeasured)}")
    paths, problems = write_outputs(result, request.out_dir, request.formats, links, request.sarif_category)
    return RunOutput(result, paths, problems)


def write_outputs(result: RunResult, out_dir: Path, formats: list[str] | None = None,
                  links: Mapping[str, str | None] | None = None,
                  sarif_category: str | None = None) -> tuple[dict[str, Path], list[str]]:
    """results.json first (the run itself), then the reports, each whatever befell the others; returns the
    paths written and what could not be written."""
    links = links or {}
    paths: dict[str, Path] = {}
    problems = []
    results_path = out_dir / "results.json"
    try:
        write_results(results_path, result)
        paths["results"] = results_path
    except OSError as exc:
        problems.append(f"could not write {results_path}: {exc.strerror or exc}")
    try:
        paths.update(write_reports(result, out_dir, formats, repository=links.get("repository"),
                                   server_url=links.get("server_url"), sha=links.get("sha"),
                                   sarif_category=sarif_category))
    except OutputError as exc:
        paths.update(exc.written)
        problems.append(str(exc))
    return paths, problems


def check_selection(suites: list, options: RunOptions) -> str | None:
    """Why the --suite/--flow filters or per-suite base URLs name something that is not there (None: all fine)."""
    suite_names, flow_names = list(options.suites), list(options.flows)
    known = {s.name for s in suites}
    missing = [n for n in suite_names if n not in known]
    if missing:
        return f"no suite named {', '.join(map(repr, missing))}; suites: {', '.join(sorted(known)) or '(none)'}"
    chosen = [s for s in suites if not suite_names or s.name in suite_names]
    flows = {f.name for s in chosen for f in s.flows}
    missing = [n for n in flow_names if n not in flows]
    if missing:
        return f"no flow named {', '.join(map(repr, missing))}; flows: {', '.join(sorted(flows)) or '(none)'}"
    empty = [s.name for s in chosen if suite_names and flow_names and not {f.name for f in s.flows} & set(flow_names)]
    if empty:
        verb = "has" if len(empty) == 1 else "have"
        return (f"{noun_for(len(empty), 'suite')} {', '.join(map(repr, empty))} {verb} no flow named "
                f"{', '.join(map(repr, flow_names))}")
    unknown = sorted(set(options.suite_base_urls) - known)
    if unknown:
        return f"--base-url names no suite {', '.join(map(repr, unknown))}"
    return None


def _summarize_decisions(request: RunRequest, channel: Channel, result: RunResult) -> None:
    """results.json's `decisions`, when the run had any to read, and a notice per stale one. Only a run of every
    flow can tell a removed check from one left out, so a filtered or sharded run calls none stale for that."""
    decisions = request.decisions
    if decisions is None or not (decisions.loaded.sources or decisions.ignored):
        return
    options = request.options
    complete = not (options.suites or options.flows or options.shard or request.select)
    result.decisions = summarize(result, decisions.loaded.decisions, decisions.summary(), complete=complete)
    for note in result.decisions.stale:
        channel.note(f"{note.where}: stale decision by {note.by} on finding {note.finding}: {note.why} "
                     "(litmus review --prune removes it)")
    for note in result.decisions.ignored:
        if note not in decisions.ignored:
            channel.warning(f"{note.where}: the decision by {note.by} on finding {note.finding} is ignored: {note.why}")


def _redactor(request: RunRequest, channel: Channel):
    redactor = Redactor(on_warning=channel.warning)
    for value in request.extra_secrets:
        redactor.register(value)
    return redactor


def _keep_baseline(path: Path, result: RunResult) -> None:
    """The baseline run's document beside results.json, for the record: the comparison needs only the object."""
    with contextlib.suppress(OSError):
        write_results(path, result)


class ConsoleChannel:
    """The pipeline's channel for a terminal (`litmus.console.Console`): diagnostics and warnings on stderr,
    notes on stdout, no grouping."""

    def __init__(self, console) -> None:
        self.warning, self.note, self.on_event = console.warning, console.note, console.on_event
        self.err = console.err

    def diagnostics(self, diagnostics: list) -> None:
        print(render_diagnostics(diagnostics), file=self.err)

    def mask(self, values: Iterable[str | None]) -> None:
        """A terminal has no masker: the runner keeps the values out of everything it prints and writes."""

    @contextlib.contextmanager
    def phase(self, title: str) -> Iterator[None]:
        yield
