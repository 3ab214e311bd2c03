"""Step extractions: values taken from a response into the flow run's variables.

A value taken from a credential header (`Set-Cookie`, `Cookie`, `Authorization`, ...) is registered
as a secret, with each cookie value in it, and so is a `cookie` capture's value: it is a credential
the run prints nowhere, as the header itself is `***` in the recorded response.
"""

from __future__ import annotations

from http.cookies import CookieError, SimpleCookie
from typing import Any

from litmus.assertions import cookie, xpath
from litmus.assertions._common import EvaluationTimeout, search
from litmus.assertions._jsonpaths import EvaluationBound, find
from litmus.deadline import Deadline
from litmus.model import Extraction
from litmus.response import BodyNotJSON, Response
from litmus.run.redact import SENSITIVE_HEADERS, SHORT_SECRET, Redactor


class NotExtracted(Exception):
    """The extraction found nothing (the message says why); the variable stays unset."""


def extract(extraction: Extraction, response: Response, redactor: Redactor,
            deadline: Deadline | None = None) -> Any:
    """The extracted value. A JSONPath or XPath matching several nodes gives the list of their values."""
    kind = extraction.kind
    if kind == "status":
        return response.status
    if kind == "url":
        return response.url
    if kind == "redirects":
        return len(response.redirects)
    if kind == "cookie":
        found = cookie.parse(response.header_values("Set-Cookie")).get(extraction.expr)
        if found is None:
            raise NotExtracted(f"the response sets no cookie {extraction.expr}")
        if len(found["value"]) >= SHORT_SECRET:
            redactor.register(found["value"])
        return found["value"]
    if kind == "header":
        value = response.headers.get(extraction.expr)  # case-insensitive mapping
        if value is None:
            raise NotExtracted(f"no header {extraction.expr}")
        if extraction.expr.lower() in SENSITIVE_HEADERS:
            _register_credential(value, redactor)
        return value
    if kind == "regex":
        try:
            match = search(extraction.expr, response.text, deadline)  # bounded: see assertions._common
        except EvaluationTimeout as exc:
            raise NotExtracted(str(exc)) from None
        if match is None:
            raise NotExtracted(f"regex /{extraction.expr}/ does not match the body")
        return match.group(extraction.group)

    try:
        if kind == "xpath":
            nodes = xpath.select(response, extraction.expr)
        else:
            nodes = find(extraction.expr, response.json())
    except (BodyNotJSON, EvaluationBound, xpath.NotMarkup) as exc:
        raise NotExtracted(str(exc)) from None
    if not nodes:
        raise NotExtracted(f"no node matches {extraction.expr}")
    return nodes[0][1] if len(nodes) == 1 else [value for _, value in nodes]


def _register_credential(value: str, redactor: Redactor) -> None:
    redactor.register(value)
    # requests joins several Set-Cookie headers with ", "; each piece is parsed on its own.
    for piece in value.split(", "):
        cookie = SimpleCookie()
        try:
            cookie.load(piece)
        except CookieError:
            continue
        for morsel in cookie.values():
            if len(morsel.value) >= SHORT_SECRET:
                redactor.register(morsel.value)
