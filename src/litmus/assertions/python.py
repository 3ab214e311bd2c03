"""`python`: a function the suite's authors wrote decides (the escape hatch of promptfoo, DeepEval, Tavern).

`function: checks/orders.py:total_matches` names a file relative to the suite file (inside the
repository) and a top-level function in it. The loader checks that the file defines the function by
parsing it, without running it. At run time the file is read through the one file rule
(`litmus.files`) and run in the run's confined worker process (`litmus.assertions.python_worker`),
never in Litmus's own. The function is called as `name(response, context, **args)` and returns:

- `True` or `None`: passed;
- `False`, or a string: failed (the string is the reason);
- a list of `{path, expected, actual, reason}` mappings: failed with those mismatches (empty: passed).

Anything else is an `error`, and so is a value that is not plain JSON (bytes, a set, NaN, an int past
Python's int-to-string limit), an exception (its last line, at its file and line), a call that does
not return within the step's deadline (the worker is killed and replaced) and a worker that exits.

In an untrusted run (litmus.trust: a pull request's own code, e.g. from a fork) the file is not
read and no worker starts: the check is a critical `error` naming `allow-fork-code`, so its flow run
fails whatever the Intent Evaluation says: a check that never ran cannot pass.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Mapping

from litmus import files
from litmus.assertions._common import errored, failed, mismatch, outcome, passed
from litmus.assertions.base import AssertionSpec, FieldSpec
from litmus.deadline import Deadline
from litmus.files import MAX_FILE_BYTES
from litmus.trust import FORK_CODE_INPUT

SPEC = AssertionSpec(
    type="python",
    family="deterministic",
    doc="A Python function decides: name(response, context, **args).",
    fields={
        "function": FieldSpec("function", "path/to/file.py:name, the file relative to the suite file",
                              required=True),
        "args": FieldSpec("mapping", "keyword arguments for the function (templates rendered)", templated=True),
    },
)

# A call with no step deadline (tests calling evaluators directly) still ends.
DEFAULT_TIMEOUT_S = 30.0
# Every call gets at least this, so a check after a slow one in the same step still runs (a quick call
# takes well under a millisecond).
MIN_CALL_S = 0.1


def evaluate(assertion, ctx):


    from litmus.assertions.python_worker import (
        WorkerGone,  # lazy: the loader imports every spec; the worker handle costs 7 ms
    )

    relative, name = split(assertion.params["function"])
    file = _display(ctx.suite, relative)
    if not ctx.trust.runs_pr_code:
        refused = errored(assertion, f"{file}: {name}() was not run: {ctx.trust.reason}; python checks from an "
                                     f"untrusted commit run only with the action input {FORK_CODE_INPUT}: true "
                                     "(docs/security.md)", file)
        refused.critical = True
        return refused
    path = assertion.files["function"]
    try:
        # Read here on every call: a file swapped since load for a symlink, a FIFO or a device is refused.
        source = files.read_bytes(path, MAX_FILE_BYTES, shown=file, what="python check files")
    except (files.FileRefused, OSError) as exc:
        return errored(assertion, f"{file}: cannot load {name}: {type(exc).__name__}: {exc}", file)
    deadline = Deadline.after(DEFAULT_TIMEOUT_S) if ctx.deadline is None else ctx.deadline.at_least(MIN_CALL_S)
    response = ctx.response
    scenario = None if ctx.scenario is None else {
        "id": ctx.scenario.id, "data": ctx.scenario.data, "reference_response": ctx.scenario.reference_response}
    request = {
        "path": str(path), "function": name, "args": ctx.render(assertion.params.get("args") or {}),
        "response": {"status": response.status, "headers": list(response.headers.items()),
                     "body": response.body.decode("latin-1"), "encoding": response.text_encoding,
                     "truncated": response.truncated, "elapsed_ms": response.elapsed_ms},
        "context": {"variables": dict(ctx.variables), "scenario": scenario, "run_index": ctx.run_index},
    }
    try:
        answer = ctx.python_worker.call(request, source, deadline)
    except WorkerGone as exc:
        return errored(assertion, f"{file} {name}() {exc}; the worker was stopped (the next check starts a new "
                                  "one)", file)
    kind = answer["kind"]
    if kind == "unloadable":
        return errored(assertion, f"{file}: cannot load {name}: {answer['error']}", file)
    if kind == "load_raised":
        return errored(assertion, f"{file}: loading it raised {answer['error']}", file)
    where = f"{file}:{answer['line']}"
    if kind == "raised":
        at = f" (at {file}:{answer['at']})" if answer["at"] else ""
        return errored(assertion, f"{where} {name}() raised {answer['error']}{at}", where)
    if kind == "invalid":
        return errored(assertion, f"{where} {name}() returned {answer['problem']}, which is not plain JSON: "
                                  "expected True, None, False, a string or a list of mismatches", where)
    if answer["type"] is not None:
        return errored(assertion, f"{where} {name}() returned {answer['type']}; expected True, None, False, "
                                  "a string or a list of mismatches", where)
    return _outcome(assertion, answer["value"], where, name)


def _outcome(assertion, result, where: str, name: str):
    """The outcome of a plain JSON value of the contract's shapes: True, None, False, a string or a list."""
    if result is True or result is None:
        return passed(assertion, f"{where} {name}() passed")
    if result is False:
        return failed(assertion, [mismatch(where, True, False, f"{name}() returned False")])
    if isinstance(result, str):
        return failed(assertion, [mismatch(where, None, None, result or f"{name}() returned an empty reason")])
    found = []
    for i, item in enumerate(result):
        if not isinstance(item, Mapping) or not isinstance(item.get("reason", ""), str) \
                or set(item) - {"path", "expected", "actual", "reason"}:
            return errored(assertion, f"{where} {name}() returned a list whose item {i} is not a "
                                      "{path, expected, actual, reason} mapping", where)
        found.append(mismatch(str(item.get("path", where)), item.get("expected"), item.get("actual"),
                              item.get("reason") or "mismatch"))
    if not found:
        return passed(assertion, f"{where} {name}() found no mismatches")
    return outcome(assertion, "failed", f"{where} {name}(): {found[0].path}: {found[0].reason}"
                   + (f" (and {len(found) - 1} more)" if len(found) > 1 else ""), found)


def split(reference: str) -> tuple[str, str]:
    """`checks/orders.py:total_matches` -> ("checks/orders.py", "total_matches")."""
    relative, _, name = reference.rpartition(":")
    return relative, name


def defined_functions(source: str, filename: str) -> dict[str, int]:
    """Top-level function name -> line, read with `ast` (nothing in the file runs)."""
    tree = ast.parse(source, filename)
    return {node.name: node.lineno for node in tree.body if isinstance(node, ast.FunctionDef)}


def _display(suite, relative: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(suite.file), relative))
