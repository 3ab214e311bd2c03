"""Make a run's replies the new reference answers of their scenarios.

  litmus accept-references litmus-report/results.json
  litmus accept-references results.json --suite Checkout          # only this suite's scenarios (repeatable)
  litmus accept-references results.json --patch references.patch  # write the change as a patch instead
  litmus run --update-references                                  # run, then accept in one go

`accurate_with_scenario_context` compares each reply with its scenario's approved `reference_response`.
When the answer changed on purpose (a new prompt, a new model), accept the replies of a run as the new
references instead of editing YAML by hand: review the diff, commit it.

What is written, for each scenario an `accurate_with_scenario_context` assertion judged:
  an inline scenario    its reply goes to the scenario's reference_response_file; a scenario without one
                        gets probes/references/<suite>/<scenario>.txt, and its `reference_response: ...`
                        line becomes `reference_response_file: ...` (or that line is added after its id):
                        every other line of the suite stays as it is, comments and layout included
  a CSV or JSONL row    of a context.scenarios_file: that row's reference_response cell (or key) is set,
                        every other row left byte for byte (a CSV needs a reference_response column)

Refused, naming each scenario and why, with nothing written at all: a reply cut at the body cap
(raise --max-body-bytes), a reply in which redaction masked a secret, runs of one scenario whose replies
differ (rerun, or make the target deterministic), an empty reply, no reply recorded (the assertion was
skipped or could not read the response), a row of a YAML or JSON scenarios file (set it by hand), a path
through a symbolic link or out of the repository.

The suites are found like `litmus run` finds them (PATHS, default probes/); the suite and scenario names
in results.json are only looked up there, never used as paths.

Exit status: 0 written (or every reply already was the reference), 1 refused: nothing written,
2 bad input (results.json or the probe files cannot be read, an unknown --suite).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from litmus.console import clean
from litmus.errors import ProbeError, render_diagnostics
from litmus.load import load_suites, repo_root
from litmus.references import ApplyError, apply_edits, patch, plan_reference_updates
from litmus.results import ResultsError, RunResult, load_results, write_text_atomic
from litmus.text import did_you_mean

PROG = "litmus accept-references"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, help="the results.json of the run whose replies to accept")
    parser.add_argument("paths", nargs="*", default=["probes/"], metavar="PATHS",
                        help="the probe files or directories the run used (default: probes/)")
    parser.add_argument("--suite", action="append", default=[], metavar="NAME",
                        help="accept only this suite's scenarios (repeatable; default: every suite in the results)")
    parser.add_argument("--patch", type=Path, metavar="FILE",
                        help="write the change as a unified diff to FILE (apply with `git apply FILE`) and leave "
                             "the probe files as they are")


def run(args: argparse.Namespace) -> int:
    try:
        result = load_results(args.results)
    except ResultsError as exc:
        return _usage(str(exc))
    names = {suite.name for suite in result.suites}
    unknown = [name for name in args.suite if name not in names]
    if unknown:
        return _usage(f"--suite {unknown[0]!r} is not a suite of {args.results}{did_you_mean(unknown[0], names)}")
    root = repo_root()
    try:
        # No request is made: values from the environment are not needed, so a missing one is no error.
        suites = load_suites(args.paths, root=root, environ=os.environ, strict_env=False, named_anywhere=True).suites
    except ProbeError as exc:
        print(render_diagnostics(exc.diagnostics), file=sys.stderr)
        return 2
    return accept(result, suites, root, args.suite, patch_file=args.patch, prog=PROG)


def accept(result: RunResult, suites: list, root: Path, suite_names: list[str] = (), *,
           patch_file: Path | None = None, prog: str = PROG) -> int:
    """Plan the references of `result`, then write them (or the patch) and say what was done: 0 done,
    1 refused (nothing written). Shared by `litmus run --update-references`."""
    plan = plan_reference_updates(result, suites, root, suite_names)
    if plan.refusals:
        print(f"{prog}: refused, nothing written:", file=sys.stderr)
        for refusal in plan.refusals:
            print(f"  {clean(refusal)}", file=sys.stderr)
        return 1
    if not plan.accepted and not plan.unchanged:
        print(f"{prog}: no accurate_with_scenario_context assertion judged a scenario's reply in this run: "
              "nothing to accept")
        return 0
    if patch_file is not None:
        try:
            write_text_atomic(patch_file, patch(plan.edits))
        except OSError as exc:
            print(f"{prog}: error: cannot write {clean(patch_file)}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"{prog}: {len(plan.edits)} file(s) changed in {clean(patch_file)} (apply with `git apply`)")
    else:
        try:
            apply_edits(plan.edits, root)
        except ApplyError as exc:
            print(f"{prog}: {clean(exc)}", file=sys.stderr)
            return 1
        for suite, scenario, where in plan.accepted:
            print(f"reference of suite '{clean(suite)}', scenario '{clean(scenario)}' written to {clean(where)}")
    if plan.unchanged:
        print(f"{len(plan.unchanged)} scenario(s) already have their reply as reference")
    return 0


def _usage(message: str) -> int:
    print(f"{PROG}: error: {clean(message)}", file=sys.stderr)
    return 2
