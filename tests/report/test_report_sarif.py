from __future__ import annotations

import json
import re

import pytest
from jsonschema import Draft4Validator
from report_fixtures import SCHEMAS

from litmus.report import render
from litmus.report.findings import collect


def sarif(result, **options):
    return json.loads(render("sarif", result, **options))


def test_valid_against_the_oasis_schema(result):
    schema = json.loads((SCHEMAS / "sarif-2.1.0.json").read_text("utf-8"))
    errors = list(Draft4Validator(schema).iter_errors(sarif(result)))
    assert errors == []


def test_within_github_rules(result):
    log = sarif(result)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    # No category of its own: upload-sarif's `category:` applies (it fills only an id the file lacks).
    assert "automationDetails" not in run
    assert run["tool"]["driver"]["informationUri"] == "https://github.com/litmus-lab/litmus"
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids))
    assert {"json_path", "tone", "transport_error", "intent_evaluation", "needs_review"} <= set(ids)
    for rule in rules:
        assert 0 < len(rule["shortDescription"]["text"]) <= 1024
        assert 0 < len(rule["fullDescription"]["text"]) <= 1024
        assert rule["help"]["text"] and len(rule["name"]) <= 255
        assert len(rule["properties"]["tags"]) <= 10
    fingerprints = set()
    for res in run["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"]
        assert len(res["locations"]) == 1
        location = res["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert not location["artifactLocation"]["uri"].startswith(("/", "file:"))
        assert location["region"]["startLine"] >= 1 and location["region"]["startColumn"] >= 1
        assert "primaryLocationLineHash" not in res["partialFingerprints"]
        fingerprints.add(res["partialFingerprints"]["litmusFinding/v1"])
    assert len(fingerprints) == len(run["results"])


def test_one_result_per_finding_with_documented_levels(result):
    run = sarif(result)["runs"][0]
    by_rule = {}
    for res in run["results"]:
        by_rule.setdefault(res["ruleId"], []).append(res)
    # Every finding, then the step warning (a request that does not conform to its OpenAPI operation).
    assert len(run["results"]) == len(collect(result)) + 1 == 9
    assert [r["level"] for r in by_rule["request_nonconforming"]] == ["warning"]
    assert [r["level"] for r in by_rule["transport_error"]] == ["error"]
    assert [r["level"] for r in by_rule["needs_review"]] == ["warning"]
    assert [r["level"] for r in by_rule["json_path"]] == ["error", "warning"]  # failed; could not be evaluated
    # The key point comes first: which path, what was expected, what came back.
    failed = by_rule["json_path"][0]
    assert failed["message"]["text"].startswith('json_path failed at $.order.status: expected "delayed", got "shipped"')
    assert failed["properties"]["litmus"]["runs"] == [0, 1]
    region = failed["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (32, 11)
    spaced = by_rule["schema"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert spaced == "probes/users%20api.yaml"


def test_fingerprints_do_not_depend_on_line_numbers(result):
    before = {r["partialFingerprints"]["litmusFinding/v1"] for r in sarif(result)["runs"][0]["results"]}
    for suite in result.suites:
        for flow_run in suite.flow_runs:
            flow_run.line += 3
            for step in flow_run.steps:
                step.line += 3
                for outcome in step.assertions:
                    outcome.line += 3
    after = {r["partialFingerprints"]["litmusFinding/v1"] for r in sarif(result)["runs"][0]["results"]}
    assert before == after


@pytest.mark.parametrize(("category", "automation_id"), [
    ("api-probes/staging/", "api-probes/staging/"),
    ("api-probes/staging", "api-probes/staging/"),  # upload-sarif appends the `/` the same way
    ("/language:http", "/language:http/"),
    ("litmus production", "litmus production/"),
])
def test_sarif_category_sets_automation_details(result, category, automation_id):
    run = sarif(result, sarif_category=category)["runs"][0]
    assert run["automationDetails"] == {"id": automation_id}


@pytest.mark.parametrize(("category", "said"), [
    ("", "must not be empty"),
    ("   ", "must not be empty"),
    ("staging\n::warning::x", "a control character (U+000A) at character 8"),
    ("a\x1b[31mb", "a control character (U+001B) at character 2"),
    ("a\u202eb", "an invisible formatting character (U+202E) at character 2"),
    ("a\u2028b", "a line separator (U+2028) at character 2"),
    (" staging", "must not start or end with a space"),
])
def test_a_sarif_category_that_is_not_printable_text_is_refused(result, category, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        render("sarif", result, sarif_category=category)


def test_rules_have_names_for_people_distinct_from_their_ids(result):
    """SARIF 3.49.7: `name` is for people and must differ from the opaque `id` (the Multitool's SARIF1001
    warns when they are equal, ignoring case); "JsonPath" for "json_path" would only spell the id again."""
    rules = sarif(result)["runs"][0]["tool"]["driver"]["rules"]
    names = [rule["name"] for rule in rules]
    assert len(set(names)) == len(names)
    for rule in rules:
        assert re.fullmatch(r"(?:[A-Z][a-z]+|XPath|Json)+", rule["name"]), rule["name"]
        assert rule["name"].lower() != rule["id"].replace("_", "").lower(), rule
