from __future__ import annotations

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped
from lxml import etree
from report_fixtures import SCHEMAS

from litmus.report import render
from litmus.results import AssertionOutcome, RequestExcerpt, ResponseExcerpt


def strip_file_and_line(xml: bytes) -> etree._ElementTree:
    tree = etree.ElementTree(etree.fromstring(xml))
    for case in tree.iter("testcase"):
        case.attrib.pop("file", None)
        case.attrib.pop("line", None)
    return tree


def assert_valid_jenkins(xml: str):
    schema = etree.XMLSchema(etree.parse(str(SCHEMAS / "junit-jenkins-xunit-10.xsd")))
    tree = strip_file_and_line(xml.encode("utf-8"))
    assert schema.validate(tree), schema.error_log


def test_valid_against_the_binding_xsd(result):
    assert_valid_jenkins(render("junit", result))


def expected_counts(result):
    """Per suite: testcases, and those with a failure / error / skipped, computed from the results."""
    counts = []
    for suite in result.suites:
        tests = failures = errors = skipped = 0
        for flow_run in suite.flow_runs:
            for step in flow_run.steps:
                tests += 1
                statuses = {o.status for o in step.assertions}
                failures += bool(statuses & {"failed", "needs_review"})
                errors += step.status == "error" or "error" in statuses
                skipped += step.status == "skipped"
            tests += 1  # the flow run's Intent Evaluation; a deterministic one restates its steps' failures
            intent = flow_run.intent_evaluation
            failures += intent.status == "needs_review" or (intent.status == "failed" and intent.method == "judge")
            errors += flow_run.intent_evaluation.status == "error"
        counts.append((suite.name, tests, failures, errors, skipped))
    return counts


def test_junitparser_counts_equal_the_results(result, tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(render("junit", result), encoding="utf-8")
    xml = JUnitXml.fromfile(str(path))
    read = []
    for suite in xml:
        cases = list(suite)
        assert suite.tests == len(cases)
        read.append((suite.name, suite.tests, suite.failures, suite.errors, suite.skipped))
        # Attributes agree with the testcases themselves.
        assert suite.failures == sum(any(isinstance(r, Failure) for r in c.result) for c in cases)
        assert suite.errors == sum(any(isinstance(r, Error) for r in c.result) for c in cases)
        assert suite.skipped == sum(any(isinstance(r, Skipped) for r in c.result) for c in cases)
    assert read == expected_counts(result)
    assert read == [("Checkout assistant", 12, 4, 1, 0), ("Users API", 3, 1, 1, 1)]
    # One <failure> per failing assertion, typed by rule.
    failures = [r for suite in xml for case in suite for r in case.result if isinstance(r, Failure)]
    failing = [o for *_, o in result.iter_outcomes() if o.status in ("failed", "needs_review")]
    intents = [r for s in result.suites for r in s.flow_runs
               if r.intent_evaluation.status == "failed" and r.intent_evaluation.method == "judge"]
    assert len(failures) == len(failing) + len(intents)


def test_testcases_carry_repository_relative_file_and_line(result):
    root = etree.fromstring(render("junit", result).encode("utf-8"))
    case = root.find(".//testcase[@name='ask [scenario delayed-order, run 1 of 2]']")
    assert case.get("classname") == "Checkout assistant.Ask about an order"
    assert (case.get("file"), case.get("line")) == ("probes/checkout.yaml", "23")
    failure = case.find("failure[@type='json_path']")
    assert '$.order.status | "delayed" | "shipped"' in failure.text
    for element in root.iter():
        if "time" in element.attrib:
            whole, _, decimals = element.get("time").partition(".")
            assert whole.isdigit() and len(decimals) <= 3


def test_a_deterministic_intent_evaluation_does_not_repeat_its_steps_failure(result):
    root = etree.fromstring(render("junit", result).encode("utf-8"))
    intent = root.find(".//testcase[@name='intent evaluation [run 1 of 1]']")
    assert intent.find("failure") is None and intent.find("error") is None
    assert "intent not achieved (deterministic)" in intent.find("system-out").text
    assert root.find(".//testcase[@name='list [run 1 of 1]']/failure") is not None  # the failure, once


@pytest.mark.parametrize("nasty", ["\x00\x1b[31m\x07", "]]>", "<![CDATA[x]]>", "\ud800", "\ufffe"])
def test_characters_xml_cannot_hold_do_not_break_it(result, nasty):
    step = result.suites[1].flow_runs[0].steps[0]
    step.response = ResponseExcerpt(200, 1.0, body=f"before {nasty} after")
    step.request = RequestExcerpt("GET", f"https://t.example/?q={nasty}")
    step.assertions.append(AssertionOutcome("contains", "failed", f"missing {nasty}", 20, 11))
    xml = render("junit", result)
    assert_valid_jenkins(xml)
    root = etree.fromstring(xml.encode("utf-8"))
    failure = root.find(".//failure[@type='contains']")
    assert failure.get("message").startswith("contains: missing ")
    assert "after" in root.find(".//testcase[@name='list [run 1 of 1]']/system-out").text
