"""The one-pass event builder (`litmus.load.source._EventBuilder`) gives exactly what composing nodes first
gives: the same Items, spans and diagnostics, or the same positioned error; under both YAML loaders."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from litmus.load import source
from litmus.load.diagnostics import Collector
from support.fuzz import fuzz_settings

pytestmark = pytest.mark.usefixtures("yaml_loader")


def shape(item: source.Item | None):
    """The tree with every span (and every key's span): what the loader's messages point at."""
    if item is None:
        return None
    span = (item.span.pos.line, item.span.pos.column, item.span.length)
    if isinstance(item.value, dict):
        return span, {name: (shape(item.keys[name]), shape(value)) for name, value in item.value.items()}
    if isinstance(item.value, list):
        return span, [shape(value) for value in item.value]
    return span, type(item.value).__name__, item.value


def parse(text: str, way: str):
    """`way` "events": the event builder, failing if it hands the document on; "nodes": composed first."""
    collector = Collector()
    with pytest.MonkeyPatch.context() as patch:
        if way == "nodes":
            patch.setattr(source._EventBuilder, "document", lambda self: (_ for _ in ()).throw(source._NeedsNodes))
        else:
            patch.setattr(source, "_compose", lambda *_: pytest.fail("the event builder handed the document on"))
        try:
            item = source.parse_yaml(text.encode("utf-8"), "s.yaml", collector)
        except source.SourceError as exc:
            return "error", exc.span.pos.line, exc.span.pos.column, exc.span.length, exc.message
    return shape(item), [(d.position.line, d.position.column, d.message) for d in collector.diagnostics]


DOCUMENTS = {
    "scalars": "a: 1\nb: 2.5\nc: true\nd: null\ne: ~\nf: 2026-12-03\ng: '7'\nh: |\n  two\n  lines\ni: 0x1f\n",
    "flow and block": "flows: [{name: a, steps: [1, 2]}, {name: b}]\nlist:\n- x\n- {y: [z]}\n",
    "multi-line spans": "a: {b: 1,\n  c: 2}\nd: [1,\n 2]\n",
    "duplicate key": "a: 1\nb: {x: [deep, {y: 1}]}\na: {z: !!int nope}\nc: 3\n",
    "non-scalar keys": "? [a, b]\n: value\n? {k: v}\n: [1, 2]\nc: 1\n",
    "unsupported tags": "a: !!binary aGk=\nb: !custom {x: 1}\nc: !!set {x}\nd: !!omap [x: 1]\ne: !!str 12\n",
    "invalid scalars": "a: !!int twelve\nb: !!float x\nc: !!bool maybe\nd: !!null x\n",
    "explicit non-specific": "a: ! 12\nb: ! [1]\n",
    "empty document": "",
    "empty value": "---\n",
    "comment only": "# nothing\n",
    "semantic then syntax error": "a: !!int x\nb: [1, 2\n",
    "syntax error": "a: 'open\nb: 1\n",
    "tab": "a:\n\tb: 1\n",
    "too deep": "a: " + "[" * (source.MAX_DEPTH + 1) + "]" * (source.MAX_DEPTH + 1) + "\n",
    "too deep in a key": "? " + "[" * (source.MAX_DEPTH + 1) + "]" * (source.MAX_DEPTH + 1) + "\n: 1\n",
    "at the limit": "a: " + "[" * (source.MAX_DEPTH - 1) + "]" * (source.MAX_DEPTH - 1) + "\n",
    "unicode": "name: caf\u00e9 \U0001f600\nother: [\u00e9\u00e9, x]\n",
}


@pytest.mark.parametrize("text", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_event_builder_equals_composing_nodes(text):
    assert parse(text, "events") == parse(text, "nodes")


@pytest.mark.parametrize("text", ["a: &x 1\nb: *x\n", "a: &x [1]\n", "a: {<<: {b: 1}}\n", "a: 1\n---\nb: 2\n"],
                         ids=["alias", "anchor", "merge key", "two documents"])
def test_anchors_merge_keys_and_more_documents_are_composed(text):
    with pytest.raises(pytest.fail.Exception, match="handed the document on"):
        parse(text, "events")


@fuzz_settings(150)
@given(st.text(alphabet="{}[]:-!|>'\"#\n ,?abc1\t", max_size=60))
def test_any_text_parses_the_same_both_ways(text):
    with pytest.MonkeyPatch.context() as patch:  # documents with anchors go the node way: compare them too
        patch.setattr(source, "_compose", source._compose)
        events = parse_allowing_nodes(text)
    assert events == parse(text, "nodes")


def parse_allowing_nodes(text: str):
    collector = Collector()
    try:
        item = source.parse_yaml(text.encode("utf-8"), "s.yaml", collector)
    except source.SourceError as exc:
        return "error", exc.span.pos.line, exc.span.pos.column, exc.span.length, exc.message
    return shape(item), [(d.position.line, d.position.column, d.message) for d in collector.diagnostics]


@fuzz_settings(150)
@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)),
                    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner,
                                                                                        max_size=4)),
                    max_leaves=25),
       st.booleans())
def test_any_document_parses_the_same_both_ways(document, flow_style):
    text = yaml.safe_dump(document, allow_unicode=True, default_flow_style=flow_style)
    assert parse(text, "events") == parse(text, "nodes")


@pytest.mark.parametrize("way", ["events", "nodes"])
def test_a_value_over_several_lines_is_underlined_to_the_end_of_its_first_line(way):
    # The builders keep each line's length, not the lines: measured as str.splitlines cuts them (CRLF too).
    (document, tree), diagnostics = parse("a: {b: 1,\r\n  c: 2}\nd: [1,\n 22]\n", way)
    assert diagnostics == []
    assert document == (1, 1, len("a: {b: 1,"))
    assert tree["a"][1][0] == (1, 4, len("{b: 1,"))
    assert tree["d"][1][0] == (3, 4, len("[1,"))
