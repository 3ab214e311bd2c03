"""The JSON Schema of the probe format, built from the loader's key lists and the assertion specs.

The shipped copy, `litmus/schemas/probe-suite.schema.json`, serves editors (yaml-language-server
autocomplete and hover) and users' own tooling. A test fails when it is stale; regenerate with

    python -m litmus.load.json_schema > src/litmus/schemas/probe-suite.schema.json

The loader checks more than a JSON Schema can say (duplicate names, template references, file
existence, regex/JSONPath/JSON Schema validity, duplicate YAML keys); docs/probe-format.md lists it.
"""

from __future__ import annotations

import json
from typing import Any

from litmus.assertions import all_specs
from litmus.assertions.base import AssertionSpec, FieldSpec
from litmus.load import suite as rules
from litmus.model import COOKIE_NAME

SCHEMA_ID = "urn:litmus:probe-suite:1"
IDENTIFIER = "^[A-Za-z_][A-Za-z0-9_]*$"
PERCENT = {"type": "number", "minimum": 0, "maximum": 100}
SCALAR = {"type": ["string", "number"]}
SCALARS = {"anyOf": [SCALAR, {"type": "array", "items": SCALAR}]}
# A predicate operand may be a template, rendered and type-checked at run time.
TEMPLATED = {"type": "string", "pattern": r"\{\{"}


def _object(properties: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


def _described(schema: dict[str, Any], text: str) -> dict[str, Any]:
    return {"description": text, **schema}


def _at_most_one(*names: str) -> dict[str, Any]:
    pairs = [[a, b] for i, a in enumerate(names) for b in names[i + 1:]]
    return {"not": {"anyOf": [{"required": pair} for pair in pairs]}}


def _field(spec: FieldSpec) -> dict[str, Any]:
    kind = spec.kind
    if kind in ("regex", "jsonpath", "file", "tool_definitions"):
        schema: dict[str, Any] = {"type": "string", "minLength": 1}
    elif kind == "string":
        schema = {"type": "string"}
    elif kind in ("number", "integer", "boolean"):
        schema = {"type": kind}
    elif kind == "list":
        schema = {"type": "array"}
    elif kind == "json_schema":
        schema = {"type": ["object", "boolean"]}
    elif kind == "variable":
        schema = {"type": "string", "pattern": IDENTIFIER}
    elif kind == "choice":
        schema = {"enum": list(spec.choices)}
    elif kind == "mapping":
        schema = {"type": "object"}
    elif kind == "calls":
        call = _object({"name": {"type": "string", "minLength": 1, "description": "the tool's name"},
                        "arguments": {"type": "object", "description": "these keys deep-equal the call's"}},
                       ("name",))
        schema = {"type": "array", "items": call}
    elif kind == "xpath":
        schema = {"type": "string", "minLength": 1}
    elif kind == "function":
        schema = {"type": "string", "pattern": r"^.+\.py:[A-Za-z_][A-Za-z0-9_]*$"}
    elif kind == "numeric":
        schema = {"anyOf": [{"type": "number"}, TEMPLATED]}
    elif kind == "count":
        schema = {"anyOf": [{"type": "integer", "minimum": 0}, TEMPLATED]}
    elif kind == "range":
        numeric = {"anyOf": [{"type": "number"}, TEMPLATED]}
        schema = {"type": "array", "items": numeric, "minItems": 2, "maxItems": 2}
    elif kind == "options":
        schema = {"anyOf": [{"type": "array"}, TEMPLATED]}
    elif kind == "nonempty_options":
        schema = {"anyOf": [{"type": "array", "minItems": 1}, TEMPLATED]}
    elif kind == "tolerance":
        numeric = {"anyOf": [{"type": "number", "minimum": 0}, TEMPLATED]}
        schema = {"anyOf": [numeric, _object({"abs": numeric}, ("abs",)), _object({"rel": numeric}, ("rel",))]}
    elif kind == "status":
        code = {"type": "integer", "minimum": 100, "maximum": 599}
        code = {"anyOf": [code, TEMPLATED]}
        schema = {"anyOf": [code, {"type": "array", "items": code, "minItems": 1},
                            {"type": "string", "pattern": "^[1-5]xx$"}]}
    else:  # any
        schema = {}
    if spec.minimum is not None:
        schema["minimum"] = spec.minimum
    if spec.maximum is not None:
        schema["maximum"] = spec.maximum
    return _described(schema, spec.doc)


def _assertion(spec: AssertionSpec) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "type": {"const": spec.type, "description": spec.doc},
        "name": {"type": "string", "description": "label in reports"},
        "on_failure": {"enum": list(rules.ON_FAILURE), "description": "what a failure stops (default continue)"},
        "critical": {"type": "boolean", "description": "when it does not pass, its flow run fails whatever the "
                                                       "Intent Evaluation says (default false)"},
    }
    if spec.llm_based:
        properties["threshold"] = _described(PERCENT, "pass threshold, percent (default: the judge's)")
        properties["select"] = {"type": "string", "minLength": 1,
                                "description": "JSONPath choosing the part of the response to judge"}
    for name, field_spec in spec.fields.items():
        properties[name] = _field(field_spec)
    required = ("type", *(n for n, f in spec.fields.items() if f.required))
    rules_of_groups = (
        [{"oneOf": [{"required": [name]} for name in group]} for group in spec.exactly_one_of]
        + [_at_most_one(*group) for group in spec.at_most_one_of]
        + [{"anyOf": [{"required": [name]} for name in group]} for group in spec.at_least_one_of]
    )
    extra: dict[str, Any] = {"allOf": rules_of_groups} if rules_of_groups else {}
    return _object(properties, required, **extra)


