"""The OpenAPI fixtures are the registry packages' files, unchanged: SOURCES records each one's sha256."""

import hashlib

from support.openapi_specs import FIXTURES, sources, spec_bytes


def test_every_fixture_matches_its_recorded_sha256():
    rows = sources()
    assert {row["file"] for row in rows} == {p.name for p in FIXTURES.iterdir() if p.name != "SOURCES"}
    for row in rows:
        name = row["file"].removesuffix(".xz")
        assert hashlib.sha256(spec_bytes(name)).hexdigest() == row["sha256"], row["file"]
        assert row["package"].startswith("@") and row["version"] and row["licence"] == "MIT" and row["path"]
