"""`openapi`: the response conforms to the operation of the suite's OpenAPI description that the request matches."""

import json
from urllib.parse import urlsplit

from litmus.assertions._common import EvaluationTimeout, errored, failed, mismatch, passed, patterns_bounded_by
from litmus.assertions._openapi import check_request, check_response, is_json, media_type
from litmus.assertions.base import AssertionSpec, FieldSpec
from litmus.openapi.document import SpecError

SPEC = AssertionSpec(
    type="openapi",
    family="deterministic",
    doc="The response conforms to the operation of the suite's `openapi:` description that the request's method "
        "and path match: a declared status (exact, then 2XX-style, then default), a declared content type, the "
        "body valid against its schema, required response headers present.",
    fields={
        "strict": FieldSpec("boolean", "also fail on response properties the schema does not declare (default "
                                       "false)"),
    },
)


def evaluate(assertion, ctx):
    from referencing.exceptions import Unresolvable  # lazy: referencing: ~50 ms, only when a spec is checked

    document, request = ctx.suite.openapi, ctx.request
    response = ctx.response.api_response  # a conversation step's API response, not the reply read from it
    path = urlsplit(request.url).path or "/"
    with patterns_bounded_by(ctx.deadline):
        try:
            operation, why = document.find(request.method, path)
            if operation is None:
                return failed(assertion, [mismatch("operation", None, f"{request.method} {path}", why)])
            ctx.warnings.extend(f"request does not conform to {operation.key} in {document.path}: {problem}"
                                for problem in _request_problems(document, operation, request))
            problems = check_response(document, operation, response.status, response.headers, response.content_type,
                                      response.body, response.json, strict=assertion.params.get("strict") is True)
        except (SpecError, Unresolvable) as exc:
            return errored(assertion, f"{document.path}: {exc}")
        except EvaluationTimeout as exc:
            return errored(assertion, str(exc))
    if problems:
        return failed(assertion, [mismatch(p.path, p.expected, p.actual, p.reason) for p in problems])
    media = media_type(response.content_type)
    # Said, so that a pass is not read as more than it checked.
    unchecked = "; its body was not validated (only JSON bodies are)" if response.body and not is_json(media) else ""
    return passed(assertion, f"response conforms to {operation.key} ({response.status}"
                             f"{', ' + media if media else ''}) of {document.path}{unchecked}")


def _request_problems(document, operation, request) -> list[str]:
    body = request.body
    if body is not None and not isinstance(body, (bytes, str)):
        def read_json():
            raise ValueError("streamed from a file, not checked against the schema")
    else:
        def read_json():
            return json.loads(body)
    return check_request(document, operation, request.url, request.headers, request.headers.get("Content-Type", ""),
                         read_json, has_body=bool(body))
