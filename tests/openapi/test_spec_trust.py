"""Attacks through the spec a suite names (`openapi:`) and the `$ref`s inside it: a pull request writes them
all. Each refused file is a load error at the `openapi:` field; nothing outside the repository, inside a
version-control folder, or behind a URL is read, and no connection is made, at load or at run time."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from litmus.errors import ProbeError
from litmus.load import load_suites
from support.cli import litmus
from support.raw_server import RawServer
from support.target import Target

SPEC_LINE = 3  # `openapi:` is the suite's third line


def _suite(spec: str) -> dict:
    return {"version": 1, "suite": "S", "openapi": spec, "flows": [{"name": "f", "steps": [
        {"name": "s", "request": {"url": "/v1/a"}, "assertions": [{"type": "openapi"}]}]}]}


def _spec(ref: str) -> dict:
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "servers": [{"url": "/v1"}],
            "paths": {"/a": {"get": {"responses": {"200": {"description": "ok", "content": {
                "application/json": {"schema": {"$ref": ref}}}}}}}}}


def _repo(tmp_path, spec_text: str | None = None, spec_name: str = "api/spec.json"):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[remote]\n\turl = https://x-access-token:ghs_secret@github.com/o/r\n")
    (root / "probes").mkdir()
    (root / "api").mkdir()
    if spec_text is not None:
        (root / spec_name).write_text(spec_text)
    (root / "probes" / "suite.yaml").write_text(yaml.safe_dump(_suite(f"../{spec_name}"), sort_keys=False))
    return root


def _load_error(root) -> str:
    with pytest.raises(ProbeError) as info:
        load_suites([root / "probes" / "suite.yaml"], root=root, environ={})
    errors = [d for d in info.value.diagnostics if d.severity == "error"]
    assert [(d.position.path, d.position.line, d.position.column) for d in errors] == [
        ("probes/suite.yaml", SPEC_LINE, 10)], [d.render() for d in errors]
    return errors[0].message


def test_a_spec_outside_the_repository_through_a_symlink_is_refused(tmp_path):
    (tmp_path / "outside.json").write_text(json.dumps(_spec("#/x")))
    root = _repo(tmp_path)
    os.symlink(tmp_path / "outside.json", root / "api" / "spec.json")
    assert "resolves outside the repository root" in _load_error(root)


def test_a_spec_whose_files_could_not_be_checked_after_its_load_is_read_again_not_served_from_memory(
        tmp_path, monkeypatch):
    """A spec is kept in memory while its files are unchanged; when they could not be looked at right after a
    load (refused or gone then: no fingerprint), a later load reads it again and refuses it, never serves it."""
    from litmus.openapi import document

    root = _repo(tmp_path, json.dumps(_spec("common.json#/A")))
    (root / "api" / "common.json").write_text(json.dumps({"A": {"type": "object"}}))
    with monkeypatch.context() as patched:
        patched.setattr(document, "_fingerprint", lambda _document: None)
        load_suites([root / "probes" / "suite.yaml"], root=root, environ={})
    (tmp_path / "outside.json").write_text((root / "api" / "common.json").read_text())
    (root / "api" / "common.json").unlink()
    os.symlink(tmp_path / "outside.json", root / "api" / "common.json")
    assert "resolves outside the repository root" in _load_error(root)


def test_a_spec_inside_the_git_folder_is_refused(tmp_path):
    root = _repo(tmp_path)
    (root / ".git" / "spec.json").write_text(json.dumps(_spec("#/x")))
    (root / "probes" / "suite.yaml").write_text(yaml.safe_dump(_suite("../.git/spec.json"), sort_keys=False))
    assert "inside .git/" in _load_error(root)


def test_a_spec_over_the_size_cap_is_refused_before_it_is_read(tmp_path):
    root = _repo(tmp_path)
    with open(root / "api" / "spec.json", "wb") as handle:
        handle.truncate(65 * 1024 * 1024)  # sparse: nothing is written, and nothing may be read
    assert "OpenAPI files are limited to 64 MiB" in _load_error(root)


@pytest.mark.parametrize(("ref", "reason"), [
    ("../../outside.json#/x", "resolves outside the repository root"),
    ("../.git/config", "inside .git/"),
    ("link.json#/x", "resolves outside the repository root"),
    ("file:///etc/passwd", "is not a relative file reference"),
    ("/etc/passwd", "is not a relative file reference"),
])
def test_a_ref_the_resolver_refuses_is_a_load_error_at_the_openapi_field(tmp_path, ref, reason):
    (tmp_path / "outside.json").write_text('{"x": {"type": "object"}}')
    root = _repo(tmp_path, json.dumps(_spec(ref)))
    os.symlink(tmp_path / "outside.json", root / "api" / "link.json")
    assert reason in _load_error(root)


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_url_ref_fails_the_load_with_zero_connections(tmp_path, scheme):
    with RawServer({}) as server:
        root = _repo(tmp_path, json.dumps(_spec(f"{scheme}://127.0.0.1:{server.port}/pet.json#/Pet")))
        done = litmus(root, "run", "probes/suite.yaml", "--base-url", "http://127.0.0.1:9", "--out", "out")
        assert done.returncode == 2, done.stdout + done.stderr
        assert "is not a relative file reference" in done.stdout + done.stderr
        assert server.connections == 0


def test_a_discriminator_mapping_to_a_url_is_an_error_of_the_check_with_zero_connections(tmp_path):
    with RawServer({}) as server, Target() as target:
        spec = _spec("#/components/schemas/Pet")
        spec["components"] = {"schemas": {"Pet": {
            "oneOf": [{"$ref": "#/components/schemas/Dog"}], "discriminator": {
                "propertyName": "kind", "mapping": {"Dog": f"http://127.0.0.1:{server.port}/dog.json"}}},
            "Dog": {"type": "object"}}}
        root = _repo(tmp_path, json.dumps(spec))
        target.json("/v1/a", {"kind": "Dog"})
        done = litmus(root, "run", "probes/suite.yaml", "--base-url", target.base_url, "--out", "out",
                      "--fail-on", "never")
        assert done.returncode == 0, done.stdout + done.stderr
        outcome = json.loads((root / "out" / "results.json").read_text())["suites"][0]["flow_runs"][0]["steps"][0][
            "assertions"][0]
        assert outcome["status"] == "error"
        assert "is not a relative file reference" in outcome["reason"]
        assert server.connections == 0


def test_the_spec_and_the_files_its_refs_name_are_the_suites_referenced_files(tmp_path):
    root = _repo(tmp_path, json.dumps(_spec("schemas/pet.yaml#/Pet")))
    (root / "api" / "schemas").mkdir()
    (root / "api" / "schemas" / "pet.yaml").write_text("Pet: {type: object}\n")
    (suite,) = load_suites([root / "probes" / "suite.yaml"], root=root, environ={}).suites
    assert suite.referenced_files == ("probes/suite.yaml", "api/spec.json", "api/schemas/pet.yaml")
