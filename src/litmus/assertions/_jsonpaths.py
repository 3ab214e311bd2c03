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
        from jsonpath_ng.ext.parser import ExtendedJsonPathParser  # ext: filters, arithmetic and len() too

        parser = _local.parser = ExtendedJsonPathParser()
    return parser


def find(expression: str, document: Any) -> list[tuple[str, Any]]:
    """(concrete path, value) of every node `expression` matches in `document`, in document order."""
    return [(concrete_path(datum), datum.value) for datum in compile_path(expression).find(document)]


def concrete_path(datum) -> str:
    from jsonpath_ng import Fields, Index

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
