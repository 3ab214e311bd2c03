"""`tool_calls`: the tool calls of the step's reply against a list.

The reply is read as the API its step streamed (`stream: openai | anthropic`), else as the API its body's
shape says (`litmus.toolcalls.detect_api`); a reply that is neither is an `error`, never a pass.
- `expected` entries match calls by name, `arguments` as a subset (every key given deep-equals the call's).
- `order: any` (default): each entry matches a different call, in any order (the best assignment, so a
  loose entry never takes the call a stricter one needs). `order: exact`: the entries match calls in their
  order, other calls may come between them; with `allow_extra: false` the calls are exactly the list.
- `allow_extra: false`: a call no entry matches is a mismatch.
- `schema_file`: every call's arguments validate against its tool's `parameters`; a call of a tool the
  file does not define is a mismatch.
- A call whose arguments are not JSON is always a mismatch.
Mismatches name the call by its 0-based index: `tool_calls[1].arguments.order_id`.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from litmus.assertions._common import describe, errored, failed, json_equal, mismatch, passed, show
from litmus.assertions._jsonpaths import format_path
from litmus.assertions.base import AssertionSpec, FieldSpec
from litmus.results import Mismatch
from litmus.text import clip, count
from litmus.toolcalls import NotAReply, ToolCall, detect_api, read_tool_calls

SPEC = AssertionSpec(
    type="tool_calls",
    family="deterministic",
    doc="The reply's tool calls (OpenAI tool_calls, Anthropic tool_use; streamed or not) match the list.",
    fields={
        "expected": FieldSpec("calls", "the calls, [{name, arguments}]: arguments match as a subset (each key "
                                       "given deep-equals the call's)", templated=True),
        "order": FieldSpec("choice", "exact: the calls come in this order; any (default): in any order",
                           choices=("exact", "any")),
        "allow_extra": FieldSpec("boolean", "false: a call not listed fails (default true)"),
        "schema_file": FieldSpec("tool_definitions", "OpenAI tool definitions (JSON or YAML, relative to the "
                                                     "suite file) every call's arguments must validate against"),
    },
    at_least_one_of=(("expected", "schema_file"),),
)

_RAW_SHOWN = 80


def evaluate(assertion, ctx):
    # A conversation step's body is the reply's text: its tool calls are in the API's response.
    response = ctx.response.api_response
    api = detect_api(response)
    if api is None:
        return errored(assertion, "cannot read tool calls: the reply is neither an OpenAI chat completion nor an "
                                  "Anthropic message (a streamed reply needs `stream: openai` or `stream: anthropic`)")
    try:
        calls = read_tool_calls(response, api)
    except NotAReply as exc:
        return errored(assertion, f"cannot read tool calls: {exc}")
    params = assertion.params
    expected = ctx.render(params.get("expected", []))
    allow_extra = params.get("allow_extra", True)
    mismatches = [mismatch(_path(index, "arguments"), "arguments as JSON", clip(call.raw_arguments, _RAW_SHOWN),
                           f"{call.name}: the arguments are not valid JSON: {show(call.raw_arguments)}")
                  for index, call in enumerate(calls) if call.raw_arguments is not None]
    if params.get("order") == "exact" and not allow_extra:
        mismatches += _exactly(expected, calls)
    else:
        listed, unmatched = (_in_order if params.get("order") == "exact" else _any_order)(expected, calls)
        mismatches += unmatched
        if not allow_extra:
            mismatches += [_unexpected(index, call) for index, call in enumerate(calls) if index not in listed]
    if "schema_file" in params:
        from referencing.exceptions import Unresolvable  # lazy: referencing: ~50 ms, only when a schema is checked

        try:
            mismatches += _invalid_arguments(assertion, ctx.suite, calls)
        except Unresolvable as exc:
            return errored(assertion, f"a $ref of the tool definitions cannot be resolved: {exc}")
    if mismatches:
        return failed(assertion, mismatches)
    return passed(assertion, _summary(calls, expected, allow_extra, params.get("schema_file")))


def _summary(calls: list[ToolCall], expected: list[dict[str, Any]], allow_extra: bool, schema_file: str | None) -> str:
    if not calls:  # `expected: []` with `allow_extra: false`, or only a schema_file
        if not allow_extra:
            return "no tool calls, as required"
        return f"no tool calls (none to check against {schema_file})"
    names = ", ".join(call.name for call in calls[:5]) + (", …" if len(calls) > 5 else "")
    checks = [f"{count(len(expected), 'expected call')} matched"] if expected else []
    if not allow_extra:
        checks.append("no others")
    if schema_file:
        checks.append("arguments valid")
    return f"{count(len(calls), 'tool call')} ({names}): {', '.join(checks)}"


def _path(index: int, *parts: Any) -> str:
    return "tool_calls" + format_path([index, *parts])[1:]


def _argument_mismatches(entry: dict[str, Any], index: int, call: ToolCall) -> list[Mismatch]:
    """How the call's arguments differ from the entry's (empty: every key given deep-equals)."""
    wanted = entry.get("arguments") or {}
    if not wanted:
        return []
    actual = call.arguments
    if not isinstance(actual, dict):
        return [mismatch(_path(index, "arguments"), wanted, actual,
                         f"{call.name}: expected arguments with {show(wanted)}, got {describe(actual)}")]
    found = []
    for key, value in wanted.items():
        if key not in actual:
            found.append(mismatch(_path(index, "arguments", key), value, None,
                                  f"{call.name}: missing, expected {show(value)}"))
        elif not json_equal(actual[key], value):
            found.append(mismatch(_path(index, "arguments", key), value, actual[key],
                                  f"{call.name}: expected {show(value)}, got {describe(actual[key])}"))
    return found


def _fits(entry: dict[str, Any], call: ToolCall) -> bool:
    return call.name == entry["name"] and call.raw_arguments is None and not _argument_mismatches(entry, 0, call)


def _any_order(expected: list[dict[str, Any]], calls: list[ToolCall]) -> tuple[set[int], list[Mismatch]]:
    """The calls the entries account for (a maximum matching of entries to distinct calls, and the call each
    entry left over comes closest to), and the mismatches of the entries left over."""
    candidates = [[index for index, call in enumerate(calls) if _fits(entry, call)] for entry in expected]
    assigned = _assign(candidates)
    listed = set(assigned.values())
    free = [i for i in range(len(calls)) if i not in listed]
    unmatched: list[Mismatch] = []
    for number, entry in enumerate(expected):
        if number not in assigned:
            closest, why = _closest(entry, calls, free)
            listed.update(closest)
            unmatched += why
    return listed, unmatched


def _assign(candidates: list[list[int]]) -> dict[int, int]:
    """Entry -> call, as many entries as can have a call of their own (augmenting paths, breadth first)."""
    owner: dict[int, int] = {}  # call -> entry
    for entry in range(len(candidates)):
        came_from: dict[int, int | None] = {}  # call -> the call before it on the path (None: the first)
        reached_by: dict[int, int] = {}  # call -> the entry that reached it
        queue: deque[tuple[int, int | None]] = deque([(entry, None)])
        free = None
        while queue and free is None:
            current, previous = queue.popleft()
            for call in candidates[current]:
                if call in came_from:
                    continue
                came_from[call], reached_by[call] = previous, current
                if call not in owner:
                    free = call
                    break
                queue.append((owner[call], call))
        while free is not None:  # flip the path: each entry on it takes the call it reached
            owner[free] = reached_by[free]
            free = came_from[free]
    return {entry: call for call, entry in owner.items()}


def _in_order(expected: list[dict[str, Any]], calls: list[ToolCall]) -> tuple[set[int], list[Mismatch]]:
    """The calls the entries account for, in order (each the earliest fitting call after the one before, which
    finds the order whenever there is one; else the call it comes closest to), and the mismatches of the
    entries that have none."""
    matched: set[int] = set()
    listed: set[int] = set()
    unmatched: list[Mismatch] = []
    start = 0
    for entry in expected:
        found = next((i for i in range(start, len(calls)) if _fits(entry, calls[i])), None)
        if found is not None:
            matched.add(found)
            start = found + 1
            continue
        earlier = next((i for i in range(start) if i not in matched and _fits(entry, calls[i])), None)
        if earlier is not None:
            after = f"after tool_calls[{start - 1}] ({calls[start - 1].name})"
            listed.add(earlier)
            unmatched.append(mismatch(_path(earlier), entry, _shown(calls[earlier]),
                                      f"expected {_entry(entry)} {after} (order: exact), it came before"))
        else:
            closest, why = _closest(entry, calls, list(range(start, len(calls))))
            listed.update(closest)
            unmatched += why
    return matched | listed, unmatched


def _exactly(expected: list[dict[str, Any]], calls: list[ToolCall]) -> list[Mismatch]:
    """`order: exact` with `allow_extra: false`: call N is entry N, and there are no more calls than entries."""
    found: list[Mismatch] = []
    for index in range(max(len(expected), len(calls))):
        if index >= len(calls):
            found.append(mismatch(_path(index), expected[index], None,
                                  f"expected {_entry(expected[index])} here, the reply made only "
                                  f"{count(len(calls), 'tool call')}"))
        elif index >= len(expected):
            found.append(_unexpected(index, calls[index]))
        elif calls[index].name != expected[index]["name"]:
            found.append(mismatch(_path(index, "name"), expected[index]["name"], calls[index].name,
                                  f"expected {expected[index]['name']} here (order: exact), got {calls[index].name}"))
        elif calls[index].raw_arguments is None:
            found += _argument_mismatches(expected[index], index, calls[index])
    return found


def _closest(entry: dict[str, Any], calls: list[ToolCall], free: list[int]) -> tuple[list[int], list[Mismatch]]:
    """Why no call matches `entry`, and the calls that says it of (then not also "unexpected"): the argument
    differences of the free call of that name that comes closest; else its calls whose arguments are not
    JSON; else that no such call was left or made."""
    named = [i for i in free if calls[i].name == entry["name"]]
    readable = [i for i in named if calls[i].raw_arguments is None]
    if readable:
        closest = min(readable, key=lambda i: len(_argument_mismatches(entry, i, calls[i])))
        return [closest], _argument_mismatches(entry, closest, calls[closest])
    if named:  # each of them already a mismatch of its own
        why = "its calls' arguments are not JSON"
    elif any(call.name == entry["name"] for call in calls):
        why = "its calls match other entries"
    elif calls:
        why = f"none was made (calls: {', '.join(c.name for c in calls[:8])}{', …' if len(calls) > 8 else ''})"
    else:
        why = "the reply made no tool calls"
    return named, [mismatch("tool_calls", entry, [call.name for call in calls], f"expected {_entry(entry)}: {why}")]


def _unexpected(index: int, call: ToolCall) -> Mismatch:
    return mismatch(_path(index), "no other call", _shown(call),
                    f"unexpected call of {call.name} (allow_extra: false)")


def _invalid_arguments(assertion, suite, calls: list[ToolCall]) -> list[Mismatch]:
    """Each way a call's arguments fail its tool's `parameters` (a call of an undefined tool is one)."""
    from litmus.assertions.schema import cached_validator, violations  # lazy: jsonschema, as there

    path = assertion.files["schema_file"]  # resolved, read and checked when the suite loaded
    tools = suite.tool_definitions[str(path)]
    shown = assertion.params["schema_file"]
    found: list[Mismatch] = []
    for index, call in enumerate(calls):
        if call.raw_arguments is not None:
            continue  # already a mismatch: arguments that are not JSON
        if call.name not in tools:
            defined = ", ".join(sorted(tools)[:8]) + (", …" if len(tools) > 8 else "")
            found.append(mismatch(_path(index, "name"), f"a tool of {shown}", call.name,
                                  f"{shown} defines no tool {call.name!r} (it defines {defined})"))
            continue
        validator = cached_validator(("tool", path, call.name), lambda name=call.name: tools[name], path,
                                     suite.schema_documents)
        found += [mismatch(_path(index, "arguments", *parts), error.validator_value, error.instance,
                           f"{call.name}: {reason}") for parts, reason, error in violations(validator, call.arguments)]
    return found


def _entry(entry: dict[str, Any]) -> str:
    arguments = entry.get("arguments")
    return f"a call of {entry['name']}" + (f" with {show(arguments)}" if arguments else "")


def _shown(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments if call.raw_arguments is None else clip(call.raw_arguments, _RAW_SHOWN)
    return {"name": call.name, "arguments": arguments}
