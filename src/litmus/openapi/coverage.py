"""Which operations of a suite's OpenAPI description its requests exercised, and the union across shards."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from litmus.results import OpenAPICoverage, StepResult
from litmus.text import count

if TYPE_CHECKING:
    from litmus.openapi.document import OpenAPIDocument


def coverage(document: OpenAPIDocument, steps: Iterable[StepResult]) -> OpenAPICoverage:
    """The coverage of `document` by the requests `steps` sent: an operation is exercised when a request's
    method and path match it (whatever the response, and whether or not an `openapi` assertion checked it; a request
    that two templated paths match exercises both, `OpenAPIDocument.exercised_by`)."""
    exercised = set()
    for step in steps:
        if step.request is not None:
            path = urlsplit(step.request.url).path or "/"
            exercised.update(operation.key for operation in document.exercised_by(step.request.method, path))
    keys = [operation.key for operation in document.operations()]
    return OpenAPICoverage(spec=document.path, operations=len(keys), exercised=len(exercised & set(keys)),
                           missing=[key for key in keys if key not in exercised])


def summary(coverage: OpenAPICoverage) -> str:
    """"2 of 9 operations exercised (22%)": what every report says of a suite's coverage."""
    share = f" ({100 * coverage.exercised / coverage.operations:.0f}%)" if coverage.operations else ""
    return f"{coverage.exercised} of {count(coverage.operations, 'operation')} exercised{share}"


def union(parts: list[OpenAPICoverage | None]) -> OpenAPICoverage | None:
    """One suite's coverage over its shards: an operation is missing only when every shard missed it."""
    present = [part for part in parts if part is not None]
    if not present:
        return None
    missing = [key for key in present[0].missing if all(key in part.missing for part in present[1:])]
    first = present[0]
    return OpenAPICoverage(spec=first.spec, operations=first.operations, exercised=first.operations - len(missing),
                           missing=missing)
