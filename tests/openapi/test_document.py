"""Loading an OpenAPI description: real specs (Petstore 3.0/3.1, GitHub's), operations in spec order, server base
paths, operation lookup, and `$ref`s followed only inside the repository, through the one resolver."""

import json
import os

import pytest

from litmus.load import load_suites
from litmus.openapi.document import SpecError, load_document
from support.openapi_specs import copy_spec
from support.raw_server import RawServer


@pytest.mark.parametrize("name", ["petstore-3.0.json", "petstore-3.0.yaml", "petstore-3.1.json"])
def test_petstore_operations_come_in_spec_order_and_are_found_under_the_server_base_path(tmp_path, name):
    copy_spec(name, tmp_path, f"api/{name}")
    document = load_document(f"api/{name}", tmp_path)
    assert document.path == f"api/{name}"
    assert document.version == ("3.1" if "3.1" in name else "3.0")
    keys = [op.key for op in document.operations()]
    assert keys[:4] == ["POST /pet", "PUT /pet", "GET /pet/findByStatus", "GET /pet/findByTags"]
    assert len(keys) == 20
    assert document.base_paths() == ["/v2"]
    assert document.find("GET", "/v2/pet/12")[0].key == "GET /pet/{petId}"
    # The concrete path decides before the method: POST /pet/findByStatus is not /pet/{petId}'s POST.
    assert document.find("post", "/v2/pet/findByStatus") == (
        None, "method POST is not declared for path '/pet/findByStatus' (declared: GET)")
    assert document.find("GET", "/v2/pets")[1] == "no path of the spec matches '/pets' (GET /v2/pets)"
    assert "under none of the spec's server base paths ('/v2')" in document.find("GET", "/pet/1")[1]
    pet = document.resolve(document.find("GET", "/v2/pet/1")[0].operation["responses"]["200"]["content"]
                           ["application/json"]["schema"])
    assert pet["required"] == ["name", "photoUrls"]


def test_github_description_loads_with_its_1223_operations(tmp_path):
    copy_spec("api.github.com.json", tmp_path)
    document = load_document("api.github.com.json", tmp_path)
    assert document.version == "3.0"
    assert len(document.operations()) == 1223
    assert document.base_paths() == [""]
    assert document.find("GET", "/repos/octo/hello/pulls/7")[0].key == "GET /repos/{owner}/{repo}/pulls/{pull_number}"


def test_server_variables_expand_to_their_enum_values_or_default_longest_base_path_first(tmp_path):
    copy_spec("server-variables-3.0.json", tmp_path)
    assert load_document("server-variables-3.0.json", tmp_path).base_paths() == ["/v1", "/v2"]
    spec = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
            "servers": [{"url": "https://{region}.example.com/{stage}/api", "variables": {
                "region": {"default": "eu"}, "stage": {"default": "prod", "enum": ["prod", "staging"]}}},
                        {"url": "/prod"}],
            "paths": {"/api/orders": {"get": {"responses": {"200": {"description": "ok"}}}},
                      "/orders": {"get": {"responses": {"200": {"description": "ok"}}}}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    document = load_document("spec.json", tmp_path)
    assert document.base_paths() == ["/staging/api", "/prod/api", "/prod"]
    # /prod/api/orders: the longest base path (/prod/api) wins, so it is /orders, not /api/orders.
    assert document.find("GET", "/prod/api/orders")[0].path == "/orders"
    assert document.find("GET", "/staging/api/orders")[0].path == "/orders"


def _spec_with_ref(ref):
    return {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/a": {"get": {"responses": {
        "200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": ref}}}}}}}}}


def test_relative_file_refs_are_read_through_the_resolver_and_followed(tmp_path):
    (tmp_path / "api" / "schemas").mkdir(parents=True)
    (tmp_path / "api" / "spec.json").write_text(json.dumps(_spec_with_ref("schemas/pet.yaml#/Pet")))
    (tmp_path / "api" / "schemas" / "pet.yaml").write_text(
        "Pet:\n  $ref: '#/Named'\nNamed:\n  type: object\n  properties:\n    born: {example: 2026-12-03}\n")
    document = load_document("api/spec.json", tmp_path)
    assert set(document.documents) == {"api/spec.json", "api/schemas/pet.yaml"}
    schema = document.operations()[0].operation["responses"]["200"]["content"]["application/json"]["schema"]
    where = document.locate(schema, "api/spec.json")
    assert (where.file, where.pointer) == ("api/schemas/pet.yaml", "/Named")
    assert where.node["properties"]["born"]["example"] == "2026-12-03"  # a date stays the text it reads as


@pytest.mark.parametrize("ref", ["file:///etc/passwd#/x", "http://127.0.0.1:{port}/pet.json",
                                 "https://127.0.0.1:{port}/pet.json", "//127.0.0.1:{port}/pet.json", "/etc/passwd"])
def test_a_url_or_absolute_ref_is_an_error_with_zero_connections(tmp_path, ref):
    with RawServer({}) as server:
        (tmp_path / "spec.json").write_text(json.dumps(_spec_with_ref(ref.format(port=server.port))))
        with pytest.raises(SpecError, match="is not a relative file reference"):
            load_document("spec.json", tmp_path)
        assert server.connections == 0


@pytest.mark.parametrize(("make", "reason"), [
    (lambda root: None, "resolves outside the repository root"),
    (lambda root: (root / ".git").mkdir() or (root / ".git" / "config").write_text("[core]"), "inside .git/"),
    (lambda root: os.symlink("/etc/hostname", root / "link.json"), "resolves outside the repository root"),
])
def test_a_ref_the_resolver_refuses_fails_the_load(tmp_path, make, reason):
    make(tmp_path)
    ref = {"resolves outside the repository root": "../outside.json", "inside .git/": ".git/config"}[reason]
    if (tmp_path / "link.json").is_symlink():
        ref = "link.json"
    (tmp_path / "spec.json").write_text(json.dumps(_spec_with_ref(ref)))
    (tmp_path.parent / "outside.json").write_text("{}")
    with pytest.raises(SpecError, match=reason):
        load_document("spec.json", tmp_path)


