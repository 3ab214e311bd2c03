"""A starter probe suite from an OpenAPI description (`litmus init --from-openapi`): one flow per operation.

Each flow sends one request and checks it with `status_code` (the operation's lowest declared 2XX status)
and `openapi` (the response against the spec). Values come from the spec where it has them (a parameter's
or media type's `example`/`examples`, a schema's `example`/`examples`/`default`/`const`/first `enum`),
following `$ref`s through the document; anything else is a typed placeholder, `{{ vars.NAME | default(V) }}`,
whose default V fits the schema's type and format, so the suite validates and runs as written and
`--var NAME=VALUE` replaces it. Credentials the operation's `security` asks for are
`{{ secrets.OPENAPI_<SCHEME> }}`.

The spec may come from anyone (a fork's pull request, a vendor): none of its text ever becomes a template.
A value holding `{{` is not copied (a placeholder takes its place), an operation whose path or a server URL
holding one is left out or not used, and spec text reaches the file only as YAML scalars (never in a comment).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import yaml

UNSAFE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
UNSAFE_SKIP = "unsafe method: review before enabling"
# Credentials a spec's `security` asks for are `{{ secrets.OPENAPI_<SCHEME> }}`.
SECRET_PREFIX = "OPENAPI_"

# A request body deeper than this (or a schema that refers to itself) is cut short: a starter, not a fuzzer.
_MAX_DEPTH = 8
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]")
_PATH_PARAMETER = re.compile(r"\{([^{}]+)\}")
# Typed placeholders' defaults for string formats a server is likely to check.
_FORMAT_DEFAULTS = {
    "uuid": "00000000-0000-4000-8000-000000000000",
    "date": "2026-01-01",
    "date-time": "2026-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "byte": "c3RyaW5n",
}

HEADER = """\
# A starter suite written by `litmus init --from-openapi`: one flow per operation of the spec named by
# `openapi:` below, each checked by `status_code` and `openapi` (the response against the spec).
#
# Values the spec gives are filled in; the others are placeholders, {{ vars.NAME | default(...) }}:
# give real ones with `litmus run --var NAME=VALUE` or `--vars-file FILE`. Credentials are
# {{ secrets.OPENAPI_<SCHEME> }} (environment variables at run time). Flows with unsafe methods (POST, PUT, PATCH,
# DELETE) carry `skip:` until you review them (or were written with --include-unsafe).
"""


@dataclass
class Starter:
    """The suite written, and what was left out of it (each with the reason, for the command to print)."""

    text: str
    flows: int
    skipped: int
    left_out: list[str] = field(default_factory=list)


def starter_suite(document, spec_reference: str, *, include_unsafe: bool) -> Starter:
    """The starter suite for `document` (an OpenAPIDocument); `spec_reference` is its path as the suite's
    `openapi:` key names it."""
    writer = _Writer(document)
    suite: dict[str, Any] = {"version": 1, "suite": _title(document.root), "openapi": spec_reference}
    base_url = _base_url(document.root)
    if base_url is not None:
        suite["base_url"] = base_url
    flows, left_out, skipped = [], [], 0
    for operation in document.operations():
        name = f"{operation.method.upper()} {operation.path}"
        try:
            flow = writer.flow(operation, name)
        except _Unusable as exc:
            left_out.append(f"{name}: {exc}")
            continue
        if operation.method.upper() in UNSAFE_METHODS and not include_unsafe:
            flow = {"name": name, "skip": UNSAFE_SKIP, **{k: v for k, v in flow.items() if k != "name"}}
            skipped += 1
        flows.append(flow)
    suite["flows"] = flows
    text = HEADER + yaml.safe_dump(suite, sort_keys=False, allow_unicode=True, width=120)
    return Starter(text, len(flows), skipped, left_out)


class _Unusable(Exception):
    """An operation the starter cannot write a request for (the message says why)."""


def _title(root: dict) -> str:
    info = root.get("info") if isinstance(root.get("info"), dict) else {}
    title = " ".join(info["title"].split()) if isinstance(info.get("title"), str) else ""
    return f"{title} (OpenAPI starter)" if title and _safe(title) else "OpenAPI starter"


def _base_url(root: dict) -> str | None:
    """The first server's URL with its variables' defaults, when that is an absolute http(s) URL."""
    servers = root.get("servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], dict):
        return None
    url = servers[0].get("url")
    if not isinstance(url, str) or not _safe(url):
        return None
    variables = servers[0].get("variables") if isinstance(servers[0].get("variables"), dict) else {}
    for name, variable in variables.items():
        default = variable.get("default") if isinstance(variable, dict) else None
        if isinstance(default, str) and _safe(default):
            url = url.replace("{" + name + "}", default)
    if not re.match(r"https?://[^{}\s]+$", url):
        return None
    return url.rstrip("/")


def _safe(value: Any) -> bool:
    """Whether no text in `value` could be read as a template."""
    if isinstance(value, str):
        return "{{" not in value and "}}" not in value
    if isinstance(value, dict):
        return all(_safe(k) and _safe(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_safe(v) for v in value)
    return True


def _template(expression: str) -> str:
    return "{{ " + expression + " }}"


def _var_name(name: str) -> str:
    cleaned = _NAME_CHARS.sub("_", name) or "value"
    return f"_{cleaned}" if cleaned[0].isdigit() else cleaned


def _secret_name(scheme: str) -> str:
    # The spec names its security schemes, and a fork or a vendor writes the spec: under a prefix of ours, a
    # scheme named AWS_SECRET_ACCESS_KEY cannot pick an unrelated credential of the environment to send (nor
    # one of the action's own, which never resolve).
    return f"{SECRET_PREFIX}{_var_name(scheme).upper()}"


def _is_json(media_type: str) -> bool:
    essence = media_type.split(";", 1)[0].strip().lower()
    return essence == "application/json" or essence.endswith("+json")


class _Writer:
    def __init__(self, document) -> None:
        self.document = document
        self.root = document.root

    def resolve(self, node: Any) -> Any:
        return self.document.resolve(node) if isinstance(node, dict) and "$ref" in node else node

    # -- one operation -----------------------------------------------------------------------------------
    def flow(self, operation, name: str) -> dict:
        op = operation.operation
        request: dict[str, Any] = {"method": operation.method.upper(), "url": self.url(operation)}
        headers: dict[str, Any] = {}
        query: dict[str, Any] = {}
        cookies: dict[str, Any] = {}
        for parameter in self.parameters(operation):
            where = parameter.get("in")
            if where == "path" or not parameter.get("required"):
                continue
            target = {"query": query, "header": headers, "cookie": cookies}.get(where)
            if target is not None and _safe(parameter["name"]) and parameter["name"].lower() not in (
                    "accept", "content-type", "authorization"):
                target[parameter["name"]] = self.parameter_value(parameter)
        self.credentials(op, request, headers, query, cookies)
        status, response_type = self.expected_response(op)
        if response_type:
            headers.setdefault("Accept", response_type)
        if isinstance(status, int) and 300 <= status < 400:
            request["follow_redirects"] = False  # the redirect is the answer the spec describes, not where it leads
        self.body(op, request, headers)
        parts = {"headers": headers, "query": query, "cookies": cookies}
        request = {"method": request.pop("method"), "url": request.pop("url"),
                   **{key: values for key, values in parts.items() if values}, **request}
        step_name = op.get("operationId") if isinstance(op.get("operationId"), str) else ""
        step = {"name": step_name if step_name and _safe(step_name) else "request", "request": request,
                "assertions": [{"type": "status_code", "expected": status}, {"type": "openapi"}]}
        return {"name": name, "steps": [step]}

    def parameters(self, operation) -> list[dict]:
        """The path item's parameters, then the operation's, which override those of the same name and place."""
        chosen: dict[tuple[str, str], dict] = {}
        for source in (operation.path_item.get("parameters"), operation.operation.get("parameters")):
            for parameter in source if isinstance(source, list) else []:
                parameter = self.resolve(parameter)
                if isinstance(parameter, dict) and isinstance(parameter.get("name"), str):
                    chosen[(parameter["name"], str(parameter.get("in")))] = parameter
        return list(chosen.values())

    def url(self, operation) -> str:
        path_parameters = {p["name"]: p for p in self.parameters(operation) if p.get("in") == "path"}
        pieces, end = [], 0
        for match in _PATH_PARAMETER.finditer(operation.path):
            pieces.append(self.literal_path(operation.path[end:match.start()]))
            parameter = path_parameters.get(match.group(1), {"name": match.group(1), "schema": {"type": "string"}})
            value = self.parameter_value(parameter)
            if isinstance(value, str) and value.startswith("{{"):
                pieces.append(value[:-2].rstrip() + " | urlencode }}")
            else:
                pieces.append(quote(str(value).lower() if isinstance(value, bool) else str(value), safe=""))
            end = match.end()
        pieces.append(self.literal_path(operation.path[end:]))
        return "".join(pieces)

    @staticmethod
    def literal_path(text: str) -> str:
        if not _safe(text) or "{" in text or "}" in text:
            raise _Unusable("its path holds braces outside a path parameter")
        return text

    # -- values --------------------------------------------------------------------------------------------
    def parameter_value(self, parameter: dict) -> Any:
        example = self.example_of(parameter)
        if example is not _NONE:
            return example
        schema = self.resolve(parameter.get("schema"))
        if not isinstance(schema, dict) and isinstance(parameter.get("content"), dict):
            media = next(iter(parameter["content"].values()), {})
            schema = self.resolve(media.get("schema")) if isinstance(media, dict) else None
        schema = schema if isinstance(schema, dict) else {}
        if self.schema_type(schema) in ("array", "object"):
            schema = self.resolve(schema.get("items")) if isinstance(schema.get("items"), dict) else {}
        value = self.schema_example(schema)
        return value if value is not _NONE and not isinstance(value, dict | list) else self.placeholder(
            parameter["name"], schema)

    def example_of(self, holder: dict) -> Any:
        """A parameter's or media type's own `example`, else the value of its first `examples` entry."""
        if "example" in holder and _safe(holder["example"]):
            return holder["example"]
        examples = holder.get("examples")
        if isinstance(examples, dict):
            for example in examples.values():
                example = self.resolve(example)
                if isinstance(example, dict) and "value" in example and _safe(example["value"]):
                    return example["value"]
        return _NONE

    def schema_example(self, schema: dict) -> Any:
        for key in ("example", "default", "const"):
            if key in schema and _safe(schema[key]):
                return schema[key]
        for key in ("examples", "enum"):
            values = schema.get(key)
            if isinstance(values, list) and values and _safe(values[0]):
                return values[0]
        return _NONE

    @staticmethod
    def schema_type(schema: dict) -> str | None:
        kind = schema.get("type")
        if isinstance(kind, list):  # 3.1: ["string", "null"]
            kind = next((k for k in kind if k != "null"), None)
        if kind is None and isinstance(schema.get("properties"), dict):
            return "object"
        return kind if isinstance(kind, str) else None

    def placeholder(self, name: str, schema: dict) -> str:
        return _template(f"vars.{_var_name(name)} | default({json.dumps(self.typed_default(schema))})")

    def typed_default(self, schema: dict) -> Any:
        kind = self.schema_type(schema)
        if kind in ("integer", "number"):
            low = schema.get("minimum")
            low = low if isinstance(low, int | float) and not isinstance(low, bool) else 1
            exclusive = schema.get("exclusiveMinimum")
            if isinstance(exclusive, int | float) and not isinstance(exclusive, bool):
                low = max(low, exclusive + 1)
            elif exclusive is True:
                low += 1
            return int(low) if kind == "integer" else float(low)
        if kind == "boolean":
            return True
        text = _FORMAT_DEFAULTS.get(schema.get("format"), "string")
        min_length = schema.get("minLength")
        if isinstance(min_length, int) and len(text) < min_length:
            text = text + "x" * (min_length - len(text))
        return text

    def sample(self, schema: Any, name: str, depth: int = 0, seen: frozenset = frozenset()) -> Any:
        """A request body value for `schema`: its example, else one built from its properties and items."""
        if isinstance(schema, dict) and "$ref" in schema:
            if schema["$ref"] in seen or depth > _MAX_DEPTH:
                return {}
            seen = seen | {schema["$ref"]}
            schema = self.resolve(schema)
        if not isinstance(schema, dict):
            return self.placeholder(name, {})
        example = self.schema_example(schema)
        if example is not _NONE:
            return example
        for key in ("oneOf", "anyOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self.sample(schema[key][0], name, depth + 1, seen)
        if isinstance(schema.get("allOf"), list):
            return self.sample(self.merged(schema, seen), name, depth + 1, seen)
        kind = self.schema_type(schema)
        if kind == "array":
            return [self.sample(schema.get("items", {}), name, depth + 1, seen)] if depth <= _MAX_DEPTH else []
        if kind == "object":
            return self.object_sample(schema, depth, seen)
        return self.placeholder(name, schema)

    def object_sample(self, schema: dict, depth: int, seen: frozenset) -> dict:
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = [r for r in schema.get("required", []) if isinstance(r, str) and r in properties]
        value = {}
        if depth > _MAX_DEPTH:
            return value
        for key in required or list(properties):
            prop = properties[key]
            resolved = self.resolve(prop)
            if isinstance(resolved, dict) and resolved.get("readOnly") is True:
                continue  # the server sets it; a request carrying it does not conform
            if _safe(key):
                value[key] = self.sample(prop, key, depth + 1, seen)
        return value

    def merged(self, schema: dict, seen: frozenset) -> dict:
        """allOf's parts as one object schema: their properties and required names together."""
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in [*schema["allOf"], {k: v for k, v in schema.items() if k != "allOf"}]:
            part = self.resolve(part) if not (isinstance(part, dict) and part.get("$ref") in seen) else {}
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("allOf"), list):
                part = self.merged(part, seen)
            if isinstance(part.get("properties"), dict):
                merged["properties"].update(part["properties"])
            merged["required"] += [r for r in part.get("required", []) if isinstance(r, str)]
        return merged

    # -- request parts -------------------------------------------------------------------------------------
    def body(self, op: dict, request: dict, headers: dict) -> None:
        body = self.resolve(op.get("requestBody"))
        if not isinstance(body, dict) or not isinstance(body.get("content"), dict) or not body["content"]:
            return
        content = body["content"]
        media_type = next((m for m in content if _is_json(m)), None) or next(
            (m for m in content if m.split(";")[0].strip().lower() == "application/x-www-form-urlencoded"), None
        ) or next(iter(content))
        if not _safe(media_type):
            return
        media = self.resolve(content[media_type]) if isinstance(content[media_type], dict) else {}
        value = self.example_of(media)
        if value is _NONE:
            value = self.sample(media.get("schema", {}), "body")
        essence = media_type.split(";")[0].strip().lower()
        if _is_json(media_type):
            request["json"] = value
            if essence != "application/json":
                headers.setdefault("Content-Type", media_type)
        elif essence == "application/x-www-form-urlencoded" and isinstance(value, dict):
            request["form"] = {k: v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}
        elif essence == "multipart/form-data" and isinstance(value, dict):
            request["multipart"] = {k: v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}
        else:
            request["body"] = value if isinstance(value, str) else json.dumps(value)
            headers.setdefault("Content-Type", media_type)

    def expected_response(self, op: dict) -> tuple[Any, str | None]:
        """The status to expect (the lowest declared 2XX, else `2xx`) and the media type to accept."""
        responses = op.get("responses") if isinstance(op.get("responses"), dict) else {}
        codes = sorted(str(code) for code in responses if str(code).isdigit())
        successes = [code for code in codes if code.startswith("2")]
        if successes:
            key, status = successes[0], int(successes[0])
        elif "2XX" in responses or "2xx" in responses:
            key, status = ("2XX" if "2XX" in responses else "2xx"), "2xx"
        elif codes and "default" not in responses:
            key, status = codes[0], int(codes[0])
        else:
            key, status = "default", "2xx"
        response = self.resolve(responses.get(key))
        content = response.get("content") if isinstance(response, dict) else None
        if not isinstance(content, dict) or not content:
            return status, None
        media_type = next((m for m in content if _is_json(m)), next(iter(content)))
        return status, media_type if _safe(media_type) else None

    def credentials(self, op: dict, request: dict, headers: dict, query: dict, cookies: dict) -> None:
        """What the operation's first security requirement asks for, as secrets (none when one is optional)."""
        requirements = op.get("security", self.root.get("security"))
        if not isinstance(requirements, list) or not requirements or any(r == {} for r in requirements):
            return
        components = self.root.get("components") if isinstance(self.root.get("components"), dict) else {}
        schemes = components.get("securitySchemes") if isinstance(components.get("securitySchemes"), dict) else {}
        first = requirements[0] if isinstance(requirements[0], dict) else {}
        for scheme_name in first:
            scheme = self.resolve(schemes.get(scheme_name))
            if not isinstance(scheme, dict) or not _safe(scheme_name):
                continue
            secret = _template(f"secrets.{_secret_name(scheme_name)}")
            kind, where, name = scheme.get("type"), scheme.get("in"), scheme.get("name")
            if kind == "apiKey" and isinstance(name, str) and _safe(name):
                target = {"header": headers, "query": query, "cookie": cookies}.get(where)
                if target is not None:
                    target[name] = secret
            elif kind == "http" and str(scheme.get("scheme", "")).lower() == "basic":
                request.setdefault("auth", {"basic": {
                    "username": _template(f"secrets.{_secret_name(scheme_name)}_USERNAME"),
                    "password": _template(f"secrets.{_secret_name(scheme_name)}_PASSWORD")}})
            elif kind in ("http", "oauth2", "openIdConnect"):
                request.setdefault("auth", {"bearer": secret})


_NONE = object()
