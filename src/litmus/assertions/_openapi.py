"""A response, and the request that got it, checked against the operation of an OpenAPI description.

The schemas are checked by `openapi-schema-validator` (OAS 3.0 rules: `nullable`, `discriminator`,
`readOnly`/`writeOnly`; OAS 3.1: JSON Schema 2020-12), on our `jsonschema` + `referencing`, each validator
compiled when an operation's response is first checked and kept on the document. Its `$ref` retrieval goes
through `OpenAPIDocument.document` (the one file resolver): any URI but a file inside the repository is refused.
What a mismatch says is the `schema` assertion's (`violations`), so both read alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from litmus.assertions._common import PATTERN_DEADLINE, bounded_keywords, search
from litmus.assertions._jsonpaths import format_path
from litmus.assertions.schema import violations
from litmus.openapi.document import OpenAPIDocument, Operation, SpecError, escape_pointer

_JSON_MEDIA = re.compile(r"^application/(?:[\w.+-]+\+)?json$")
# The response's own framing headers: OpenAPI says a `Content-Type` header definition is ignored.
_IGNORED_HEADERS = frozenset({"content-type"})
# Header parameters OpenAPI says to ignore: the request's media types and credentials are described elsewhere.
_IGNORED_HEADER_PARAMETERS = frozenset({"accept", "content-type", "authorization"})


@dataclass(frozen=True, slots=True)
class Problem:
    """One way a response breaks the contract: where (`$.a[0]`, `status`, `headers.X-Id`, `content-type`),
    what was expected and found, and why in words."""

    path: str
    expected: Any
    actual: Any
    reason: str


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def is_json(media: str) -> bool:
    """Whether media type `media` (lower case, no parameters) is JSON, whose bodies are validated."""
    return bool(_JSON_MEDIA.match(media))


def declared_media(content: dict, found: str) -> str | None:
    """The key of `content` that media type `found` matches (exact, then `type/*`, then `*/*`), else None."""
    keys = {media_type(key): key for key in content}
    for candidate in (found, found.split("/", 1)[0] + "/*", "*/*"):
        if candidate in keys:
            return keys[candidate]
    return None


def response_for(document: OpenAPIDocument, operation: Operation, status: int):
    """`(located response object, the key that matched)` for `status`: exact, then `2XX`-style, then
    `default`; `(None, declared keys)` when the operation declares none of them."""
    responses = document.locate(operation.operation.get("responses") or {}, operation.file,
                                f"{operation.pointer}/responses")
    declared = responses.node if isinstance(responses.node, dict) else {}
    by_key = {str(key).upper(): key for key in declared}
    for wanted in (str(status), f"{status // 100}XX", "DEFAULT"):
        if wanted in by_key:
            key = by_key[wanted]
            pointer = f"{responses.pointer}/{escape_pointer(str(key))}"
            return document.locate(declared[key], responses.file, pointer), key
    return None, list(declared)


def check_response(document: OpenAPIDocument, operation: Operation, status: int, headers, content_type: str,
                   body: bytes, read_json, *, strict: bool) -> list[Problem]:
    """Every way the response breaks `operation`'s contract (empty: it conforms). `headers` is looked up
    case-insensitively; `read_json()` gives the parsed body or raises ValueError."""
    located, matched = response_for(document, operation, status)
    if located is None:
        listed = ", ".join(map(str, matched)) or "none"
        return [Problem("status", matched, status,
                        f"status {status} is not declared for {operation.key} (declared: {listed})")]
    response = located.node if isinstance(located.node, dict) else {}
    problems = []
    declared_headers = document.resolve(response.get("headers") or {}, located.file)
    for name, header in (declared_headers.items() if isinstance(declared_headers, dict) else ()):
        header = document.resolve(header, located.file)
        if (isinstance(header, dict) and header.get("required") is True and name.lower() not in _IGNORED_HEADERS
                and _header(headers, name) is None):
            problems.append(Problem(f"headers.{name}", "present", None,
                                    f"required response header {name} is missing (status {matched})"))
    content = response.get("content")
    found = media_type(content_type)
    if not isinstance(content, dict) or not content:
        if body:
            problems.append(Problem("content-type", None, found or None,
                                    f"response {matched} of {operation.key} declares no body, got "
                                    f"{len(body)} bytes{f' of {found}' if found else ''}"))
        return problems
    key = declared_media(content, found)
    if key is None:
        problems.append(Problem("content-type", list(content), found or None,
                                f"content type {found or '(none)'} is not declared for {operation.key} status "
                                f"{matched} (declared: {', '.join(content)})"))
        return problems
    media = content[key] if isinstance(content[key], dict) else {}
    if "schema" not in media or not is_json(found):
        return problems
    try:
        instance = read_json()
    except ValueError as exc:
        return [*problems, Problem("$", "JSON", None, str(exc))]
    pointer = f"{located.pointer}/content/{escape_pointer(key)}/schema"
    validator = _validator(document, located.file, pointer, "read")
    problems.extend(Problem(format_path(parts), error.validator_value, error.instance, reason)
                    for parts, reason, error in violations(validator, instance))
    if strict:
        problems.extend(undeclared(document, media["schema"], located.file, instance))
    return problems


def check_request(document: OpenAPIDocument, operation: Operation, url: str, headers, content_type: str,
                  read_json, has_body: bool) -> list[str]:
    """How the request that was sent breaks `operation`'s contract, in words (empty: it conforms):
    path, query and header parameters (required, and their schemas), and the request body."""
    problems = []
    parameters = {}
    for source, pointer in ((operation.path_item, operation.pointer.rsplit("/", 1)[0]),
                            (operation.operation, operation.pointer)):
        for index, parameter in enumerate(source.get("parameters") or []):
            located = document.locate(parameter, operation.file, f"{pointer}/parameters/{index}")
            if isinstance(located.node, dict) and "name" in located.node:
                parameters[located.node.get("in"), str(located.node["name"])] = located  # operation's win
    path = urlsplit(url).path
    query: dict[str, list[str]] = {}
    for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        query.setdefault(name, []).append(value)
    values = {"path": _path_values(operation.path, path), "query": query}
    for (where, name), located in parameters.items():
        parameter = located.node
        schema = document.resolve(parameter.get("schema"), located.file)
        if where == "header":
            if name.lower() in _IGNORED_HEADER_PARAMETERS:
                continue
            value = _header(headers, name)
        elif where in values:
            value = values[where].get(name)
            if value is not None and where == "query":
                value = _query_value(value, schema, parameter.get("explode", True))
        else:
            continue  # cookies: what a cookie jar sends is the server's choice as much as the probe's
        if value is None:
            if parameter.get("required") is True:
                problems.append(f"{where} parameter '{name}' is required and was not sent")
            continue
        if isinstance(schema, dict):
            validator = _validator(document, located.file, f"{located.pointer}/schema", "write")
            items = document.resolve(schema.get("items"), located.file)
            coerced = [_coerced(v, items) for v in value] if isinstance(value, list) else _coerced(value, schema)
            problems.extend(f"{where} parameter '{name}': {reason}" for _, reason, _ in violations(validator, coerced))
    body = operation.operation.get("requestBody")
    if body is None:
        return problems
    located = document.locate(body, operation.file, f"{operation.pointer}/requestBody")
    request_body = located.node if isinstance(located.node, dict) else {}
    if not has_body:
        if request_body.get("required") is True:
            problems.append("the request body is required and none was sent")
        return problems
    content = request_body.get("content") if isinstance(request_body.get("content"), dict) else {}
    found = media_type(content_type)
    key = declared_media(content, found)
    if key is None:
        problems.append(f"request content type {found or '(none)'} is not declared "
                        f"(declared: {', '.join(content) or 'none'})")
        return problems
    if isinstance(content[key], dict) and "schema" in content[key] and is_json(found):
        try:
            instance = read_json()
        except ValueError as exc:
            return [*problems, f"request body: {exc}"]
        pointer = f"{located.pointer}/content/{escape_pointer(key)}/schema"
        validator = _validator(document, located.file, pointer, "write")
        problems.extend(f"request body {format_path(parts)}: {reason}"
                        for parts, reason, _ in violations(validator, instance))
    return problems


def undeclared(document: OpenAPIDocument, schema: Any, file: str, instance: Any, parts: tuple = ()) -> list[Problem]:
    """`strict`: each property of `instance` that its schema does not declare (by `properties`,
    `patternProperties` or an explicit `additionalProperties`), through `$ref`s and `allOf`/`anyOf`/`oneOf`
    (a property any branch declares is declared), and down into declared properties and array items."""
    found = []
    branches = _branches(document, schema, file)
    if isinstance(instance, dict):
        properties, patterns, open_ended = {}, [], False
        for node, where in branches:
            for name, child in (node.get("properties") or {}).items():
                properties.setdefault(name, []).append((child, where))
            patterns.extend(node.get("patternProperties") or {})
            open_ended = open_ended or node.get("additionalProperties", False) is not False
        # A schema that closes itself (`additionalProperties: false`) already fails on the extra property: once.
        closed = branches and any(branches[0][0].get(key) is False
                                  for key in ("additionalProperties", "unevaluatedProperties"))
        for name, value in instance.items():
            if name in properties:
                for child, where in properties[name]:
                    found.extend(undeclared(document, child, where, value, (*parts, name)))
            elif not (open_ended or closed) and not any(search(pattern, name, PATTERN_DEADLINE.get())
                                                        for pattern in patterns):
                path = format_path((*parts, name))
                found.append(Problem(path, None, value, f"property '{name}' is not declared in the schema (strict)"))
    elif isinstance(instance, list):
        for node, where in branches:
            if isinstance(node.get("items"), dict):
                for index, item in enumerate(instance):
                    found.extend(undeclared(document, node["items"], where, item, (*parts, index)))
    return list({problem.path: problem for problem in found}.values())


def _branches(document: OpenAPIDocument, schema: Any, file: str, depth: int = 0) -> list[tuple[dict, str]]:
    """`schema` and its `allOf`/`anyOf`/`oneOf` branches, `$ref`s followed, each with the file it is in."""
    located = document.locate(schema, file)
    node = located.node
    if not isinstance(node, dict) or depth > 32:
        return []
    found = [(node, located.file)]
    for keyword in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(keyword) or []:
            found.extend(_branches(document, branch, located.file, depth + 1))
    return found


def _validator(document: OpenAPIDocument, file: str, pointer: str, direction: str):
    """The validator of the schema at `pointer` of `file`, for a response (`read`) or request (`write`),
    built once per document."""
    key = (file, pointer, direction)
    if key not in document.validators:
        with document.compiling:
            if key not in document.validators:
                document.validators[key] = _build(document, file, pointer, direction)
    return document.validators[key]


def _build(document: OpenAPIDocument, file: str, pointer: str, direction: str):
    from jsonschema.validators import extend  # lazy: jsonschema: ~115 ms, only when a schema is checked
    from openapi_schema_validator import (  # lazy: ~10 ms over jsonschema's, only when a spec is checked
        OAS30ReadValidator,
        OAS30WriteValidator,
        OAS31Validator,
    )
    from referencing import Registry, Resource  # lazy: ~50 ms, only when a schema is checked
    from referencing.jsonschema import DRAFT4, DRAFT202012  # lazy: as above

    specification = DRAFT4 if document.version == "3.0" else DRAFT202012

    def retrieve(uri: str):
        try:
            return Resource.from_contents(document.document(document.file_of_uri(uri)),
                                          default_specification=specification)
        except SpecError as exc:
            raise ValueError(str(exc)) from None  # referencing reports it as Unresolvable

    if document.version == "3.0":
        cls = OAS30ReadValidator if direction == "read" else OAS30WriteValidator
    else:
        cls = OAS31Validator
    # A pull request writes the spec's patterns, and the server the values and names: each search ends at the step's
    # deadline (EvaluationTimeout, an `error` of the check) instead of backtracking for ever.
    cls = extend(cls, bounded_keywords(cls))
    schema = _inlined(document, document.at_pointer(file, pointer), file)
    return cls(schema, registry=Registry(retrieve=retrieve), format_checker=cls.FORMAT_CHECKER)


def _inlined(document: OpenAPIDocument, node: Any, file: str) -> Any:
    """`node` with each `$ref` replaced by the schema it names (shared, once per document: a recursive schema
    becomes a cycle of dicts), so that validating looks nothing up: half the time per check of resolving each
    `$ref` through `referencing`. Every `$ref` is followed by `OpenAPIDocument.target`, which refuses a URL or an
    absolute path (SpecError) before anything could fetch it; a discriminator's mapping is made explicit, with
    the absolute URIs the validator's registry retrieves through the resolver."""
    if isinstance(node, list):
        return [_inlined(document, item, file) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        key = document.target(ref, file)
        if key not in document.inlined:
            target = document.at_pointer(*key)
            if not isinstance(target, dict):
                return _inlined(document, target, key[0])
            document.inlined[key] = shared = {}
            shared.update(_inlined(document, target, key[0]))
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if document.version == "3.0" or not siblings:  # 3.0 ignores a $ref's siblings; 3.1 applies them
            return document.inlined[key]
        return {"allOf": [document.inlined[key]], **_inlined(document, siblings, file)}
    inlined = {}
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):  # names -> schemas: a property may be named `enum`
            inlined[key] = {name: _inlined(document, schema, file) for name, schema in value.items()}
        else:
            inlined[key] = value if key in _NOT_SCHEMAS else _inlined(document, value, file)
    if isinstance(node.get("discriminator"), dict):
        inlined["discriminator"] = _explicit_mapping(document, node["discriminator"], file)
    return inlined


