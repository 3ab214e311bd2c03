"""`litmus init --from-openapi`: the starter suite written from a spec, its values and placeholders, the file
rules for the spec and the output, and a spec a fork wrote that tries to plant templates in it."""

import json
import os

import pytest
import yaml

from litmus.templating import references
from support.cli import litmus
from support.openapi_specs import copy_spec
from support.raw_server import RawServer
from support.target import Target

UNSAFE = "unsafe method: review before enabling"
SECRETS = {"OPENAPI_API_KEY": "k" * 8, "OPENAPI_PETSTORE_AUTH": "t" * 8}


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    return tmp_path


def _spec(paths, **extra):
    return {"openapi": "3.0.3", "info": {"title": "Shop", "version": "1"}, "paths": paths, **extra}


def _write(repo, spec, name="spec.json"):
    (repo / name).write_text(json.dumps(spec))
    return name


def _init(repo, *argv):
    return litmus(repo, "init", "--from-openapi", *argv)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_petstore_gets_one_flow_per_operation_unsafe_ones_skipped_until_included(repo):
    copy_spec("petstore-3.0.json", repo, "api/petstore.json")
    done = _init(repo, "api/petstore.json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("wrote probes/petstore.yaml: 20 flows, 12 with skip:")
    suite = yaml.safe_load((repo / "probes" / "petstore.yaml").read_text())
    assert (suite["suite"], suite["openapi"], suite["base_url"]) == (
        "Swagger Petstore (OpenAPI starter)", "../api/petstore.json", "http://petstore.swagger.io/v2")
    flows = {flow["name"]: flow for flow in suite["flows"]}
    assert list(flows)[:3] == ["POST /pet", "PUT /pet", "GET /pet/findByStatus"]
    assert {name for name, flow in flows.items() if flow.get("skip") == UNSAFE} == {
        name for name in flows if name.split()[0] in ("POST", "PUT", "PATCH", "DELETE")}
    assert all("skip" not in flow for name, flow in flows.items() if name.startswith("GET "))
    step = flows["GET /pet/{petId}"]["steps"][0]
    assert step["request"] == {"method": "GET", "url": "/pet/{{ vars.petId | default(1) | urlencode }}",
                               "headers": {"api_key": "{{ secrets.OPENAPI_API_KEY }}", "Accept": "application/json"}}
    assert step["assertions"] == [{"type": "status_code", "expected": 200}, {"type": "openapi"}]
    # The body of POST /pet: the required properties, from the schema's examples (name: doggie).
    assert flows["POST /pet"]["steps"][0]["request"]["json"] == {
        "name": "doggie", "photoUrls": ["https://example.com/photo.png"]}

    again = _init(repo, "api/petstore.json", "-o", "probes/all.yaml", "--include-unsafe")
    assert again.returncode == 0, again.stderr
    assert all("skip" not in flow for flow in yaml.safe_load((repo / "probes" / "all.yaml").read_text())["flows"])
    for name in ("petstore", "all"):
        checked = litmus(repo, "validate", f"probes/{name}.yaml", env=SECRETS)
        assert (checked.returncode, checked.stdout.strip()) == (0, "1 suite, 20 flows, 40 assertions: OK"), \
            checked.stderr


def test_values_follow_refs_to_examples_and_placeholders_are_typed_and_run_as_written(repo):
    spec = _spec({"/orders/{id}/lines/{line}": {
        "parameters": [{"$ref": "#/components/parameters/OrderId"}],
        "put": {"operationId": "putLine",
                "parameters": [{"name": "line", "in": "path", "required": True,
                                "schema": {"type": "integer", "minimum": 3}},
                               {"name": "X-Request-Id", "in": "header", "required": True,
                                "schema": {"type": "string", "format": "uuid"}},
                               {"name": "dry", "in": "query", "required": True, "schema": {"type": "boolean"}},
                               {"name": "page", "in": "query", "schema": {"type": "integer"}}],
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Line"}}}},
                "responses": {"204": {"description": "done"}, "201": {"description": "made"}}}}},
        components={
            "parameters": {"OrderId": {"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
                                       "examples": {"one": {"$ref": "#/components/examples/Order"}}}},
            "examples": {"Order": {"value": "A/17"}},
            "schemas": {"Line": {"type": "object", "required": ["sku", "qty", "gift"],
                                 "properties": {"sku": {"type": "string", "example": "MUG-1"},
                                                "qty": {"type": "integer", "exclusiveMinimum": True, "minimum": 0},
                                                "gift": {"type": "boolean"},
                                                "id": {"type": "integer", "readOnly": True},
                                                "note": {"type": "string"}}}}})
    _write(repo, spec)
    done = _init(repo, "spec.json", "-o", "probes/shop.yaml", "--include-unsafe")
    assert done.returncode == 0, done.stderr
    suite = yaml.safe_load((repo / "probes" / "shop.yaml").read_text())
    assert "base_url" not in suite  # no servers: the run's --base-url gives it
    step = suite["flows"][0]["steps"][0]
    assert step["name"] == "putLine"
    assert step["request"] == {
        "method": "PUT", "url": "/orders/A%2F17/lines/{{ vars.line | default(3) | urlencode }}",
        "headers": {"X-Request-Id": '{{ vars.X_Request_Id | default("00000000-0000-4000-8000-000000000000") }}'},
        "query": {"dry": "{{ vars.dry | default(true) }}"},
        "json": {"sku": "MUG-1", "qty": "{{ vars.qty | default(1) }}", "gift": "{{ vars.gift | default(true) }}"}}
    assert step["assertions"][0] == {"type": "status_code", "expected": 201}

    # Written as it is, the suite runs: the placeholders' defaults are sent with their types; --var replaces one.
    with Target() as target:
        target.route("/orders/A%2F17/lines/3", lambda request: (201, {}, b""))
        target.route("/orders/A%2F17/lines/9", lambda request: (201, {}, b""))
        for argv in ((), ("--var", "line=9")):
            litmus(repo, "run", "probes/shop.yaml", "--base-url", target.base_url, "--out", "out", *argv)
        first, second = target.requests
    assert first.json() == {"sku": "MUG-1", "qty": 1, "gift": True}
    assert (first.query, first.headers["X-Request-Id"]) == ({"dry": ["true"]}, "00000000-0000-4000-8000-000000000000")
    assert second.path == "/orders/A%2F17/lines/9"


def test_credentials_come_from_the_operations_security_as_secrets_never_the_actions_own(repo):
    spec = _spec({"/a": {"get": {"responses": {"200": {"description": "ok"}}}},
                  "/b": {"get": {"security": [{"basic": []}], "responses": {"200": {"description": "ok"}}}},
                  "/c": {"get": {"security": [{}, {"github_token": []}], "responses": {"200": {"description": "ok"}}}},
                  "/d": {"get": {"security": [{"github_token": []}], "responses": {"200": {"description": "ok"}}}}},
                 security=[{"key": []}],
                 components={"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "k"},
                                                 "basic": {"type": "http", "scheme": "basic"},
                                                 "github_token": {"type": "http", "scheme": "bearer"}}})
    _write(repo, spec)
    assert _init(repo, "spec.json").returncode == 0
    requests = [flow["steps"][0]["request"] for flow in yaml.safe_load((repo / "probes" / "spec.yaml").read_text())
                ["flows"]]
    assert requests[0]["query"] == {"k": "{{ secrets.OPENAPI_KEY }}"}
    assert requests[1]["auth"] == {"basic": {"username": "{{ secrets.OPENAPI_BASIC_USERNAME }}",
                                             "password": "{{ secrets.OPENAPI_BASIC_PASSWORD }}"}}
    assert "auth" not in requests[2]  # an empty requirement: credentials are optional
    # The spec names the schemes: under our prefix, a name cannot pick the action's token or any other credential.
    assert requests[3]["auth"] == {"bearer": "{{ secrets.OPENAPI_GITHUB_TOKEN }}"}


