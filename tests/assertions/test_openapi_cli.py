"""The `openapi` assertion through `litmus run`, against a server on 127.0.0.1 that breaks each rule of the
contract once: checked with the real Petstore 3.0 and 3.1 descriptions, and a small spec of our own for what
Petstore does not declare (a required response header, `nullable`, a discriminator, write-only properties,
server variables, a `4XX` response). Each violation is exactly one failure, naming where; conforming
responses pass; a request that breaks its operation is a warning on the step, and decides nothing."""

from __future__ import annotations

import json

import pytest
import yaml
from harness import outcomes, run_suite, suite_of

from litmus.results import validate
from support.cli import litmus
from support.openapi_specs import copy_spec, spec_bytes
from support.target import Target

PET = {"id": 7, "name": "rex", "photoUrls": ["https://example.com/rex.png"], "status": "available",
       "category": {"id": 1, "name": "dogs"}, "tags": [{"id": 2, "name": "good"}]}
JSON = {"Content-Type": "application/json"}

# (case, method, path, response status, headers, body, strict, expected [(mismatch path, reason)]); no
# expected mismatches: the response conforms.
PETSTORE_CASES = [
    ("conforms", "GET", "/v2/pet/1", 200, JSON, PET, True, []),
    ("conforms-with-charset", "GET", "/v2/pet/11", 200, {"Content-Type": "application/json; charset=utf-8"}, PET,
     False, []),
    ("wrong-type", "GET", "/v2/pet/2", 200, JSON, {**PET, "id": "seven"}, False,
     [("$.id", 'expected integer, got string "seven"')]),
    ("missing-required", "GET", "/v2/pet/3", 200, JSON, {k: v for k, v in PET.items() if k != "photoUrls"}, False,
     [("$", 'missing required property "photoUrls"')]),
    ("null-not-nullable", "GET", "/v2/pet/4", 200, JSON, {**PET, "name": None}, False,
     [("$.name", "expected string, got null")]),
    ("undeclared-status", "GET", "/v2/store/inventory", 418, JSON, {}, False,
     [("status", "status 418 is not declared for GET /store/inventory (declared: 200)")]),
    ("wrong-content-type", "GET", "/v2/pet/5", 200, {"Content-Type": "text/html"}, "<p>rex</p>", False,
     [("content-type", "content type text/html is not declared for GET /pet/{petId} status 200 "
                       "(declared: application/xml, application/json)")]),
    ("unknown-path", "GET", "/v2/pets/6", 200, JSON, PET, False,
     [("operation", "no path of the spec matches '/pets/6' (GET /v2/pets/6)")]),
    ("unknown-method", "PATCH", "/v2/pet", 200, JSON, PET, False,
     [("operation", "method PATCH is not declared for path '/pet' (declared: POST, PUT)")]),
    ("undeclared-property-strict", "GET", "/v2/pet/8", 200, JSON, {**PET, "owner": "ann"}, True,
     [("$.owner", "property 'owner' is not declared in the schema (strict)")]),
    ("undeclared-property-lenient", "GET", "/v2/pet/9", 200, JSON, {**PET, "owner": "ann"}, False, []),
    ("undeclared-nested-strict", "GET", "/v2/pet/10", 200, JSON, {**PET, "tags": [{"id": 2, "colour": "red"}]},
     True, [("$.tags[0].colour", "property 'colour' is not declared in the schema (strict)")]),
    ("default-response", "GET", "/v2/pet/12", 500, {}, "", False, []),
    ("xml-declared", "GET", "/v2/pet/13", 200, {"Content-Type": "application/xml"}, "<Pet/>", False, []),
]

