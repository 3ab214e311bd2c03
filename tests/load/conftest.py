"""The loader's tests run under both YAML loaders: libyaml's (what users get when PyYAML has it) and
PyYAML's pure-Python one (its fallback); both must give the same diagnostics at the same file:line:col."""

from __future__ import annotations

import pytest
import yaml

from litmus.load import source

LOADERS = {"libyaml": getattr(yaml, "CSafeLoader", None), "pure": yaml.SafeLoader}


@pytest.fixture(params=sorted(LOADERS))
def yaml_loader(request, monkeypatch):
    """Forces `litmus.load.source` onto one YAML loader for the test."""
    loader = LOADERS[request.param]
    if loader is None:
        pytest.skip("this PyYAML is built without libyaml")
    monkeypatch.setattr(source, "_Loader", loader)
    return loader
