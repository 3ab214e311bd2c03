"""`pricing:` in litmus.yaml: read with the judge settings, every problem positioned, and matched to a model
exactly, then by its longest prefix (`litmus.usage.price_key`)."""

from __future__ import annotations

import argparse

import pytest

from litmus.config import add_config_arguments, resolve_config
from litmus.errors import ProbeError
from litmus.usage import Price, price_key


def _resolve(root, text: str):
    (root / "litmus.yaml").write_text(text)
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    return resolve_config(parser.parse_args([]), {}, root)


def test_pricing_is_read_beside_the_judge(tmp_path):
    config = _resolve(tmp_path, "judge: {provider: replay, model: m}\npricing:\n"
                                "  gpt-4o: {input_per_mtok: 2.5, output_per_mtok: 10}\n"
                                "  claude-3-5-haiku: {input_per_mtok: 0.8, output_per_mtok: 4}\n")
    assert config.pricing == {"gpt-4o": Price(2.5, 10), "claude-3-5-haiku": Price(0.8, 4)}
    assert config.judge.model == "m"


@pytest.mark.parametrize(("text", "message", "where"), [
    ("pricing: [gpt-4o]\n", "`pricing` must be a mapping", "litmus.yaml:1:10"),
    ("pricing:\n  gpt-4o: 2.5\n", "pricing.gpt-4o must be {input_per_mtok, output_per_mtok}", "litmus.yaml:2:11"),
    ("pricing:\n  gpt-4o: {input_per_mtok: 2.5}\n", "pricing.gpt-4o needs output_per_mtok", "litmus.yaml:2:3"),
    ("pricing:\n  gpt-4o: {input_per_mtok: -1, output_per_mtok: 1}\n", "pricing.gpt-4o.input_per_mtok: expected a "
     "number from 0", "litmus.yaml:2:28"),
    ("pricing:\n  gpt-4o: {input_per_mtok: .nan, output_per_mtok: 1}\n", "expected a number", "litmus.yaml:2:28"),
    ("pricing:\n  gpt-4o: {input_per_mtok: '1', output_per_mtok: 1}\n", "expected a number of USD", "litmus.yaml:2:28"),
    ("pricing:\n  gpt-4o: {input_per_mtok: 1, output_per_mtk: 1}\n", "unknown pricing setting 'output_per_mtk'",
     "litmus.yaml:2:31"),
    ("prices: {}\n", "unknown config section 'prices' (known: judge, pricing)", "litmus.yaml:1:1"),
])
def test_bad_pricing_is_an_error_with_its_position(tmp_path, text, message, where):
    with pytest.raises(ProbeError) as raised:
        _resolve(tmp_path, text)
    found = [(str(d.position), d.message) for d in raised.value.diagnostics]
    assert any(position == where and message in text for position, text in found), found


@pytest.mark.parametrize(("model", "key"), [
    ("gpt-4o", "gpt-4o"),                         # exact
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),    # the longest prefix, not gpt-4o
    ("gpt-4o-2024-08-06", "gpt-4o"),
    ("gpt-4", None),                              # an entry longer than the model is no prefix of it
    ("GPT-4o", None),                             # names are matched as written
    (None, None),
])
def test_a_model_is_priced_exactly_then_by_its_longest_prefix(model, key):
    pricing = {"gpt-4o": Price(2.5, 10), "gpt-4o-mini": Price(0.15, 0.6), "claude": Price(3, 15)}
    assert price_key(model, pricing) == key
