"""`whole_template` (shared by loader and runner) tells one template from several: the examples use both."""

from litmus.templating import whole_template


def test_one_template_is_whole():
    ref = whole_template(" {{ scenario.data.order_id }} ")
    assert ref is not None and ref.name == "scenario.data.order_id"


def test_two_templates_are_not_one():
    assert whole_template("{{ scenario.id }}-{{ run.index }}") is None
    assert whole_template("{{ a }}{{ b }}") is None


def test_text_around_a_template_is_not_whole():
    assert whole_template("order {{ order_id }}") is None
