"""JSONPath matching with concrete, normalized result paths (`$.items[3].price`, `$['content-type']`)."""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@lru_cache(maxsize=1024)
def compile_path(expression: str):
    return _parser().parse(expression)


_local = threading.local()


def _parser():
    """This thread's parser. jsonpath_ng's `parse()` builds a new LALR table on every call (15-150 ms);
    one parser per thread (they are not thread-safe) builds it once."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        # ext: filters, arithmetic and len() too
        from jsonpath_ng.ext.parser import ExtendedJsonPathParser  # lazy: ~75 ms, only for a suite using JSONPath

        parser = _local.parser = ExtendedJsonPathParser()
    return parser


# At most this many nodes visited by one evaluation. jsonpath-ng's `..` is superlinear (100,000
# nodes take ~1 s, 1,000,000 take minutes and hundreds of MB): a bigger walk is refused as an error.
MAX_NODES = 200_000
# Operators whose walk may visit every node below them (descendants, wildcards, filters, slices).
_WALKS = ("..", "*", "?", ":")


class EvaluationBound(ValueError):
    """The evaluation would visit more nodes than MAX_NODES (the message says so)."""


def find(expression: str, document: Any) -> list[tuple[str, Any]]:
    """(concrete path, value) of every node `expression` matches in `document`, in document order.

    A path without walking operators visits one node per step; one with them may visit the whole
    document, so the document's size is checked first (the count stops at the bound)."""
    if any(op in expression for op in _WALKS) and (count := count_nodes(document, MAX_NODES)) > MAX_NODES:
        raise EvaluationBound(
            f"JSONPath {expression} would visit more than {MAX_NODES:,} nodes (the body has at least {count:,}): "
            "evaluation is bounded; use a direct path (no .., *, filters or slices) on bodies this big")
    return [(concrete_path(datum), datum.value) for datum in compile_path(expression).find(document)]


def count_nodes(document: Any, limit: int) -> int:
    """The number of values in `document`, counting stopped once past `limit`."""
    count, stack = 0, [document]
    while stack and count <= limit:
        value = stack.pop()
        count += 1
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return count


def concrete_path(datum) -> str:
    from jsonpath_ng import Fields, Index  # lazy: jsonpath-ng: ~75 ms, only for a suite that uses a JSONPath

    parts: list[str | int] = []
    while datum is not None:
        path = datum.path
        if isinstance(path, Index) and len(path.indices) == 1:
            index = path.indices[0]
            if index < 0 and datum.context is not None and isinstance(datum.context.value, list):
                index += len(datum.context.value)  # `[-1]` is reported as the concrete index
            parts.append(index)
        elif isinstance(path, Fields) and len(path.fields) == 1:
            parts.append(path.fields[0])
        datum = datum.context
    return format_path(reversed(parts))


def format_path(parts) -> str:
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.fullmatch(part):
            out.append(f".{part}")
        else:
            out.append("['" + part.replace("\\", "\\\\").replace("'", "\\'") + "']")
    return "".join(out)
