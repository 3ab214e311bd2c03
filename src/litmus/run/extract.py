"""Step extractions: values taken from a response into the flow run's variables."""

from __future__ import annotations

from typing import Any

from litmus.model import Extraction
from litmus.run.response import BodyNotJSON, Response


class NotExtracted(Exception):
    """The extraction found nothing (the message says why); the variable stays unset."""


def extract(extraction: Extraction, response: Response, deadline: float | None = None) -> Any:
    """The extracted value. A JSONPath matching several nodes gives the list of their values."""
    kind = extraction.kind
    if kind == "status":
        return response.status
    if kind == "header":
        value = response.headers.get(extraction.expr)  # case-insensitive mapping
        if value is None:
            raise NotExtracted(f"no header {extraction.expr}")
        return value
    if kind == "regex":
        from litmus.assertions._common import EvaluationTimeout, search

        try:
            match = search(extraction.expr, response.text, deadline)  # bounded: see assertions._common
        except EvaluationTimeout as exc:
            raise NotExtracted(str(exc)) from None
        if match is None:
            raise NotExtracted(f"regex /{extraction.expr}/ does not match the body")
        return match.group(extraction.group)
    from litmus.assertions._jsonpaths import EvaluationBound, find

    try:
        nodes = find(extraction.expr, response.json())
    except (BodyNotJSON, EvaluationBound) as exc:
        raise NotExtracted(str(exc)) from None
    if not nodes:
        raise NotExtracted(f"no node matches {extraction.expr}")
    return nodes[0][1] if len(nodes) == 1 else [value for _, value in nodes]
