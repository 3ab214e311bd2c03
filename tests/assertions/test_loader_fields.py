"""The loader checks every predicate and new assertion field: type errors, groups and "did you mean",
each at its position. Templated operands pass the load and are type-checked at run time."""

from __future__ import annotations

import pytest

from litmus.errors import ProbeError
from litmus.load import load_suites

HEAD = """\
version: 1
suite: S
variables: {low: 3}
flows:
  - name: f
    steps:
      - name: s
        request: {url: /x}
        assertions:
"""  # the assertion's `- type:` is line 10, its first field line 11


INDENT = 10  # where the assertion's lines start in the file


def load(tmp_path, assertion: str):
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + "".join(" " * INDENT + line + "\n" for line in assertion.strip().splitlines()))
    return load_suites([path], root=tmp_path, environ={})


def errors(tmp_path, assertion: str) -> list[tuple[int, int, str]]:
    with pytest.raises(ProbeError) as info:
        load(tmp_path, assertion)
    return [(d.position.line, d.position.column, d.message) for d in info.value.diagnostics if d.severity == "error"]


@pytest.mark.parametrize("assertion, hint", [
    ("- type: json_path\n  path: $.a\n  not_expected: 3", "(write 'expected' with 'not: true')"),
    ("- type: header\n  header: X\n  ne: nginx", "(write 'expected' with 'not: true')"),
    ("- type: json_path\n  path: $.a\n  in: [1, 2]", "(write 'one_of')"),
    ("- type: cookie\n  cookie: sid\n  includes: x", "(write 'contains')"),
])
def test_another_tools_spelling_says_how_it_is_written_here(tmp_path, assertion, hint):
    ((line, column, message),) = errors(tmp_path, assertion)  # and no "needs exactly one of" besides
    assert (line, column) == (12, 3 + INDENT)
    assert message.endswith(hint), message


@pytest.mark.parametrize("assertion, line, column, message", [
    ("- type: header\n  header: Server\n  start_with: nginx", 12, 3,
     "unknown key 'start_with' in a header assertion (did you mean 'starts_with'?)"),
    ("- type: json_path\n  path: $.a\n  gte: '12'", 12, 8, "'gte' must be a number (or a template giving one)"),
    ("- type: json_path\n  path: $.a\n  between: [5, 1]", 12, 12, "'between' must be [low, high] with low <= high"),
    ("- type: json_path\n  path: $.a\n  between: [1]", 12, 12, "'between' must be a list [low, high] of two numbers"),
    ("- type: json_path\n  path: $.a\n  length: -1", 12, 11, "'length' must be a whole number 0 or more"),
    ("- type: json_path\n  path: $.a\n  approx: 3\n  tolerance: {relative: 1}", 13, 14,
     "'tolerance' must be a number (relative) or {abs: number}"),
    ("- type: json_path\n  path: $.a\n  gt: 3\n  tolerance: 0.1", 13, 3, "'tolerance' is only for 'approx'"),
    ("- type: json_path\n  path: $.a\n  gt: 3\n  lt: 5", 13, 3,
     "a json_path assertion needs exactly one of expected, matches"),
    ("- type: header\n  header: X\n  not: true", 10, 3, "a header assertion needs exactly one of"),
    ("- type: cookie\n  cookie: sid\n  not: true\n  secure: true", 12, 3,
     "'not' negates a predicate, and this cookie assertion gives none"),
    ("- type: cookie\n  cookie: sid", 10, 3, "a cookie assertion needs at least one of expected"),
    ("- type: cookie\n  cookie: sid\n  same_site: strict", 12, 14, "'same_site' must be one of Strict, Lax, None"),
    ("- type: json_path\n  path: $.a\n  one_of: shipped", 12, 11, "'one_of' must be a list (or a template giving one)"),
    ("- type: json_path\n  path: $.a\n  json_type: float", 12, 14, "'json_type' must be one of string, number"),
    ("- type: json_path\n  path: $.a\n  not: yes please\n  expected: 1", 12, 8, "'not' must be true or false"),
    ("- type: body\n  sha256: abc\n  size_lte: 3", 12, 3, "a body assertion needs exactly one of"),
    ("- type: body\n  size_gte: 1.5", 11, 13, "'size_gte' must be a whole number 0 or more"),
    ("- type: xpath\n  path: //li[\n  exists: true", 11, 9, "invalid XPath '//li['"),
    ("- type: xpath\n  path: '//li[{{ low }}]'\n  exists: true", 11, 9, "templates are not allowed in an XPath"),
    ("- type: xpath\n  path: //li\n  document: json\n  exists: true", 12, 13, "'document' must be one of html, xml"),
    ("- type: header\n  header: X\n  matches: '(unclosed'", 12, 12, "invalid regular expression"),
    ("- type: header\n  header: X\n  expected: '{{ nope }}'", 12, 14, "unknown template name 'nope'"),
    ("- type: python\n  function: checks.py", 11, 13, "'function' must be path/to/file.py:function_name"),
    ("- type: extract_match\n  variable: never\n  exists: true", 11, 13, "variable 'never' is not extracted"),
])
def test_a_bad_field_is_an_error_at_its_position(tmp_path, assertion, line, column, message):
    found = errors(tmp_path, assertion)
    assert any((ln, col) == (line, column + INDENT) and message in text for ln, col, text in found), found


@pytest.mark.parametrize("assertion", [
    "- type: json_path\n  path: $.a\n  gte: '{{ low }}'",
    "- type: json_path\n  path: $.a\n  between: ['{{ low }}', 10]",
    "- type: json_path\n  path: $.a\n  one_of: '{{ low }}'",
    "- type: json_path\n  path: $.a\n  approx: 3\n  tolerance: {abs: '{{ low }}'}",
    "- type: body\n  size_lte: '{{ low }}'\n  not: true",
    "- type: header\n  header: Server\n  exists: true\n  not: true",
    "- type: cookie\n  cookie: sid\n  secure: true\n  max_age_gte: '{{ low }}'",
    "- type: xpath\n  path: //a:item\n  namespaces: {a: 'urn:x'}\n  length: 3",
])
def test_templated_and_combined_operands_load(tmp_path, assertion):
    (suite,) = load(tmp_path, assertion).suites
    (checked,) = suite.flows[0].steps[0].assertions
    assert checked.params  # loaded with its fields, checked at run time


def test_the_editor_schema_is_current():
    from pathlib import Path

    from litmus.load.json_schema import render

    shipped = Path(__file__).resolve().parents[2] / "src" / "litmus" / "schemas" / "probe-suite.schema.json"
    assert shipped.read_text() == render()