def test_an_existing_file_is_replaced_only_with_force_and_never_through_a_symlink(repo):
    _write(repo, _spec({"/a": {"get": {"responses": {"200": {"description": "ok"}}}}}))
    (repo / "probes").mkdir()
    (repo / "probes" / "spec.yaml").write_text("mine\n")
    done = _init(repo, "spec.json")
    assert done.returncode == 2
    assert "litmus init: error: 'probes/spec.yaml' already exists (use --force to replace it)" in done.stderr
    assert (repo / "probes" / "spec.yaml").read_text() == "mine\n"
    assert _init(repo, "spec.json", "--force").returncode == 0
    assert "flows:" in (repo / "probes" / "spec.yaml").read_text()

    outside = repo.parent / "outside.yaml"
    outside.write_text("theirs\n")
    os.symlink(outside, repo / "probes" / "link.yaml")
    done = _init(repo, "spec.json", "-o", "probes/link.yaml", "--force")
    assert done.returncode == 2 and "probes/link.yaml" in done.stderr
    assert outside.read_text() == "theirs\n"


@pytest.mark.parametrize(("name", "text", "message"), [
    ("spec.json", '{"openapi": "3.0.3",\n "info": }', "litmus init: error: spec.json:2:10: invalid JSON"),
    ("spec.yaml", "openapi: 3.0.3\npaths:\n  /a: [\n", "litmus init: error: spec.yaml:4:1: invalid YAML"),
    ("spec.json", '{"swagger": "2.0"}', "litmus init: error: spec.json: OpenAPI 3.0 or 3.1 is supported"),
])
def test_an_invalid_spec_is_an_error_naming_file_line_and_column(repo, name, text, message):
    (repo / name).write_text(text)
    done = _init(repo, name)
    assert done.returncode == 2 and done.stderr.startswith(message), done.stderr
    assert not (repo / "probes").exists()


def test_a_spec_outside_the_repository_or_missing_is_refused(repo):
    (repo.parent / "elsewhere.json").write_text(json.dumps(_spec({})))
    done = _init(repo, "../elsewhere.json")
    assert done.returncode == 2 and "resolves outside the repository root" in done.stderr
    done = _init(repo, "nothing.json")
    assert done.returncode == 2 and "file 'nothing.json' does not exist" in done.stderr


