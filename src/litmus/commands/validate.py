"""Check probe files without running anything, and report every problem with its position.

Finds *.yaml and *.yml files under PATHS (default probes/), recursively. A file whose top level
is a mapping without `suite:` is not a suite (shared schema files, data) and is skipped, unless
it has a suite's own keys (flows:, steps:, version:), which makes it a misspelt suite and an
error; any other YAML file that is not a valid suite is an error. Each problem is printed like a compiler's:

  probes/chat.yaml:14:17: error: unknown assertion type 'json_pth' (did you mean 'json_path'?)
     14 |         - type: json_pth
        |                 ^^^^^^^^

then a summary line, e.g. "3 suites, 7 flows, 41 assertions: OK".

The project config (litmus.yaml at the repository root, or --config) and the human decisions
(.litmus/decisions.yaml, when present; its schema ships as litmus/schemas/decisions.schema.json) are
checked too, and their problems are reported the same way, all at once. An OpenAPI description a suite
names with `openapi:` is validated whole against the OpenAPI 3.0 / 3.1 rules (a run only parses it); its
problems are errors at the spec's own line and column, with the JSON pointer of the node. Finding no
suite at all is an error: a run of these paths would check nothing.

Unlike `litmus run`, a template naming an environment variable that is not set ({{ env.X }},
{{ secrets.X }}), or a {{ vars.X }} not given with --var / --vars-file, is a warning here:
validate works locally without the CI secrets and run variables; nor is the judge's API key looked for.
A name that never resolves (the action's credentials: GITHUB_TOKEN, GH_TOKEN, INPUT_*, ACTIONS_*,
RUNNER_*) is an error, as in every run: such a template can never work.

Exit status: 0 valid (warnings allowed), 2 any error (including: no suite found).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from litmus.commands.run import read_run_vars
from litmus.config import resolve_config
from litmus.decisions import workspace_decisions
from litmus.errors import ProbeError
from litmus.load import load_suites, repo_root
from litmus.text import count


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["probes/"], metavar="PATHS",
                        help="probe files or directories to check (default: probes/)")
    parser.add_argument("--config", metavar="PATH", help="project config file to check too (default: litmus.yaml "
                        "at the repository root, if present) [LITMUS_CONFIG]")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                        help="a {{ vars.NAME }} value, as for litmus run (names not given are warnings here)")
    parser.add_argument("--vars-file", action="append", default=[], metavar="FILE",
                        help="a YAML or JSON mapping of {{ vars.NAME }} values, as for litmus run")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text: compiler-style messages on stderr and a summary on stdout (default); "
                             "json: one JSON document on stdout, for machines")


def run(args: argparse.Namespace) -> int:

    result = None
    try:
        run_vars = read_run_vars(args)
    except ValueError as exc:
        print(f"litmus validate: error: {exc}", file=sys.stderr)
        return 2
    except ProbeError as exc:
        return _report(args.format, exc.diagnostics, "the vars file is invalid: FAILED", ok=False)
    try:
        result = load_suites(args.paths, strict_env=False, run_vars=run_vars, named_anywhere=True)
        diagnostics = list(result.warnings) + _spec_problems(result.suites)
    except ProbeError as exc:
        diagnostics = list(exc.diagnostics)
    config_path = None
    root = repo_root()
    try:
        config_path = resolve_config(args, os.environ, root).path
    except ProbeError as exc:
        diagnostics.extend(exc.diagnostics)
    decisions = workspace_decisions(root)
    diagnostics.extend(decisions.diagnostics)
    errors = [d for d in diagnostics if d.severity == "error"]
    warnings = [d for d in diagnostics if d.severity == "warning"]
    if errors or result is None:
        summary = f"{count(len(errors), 'error')}, {count(len(warnings), 'warning')}: FAILED"
        return _report(args.format, diagnostics, summary, ok=False)
    suites = result.suites
    flows = [flow for suite in suites for flow in suite.flows]
    assertions = sum(len(step.assertions) for flow in flows for step in flow.steps) + sum(
        len(flow.conversation_assertions) for flow in flows)
    summary = f"{count(len(suites), 'suite')}, {count(len(flows), 'flow')}, {count(assertions, 'assertion')}"
    if config_path is not None:
        summary += f", config {config_path.name}"
    if decisions.sources:
        summary += f", {count(len(decisions.decisions), 'decision')}"
    summary += ": OK"
    if warnings:
        summary += f" ({count(len(warnings), 'warning')})"
    return _report(args.format, warnings, summary, ok=True)


def _spec_problems(suites) -> list:
    """Each OpenAPI description the suites name, validated whole once (a run only parses it)."""
    documents = {suite.openapi.path: suite.openapi for suite in suites if suite.openapi is not None}
    if not documents:
        return []
    from litmus.load.openapi_spec import spec_problems  # lazy: a heavy import, for suites naming a spec only

    return [problem for document in documents.values() for problem in spec_problems(document)]


def _report(fmt: str, diagnostics: list, summary: str, *, ok: bool) -> int:
    if fmt == "json":
        document = {"ok": ok, "summary": summary, "diagnostics": [d.to_json() for d in diagnostics]}
        print(json.dumps(document, indent=2))
    else:
        for diagnostic in diagnostics:
            print(diagnostic.render(), file=sys.stderr)
        print(summary)
    return 0 if ok else 2
