"""The predicate rules on their own (pure functions): the corners a table of HTTP cases cannot reach."""

from __future__ import annotations

import pytest

from litmus.assertions.predicates import Predicate, PredicateError, build


def check(params, value, *, text_values=False):
    return build(params, lambda v: v, text_values=text_values).test(value)


@pytest.mark.parametrize("params, value, text_values, fails", [
    ({"gt": 0}, True, False, "expected a number > 0, got boolean true"),      # a boolean is not a number
    ({"gt": 0}, float("nan"), False, "expected a number > 0, got number NaN"),
    ({"approx": 0}, 0.0, False, None),                                         # relative around 0: only 0
    ({"approx": 0}, 1e-9, False, "expected ≈ 0 (±1%), got 1e-09 (off by 1e-09)"),
    ({"approx": 100, "tolerance": {"abs": 0}}, 100, False, None),
    ({"approx": 100, "tolerance": {"rel": 0.1}}, 109, False, None),
    ({"gte": 10}, " 12.50 ", True, None),                                      # numeric text, spaces trimmed
    ({"gte": 10}, "1e3", True, None),
    ({"gte": 10}, "12 apples", True, 'expected a number >= 10, got string "12 apples"'),
    ({"expected": 1}, 1.0, False, None),                                       # JSON: 1 equals 1.0
    ({"expected": True}, 1, False, "expected boolean true, got integer 1"),
    ({"contains": 1}, "1042", False, 'expected to contain 1, got "1042"'),      # a number is no substring
    ({"contains": {"a": 1}}, [{"a": 1}], False, None),                         # deep element equality
    ({"json_type": "integer"}, 3.0, False, None),
    ({"json_type": "number"}, 3, False, None),
    ({"matches": "^4"}, 42, True, None),                                       # text values: JSON text
    ({"matches": "^4"}, 42, False, "expected a string matching /^4/, got integer 42"),
    ({"length": 0}, {}, False, None),
    ({"one_of": [1, "1"]}, "1", False, None),
])
def test_rules(params, value, text_values, fails):
    assert check(params, value, text_values=text_values) == fails


@pytest.mark.parametrize("params, problem", [
    ({"gt": "{{ x }}"}, "'gt' must be a number, got string \"abc\" (rendered from '{{ x }}')"),
    ({"between": ["{{ x }}", 3]}, "'between' must be a number"),
    ({"length": "{{ x }}"}, "'length' must be a number"),
    ({"one_of": "{{ x }}"}, "'one_of' must be a list"),
    ({"starts_with": "{{ n }}"}, "'starts_with' must be a string, got array of 1 item"),
    ({"approx": 1, "tolerance": "{{ x }}"}, "'tolerance' must be a number"),
])
def test_a_rendered_operand_of_the_wrong_type_is_refused(params, problem):
    values = {"{{ x }}": "abc", "{{ n }}": [1]}

    def render(value):
        if isinstance(value, list):
            return [render(item) for item in value]
        return values.get(value, value) if isinstance(value, str) else value

    with pytest.raises(PredicateError) as info:
        build(params, render)
    assert str(info.value).startswith(problem)


def test_a_rendered_numeric_string_is_a_number_and_a_negative_length_is_refused():
    assert build({"gte": "{{ x }}"}, lambda v: "12.5").operand == 12.5
    with pytest.raises(PredicateError):
        build({"length": "{{ x }}"}, lambda v: -1)
    with pytest.raises(PredicateError):
        build({"between": ["{{ a }}", "{{ b }}"]}, lambda v: [5, 1])


def test_negation_reads_expected_not_and_never_rescues_a_kind_mismatch():
    negated = Predicate("matches", "ship", negated=True)
    assert negated.test("shipped") == 'expected not to match /ship/, got "shipped"'
    assert negated.test("delayed") is None
    assert negated.test(3) == "expected a string not matching /ship/, got integer 3"
    assert negated.expected == "not to match /ship/"
