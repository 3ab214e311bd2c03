"""The `litmus` command line: a thin dispatcher over `litmus.commands.*`.

Each subcommand is one module with `configure(parser)` and `run(args) -> int`, imported only
when that subcommand is used, so `litmus --version` and `litmus validate` start fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from litmus import __version__

# name -> (module, one-line help). Adding a command = one module + one line here.
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("litmus.commands.validate", "check probe files and report every problem with its position"),
    "init": ("litmus.commands.init", "write a starter probe suite from an OpenAPI description, one flow per operation"),
    "run": ("litmus.commands.run", "run probe suites against a deployment and write results and reports"),
    "demo": ("litmus.commands.demo", "run the example suites against the bundled demo target, offline"),
    "report": ("litmus.commands.report", "render SARIF, JUnit, Markdown, HTML from a results.json"),
    "merge": ("litmus.commands.merge", "merge the results of sharded runs into one results.json"),
    "review": ("litmus.commands.review", "record human pass/fail verdicts on judged outcomes"),
    "calibrate": ("litmus.commands.calibrate",
                  "measure how far to trust the judge: agreement with human labels, false passes, a threshold"),
    "compare": ("litmus.commands.compare", "compare a results.json with a baseline run: new, unchanged, fixed"),
    "accept-references": ("litmus.commands.accept_references",
                          "make a run's replies the new reference answers of their scenarios"),
    "action": ("litmus.commands.action", "the GitHub Action entrypoint: run, report, comment, annotate"),
}

DESCRIPTION = """\
Litmus runs probe suites (YAML under probes/) against an HTTP API, evaluates deterministic and
LLM-judge assertions, and reports findings as SARIF, JUnit, Markdown and HTML.

Exit status: 0 all good, 1 a suite (or assertion, per --fail-on) failed, 2 bad input or usage.
"""


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="litmus", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"litmus {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Only the chosen subcommand's module is imported; the others just get their help line.
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (module_name, help_text) in COMMANDS.items():
        command_parser = sub.add_parser(
            name, help=help_text, description=help_text,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if name == chosen:
            module = importlib.import_module(module_name)
            if module.__doc__:
                command_parser.description = module.__doc__
            module.configure(command_parser)
            command_parser.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return _main(argv)
    from litmus.github.workflow import command_safe_output  # lazy: only a runner needs it (25 ms at start-up)

    # On a runner, a printed line starting with `::` is a workflow command: only Litmus's own may be one.
    with command_safe_output():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return args._run(args)
    except KeyboardInterrupt:
        return 130
