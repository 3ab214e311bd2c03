"""Decide what no judge could: walk a run's judged outcomes and record human verdicts in .litmus/decisions.yaml.

  litmus review                                  # the last run (litmus-report/results.json), interactively
  litmus review out/results.json --by "Ann Lee"
  litmus review --accept 3f2a...e1 --reason "the date format is fine"
  litmus review --reject 3f2a...e1 --reason "promises a refund we do not give"
  litmus review --sample 5                       # also label 5 judge-passed outcomes (seeded; the seed is printed)
  litmus review --prune                          # remove the decisions the run reported stale

Interactively it shows, for each outcome that needs review and each judged failure: the question (the
assertion's criterion from the probe file, or the suite's intent), the judged text, and each judge tier's
score and reason. Keys: p pass, f fail, s skip, q quit (one keypress in a terminal; a line each otherwise).
After p or f you may type a reason. Each answer is written to .litmus/decisions.yaml at once.

A decision holds the finding id and the hash of exactly what was judged: the next `litmus run` with the same
reply takes the human verdict and calls no judge; a different reply is judged again, and the old decision
is then reported stale. Only judged outcomes can be decided (never a deterministic check). IDs are the
`id`s in results.json; the PR comment shows them next to each judged finding.

`by` is --by, else `git config user.name`; `at` is now, in UTC.
Exit status: 0 done, 2 bad input (unknown id, a deterministic check, unreadable files).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from litmus import files
from litmus.assertions._jsonpaths import find
from litmus.decisions import (
    DECISIONS_FILE,
    Decision,
    DecisionsError,
    is_judged_type,
    record_decision,
    remove_decisions,
)
from litmus.files import MAX_FILE_BYTES
from litmus.load import repo_root
from litmus.load.diagnostics import Collector
from litmus.load.source import Item, SourceError, parse_yaml
from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    ResultsError,
    RunResult,
    StepResult,
    SuiteResult,
    load_results,
    write_text_atomic,
)
from litmus.text import clip, did_you_mean

DEFAULT_RESULTS = "litmus-report/results.json"
KEYS = {"p": "pass", "f": "fail", "s": "skip", "q": "quit"}
# What the screen shows of a judged text before cutting it.
MAX_SHOWN_CHARS = 4_000


class ReviewError(Exception):
    """Bad input: the message says what and how to fix it (exit status 2)."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="?", default=DEFAULT_RESULTS,
                        help=f"the run's results.json (default: {DEFAULT_RESULTS})")
    verdict = parser.add_mutually_exclusive_group()
    verdict.add_argument("--accept", metavar="ID", help="record `pass` for this finding id, without prompting")
    verdict.add_argument("--reject", metavar="ID", help="record `fail` for this finding id, without prompting")
    verdict.add_argument("--prune", action="store_true",
                         help="remove the decisions this run reported stale (their reply changed or the check is gone)")
    parser.add_argument("--reason", default="", help="why (with --accept / --reject)")
    parser.add_argument("--by", help="who decides (default: git config user.name)")
    parser.add_argument("--sample", type=int, default=0, metavar="N",
                        help="also offer N outcomes the judge passed, drawn at random (the seed is printed)")
    parser.add_argument("--seed", type=int, help="the --sample seed (default: a fresh one, printed)")


@dataclass
class Candidate:
    """One judged outcome a human may decide."""

    suite: SuiteResult
    flow_run: FlowRunResult
    step: StepResult | None
    outcome: AssertionOutcome | IntentEvaluation

    @property
    def label(self) -> str:
        if isinstance(self.outcome, IntentEvaluation):
            return "Intent Evaluation"
        return self.outcome.name or self.outcome.type

    @property
    def where(self) -> str:
        parts = [self.suite.name, self.flow_run.flow, *([self.step.name] if self.step else [])]
        scenario = f" [scenario {self.flow_run.scenario}]" if self.flow_run.scenario else ""
        return " › ".join(parts) + scenario


def run(args: argparse.Namespace) -> int:
    try:
        return _review(args, sys.stdin, sys.stdout)
    except ReviewError as exc:
        print(f"litmus review: error: {exc}", file=sys.stderr)
        return 2


