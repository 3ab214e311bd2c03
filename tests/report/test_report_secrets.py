"""Canary: results produced with redaction carry `***`; no format may show the secret itself."""

from __future__ import annotations

import pytest

from litmus.report import FORMATS, render

CANARY = "sk-canary-7f3a9c1e55"


@pytest.mark.parametrize("name", list(FORMATS))
def test_canary_secret_appears_in_no_format(result, name, monkeypatch):
    # The run had the secret in its environment; the results hold only the mask.
    monkeypatch.setenv("API_TOKEN", CANARY)
    text = render(name, result)
    assert CANARY not in text
    assert "***" in text  # the redacted header / query values are still shown as masked