def _request(*, defaults: bool, override: bool = False) -> dict[str, Any]:
    methods = [m for method in rules.METHODS for m in (method, method.lower())]
    properties: dict[str, Any] = {
        "method": {"enum": methods, "description": "HTTP method (default GET)"},
        "url": {"type": "string", "minLength": 1, "description": "relative to base_url, or absolute"},
        "headers": {"type": "object", "additionalProperties": SCALAR},
        "cookies": {"type": "object", "additionalProperties": SCALAR,
                    "propertyNames": {"pattern": f"^{COOKIE_NAME.pattern}$"},
                    "description": "sent in the one Cookie header, with the flow's session cookies"},
        "query": {"type": "object", "additionalProperties": SCALARS},
        "json": {"description": "JSON body (any value)"},
        "body": {"type": "string", "description": "raw text body"},
        "form": {"type": "object", "additionalProperties": SCALARS,
                 "description": "form-encoded body; a list repeats the field"},
        "multipart": {"type": "object", "minProperties": 1, "description": "multipart/form-data body: name -> part",
                      "additionalProperties": {"anyOf": [
                          SCALAR,
                          _object({"file": {"type": "string", "minLength": 1, "description": "relative to the suite"},
                                   "content_type": {"type": "string", "minLength": 1},
                                   "filename": {"type": "string", "minLength": 1}}, ("file",)),
                          _object({"value": {"type": "string"}, "content_type": {"type": "string", "minLength": 1}},
                                  ("value",)),
                      ]}},
        "body_file": {"type": "string", "minLength": 1, "description": "a file's bytes as the body (relative to "
                      "the suite, inside the repository)"},
        "graphql": _object({"query": {"type": "string", "minLength": 1}, "variables": {"type": "object"},
                            "operation_name": {"type": ["string", "null"], "minLength": 1}}, ("query",),
                           description="POSTs {query, variables, operationName} as JSON"),
        "auth": {"oneOf": [
            _object({"basic": _object({"username": {"type": "string"}, "password": {"type": "string"}},
                                      ("username", "password"))}, ("basic",)),
            _object({"digest": _object({"username": {"type": "string"}, "password": {"type": "string"}},
                                       ("username", "password"))}, ("digest",)),
            _object({"bearer": {"type": "string", "minLength": 1}}, ("bearer",)),
        ], "description": "sets the Authorization header; digest answers the server's RFC 7616 challenge "
                          "(the credentials are masked in every output)"},
        "tls": _object({
            "verify": {"type": "boolean", "description": "check the server's certificate (default true)"},
            "ca_file": {"type": "string", "minLength": 1, "description": "the CA certificates to trust (PEM)"},
            "client_cert": {"type": "string", "minLength": 1, "description": "a client certificate (PEM)"},
            "client_key": {"type": "string", "minLength": 1,
                           "description": "its private key: an untracked file, written from a secret"},
        }, description="TLS options; files relative to the suite, inside the repository; replaces the "
                       "suite defaults' tls", dependentRequired={"client_key": ["client_cert"]}),
        "delay_ms": {"type": "number", "minimum": 0, "description": "wait before sending"},
        "timeout_ms": {"type": "number", "minimum": 1},
        "follow_redirects": {"type": "boolean", "description": "default true"},
        "retry_on_429": {"type": "boolean", "description": "a 429 or 503 is waited out and the request sent "
                                                           "again: default for GET, HEAD, OPTIONS, PUT and DELETE "
                                                           "only; true for any method, false for none"},
        "stream": _stream(),
        "usage": _object({
            "input_path": {"type": "string", "minLength": 1, "description": "JSONPath to the input tokens"},
            "output_path": {"type": "string", "minLength": 1, "description": "JSONPath to the output tokens"},
        }, description="where the response (a stream's document) says how many tokens it used, for APIs whose "
                       "usage is not OpenAI's or Anthropic's", minProperties=1),
        "pricing_model": {"type": "string", "minLength": 1,
                          "description": "the litmus.yaml pricing entry to price this request's tokens with "
                                         "(default: the response's model)"},
    }
    if defaults or override:
        kept = rules.CONVERSATION_OVERRIDE_KEYS if override else rules.DEFAULTS_KEYS
        return _object({k: v for k, v in properties.items() if k in kept})
    return _object(properties, ("url",), **_at_most_one(*rules.BODY_KEYS))