def _review(args: argparse.Namespace, stdin: TextIO, out: TextIO) -> int:
    try:
        result = load_results(args.results)
    except ResultsError as exc:
        raise ReviewError(f"{exc} (run `litmus run` first, or name the results.json)") from None
    root = repo_root()
    book = DecisionsFile(root)
    if args.prune:
        return _prune(result, book, out)
    by = args.by or _git_user(root)
    if args.accept or args.reject:
        finding = args.accept or args.reject
        chosen = named_candidates(result, finding)
        verdict = "pass" if args.accept else "fail"
        for candidate in chosen:
            book.record(_decision(candidate, verdict, by, args.reason))
        runs = f" ({len(chosen)} distinct replies)" if len(chosen) > 1 else ""
        print(f"recorded {verdict} for {finding}{runs} in {DECISIONS_FILE}: {chosen[0].where} › {chosen[0].label}",
              file=out)
        return 0
    queue = [c for c in candidates(result) if c.outcome.status in ("needs_review", "failed")]
    if args.sample:
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
        passed = [c for c in candidates(result) if c.outcome.status == "passed"]
        queue += random.Random(seed).sample(passed, min(args.sample, len(passed)))
        print(f"--sample {args.sample}: {min(args.sample, len(passed))} judge-passed outcomes drawn with --seed {seed}",
              file=out)
    if not queue:
        print("nothing to review: no judged outcome needs review or failed", file=out)
        return 0
    return Session(queue, book, by, root, stdin, out).run()


def candidates(result: RunResult) -> Iterator[Candidate]:
    """Every outcome of the run a human may decide (judged, with a content hash), one per distinct content,
    not already decided by a human."""
    seen: set[tuple[str, str]] = set()
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            found: list[tuple[StepResult | None, AssertionOutcome | IntentEvaluation]] = [
                (step, outcome) for step in flow_run.steps for outcome in step.assertions]
            found.append((None, flow_run.intent_evaluation))
            for step, outcome in found:
                key = (outcome.id, outcome.content_sha256)
                if outcome.content_sha256 and outcome.decided_by is None and key not in seen:
                    seen.add(key)
                    yield Candidate(suite, flow_run, step, outcome)


def named_candidates(result: RunResult, finding: str) -> list[Candidate]:
    """The decidable outcomes of `finding`; ReviewError, saying why, when it names none."""
    chosen = [c for c in candidates(result) if c.outcome.id == finding]
    if chosen:
        return chosen
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            if flow_run.intent_evaluation.id == finding:
                raise ReviewError(f"{finding} is the Intent Evaluation of {suite.name} › {flow_run.flow}, which no "
                                  "judge evaluated (deterministic): only judged outcomes can be decided")
            for step in flow_run.steps:
                if step.id == finding:
                    raise ReviewError(f"{finding} is the exchange of step '{step.name}' (did it get a response?): "
                                      "only judged outcomes can be decided")
                for outcome in step.assertions:
                    if outcome.id != finding:
                        continue
                    if not is_judged_type(outcome.type):
                        raise ReviewError(f"{finding} is a deterministic check ({outcome.name or outcome.type}, "
                                          f"{suite.file}:{outcome.line}): its result is a fact, not a judgement, "
                                          "so no human decision can change it; fix the target or the probe")
                    if outcome.decided_by is not None:
                        raise ReviewError(f"{finding} was already decided by {outcome.decided_by.by} in this run")
                    raise ReviewError(f"{finding} was not judged in this run ({outcome.status}: "
                                      f"{clip(outcome.reason, 160)}): there is no judged reply to decide")
    known = sorted({c.outcome.id for c in candidates(result)})
    raise ReviewError(f"no finding {finding!r} in {len(known)} judged outcomes of this run"
                      f"{did_you_mean(finding, known)}; the ids are in results.json and the PR comment")


def _decision(candidate: Candidate, verdict: str, by: str, reason: str) -> Decision:
    at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return Decision(candidate.outcome.id, candidate.outcome.content_sha256, verdict, by, at, reason.strip())


