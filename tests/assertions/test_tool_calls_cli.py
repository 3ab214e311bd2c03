"""`type: tool_calls` through `litmus run` against servers on 127.0.0.1 answering with tool calls (OpenAI and
Anthropic, streamed and not), and through `litmus validate` for misuse, each error at its position."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import outcomes, run_suite

from support.cli import litmus
from support.stream_target import Script, StreamTarget
from support.target import Target
from support.tool_replies import anthropic_message, anthropic_stream, openai_completion, openai_stream

LOOKUP = ("call_1", "lookup_order", '{"order_id": 1042, "verbose": false}')
SEARCH = ("call_2", "search_products", '{"query": "mug", "limit": 5}')

TOOLS = """\
- type: function
  function:
    name: lookup_order
    description: Look an order up by its number.
    parameters:
      type: object
      properties:
        order_id: {type: integer}
        verbose: {type: boolean}
      required: [order_id]
      additionalProperties: false
- type: function
  function:
    name: search_products
    parameters:
      type: object
      properties:
        query: {type: string}
        limit: {type: integer, maximum: 3}
      required: [query]
"""


def check(name: str, **fields) -> dict:
    return {"type": "tool_calls", "name": name, **fields}


def step(name: str, url: str, checks: list[dict], stream: str | None = None) -> dict:
    request = {"method": "POST", "url": url, "json": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}
    if stream:
        request["stream"] = stream
    return {"name": name, "request": request, "assertions": checks}


SECRET = "tok-SECRET-42"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("tool-calls")
    with Target() as target, StreamTarget() as streams:
        target.json("/openai", openai_completion(LOOKUP, SEARCH))
        target.json("/anthropic", anthropic_message(("toolu_1", "lookup_order", {"order_id": 1042}), text="Checking."))
        target.json("/not-json", openai_completion(("call_9", "lookup_order", '{"order_id": 10')))
        target.json("/unknown-tool", openai_completion(("call_5", "delete_everything", "{}")))
        target.json("/plain", {"reply": "no tools here"})
        target.json("/text", openai_completion(content="It ships tomorrow."))
        target.json("/secret", openai_completion(("c1", "f", '{"token": "wrong"}'),
                                                 ("c2", "g", json.dumps({"token": SECRET}))))
        target.json("/three", openai_completion(("c1", "a", "{}"), ("c2", "f", '{"x": 1}'), ("c3", "f", '{"x": 2}')))
        streams.script("/openai", Script(openai_stream(LOOKUP, SEARCH)))
        streams.script("/anthropic", Script(anthropic_stream(("toolu_2", "lookup_order", '{"order_id": "1042"}'),
                                                             text="Let me look.")))
        lookup = {"name": "lookup_order", "arguments": {"order_id": "{{ order }}"}}
        suite = {"version": 1, "suite": "Tools", "variables": {"order": 1042}, "flows": [{"name": "agent", "steps": [
            step("openai", "/openai", [
                check("oa any", expected=[{"name": "search_products"}, lookup]),
                check("oa exact", expected=[{"name": "search_products"}, {"name": "lookup_order"}], order="exact"),
                check("oa exact in order", expected=[{"name": "lookup_order"}, {"name": "search_products"}],
                      order="exact", allow_extra=False),
                check("oa exact positions", expected=[{"name": "search_products"}], order="exact",
                      allow_extra=False),
                check("oa args", expected=[{"name": "lookup_order", "arguments": {"order_id": "1042"}}]),
                check("oa missing", expected=[{"name": "cancel_order"}]),
                check("oa no extra", expected=[{"name": "lookup_order"}], allow_extra=False),
                check("oa schema", schema_file="tools.yaml"),
            ]),
            step("openai streamed", streams.url("/openai"), [
                check("oas any", expected=[lookup, {"name": "search_products", "arguments": {"query": "mug"}}]),
                check("oas args", expected=[{"name": "search_products", "arguments": {"limit": 2}}]),
                check("oas schema", schema_file="tools.yaml"),
            ], stream="openai"),
            step("anthropic", "/anthropic", [
                check("an any", expected=[lookup], allow_extra=False, schema_file="tools.yaml"),
                check("an args", expected=[{"name": "lookup_order", "arguments": {"order_id": 7}}]),
            ]),
            step("anthropic streamed", streams.url("/anthropic"), [
                check("ans names", expected=[{"name": "lookup_order"}], allow_extra=False),
                check("ans schema", schema_file="tools.yaml"),
            ], stream="anthropic"),
            step("not json", "/not-json", [check("bad json", expected=[{"name": "lookup_order"}])]),
            step("unknown tool", "/unknown-tool", [check("undefined tool", schema_file="tools.yaml")]),
            step("plain", "/plain", [check("no api", expected=[{"name": "lookup_order"}])]),
            step("text", "/text", [
                check("no call made", expected=[{"name": "lookup_order"}]),
                check("no tool called", expected=[], allow_extra=False),
            ]),
            step("secret", "/secret", [
                check("secret args", expected=[{"name": "f", "arguments": {"token": "{{ secrets.SHOP_TOKEN }}"}}],
                      allow_extra=False),
            ]),
            step("three", "/three", [
                # The loose entry must not take the call the strict one needs, whichever comes first.
                check("best assignment", expected=[{"name": "f"}, {"name": "f", "arguments": {"x": 1}}, {"name": "a"}],
                      allow_extra=False),
                check("exact with gaps", expected=[{"name": "a"}, {"name": "f", "arguments": {"x": 1}}], order="exact"),
                check("too many", expected=[{"name": "f"}, {"name": "f"}, {"name": "f"}]),
            ]),
        ]}]}
        done, found = run_suite(root, suite, target.base_url, extra_files={"probes/tools.yaml": TOOLS},
                                environ={"SHOP_TOKEN": SECRET})
    assert "Traceback" not in done.stderr, done.stderr + done.stdout
    assert SECRET not in done.stdout + done.stderr
    return root, outcomes(found)


@pytest.fixture(scope="module")
def results(run) -> dict:
    return run[1]


def paths(outcome: dict) -> list[str]:
    return [m["path"] for m in outcome["mismatches"]]


@pytest.mark.parametrize("name", ["oa any", "oa exact in order", "oas any", "an any", "ans names", "best assignment",
                                  "exact with gaps", "no tool called"])
def test_matching_calls_pass(results, name):
    assert results[name]["status"] == "passed", results[name]


def test_a_pass_says_what_was_checked(results):
    assert results["an any"]["reason"] == "1 tool call (lookup_order): 1 expected call matched, no others, " \
                                          "arguments valid"


def test_order_exact_names_the_call_that_came_too_early(results):
    outcome = results["oa exact"]
    assert outcome["status"] == "failed"
    assert paths(outcome) == ["tool_calls[0]"]
    assert outcome["mismatches"][0]["reason"] == \
        "expected a call of lookup_order after tool_calls[1] (search_products) (order: exact), it came before"


def test_order_exact_without_extras_compares_position_by_position(results):
    outcome = results["oa exact positions"]
    assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == [
        ("tool_calls[0].name", "expected search_products here (order: exact), got lookup_order"),
        ("tool_calls[1]", "unexpected call of search_products (allow_extra: false)"),
    ]


@pytest.mark.parametrize("name, path, reason", [
    ("oa args", "tool_calls[0].arguments.order_id", 'lookup_order: expected "1042", got integer 1042'),
    ("oas args", "tool_calls[1].arguments.limit", "search_products: expected 2, got integer 5"),
    ("an args", "tool_calls[0].arguments.order_id", "lookup_order: expected 7, got integer 1042"),
])
def test_arguments_that_differ_are_named_by_path(results, name, path, reason):
    outcome = results[name]
    assert outcome["status"] == "failed"
    assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == [(path, reason)]


def test_a_call_never_made_says_which_were(results):
    outcome = results["oa missing"]
    assert outcome["status"] == "failed"
    assert outcome["mismatches"][0]["path"] == "tool_calls"
    assert outcome["mismatches"][0]["reason"] == \
        "expected a call of cancel_order: none was made (calls: lookup_order, search_products)"


def test_an_entry_left_without_a_call_of_its_own_fails(results):
    outcome = results["too many"]
    assert outcome["status"] == "failed"
    assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == [
        ("tool_calls", "expected a call of f: its calls match other entries")]


def test_a_reply_without_tool_calls_fails_an_expected_call(results):
    outcome = results["no call made"]
    assert outcome["status"] == "failed"
    assert outcome["reason"] == "tool_calls: expected a call of lookup_order: the reply made no tool calls"
    assert results["no tool called"]["reason"] == "no tool calls, as required"


def test_allow_extra_false_fails_on_a_call_not_listed(results):
    outcome = results["oa no extra"]
    assert outcome["status"] == "failed"
    assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == [
        ("tool_calls[1]", "unexpected call of search_products (allow_extra: false)")]


@pytest.mark.parametrize("name, path, reason", [
    ("oa schema", "tool_calls[1].arguments.limit", "search_products: expected at most 3, got integer 5"),
    ("oas schema", "tool_calls[1].arguments.limit", "search_products: expected at most 3, got integer 5"),
    ("ans schema", "tool_calls[0].arguments.order_id", 'lookup_order: expected integer, got string "1042"'),
    ("undefined tool", "tool_calls[0].name",
     "tools.yaml defines no tool 'delete_everything' (it defines lookup_order, search_products)"),
])
def test_arguments_are_validated_against_the_tool_definitions(results, name, path, reason):
    outcome = results[name]
    assert outcome["status"] == "failed"
    assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == [(path, reason)]


def test_arguments_that_are_not_json_fail_naming_the_call(results):
    outcome = results["bad json"]
    assert outcome["status"] == "failed"
    assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == [
        ("tool_calls[0].arguments", 'lookup_order: the arguments are not valid JSON: "{\\"order_id\\": 10"'),
        ("tool_calls", "expected a call of lookup_order: its calls' arguments are not JSON"),
    ]


def test_a_secret_in_expected_or_in_a_call_is_masked_in_every_output(run):
    root, found = run
    outcome = found["secret args"]
    assert [(m["path"], m["expected"], m["actual"]) for m in outcome["mismatches"]] == [
        ("tool_calls[0].arguments.token", "***", "wrong"),
        ("tool_calls[1]", "no other call", {"name": "g", "arguments": {"token": "***"}}),
    ]
    for path in (root / "out").iterdir():
        assert SECRET not in path.read_text(), path.name


def test_a_reply_of_no_chat_api_is_an_error_not_a_pass(results):
    outcome = results["no api"]
    assert outcome["status"] == "error"
    assert outcome["reason"].startswith("cannot read tool calls: the reply is neither an OpenAI chat completion")


MISUSE = """\
version: 1
suite: Misuse
flows:
  - name: f
    steps:
      - name: s
        request: {url: http://127.0.0.1:9/x}
        assertions:
          - {type: tool_calls, expected: [{name: lookup, argument: {id: 1}}]}
          - {type: tool_calls, expected: [{name: lookup}], order: sorted}
          - {type: tool_calls, schema_file: missing.json}
          - {type: tool_calls, schema_file: bad-params.json}
          - {type: tool_calls, schema_file: not-a-list.json}
          - {type: tool_calls, expected: [lookup]}
          - {type: tool_calls, expected: []}
          - {type: tool_calls, allow_extra: false}
          - {type: tool_calls, expected: [{name: lookup}], strict: true}
          - {type: tool_calls, schema_file: refs.json}
          - {type: tool_calls, schema_file: anthropic-tools.json}
"""


def test_validate_reports_each_misuse_at_its_position(tmp_path: Path):
    with Target() as target:
        (tmp_path / ".git").mkdir()
        probes = tmp_path / "probes"
        probes.mkdir()
        (probes / "s.yaml").write_text(MISUSE)
        (probes / "bad-params.json").write_text(
            json.dumps([{"type": "function", "function": {"name": "lookup", "parameters": {"type": 12}}}]))
        (probes / "not-a-list.json").write_text(json.dumps({"name": "lookup"}))
        refs = [{"type": "function", "function": {"name": "a", "parameters": {"$ref": "file:///etc/passwd"}}},
                {"type": "function", "function": {"name": "b", "parameters": {"$ref": target.url("/schema.json")}}}]
        (probes / "refs.json").write_text(json.dumps(refs))
        (probes / "anthropic-tools.json").write_text(json.dumps([
            {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}},
            {"name": "lookup", "input_schema": {"type": "object"}}]))
        done = litmus(tmp_path, "validate", timeout=60)
        assert target.requests == []  # a $ref is never fetched
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert errors == [
        "probes/s.yaml:9:58: error: unknown key 'argument' in an expected tool call (did you mean 'arguments'?)",
        "probes/s.yaml:10:67: error: 'order' must be one of exact, any, not the string 'sorted'",
        "probes/s.yaml:11:45: error: file 'missing.json' does not exist",
        "probes/s.yaml:12:45: error: 'probes/bad-params.json': entry 0 (lookup): parameters: invalid JSON Schema "
        "at ['type']: 12 is not valid under any of the given schemas",
        "probes/s.yaml:13:45: error: 'probes/not-a-list.json': tool definitions must be a non-empty list of "
        "{type: function, function: {name, parameters}}, not a mapping",
        "probes/s.yaml:14:43: error: 'expected[0]' must be a mapping {name, arguments}, not the string 'lookup'",
        "probes/s.yaml:15:42: error: an empty 'expected' checks nothing while other calls are allowed: list the "
        "calls, or set 'allow_extra: false' to require that no tool is called",
        "probes/s.yaml:16:13: error: a tool_calls assertion needs at least one of expected, schema_file (got none)",
        "probes/s.yaml:17:60: error: unknown key 'strict' in a tool_calls assertion",
        "probes/s.yaml:18:45: error: schema $ref 'file:///etc/passwd' is not a relative file reference: only "
        "files inside the repository are read (no URLs, no absolute paths)",
        f"probes/s.yaml:18:45: error: schema $ref '{target.url('/schema.json')}' is not a relative file reference: "
        "only files inside the repository are read (no URLs, no absolute paths)",
        "probes/s.yaml:19:45: error: 'probes/anthropic-tools.json': entry 1 must be {type: function, function: "
        "{name, parameters}} (Anthropic's {name, input_schema} is written {type: function, function: {name, "
        "parameters: the input_schema}})",
    ]
