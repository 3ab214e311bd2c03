"""Full validation of an OpenAPI description, for `litmus validate`: openapi-spec-validator checks it against
the OpenAPI 3.0 / 3.1 rules (the structure, then semantics: parameters of each path, defaults against their
schemas, schemas themselves, `$ref` targets).

Loading a spec for a run only parses it (litmus.openapi.document); this is the slow, whole check (GitHub's
11 MB description: about 20 s), done where a mistake in the spec should be found before any run.

The library would fetch a `$ref` it has no handler for with requests or urllib, whatever its scheme: every
scheme is given one handler here, which serves the spec's own documents through `OpenAPIDocument` (so through
the one file resolver) and refuses anything else. Each problem is an error at the spec file's line and column
of the node it is about (found by re-reading the file with positions, only when there are problems), with
the node's JSON pointer in the message.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jsonschema.exceptions import ValidationError, best_match
from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator
from referencing.exceptions import Unresolvable

from litmus import files
from litmus.errors import Diagnostic, Position
from litmus.load.diagnostics import Collector, Span
from litmus.load.source import Item, SourceError, parse_yaml
from litmus.openapi.document import MAX_SPEC_BYTES, OpenAPIDocument, SpecError
from litmus.text import clip

# A message quotes the value it is about: a whole path item would bury the reason.
_MESSAGE_CHARS = 240


class _RepositoryDocuments(dict):
    """The library's `$ref` handlers, by URI scheme: one for every scheme, serving only the spec's documents."""

    def __init__(self, document: OpenAPIDocument) -> None:
        super().__init__()
        self.document = document

    def __contains__(self, scheme: object) -> bool:
        return True

    def __getitem__(self, scheme: str):
        return self.retrieve

    def retrieve(self, uri: str) -> Any:
        return self.document.document(self.document.file_of_uri(uri))


def spec_problems(document: OpenAPIDocument) -> list[Diagnostic]:
    """Every problem openapi-spec-validator finds in `document`, as positioned errors (none when it is valid)."""
    base = OpenAPIV31SpecValidator if document.version == "3.1" else OpenAPIV30SpecValidator
    validator_class = type("RepositoryOnlySpecValidator", (base,), {"resolver_handlers": _RepositoryDocuments(
        document)})
    found = _unresolved_refs(document)
    try:
        for error in validator_class(document.root, base_uri=document.uri(document.path)).iter_errors():
            found.append(_described(error))
    except SpecError as exc:
        found.append(((), str(exc)))
    except Unresolvable as exc:
        # The library stops at the first `$ref` it cannot follow; the walk above has named it, unless the handler's
        # refusal (wrapped by the library) says something new.
        message = _refusal(exc) or clip(f"$ref '{getattr(exc, 'ref', '')}' cannot be resolved", _MESSAGE_CHARS)
        if all(message != known for _, known in found):
            found.append(((), message))
    if not found:
        return []
    return _positioned(document, found)


def _unresolved_refs(document: OpenAPIDocument) -> list[tuple[tuple, str]]:
    """Each `$ref` of the spec that does not lead to a node (the library follows only the ones it validates)."""
    found, stack, seen = [], [((), document.root)], set()
    while stack:
        path, value = stack.pop()
        if id(value) in seen:  # YAML aliases share containers, and may make cycles
            continue
        seen.add(id(value))
        if isinstance(value, dict):
            if isinstance(value.get("$ref"), str):
                try:
                    document.locate(value, document.path)
                except SpecError as exc:
                    found.append(((*path, "$ref"), str(exc)))
            stack.extend(((*path, k), v) for k, v in value.items() if isinstance(v, dict | list))
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in enumerate(value) if isinstance(v, dict | list))
    return sorted(found, key=lambda problem: [str(part) for part in problem[0]])


def _refusal(exc: BaseException) -> str | None:
    """The message of the SpecError the handler raised, somewhere in the chain of `exc`."""
    while exc is not None:
        if isinstance(exc, SpecError):
            return str(exc)
        exc = exc.__cause__ or exc.__context__
    return None


def _described(error: ValidationError) -> tuple[tuple, str]:
    """The most specific reason (inside an anyOf/oneOf, the branch that came closest) and where, from the root."""
    best = best_match([error]) if error.context else error
    return tuple(best.absolute_path), clip(best.message, _MESSAGE_CHARS)


def _positioned(document: OpenAPIDocument, found: Iterable[tuple[tuple, str]]) -> list[Diagnostic]:
    collector = Collector()
    start = Span(Position(document.path, 1, 1))
    try:
        real = files.resolve(document.path, document.repository, document.repository)
        root = parse_yaml(files.read_bytes(real, MAX_SPEC_BYTES, shown=document.path, what="OpenAPI files"),
                          document.path, collector)
    except (files.FileRefused, SourceError):
        root = None
    located = [path for path, _ in found if _item_at(root, path) is not None]
    for path, message in found:
        item = _item_at(root, path)
        if item is None and path and any(other[-len(path):] == path for other in located):
            continue  # a schema's problem the library also reported from the root, where it is placed
        where = f" (at #{_pointer(path)})" if item is not None and path else ""
        collector.error(item.span if item is not None else start, f"OpenAPI spec: {message}{where}")
    return collector.errors


def _item_at(root: Item | None, path: tuple) -> Item | None:
    """The Item at `path` (keys and indexes from the document's root), or None when the path does not lead there
    (a problem the library found inside a schema reports a path relative to that schema)."""
    item = root
    for part in path:
        value = item.value if item is not None else None
        if isinstance(value, dict) and str(part) in value:
            item = value[str(part)]
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            item = value[part]
        else:
            return None
    return item


def _pointer(path: tuple) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)