def _git_user(root: Path) -> str:
    try:
        done = subprocess.run(["git", "config", "user.name"], cwd=root, capture_output=True, text=True, timeout=10,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        done = None
    name = done.stdout.strip() if done is not None and done.returncode == 0 else ""
    if not name:
        raise ReviewError("say who decides: --by NAME, or set `git config user.name`")
    return name


def _prune(result: RunResult, book: DecisionsFile, out: TextIO) -> int:
    stale = result.decisions.stale if result.decisions else []
    if not stale:
        print("no stale decision in this run (a run of every flow reports them; see results.json `decisions`)",
              file=out)
        return 0
    book.remove([(note.finding, note.content) for note in stale])
    for note in stale:
        print(f"removed {note.where} (by {note.by}): {note.why}", file=out)
    return 0


class DecisionsFile:
    """`.litmus/decisions.yaml` at the repository root, each change written at once (a quit keeps the answers)."""

    def __init__(self, root: Path) -> None:
        self.path = root / DECISIONS_FILE
        self.root = root

    def text(self) -> str:
        if not self.path.exists() and not self.path.is_symlink():
            return ""
        try:
            real = files.resolve(DECISIONS_FILE, self.root, self.root)
            return files.read_bytes(real, MAX_FILE_BYTES, shown=DECISIONS_FILE, what="decisions files").decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ReviewError(f"{DECISIONS_FILE}: {exc}") from None

    def record(self, decision: Decision) -> None:
        self._write(lambda text: record_decision(text, decision))

    def remove(self, keys: list[tuple[str, str]]) -> None:
        self._write(lambda text: remove_decisions(text, keys))

    def _write(self, edit: Callable[[str], str]) -> None:
        try:
            write_text_atomic(self.path, edit(self.text()))
        except DecisionsError as exc:
            raise ReviewError(f"{DECISIONS_FILE}: {exc}") from None


# ---- the interactive walk

class Session:
    """One screen per candidate; a resize (SIGWINCH) draws the current one again at the new width."""

    def __init__(self, queue: list[Candidate], book: DecisionsFile, by: str, root: Path, stdin: TextIO,
                 out: TextIO) -> None:
        self.queue, self.book, self.by, self.root = queue, book, by, root
        self.stdin, self.out = stdin, out
        self.tty = stdin.isatty() and out.isatty()
        self.plain = os.environ.get("TERM", "dumb") in ("", "dumb") or not self.tty
        self.resized = False

    def run(self) -> int:
        counts = {"pass": 0, "fail": 0, "skip": 0}
        previous = signal.signal(signal.SIGWINCH, self._on_resize) if self.tty else None
        try:
            for index, candidate in enumerate(self.queue):
                screen = lambda c=candidate, i=index: self.screen(c, i)  # noqa: E731 - drawn again on resize
                self.draw(screen())
                answer = self.key(screen)
                if answer == "quit":
                    break
                counts[answer] += 1
                if answer in ("pass", "fail"):
                    reason = self.line("Reason (Enter for none): ")
                    self.book.record(_decision(candidate, answer, self.by, reason))
                    self.say(f"recorded {answer} for {candidate.outcome.id} in {DECISIONS_FILE}")
        finally:
            if previous is not None:
                signal.signal(signal.SIGWINCH, previous)
        self.say(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped; "
                 f"decisions in {DECISIONS_FILE} (commit it with your change)")
        return 0

    def _on_resize(self, signum, frame) -> None:
        self.resized = True

    def say(self, text: str) -> None:
        self.out.write(text.replace("\n", "\r\n" if self.tty else "\n") + ("\r\n" if self.tty else "\n"))
        self.out.flush()

    def draw(self, text: str) -> None:
        if not self.plain:
            self.out.write("\x1b[2J\x1b[H")  # clear and home: the screen is this candidate alone
        else:
            self.out.write("\n")
        self.say(text)

    def screen(self, candidate: Candidate, index: int) -> str:
        width = max(40, shutil.get_terminal_size((80, 24)).columns)
        bar = "=" * width if self.plain else "\x1b[1m" + "─" * width + "\x1b[0m"
        outcome = candidate.outcome
        lines = [bar, f"[{index + 1}/{len(self.queue)}] {candidate.where} › {candidate.label}",
                 f"status: {outcome.status}   id: {outcome.id}", ""]
        lines += ["Question:", *_wrapped(_question(candidate, self.root), width), ""]
        lines += ["Judged text:", *_wrapped(_judged_text(candidate), width), ""]
        tiers = outcome.judge.tiers if outcome.judge else []
        for number, tier in enumerate(tiers, start=1):
            score = "no score" if tier.score is None else f"score {tier.score:g}"
            threshold = f" / threshold {outcome.threshold:g}" if outcome.threshold is not None else ""
            lines += _wrapped(f"Tier {number} {tier.provider}:{tier.model}: {score}{threshold}: {tier.reason}", width)
        if not tiers:
            lines += _wrapped(f"Judge: {outcome.reason}", width)
        lines += ["", "[p] pass   [f] fail   [s] skip   [q] quit"]
        return "\n".join(lines)

    def key(self, screen: Callable[[], str]) -> str:
        """The answer: one keypress in a terminal (a resize draws the screen again), else one line."""
        if not self.tty:
            while True:
                self.out.write("> ")
                self.out.flush()
                line = self.stdin.readline()
                if not line:
                    return "quit"
                if line.strip()[:1].lower() in KEYS:
                    return KEYS[line.strip()[:1].lower()]
        import termios  # lazy: POSIX only, and only a terminal session needs it
        import tty  # lazy: as termios

        fd = self.stdin.fileno()
        saved = termios.tcgetattr(fd)
        tty.setcbreak(fd, termios.TCSANOW)  # not TCSAFLUSH: a key pressed while the screen was drawn counts
        try:
            while True:
                if self.resized:
                    self.resized = False
                    self.draw(screen())
                ready, _, _ = select.select([fd], [], [], 0.1)
                if not ready:
                    continue
                char = os.read(fd, 1).decode("utf-8", "replace").lower()
                if not char:
                    return "quit"
                if char in KEYS:
                    return KEYS[char]
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    def line(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        return self.stdin.readline().strip()


def _wrapped(text: str, width: int) -> list[str]:
    return [line for paragraph in text.splitlines() or [""]
            for line in (textwrap.wrap(paragraph, width - 2, replace_whitespace=False) or [""])]


def _question(candidate: Candidate, root: Path) -> str:
    """The criterion the judge was given: the suite's intent, or the assertion's own fields from the probe file."""
    if isinstance(candidate.outcome, IntentEvaluation):
        return f"intent: {candidate.suite.intent or '(none)'}"
    fields = probe_fields(root, candidate.suite.file, candidate.outcome.line, candidate.outcome.column)
    shown = {k: v for k, v in fields.items() if k not in ("type", "name", "critical", "on_failure")}
    body = "; ".join(f"{k}: {v if isinstance(v, str) else json.dumps(v)}" for k, v in shown.items())
    return f"{candidate.outcome.type}: {body}" if body else candidate.outcome.type


def probe_fields(root: Path, file: str, line: int, column: int) -> dict:
    """The assertion's mapping in the probe file at line:column (empty when the file has changed since)."""
    try:
        data = files.read_bytes(files.resolve(file, root, root), MAX_FILE_BYTES, shown=file, what="probe files")
        tree = parse_yaml(data, file, Collector())
    except (OSError, SourceError):
        return {}
    stack: list[Item] = [tree] if tree else []
    while stack:
        item = stack.pop()
        if isinstance(item.value, dict):
            if (item.pos.line, item.pos.column) == (line, column) and "type" in item.value:
                return item.plain()
            stack.extend(item.value.values())
        elif isinstance(item.value, list):
            stack.extend(item.value)
    return {}


def _judged_text(candidate: Candidate) -> str:
    """What the judge read, as results.json keeps it: the response body (the `select`ed part when the probe
    selects one), or for an Intent Evaluation the flow run's replies."""
    steps = [candidate.step] if candidate.step else candidate.flow_run.steps
    texts = []
    for step in steps:
        body = step.response.body if step.response and step.response.body is not None else "(no response body)"
        if candidate.step is not None:
            select = candidate.outcome.mismatches[0].path if candidate.outcome.mismatches else "$"
            body = _selected(body, select)
        texts.append(body if candidate.step else f"{step.name}: {body}")
    return clip("\n".join(texts), MAX_SHOWN_CHARS)


def _selected(body: str, path: str) -> str:
    if path in ("$", ""):
        return body
    try:
        matches = find(path, json.loads(body))
    except Exception:  # noqa: BLE001 - a path the body cannot answer: show it whole
        return body
    if len(matches) != 1:
        return body
    value = matches[0][1]
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