def _stream() -> dict[str, Any]:
    formats = {"enum": list(rules.STREAM_FORMATS)}
    spelled_out = _object({
        "format": {**formats, "description": "how the body is framed (default sse)"},
        "text_path": {"type": "string", "minLength": 1,
                      "description": "JSONPath into each event's data: its piece of the assembled text"},
        "done": {"type": "string", "minLength": 1,
                 "description": "end marker: an event's exact data, or a JSONPath ($...) matching true"},
    })
    return {"anyOf": [formats, spelled_out],
            "description": "read the body incrementally as events: sse, ndjson, openai, anthropic or "
                           "{format, text_path, done}"}


def _extraction() -> dict[str, Any]:
    shapes = [
        _object({"json_path": {"type": "string", "minLength": 1}}, ("json_path",)),
        _object({"header": {"type": "string", "minLength": 1}}, ("header",)),
        _object({"regex": {"type": "string", "minLength": 1},
                 "group": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}}, ("regex",)),
        _object({"status": {"const": True}}, ("status",)),
        _object({"xpath": {"type": "string", "minLength": 1}}, ("xpath",)),
        _object({"cookie": {"type": "string", "minLength": 1}}, ("cookie",)),
        _object({"url": {"const": True}}, ("url",)),
        _object({"redirects": {"const": True}}, ("redirects",)),
    ]
    return {"oneOf": shapes, "description": "exactly one of json_path, header, regex (+ group), status: true, "
                                            "xpath, cookie, url: true, redirects: true"}


