"""`python`: a function the suite's authors wrote decides (the escape hatch of promptfoo, DeepEval, Tavern).

`function: checks/orders.py:total_matches` names a file relative to the suite file (inside the
repository) and a top-level function in it. The file is loaded by its path, never imported from
`sys.path`; the loader checks that the file defines the function by parsing it, without running it.
The function is called as `name(response, context, **args)` and returns:

- `True` or `None`: passed;
- `False`, or a string: failed (the string is the reason);
- a list of `{path, expected, actual, reason}` mappings: failed with those mismatches (empty: passed).

Anything else is an `error`, and so is an exception (its last line, at its file and line) and a call
that does not return within the step's deadline (the call keeps its thread, which Python cannot
stop, but its result is ignored).

In an untrusted run (litmus.trust: a pull request's own code, e.g. from a fork) the file is not
loaded at all: the check is a critical `error` naming `allow-fork-code`, so its flow run fails
whatever the Intent Evaluation says: a check that never ran cannot pass.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from litmus.assertions.base import AssertionSpec, FieldSpec
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


class PythonResponse:
    """What the function sees of the response: `status`, `headers`, `text`, `body`, `json()`, `elapsed_ms`."""

    def __init__(self, response) -> None:
        self._response = response
        self.status = response.status
        self.headers = response.headers
        self.body = response.body
        self.elapsed_ms = response.elapsed_ms

    @property
    def text(self) -> str:
        return self._response.text

    def json(self) -> Any:
        return self._response.json()


@dataclass(frozen=True)
class PythonContext:
    """What the function sees of the flow run: `variables`, `scenario` (or None), `run_index`."""

    variables: Mapping[str, Any]
    scenario: Mapping[str, Any] | None
    run_index: int


def evaluate(assertion, ctx):
    import time

    from litmus.assertions._common import errored
    from litmus.load.files import FileRefused

    relative, name = split(assertion.params["function"])
    file = _display(ctx.suite, relative)
    if not ctx.trust.runs_pr_code:
        refused = errored(assertion, f"{file}: {name}() was not run: {ctx.trust.reason}; python checks from an "
                                     f"untrusted commit run only with the action input {FORK_CODE_INPUT}: true "
                                     "(docs/security.md)", file)
        refused.critical = True
        return refused
    try:
        function, line = load(assertion.files["function"], name, shown=file)
    except (FileRefused, OSError, SyntaxError, LookupError) as exc:
        return errored(assertion, f"{file}: cannot load {name}: {type(exc).__name__}: {exc}", file)
    except Exception as exc:  # noqa: BLE001 - the module's own top-level code raised
        return errored(assertion, f"{file}: loading it raised {_last_line(exc)}", file)
    where = f"{file}:{line}"
    args = ctx.render(assertion.params.get("args") or {})
    scenario = None if ctx.scenario is None else {
        "id": ctx.scenario.id, "data": ctx.scenario.data, "reference_response": ctx.scenario.reference_response}
    context = PythonContext(dict(ctx.variables), scenario, ctx.run_index)
    timeout = DEFAULT_TIMEOUT_S if ctx.deadline is None else max(ctx.deadline - time.perf_counter(), 0.001)
    call = _Call(function, (PythonResponse(ctx.response), context), args)
    call.thread.start()
    call.thread.join(timeout)
    if call.thread.is_alive():
        return errored(assertion, f"{where} {name}() did not return within the step's deadline "
                                  f"({timeout * 1000:.0f} ms left)", where)
    if call.error is not None:
        return errored(assertion, f"{where} {name}() raised {_last_line(call.error)}{_raised_at(call.error, file)}",
                       where)
    return _outcome(assertion, call.result, where, name)


class _Call:
    def __init__(self, function, args, kwargs) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(function, args, kwargs), daemon=True,
                                       name="litmus-python-assertion")

    def _run(self, function, args, kwargs) -> None:
        try:
            self.result = function(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - SystemExit from user code is an error outcome too
            self.error = exc


def _outcome(assertion, result, where: str, name: str):
    from litmus.assertions._common import errored, failed, mismatch, outcome, passed

    if result is True or result is None:
        return passed(assertion, f"{where} {name}() passed")
    if result is False:
        return failed(assertion, [mismatch(where, True, False, f"{name}() returned False")])
    if isinstance(result, str):
        return failed(assertion, [mismatch(where, None, None, result or f"{name}() returned an empty reason")])
    if isinstance(result, list):
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
    return errored(assertion, f"{where} {name}() returned {type(result).__name__}; expected True, None, False, "
                              "a string or a list of mismatches", where)


def split(reference: str) -> tuple[str, str]:
    """`checks/orders.py:total_matches` -> ("checks/orders.py", "total_matches")."""
    relative, _, name = reference.rpartition(":")
    return relative, name


def defined_functions(source: str, filename: str) -> dict[str, int]:
    """Top-level function name -> line, read with `ast` (nothing in the file runs)."""
    import ast

    tree = ast.parse(source, filename)
    return {node.name: node.lineno for node in tree.body if isinstance(node, ast.FunctionDef)}


# (resolved path, SHA-256 of its source) -> loaded module: one load per file version per process.
_MODULES: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def load(path, name: str, *, shown: str | None = None):
    """The function `name` of the file at `path` (its real path, resolved when the suite loaded) and its
    line. The source is read through the one file rule (`litmus.load.files`) and run from those bytes:
    a file swapped since load for a symlink, a FIFO or a device is refused, never followed or waited on."""
    import hashlib
    import sys
    import types

    from litmus.load import files
    from litmus.load.source import MAX_FILE_BYTES

    source = files.read_bytes(path, MAX_FILE_BYTES, shown=shown, what="python check files")
    key = (str(path), hashlib.sha256(source).hexdigest())
    with _LOCK:
        module = _MODULES.get(key)
        if module is None:
            module_name = f"litmus_probe_check_{abs(hash(key)):x}"
            module = types.ModuleType(module_name)
            module.__file__ = str(path)
            code = compile(source, str(path), "exec", dont_inherit=True)
            sys.modules[module_name] = module  # what dataclasses and pickling look a module up by
            exec(code, module.__dict__)  # noqa: S102 - the suite's own check, run as the docs say
            _MODULES[key] = module
    function = getattr(module, name, None)
    if not callable(function):
        raise LookupError(f"the file defines no function {name}")
    code = getattr(function, "__code__", None)
    return function, code.co_firstlineno if code else 1


def _display(suite, relative: str) -> str:
    import posixpath

    return posixpath.normpath(posixpath.join(posixpath.dirname(suite.file), relative))


def _last_line(exc: BaseException) -> str:
    import traceback

    lines = traceback.format_exception_only(type(exc), exc)
    return lines[-1].strip() if lines else type(exc).__name__


def _raised_at(exc: BaseException, file: str) -> str:
    """` (at checks/orders.py:14)`: the innermost frame of the user's file in the traceback."""
    import os
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    target = os.path.basename(file)
    own = [f for f in frames if os.path.basename(f.filename) == target]
    return f" (at {file}:{own[-1].lineno})" if own else ""