# Keywords whose values map names to schemas.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "definitions", "$defs", "dependentSchemas"})
# Keywords whose values are data, not schemas: a `$ref` key inside an example is not followed.
_NOT_SCHEMAS = frozenset({"example", "examples", "enum", "const", "default", "discriminator", "xml",
                          "externalDocs"})


def _explicit_mapping(document: OpenAPIDocument, discriminator: dict, file: str) -> dict:
    """The discriminator with its implicit mapping (value -> `#/components/schemas/<value>` of `file`) and
    its explicit one (a schema name or a `$ref`) as absolute URIs."""
    components = (document.document(file).get("components") or {}).get("schemas") or {}
    mapping = {name: f"#/components/schemas/{escape_pointer(name)}" for name in components}
    for value, target in (discriminator.get("mapping") or {}).items():
        if isinstance(target, str):
            mapping[value] = target if re.search(r"[#/.]", target) else f"#/components/schemas/{target}"
    absolute = {}
    for value, ref in mapping.items():
        target_file, pointer = document.target(ref, file)
        absolute[value] = f"{document.uri(target_file)}#{quote(pointer, safe='/~')}"
    return {**discriminator, "mapping": absolute}


def _path_values(template: str, path: str) -> dict[str, str]:
    pieces = re.split(r"\{([^{}/]+)\}", template)
    pattern = "".join(f"(?P<p{i // 2}>[^/]+)" if i % 2 else re.escape(piece) for i, piece in enumerate(pieces))
    match = re.search(pattern + "$", path)
    if not match:
        return {}
    return {pieces[i]: unquote(match.group(f"p{i // 2}")) for i in range(1, len(pieces), 2)}


def _query_value(values: list[str], schema: Any, explode: Any) -> str | list[str]:
    """A query parameter's values as its schema reads them: a list for an array (repeated names, the default
    `form` style with `explode`; comma-separated without), else the last value."""
    if not (isinstance(schema, dict) and schema.get("type") == "array"):
        return values[-1]
    if explode is False:
        return [item for value in values for item in value.split(",")]
    return values


def _coerced(value: str, schema: Any) -> Any:
    """A parameter's text as the type its schema declares (`?limit=10` is the integer 10)."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    kinds = kind if isinstance(kind, list) else [kind]
    if ("integer" in kinds or "number" in kinds) and re.fullmatch(r"-?\d+", value):
        return int(value)
    if "number" in kinds and re.fullmatch(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", value):
        return float(value)
    if "boolean" in kinds and value in ("true", "false"):
        return value == "true"
    return value


def _header(headers, name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name.lower()), None)
    return value