SHOP = """\
openapi: 3.0.3
info: {title: Shop, version: "1"}
servers:
  - url: "{scheme}://shop.example.com/{stage}/api"
    variables:
      scheme: {default: https}
      stage: {default: prod, enum: [prod, beta]}
  - url: /beta
paths:
  /orders/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses:
        "200":
          description: an order
          headers:
            X-Request-Id: {required: true, schema: {type: string}}
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Order"}
        "4XX":
          description: a client error
          content:
            application/problem+json:
              schema: {$ref: "#/components/schemas/Problem"}
  /animals/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        "200":
          description: an animal
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Animal"}
  /orders:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Order"}
      parameters:
        - {name: dry_run, in: query, schema: {type: boolean}}
        - {name: X-Shop, in: header, required: true, schema: {type: string}}
        - {name: Authorization, in: header, required: true, schema: {type: string}}  # ignored, as OpenAPI says
      responses:
        "201": {description: created}
components:
  schemas:
    Order:
      type: object
      required: [id, note, card]
      properties:
        id: {type: integer, readOnly: true}
        note: {type: string, nullable: true}
        card: {type: string, writeOnly: true}
    Problem:
      type: object
      required: [title]
      properties: {title: {type: string}}
      additionalProperties: false
    Animal:
      oneOf: [{$ref: "#/components/schemas/Cat"}, {$ref: "#/components/schemas/Dog"}]
      discriminator: {propertyName: kind}
    Cat:
      type: object
      required: [kind, purrs]
      properties: {kind: {type: string}, purrs: {type: boolean}}
    Dog:
      type: object
      required: [kind, barks]
      properties: {kind: {type: string}, barks: {type: boolean}}
"""
ORDER_HEADERS = {**JSON, "X-Request-Id": "r-1"}
SHOP_CASES = [
    ("order-conforms", "GET", "/prod/api/orders/1", 200, ORDER_HEADERS, {"id": 1, "note": None}, True, []),
    ("order-beta-stage", "GET", "/beta/api/orders/2", 200, ORDER_HEADERS, {"id": 2, "note": "hi"}, False, []),
    ("order-short-base-path", "GET", "/beta/orders/3", 200, ORDER_HEADERS, {"id": 3, "note": "x"}, False, []),
    ("missing-required-header", "GET", "/prod/api/orders/4", 200, JSON, {"id": 4, "note": None}, False,
     [("headers.X-Request-Id", "required response header X-Request-Id is missing (status 200)")]),
    ("write-only-in-response", "GET", "/prod/api/orders/5", 200, ORDER_HEADERS,
     {"id": 5, "note": None, "card": "4111"}, False, [("$.card", "a write-only property must not be in a response")]),
    ("client-error-range", "GET", "/prod/api/orders/6", 404, {"Content-Type": "application/problem+json"},
     {"title": "no such order"}, False, []),
    ("closed-schema-strict-once", "GET", "/prod/api/orders/8", 404, {"Content-Type": "application/problem+json"},
     {"title": "no such order", "code": 3}, True, [("$", 'unexpected property "code"')]),
    ("discriminator-picks-dog", "GET", "/prod/api/animals/1", 200, JSON, {"kind": "Dog", "barks": "loud"}, False,
     [("$.barks", 'expected boolean, got string "loud"')]),
    ("discriminator-cat", "GET", "/prod/api/animals/2", 200, JSON, {"kind": "Cat", "purrs": True}, False, []),
    ("outside-base-paths", "GET", "/orders/7", 200, ORDER_HEADERS, {"id": 7, "note": None}, False,
     [("operation", "path '/orders/7' is under none of the spec's server base paths "
                    "('/beta/api', '/prod/api', '/beta')")]),
]


def _route(status, headers, body):
    payload = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    return lambda request: (status, headers, payload)


def _run(root, spec_path, cases, extra_steps=(), environ=None):
    with Target() as target:
        steps = []
        for case, method, path, status, headers, body, strict, _ in cases:
            target.route(path, _route(status, headers, body))
            steps.append({"name": case, "request": {"method": method, "url": path},
                          "assertions": [{"name": case, "type": "openapi", **({"strict": True} if strict else {})}]})
        for route, step in extra_steps:
            target.route(*route)
            steps.append(step)
        done, data = run_suite(root, suite_of(steps, openapi=f"../{spec_path}"), target.base_url, environ=environ)
    assert done.returncode == 0, done.stdout + done.stderr
    return data, done.stdout


