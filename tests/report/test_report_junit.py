from __future__ import annotations

import re

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


def test_messages_do_not_repeat_the_type_reporters_show_before_them(result):
    """dorny/test-reporter shows a failure as `type + ": " + message` (as Java's `Class: message`): a message
    starting with its type read "schema: schema: 2 schema violations"."""
    root = etree.fromstring(render("junit", result).encode("utf-8"))
    shown = {}
    for element in root.iter("failure", "error"):
        kind, message = element.get("type"), element.get("message")
        assert not message.startswith(f"{kind}:") and not message.startswith(f"{kind} "), (kind, message)
        shown.setdefault(element.getparent().get("name"), []).append(f"{kind}: {message}")
    assert shown["list [run 1 of 1]"] == ["schema: user list schema: 2 schema violations",
                                          "json_path: could not be evaluated: the response body is not JSON: "
                                          "Expecting value at 1:1"]
    assert shown["ask [scenario delayed-order, run 1 of 2]"] == [
        "json_path: 1 node does not equal the expected value",
        "tone: polite reply: score 40 below threshold 75",
        "consistent_with_scenario_data: the response contradicts the scenario data"]
    assert "needs_review: polite reply needs human review: tier 2 score 73 inside the band (65-85)" in \
        shown["ask [scenario delayed-order, run 2 of 2]"]


def test_every_testcase_has_a_time(result):
    """Reporters show a testcase's duration from `time` (and Ant's JUnit XSD requires it); junit-xml leaves a
    zero time out, so an Intent Evaluation (and a step that got no response) had none."""
    root = etree.fromstring(render("junit", result).encode("utf-8"))
    cases = list(root.iter("testcase"))
    assert cases and all(re.fullmatch(r"\d+\.\d{3}", case.get("time", "")) for case in cases), \
        [case.get("name") for case in cases if "time" not in case.attrib]
    intents = {case.get("name"): case.get("time") for case in cases if case.get("name").startswith("intent")}
    judged = result.suites[0].flow_runs[0].intent_evaluation.judge
    assert intents["intent evaluation [scenario delayed-order, run 1 of 2]"] == \
        f"{sum(tier.latency_ms for tier in judged.tiers) / 1000:.3f}"
    assert intents["intent evaluation [run 1 of 1]"] == "0.000"  # deterministic: no judge call
    no_response = root.find(".//testcase/error[@type='transport_error']/..")
    assert no_response.get("time") == "0.000"
    for suite in root.iter("testsuite"):
        assert float(suite.get("time")) == pytest.approx(sum(float(c.get("time")) for c in suite.iter("testcase")),
                                                        abs=0.001 * len(list(suite.iter("testcase"))))


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
    assert failure.get("message").startswith("missing ")
    assert "after" in root.find(".//testcase[@name='list [run 1 of 1]']/system-out").text
