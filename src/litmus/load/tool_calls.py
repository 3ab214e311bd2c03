"""Loading the fields of a `tool_calls` assertion: the expected calls, and the file of tool definitions.

The definitions file is read once per suite through the one file resolver, and each tool's `parameters`
is checked as a JSON Schema, with every `$ref` it makes read here or refused (nothing is fetched): the run
validates arguments with what was checked and reads no file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from litmus.load import checks
from litmus.load.fields import Fields, describe
from litmus.load.source import Item
from litmus.model import MISSING

if TYPE_CHECKING:
    from litmus.load.suite import SuiteBuilder

CALL_KEYS = ("name", "arguments")
# OpenAI: "Omitting parameters defines a function with an empty parameter list."
NO_PARAMETERS = {"type": "object", "properties": {}, "additionalProperties": False}


def expected_calls(f: Fields, name: str, item: Item) -> Any:
    """The list of expected calls (MISSING when invalid, errors recorded at each entry)."""
    value = f.check(item, name, "list")
    if value is MISSING:
        return MISSING
    ok = True
    for index, entry in enumerate(item.value):
        if not isinstance(entry.value, dict):
            f.error(entry, f"'{name}[{index}]' must be a mapping {{name, arguments}}, not {describe(entry.value)}")
            ok = False
            continue
        call = Fields(entry, "an expected tool call", CALL_KEYS, f.collector)
        call.take("name", "string", required=True, nonempty=True)
        call.take("arguments", "mapping")
        ok = ok and call.ok
    allow_extra = f.item.value.get("allow_extra")
    if not value and not f.has("schema_file") and not (allow_extra is not None and allow_extra.value is False):
        f.error(item, f"an empty '{name}' checks nothing while other calls are allowed: list the calls, or set "
                      "'allow_extra: false' to require that no tool is called")
        ok = False
    return value if ok else MISSING


def tool_definitions(builder: SuiteBuilder, item: Item, relative: str) -> Path | None:
    """The definitions file `relative` (resolved) when it holds valid tool definitions, read into
    `builder.tool_definitions` once per suite; else None, with errors at `item`."""
    path = builder.referenced_file(item, relative)
    if path is None:
        return None
    if str(path) in builder.tool_definitions:
        return path
    document = builder.read_data(item, path)
    if document is MISSING:
        return None
    tools = _tools(builder, item, document, path, builder.display(path))
    if tools is None:
        return None
    builder.tool_definitions[str(path)] = tools
    return path


def _tools(builder: SuiteBuilder, item: Item, document: Any, path: Path, shown: str) -> dict[str, Any] | None:
    def error(message: str) -> None:
        builder.c.error(item.span, f"'{shown}': {message}")

    if not isinstance(document, list) or not document:
        error("tool definitions must be a non-empty list of {type: function, function: {name, parameters}}, "
              f"not {describe(document)}")
        return None
    tools: dict[str, Any] = {}
    ok = True
    for index, entry in enumerate(document):
        function = entry.get("function") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or entry.get("type") != "function" or not isinstance(function, dict):
            anthropic = isinstance(entry, dict) and "input_schema" in entry
            hint = " (Anthropic's {name, input_schema} is written {type: function, function: {name, parameters: " \
                   "the input_schema}})" if anthropic else ""
            error(f"entry {index} must be {{type: function, function: {{name, parameters}}}}{hint}")
            ok = False
            continue
        name = function.get("name")
        if not isinstance(name, str) or not name:
            error(f"entry {index}: function.name must be a non-empty string, not {describe(name)}")
            ok = False
            continue
        if name in tools:
            error(f"entry {index}: tool '{name}' is defined twice")
            ok = False
            continue
        parameters = function.get("parameters", NO_PARAMETERS)
        if problem := checks.json_schema_error(parameters):
            error(f"entry {index} ({name}): parameters: {problem}")
            ok = False
            continue
        builder.warn_unchecked_formats(item, parameters)
        if not builder.schema_refs(item, parameters, path):
            ok = False
            continue
        tools[name] = parameters
    return tools if ok else None