def build_schema() -> dict[str, Any]:
    specs = all_specs()
    assertion_defs = {f"assertion_{name}": _assertion(spec) for name, spec in specs.items()}
    assertion = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"enum": list(specs), "description": "the assertion type"}},
        "allOf": [
            {"if": {"properties": {"type": {"const": name}}, "required": ["type"]},
             "then": {"$ref": f"#/$defs/assertion_{name}"}}
            for name in specs
        ],
    }
    scenario = _object({
        "id": {"type": "string", "minLength": 1},
        "data": {"description": "the scenario's ground-truth data"},
        "data_file": {"type": "string", "minLength": 1, "description": "JSON or YAML file, relative to the suite"},
        "reference_response": {"type": "string"},
        "reference_response_file": {"type": "string", "minLength": 1,
                                    "description": "text file, relative to the suite"},
    }, ("id",), allOf=[_at_most_one("data", "data_file"),
                       _at_most_one("reference_response", "reference_response_file")])
    step_properties = {
        "name": {"type": "string", "minLength": 1},
        "request": {"$ref": "#/$defs/request"},
        "extract": {"type": "object", "propertyNames": {"pattern": IDENTIFIER},
                    "additionalProperties": {"$ref": "#/$defs/extraction"}},
        "retry": _object({"attempts": {"type": "integer", "minimum": 1},
                          "interval_ms": {"type": "number", "minimum": 0}}),
        "assertions": {"type": "array", "items": {"$ref": "#/$defs/assertion"}},
    }
    skip = {"anyOf": [{"type": "boolean"}, {"type": "string", "pattern": "\\S"}],
            "description": "true or a reason: reported as skipped, never as passed"}
    step = _object({**step_properties, "skip": skip}, ("name", "request"))
    conversation_step = _object({
        **step_properties,
        "request": _described(_request(defaults=False, override=True),
                              "fields merged into the conversation's request for this step"),
        "user": {"type": "string", "minLength": 1, "description": "what the user says (templated)"},
        "simulate": _object({
            "persona": {"type": "string", "minLength": 1}, "goal": {"type": "string", "minLength": 1},
            "max_turns": {"type": "integer", "minimum": 1, "maximum": rules.MAX_SIMULATED_TURNS},
        }, ("persona", "goal", "max_turns"), description="user turns played by the simulator"),
        "tool_results": {"type": "object", "description": "tool name -> the value answered to each of its calls"},
    }, ("name",), oneOf=[{"required": ["user"]}, {"required": ["simulate"]}])
    conversation = _object({
        "request": {"$ref": "#/$defs/request"},
        "format": {"anyOf": [
            {"enum": list(rules.CONVERSATION_APIS)},
            _object({"history_path": {"type": "string", "pattern": "^" + rules.SETTABLE_PATH.pattern + "$",
                                      "description": "where the history goes in the JSON body"},
                     "reply_path": {"type": "string", "minLength": 1, "description": "JSONPath of the reply"},
                     "history": {"const": "none", "description": "send only the new message"}},
                    ("history_path",)),
        ], "description": "openai (default), anthropic or {history_path, reply_path, history: none}"},
        "system": {"type": "string", "description": "the system message"},
    }, ("request",), description="the flow is a chat: steps say what the user says, Litmus keeps the history")
    scenario_set = {
        "scenarios": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/scenario"}},
        "scenarios_file": {"type": "string", "minLength": 1,
                           "description": "CSV, JSONL, YAML or JSON: one scenario per row"},
    }
    flow = _object({
        "name": {"type": "string", "minLength": 1},
        "runs": {"type": "integer", "minimum": 1, "maximum": rules.MAX_RUNS,
                 "description": "repeat the flow (default 1)"},
        "steps": {"type": "array", "minItems": 1},
        "conversation": {"$ref": "#/$defs/conversation"},
        "conversation_assertions": {"type": "array", "items": {"$ref": "#/$defs/assertion"},
                                    "description": "judged on the whole transcript, once per flow run"},
        "skip": skip,
        # The flow's own: the suite's context scenarios then do not apply to it.
        **scenario_set,
    }, ("name", "steps"), **{
        "if": {"required": ["conversation"]},
        "then": {"properties": {"steps": {"items": {"$ref": "#/$defs/conversation_step"}}}},
        "else": {"properties": {"steps": {"items": {"$ref": "#/$defs/step"}}},
                 "not": {"required": ["conversation_assertions"]}},
    })
    suite = _object({
        "version": {"const": 1},
        "suite": {"type": "string", "minLength": 1, "description": "the suite's name, unique across the run"},
        "intent": {"type": "string", "description": "the suite's objective, the yardstick of Intent Evaluation"},
        "pass_threshold": _described(PERCENT, "% of flow runs whose Intent Evaluation must pass (default 100)"),
        "base_url": {"type": "string", "pattern": r"^(https?://[^/\s]+|.*\{\{)",
                     "description": "absolute http(s) URL, or a template rendered when the run starts"},
        "defaults": {"$ref": "#/$defs/defaults"},
        "variables": {"type": "object", "propertyNames": {"pattern": IDENTIFIER}},
        "judge": _object({"threshold": PERCENT}),
        "context": _object({"name": {"type": "string"}, **scenario_set},
                           anyOf=[{"required": ["scenarios"]}, {"required": ["scenarios_file"]}]),
        "flows": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/flow"}},
        "setup": {"type": "array", "items": {"$ref": "#/$defs/step"},
                  "description": "steps run once before any flow run; their extractions are {{ setup.NAME }}"},
        "teardown": {"type": "array", "items": {"$ref": "#/$defs/step"},
                     "description": "steps run once after every flow run ended, even after failures"},
        "serial": {"type": "boolean", "description": "flow runs one at a time, in file order (default false)"},
        "openapi": {"type": "string", "minLength": 1,
                    "description": "the API's OpenAPI 3.0/3.1 description (JSON or YAML), relative to the suite file, "
                                   "inside the repository: what `openapi` assertions check against"},
        "rate_limit": _object({
            "per_second": {"type": "number", "exclusiveMinimum": 0},
            "per_minute": {"type": "number", "exclusiveMinimum": 0},
            "burst": {"type": "integer", "minimum": 1, "description": "requests sent at once after a pause "
                                                                      "(default 1)"},
        }, description="requests per origin this suite sends to (the strictest limit for an origin wins)",
            oneOf=[{"required": ["per_second"]}, {"required": ["per_minute"]}]),
    }, ("version", "suite", "flows"), patternProperties={"^x-": {"description": "ignored: a place for YAML anchors"}})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Litmus probe suite, version 1",
        **suite,
        "$defs": {
            "flow": flow, "step": step, "conversation": conversation, "conversation_step": conversation_step,
            "request": _request(defaults=False), "defaults": _request(defaults=True),
            "extraction": _extraction(), "scenario": scenario, "assertion": assertion, **assertion_defs,
        },
    }


def render() -> str:
    return json.dumps(build_schema(), indent=2) + "\n"


if __name__ == "__main__":
    print(render(), end="")