@pytest.fixture(scope="module", params=["petstore-3.0.json", "petstore-3.1.json"])
def petstore(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("petstore")
    copy_spec(request.param, root, f"api/{request.param}")
    return _run(root, f"api/{request.param}", PETSTORE_CASES)


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    root = tmp_path_factory.mktemp("shop")
    (root / "api").mkdir()
    (root / "api" / "shop.yaml").write_text(SHOP)
    conformance = [
        (("/prod/api/orders", lambda r: (201, {}, b"")),
         {"name": "post-order", "request": {"method": "POST", "url": "/prod/api/orders?dry_run=maybe",
                                             "json": {"id": 9, "note": 3, "card": "4111"}},
          "assertions": [{"name": "post-order", "type": "openapi"}]}),
        (("/prod/api/orders", lambda r: (201, {}, b"")),
         {"name": "post-secret", "request": {"method": "POST", "url": "/prod/api/orders",
                                              "query": {"dry_run": "{{ secrets.DRY_RUN_TOKEN }}"},
                                              "json": {"note": None, "card": "4111"}},
          "assertions": [{"name": "post-secret", "type": "openapi"}]}),
    ]
    return _run(root, "api/shop.yaml", SHOP_CASES, conformance, environ={"DRY_RUN_TOKEN": "tok-5ecret-77"})


def _check(run, cases):
    found = outcomes(run[0])
    for case, *_, expected in cases:
        outcome = found[case]
        assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == expected, case
        assert outcome["status"] == ("failed" if expected else "passed"), (case, outcome["reason"])


def test_each_petstore_violation_is_one_failure_naming_where_and_conforming_responses_pass(petstore):
    _check(petstore, PETSTORE_CASES)
    passed = outcomes(petstore[0])["conforms"]["reason"]
    assert passed.startswith("response conforms to GET /pet/{petId} (200, application/json) of api/petstore-3.")
    assert outcomes(petstore[0])["xml-declared"]["reason"].endswith(
        "; its body was not validated (only JSON bodies are)")


def test_required_headers_nullable_write_only_discriminator_and_server_variables(shop):
    _check(shop, SHOP_CASES)


def test_results_with_warnings_and_coverage_are_valid_results_documents(petstore, shop):
    assert validate(petstore[0]) == [] and validate(shop[0]) == []


def test_a_request_that_breaks_its_operation_is_a_warning_on_the_step_not_a_failure(shop):
    step = next(s for s in shop[0]["suites"][0]["flow_runs"][0]["steps"] if s["name"] == "post-order")
    assert step["status"] == "passed"
    prefix = "request does not conform to POST /orders in api/shop.yaml: "
    assert step["warnings"] == [prefix + "query parameter 'dry_run': expected boolean, got string \"maybe\"",
                                prefix + "header parameter 'X-Shop' is required and was not sent",
                                prefix + "request body $.id: a read-only property must not be in a request",
                                prefix + "request body $.note: expected string, got integer 3"]
    conforming = next(s for s in shop[0]["suites"][0]["flow_runs"][0]["steps"] if s["name"] == "order-conforms")
    assert conforming["warnings"] == []
    # A warning quotes what the request sent: a secret in it is masked, like everywhere else.
    secret = next(s for s in shop[0]["suites"][0]["flow_runs"][0]["steps"] if s["name"] == "post-secret")
    assert secret["warnings"] == [prefix + "query parameter 'dry_run': expected boolean, got string \"***\"",
                                  prefix + "header parameter 'X-Shop' is required and was not sent"]
    assert "tok-5ecret-77" not in shop[1] + json.dumps(shop[0])
    # The terminal shows each warning at its step, and the suite's coverage.
    assert f"probes/suite.yaml:{step['line']} checks › post-order › warning: {prefix}query parameter" in shop[1]
    assert "OpenAPI coverage of api/shop.yaml (Predicates): 3 of 3 operations exercised (100%)" in shop[1]


def test_coverage_counts_the_operations_requests_matched_in_spec_order(petstore):
    coverage = petstore[0]["suites"][0]["openapi"]
    assert (f"OpenAPI coverage of {coverage['spec']} (Predicates): 2 of 20 operations exercised (10%); 18 not, "
            "listed in results.json") in petstore[1]
    spec = json.loads(spec_bytes(coverage["spec"].removeprefix("api/")))
    every = [f"{method.upper()} {path}" for path, item in spec["paths"].items() for method in item
             if method in ("get", "put", "post", "delete", "options", "head", "patch", "trace")]
    exercised = ["GET /pet/{petId}", "GET /store/inventory"]  # PATCH /pet and /pets/6 match no operation
    assert coverage == {"spec": coverage["spec"], "operations": 20, "exercised": 2,
                        "missing": [key for key in every if key not in exercised]}


def test_litmus_merge_unions_coverage_across_shards(tmp_path):
    copy_spec("petstore-3.0.json", tmp_path, "api/petstore.json")
    (tmp_path / ".git").mkdir()
    (tmp_path / "probes").mkdir()
    paths = {"pets": "/v2/pet/1", "inventory": "/v2/store/inventory", "orders": "/v2/store/order/3"}
    suite = {"version": 1, "suite": "Petstore", "openapi": "../api/petstore.json", "flows": [
        {"name": name, "steps": [{"name": name, "request": {"url": path}, "assertions": [
            {"type": "status_code", "expected": 200}]}]} for name, path in paths.items()]}
    (tmp_path / "probes" / "petstore.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    shards = []
    with Target() as target:
        for path in paths.values():
            target.json(path, {})
        for k in (1, 2):
            done = litmus(tmp_path, "run", "probes", "--base-url", target.base_url, "--shard", f"{k}/2",
                          "--out", f"shard-{k}", "--fail-on", "never")
            assert done.returncode == 0, done.stdout + done.stderr
            shards.append(json.loads((tmp_path / f"shard-{k}" / "results.json").read_text()))
    parts = [shard["suites"][0]["openapi"] for shard in shards]
    assert sorted(part["exercised"] for part in parts) == [1, 2]  # three operations, split over two shards
    done = litmus(tmp_path, "merge", "shard-1/results.json", "shard-2/results.json", "-o", "merged.json")
    assert done.returncode == 0, done.stdout + done.stderr
    merged = json.loads((tmp_path / "merged.json").read_text())["suites"][0]["openapi"]
    assert merged["exercised"] == 3 and merged["operations"] == 20
    assert not {"GET /pet/{petId}", "GET /store/inventory", "GET /store/order/{orderId}"} & set(merged["missing"])
    assert len(merged["missing"]) == 17
    report = litmus(tmp_path, "report", "merged.json", "--out", "reports", "--format", "markdown")
    assert report.returncode == 0, report.stdout + report.stderr
    comment = (tmp_path / "reports" / "comment.md").read_text()
    assert "OpenAPI coverage of `api/petstore.json` (Petstore): 3 of 20 operations exercised (15%)" in comment