@pytest.mark.parametrize("scheme", ["file", "http"])
def test_a_spec_whose_refs_name_a_url_is_refused_with_zero_connections(repo, scheme):
    with RawServer({}) as server:
        ref = f"http://127.0.0.1:{server.port}/schemas.json#/Pet" if scheme == "http" else "file:///etc/passwd#/x"
        _write(repo, _spec({"/a": {"get": {"responses": {"200": {"description": "ok", "content": {
            "application/json": {"schema": {"$ref": ref}}}}}}}}))
        done = _init(repo, "spec.json")
        assert server.connections == 0
    assert done.returncode == 2 and "is not a relative file reference" in done.stderr
    assert not (repo / "probes").exists()


def test_a_forks_spec_cannot_plant_templates_or_yaml_in_the_starter_suite(repo):
    """A spec from a pull request (or a vendor) writes examples, names and servers: none of its text may become a
    template that reads a secret when the maintainer runs the suite, nor break out of its YAML scalar."""
    planted = "{{ secrets.DEPLOY_KEY }}"
    spec = _spec({
        "/a/{id}": {"post": {
            "parameters": [{"name": "id", "in": "path", "required": True, "example": planted, "schema": {
                "type": "string", "default": "{{ env.HOME }}"}},
                           {"name": "q}}{{ env.HOME", "in": "query", "required": True, "schema": {"type": "string"}}],
            "requestBody": {"content": {"application/json": {
                "example": {"token": planted},
                "schema": {"type": "object", "required": ["x"], "properties": {"x": {"example": [planted]}}}}}},
            "responses": {"200": {"description": "ok"}}}},
        "/b{{ env.HOME }}": {"get": {"responses": {"200": {"description": "ok"}}}}},
        info={"title": "Shop\nflows: []\n# {{ secrets.DEPLOY_KEY }}", "version": "1"},
        servers=[{"url": "https://{{ secrets.DEPLOY_KEY }}.example.com"}])
    _write(repo, spec)
    done = _init(repo, "spec.json", "--include-unsafe")
    assert done.returncode == 0, done.stderr
    assert "left out GET /b{{ env.HOME }}: its path holds braces outside a path parameter" in done.stderr
    text = (repo / "probes" / "spec.yaml").read_text()
    suite = yaml.safe_load(text)
    assert "base_url" not in suite and suite["suite"] == "OpenAPI starter"
    assert [flow["name"] for flow in suite["flows"]] == ["POST /a/{id}"]
    found = [ref.name for value in _strings(suite["flows"]) for ref in references(value)]
    assert found == ["vars.id", "vars.x"]
    assert "DEPLOY_KEY" not in json.dumps(suite["flows"]) and "env.HOME" not in json.dumps(suite["flows"])


def test_an_operation_answering_with_a_redirect_is_checked_without_following_it(repo):
    _write(repo, _spec({"/download": {"get": {"responses": {"302": {"description": "to the file", "headers": {
        "Location": {"schema": {"type": "string"}}}}}}}}))
    assert _init(repo, "spec.json").returncode == 0
    step = yaml.safe_load((repo / "probes" / "spec.yaml").read_text())["flows"][0]["steps"][0]
    assert step["request"]["follow_redirects"] is False
    assert step["assertions"][0] == {"type": "status_code", "expected": 302}


def test_a_spec_without_operations_writes_nothing(repo):
    _write(repo, _spec({"/a": {"parameters": []}}))
    done = _init(repo, "spec.json")
    assert (done.returncode, done.stderr.strip()) == (
        2, "litmus init: error: spec.json has no operation to write a flow for: nothing written")
    assert not (repo / "probes").exists()


def test_a_forks_spec_cannot_pick_a_credential_of_the_environment_to_send(repo):
    """The spec names its security schemes and its server: a scheme named like an unrelated credential must not make
    the starter suite read that credential and send it to the spec's server when the maintainer runs it."""
    with Target() as target:
        target.route("/a", lambda request: (200, {}, b"{}"))
        _write(repo, _spec({"/a": {"get": {"responses": {"200": {"description": "ok"}}}}},
                           servers=[{"url": target.base_url}], security=[{"AWS_SECRET_ACCESS_KEY": []}],
                           components={"securitySchemes": {"AWS_SECRET_ACCESS_KEY": {
                               "type": "apiKey", "in": "header", "name": "X-Key"}}}))
        assert _init(repo, "spec.json").returncode == 0
        ran = litmus(repo, "run", "probes/spec.yaml", "--out", "out",
                     env={"AWS_SECRET_ACCESS_KEY": "the-maintainers-aws-key"})
        sent = [request.headers.get("X-Key") for request in target.requests]
    assert ran.returncode == 2 and "OPENAPI_AWS_SECRET_ACCESS_KEY" in ran.stderr
    assert "the-maintainers-aws-key" not in sent