def test_ref_cycles_and_missing_targets_are_errors_not_hangs(tmp_path):
    spec = _spec_with_ref("#/components/schemas/A")
    spec["components"] = {"schemas": {"A": {"$ref": "#/components/schemas/B"}, "B": {"$ref": "#/components/schemas/A"}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    document = load_document("spec.json", tmp_path)
    with pytest.raises(SpecError, match="cycle"):
        document.resolve({"$ref": "#/components/schemas/A"})
    with pytest.raises(SpecError, match="'#/components/schemas/C' does not exist"):
        document.resolve({"$ref": "#/components/schemas/C"})


def test_yaml_aliases_are_followed_where_they_are_used_once(tmp_path):
    (tmp_path / "spec.yaml").write_text("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n"
                                        "x-shared: &a {more: {$ref: other.yaml}}\nx-again: *a\n")
    (tmp_path / "other.yaml").write_text("{}\n")
    assert set(load_document("spec.yaml", tmp_path).documents) == {"spec.yaml", "other.yaml"}


@pytest.mark.parametrize("aliases", [
    "x-loop: &a {next: *a}\n",  # an alias inside itself: a cycle no JSON can write
    "".join(f"x-{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" if i else "x-0: &l0 [a, b, c, d, e, f, g, h, i]\n"
            for i in range(9)),  # 9^9 values once expanded: the billion laughs
])
def test_yaml_aliases_that_expand_without_bound_fail_the_load_quickly(tmp_path, aliases):
    (tmp_path / "spec.yaml").write_text("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n" + aliases)
    with pytest.raises(SpecError, match="its YAML aliases expand it past 1,000,000 mappings and lists"):
        load_document("spec.yaml", tmp_path)


@pytest.mark.parametrize(("text", "message"), [
    ('{"swagger": "2.0"}', "OpenAPI 3.0 or 3.1 is supported, this is Swagger 2.0"),
    ('{"openapi": "4.0.0"}', "OpenAPI 3.0 or 3.1 is supported, this is '4.0.0'"),
    ('[1]', "not an OpenAPI document"),
    ('{"openapi": ', "spec.json:1:13: invalid JSON"),
])
def test_what_is_not_an_openapi_3_document_is_an_error_naming_the_file(tmp_path, text, message):
    (tmp_path / "spec.json").write_text(text)
    with pytest.raises(SpecError, match=message):
        load_document("spec.json", tmp_path)


def test_suites_naming_one_spec_share_its_load_until_a_file_of_it_changes(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "probes").mkdir()
    (tmp_path / "api" / "schemas").mkdir(parents=True)
    (tmp_path / "api" / "spec.json").write_text(json.dumps(_spec_with_ref("schemas/pet.yaml#/Pet")))
    (tmp_path / "api" / "schemas" / "pet.yaml").write_text("Pet: {type: object}\n")
    for name in ("a", "b"):
        (tmp_path / "probes" / f"{name}.yaml").write_text(
            f"version: 1\nsuite: {name}\nopenapi: ../api/spec.json\nflows:\n  - name: f\n    steps:\n"
            "      - name: s\n        request: {url: /a}\n        assertions: [{type: openapi}]\n")
    first, second = load_suites([tmp_path / "probes"], root=tmp_path, environ={}).suites
    assert first.openapi is second.openapi
    (tmp_path / "api" / "schemas" / "pet.yaml").write_text("Pet: {type: string}\n")  # a file its $ref names
    (again,) = load_suites([tmp_path / "probes" / "a.yaml"], root=tmp_path, environ={}).suites
    assert again.openapi is not first.openapi
    assert again.openapi.document("api/schemas/pet.yaml") == {"Pet": {"type": "string"}}


def test_a_partial_copy_of_the_repository_brings_in_each_file_a_ref_names_before_reading_it(tmp_path):
    """`load_suites(fetch_file=)` (a pull request's files read into a scratch folder): the spec's `$ref`d files
    are brought in through the same hook as every file a suite names."""
    source, scratch = tmp_path / "source", tmp_path / "scratch"
    (source / "api" / "schemas").mkdir(parents=True)
    (source / "probes").mkdir()
    (source / "api" / "spec.json").write_text(json.dumps(_spec_with_ref("schemas/pet.yaml#/Pet")))
    (source / "api" / "schemas" / "pet.yaml").write_text("Pet: {type: object}\n")
    (source / "probes" / "s.yaml").write_text(
        "version: 1\nsuite: s\nopenapi: ../api/spec.json\nflows:\n  - name: f\n    steps:\n"
        "      - name: s\n        request: {url: /a}\n        assertions: [{type: openapi}]\n")
    (scratch / "probes").mkdir(parents=True)
    (scratch / "probes" / "s.yaml").write_text((source / "probes" / "s.yaml").read_text())
    fetched = []

    def fetch(path):
        relative = path.relative_to(scratch)
        fetched.append(relative.as_posix())
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes((source / relative).read_bytes())

    (suite,) = load_suites([scratch / "probes" / "s.yaml"], root=scratch, environ={}, fetch_file=fetch).suites
    assert fetched == ["api/spec.json", "api/schemas/pet.yaml"]
    assert suite.openapi.document("api/schemas/pet.yaml") == {"Pet": {"type": "object"}}
