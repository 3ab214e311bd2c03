"""Hurl / Step CI parity through `litmus run` (issue 26): the text and date filters, `skip:` on flows and
steps, a templated `status_code` expectation and a flow's own scenarios. Each has a run that passes and one
that fails (or errors) naming why."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta

from litmus.results import load_results
from support.cli import litmus
from support.target import Target


def run(tmp_path, suite: str, base_url: str, *extra: str):
    probes = tmp_path / "probes"
    probes.mkdir(exist_ok=True)
    (probes / "s.yaml").write_text(textwrap.dedent(suite))
    proc = litmus(tmp_path, "run", "probes", "--base-url", base_url, "--out", "out",
                  "--format", "markdown,html,junit", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    return proc, load_results(tmp_path / "out" / "results.json")


def test_text_and_date_filters_render_what_they_say(tmp_path):
    with Target() as target:
        target.json("/ok", {"ok": True})
        proc, results = run(tmp_path, """\
            version: 1
            suite: Filters
            variables: {csv: "a, b, c", loc: "/orders?id=1042&x=1", born: "2024-02-29T12:00:00Z"}
            flows:
              - name: f
                steps:
                  - name: s
                    request:
                      method: POST
                      url: /ok
                      json:
                        second: "{{ csv | split(', ') | nth(1) }}"
                        dashed: "{{ csv | replace(', ', '-') }}"
                        id: "{{ loc | regex('id=(\\\\d+)') | int }}"
                        whole: "{{ loc | regex('/[a-z]+') }}"
                        day: "{{ born | date('%Y-%m-%d') }}"
                        epoch_day: "{{ vars.epoch | date('%d.%m.%Y') }}"
                        next_day: "{{ born | add_seconds(86400) }}"
                        tomorrow: "{{ gen.now | add_seconds(86400) | date('%Y-%m-%d') }}"
                        later: "{{ vars.epoch | add_seconds(60) }}"
            """, target.base_url, "--var", "epoch=1700000000")
        assert proc.returncode == 0, proc.stdout
        body = target.requests[0].json()
    tomorrow = {(datetime.now(UTC) + timedelta(days=1, seconds=s)).strftime("%Y-%m-%d") for s in (-60, 0)}
    assert body.pop("tomorrow") in tomorrow
    assert body == {"second": "b", "dashed": "a-b-c", "id": 1042, "whole": "/orders", "day": "2024-02-29",
                    "epoch_day": "14.11.2023", "next_day": "2024-03-01T12:00:00Z", "later": 1700000060}
    assert results.suites[0].verdict == "passed"


def test_a_filter_that_cannot_apply_is_an_error_of_the_step_never_a_pass(tmp_path):
    with Target() as target:
        target.json("/ok", {"ok": True})
        proc, results = run(tmp_path, """\
            version: 1
            suite: Filters
            variables: {csv: "a,b"}
            flows:
              - name: past the end
                steps: [{name: s, request: {url: "/ok?x={{ csv | split(',') | nth(5) }}"}}]
              - name: no match
                steps: [{name: s, request: {url: "/ok?x={{ csv | regex('[0-9]+') }}"}}]
              - name: absurd date
                steps: [{name: s, request: {url: "/ok?x={{ vars.big | date('%Y') }}"}}]
              - name: past year 9999
                steps: [{name: s, request: {url: "/ok?x={{ vars.end | add_seconds(86400) }}"}}]
            """, target.base_url, "--var", "big=1e300", "--var", "end=9999-12-31T23:59:59Z")
    assert proc.returncode == 1
    errors = {run.flow: run.steps[0].error for run in results.suites[0].flow_runs}
    assert [run.steps[0].status for run in results.suites[0].flow_runs] == ["error"] * 4
    assert "index 5 is past the end of a list of 2" in errors["past the end"]
    assert "does not match" in errors["no match"]
    assert "is not an ISO-8601 date-time or epoch seconds" in errors["absurd date"]
    assert "past year 9999" in errors["past year 9999"]
    assert results.suites[0].verdict == "failed"
    assert "Traceback" not in proc.stderr


def test_validate_names_a_bad_filter_argument_at_its_position(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "s.yaml").write_text(textwrap.dedent("""\
        version: 1
        suite: S
        variables: {a: x}
        flows:
          - name: f
            steps:
              - {name: s, request: {url: "/x/{{ a | regex('([a') }}"}}
              - {name: t, request: {url: "/x/{{ a | replace('x') }}"}}
              - {name: u, request: {url: "/x/{{ a | nth(-1) }}"}}
              - {name: v, request: {url: "/x/{{ a | add_seconds('1d') }}"}}
        """))
    proc = litmus(tmp_path, "validate", "probes")
    assert proc.returncode == 2
    out = proc.stdout + proc.stderr
    assert "s.yaml:7:38: error: filter 'regex': invalid regular expression" in out
    assert "s.yaml:8:38: error: filter 'replace' takes 2 arguments, got 1" in out
    assert "s.yaml:9:38: error: filter 'nth': the index must be a whole number from 0" in out
    assert "s.yaml:10:38: error: filter 'add_seconds': the seconds must be a finite number" in out


SKIPPING = """\
    version: 1
    suite: Skips
    flows:
      - name: later
        skip: "waits for the v2 endpoint"
        steps: [{name: s, request: {url: /ok}, assertions: [{type: status_code, expected: 200}]}]
      - name: half
        steps:
          - {name: sent, request: {url: /ok}, assertions: [{type: status_code, expected: 200}]}
          - {name: not sent, skip: true, request: {url: /never}}
"""


def test_skip_on_a_flow_and_a_step_is_reported_skipped_with_its_reason(tmp_path):
    with Target() as target:
        target.json("/ok", {"ok": True})
        proc, results = run(tmp_path, SKIPPING, target.base_url)
        assert [r.path for r in target.requests] == ["/ok"]
    suite = results.suites[0]
    later, half = suite.flow_runs
    assert later.skipped == "skip: waits for the v2 endpoint" and later.steps[0].status == "skipped"
    assert later.steps[0].assertions[0].status == "skipped"
    assert half.skipped is None and half.status == "passed"
    assert [s.status for s in half.steps] == ["passed", "skipped"]
    assert half.steps[1].error == "skip: true in the probe"
    # Left out of the pass rate, and counted in every headline.
    assert suite.pass_rate == 100 and suite.verdict == "passed" and proc.returncode == 0
    assert "(1 flow run and 1 step skipped)" in proc.stdout
    assert "1 flow run and 1 step skipped" in (tmp_path / "out" / "comment.md").read_text()
    assert "1 flow run and 1 step skipped" in (tmp_path / "out" / "report.html").read_text()
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert 'message="not run: skip: waits for the v2 endpoint"' in junit
    assert 'message="skip: true in the probe"' in junit


def test_a_suite_whose_flow_runs_are_all_skipped_is_not_passed(tmp_path):
    with Target() as target:
        target.json("/ok", {"ok": True})
        proc, results = run(tmp_path, """\
            version: 1
            suite: Skips
            flows:
              - {name: a, skip: true, steps: [{name: s, request: {url: /ok}}]}
              - name: b
                steps: [{name: s, skip: "flaky", request: {url: /ok}}]
            """, target.base_url)
        assert target.requests == []
    suite = results.suites[0]
    assert [r.skipped for r in suite.flow_runs] == ["skip: true in the probe", "every step has skip:"]
    assert suite.verdict == "failed" and "nothing checked" in suite.reason
    assert proc.returncode == 1 and "(2 flow runs skipped)" in proc.stdout


def test_validate_refuses_a_skip_that_is_not_true_or_a_reason(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "s.yaml").write_text(textwrap.dedent("""\
        version: 1
        suite: S
        flows:
          - name: f
            skip: 3
            steps: [{name: s, skip: "", request: {url: /x}}]
        """))
    proc = litmus(tmp_path, "validate", "probes")
    assert proc.returncode == 2
    out = proc.stdout + proc.stderr
    assert "s.yaml:5:11: error: 'skip' must be true, false or a reason (non-empty text), not the number 3" in out
    assert "s.yaml:6:29: error: 'skip' must be true, false or a reason (non-empty text), not the string ''" in out


STATUS = """\
    version: 1
    suite: Status
    flows:
      - name: f
        steps:
          - name: s
            request: {url: /created}
            assertions:
              - {type: status_code, expected: "{{ vars.want }}"}
              - {type: status_code, expected: ["{{ vars.other | int }}", 201]}
"""


def test_a_templated_status_expectation_is_rendered_then_read_as_a_status(tmp_path):
    with Target() as target:
        target.json("/created", {"id": 1}, status=201)
        proc, results = run(tmp_path, STATUS, target.base_url, "--var", "want=2xx", "--var", "other=204")
        assert proc.returncode == 0, proc.stdout
        assert [o.status for o in results.suites[0].flow_runs[0].steps[0].assertions] == ["passed", "passed"]
        proc, results = run(tmp_path, STATUS, target.base_url, "--var", "want=200", "--var", "other=204")
    failed = results.suites[0].flow_runs[0].steps[0].assertions[0]
    assert proc.returncode == 1 and failed.status == "failed" and "expected status 200, got 201" in failed.reason


def test_a_templated_status_that_cannot_render_or_read_is_an_error_naming_the_value(tmp_path):
    with Target() as target:
        target.json("/created", {"id": 1}, status=201)
        proc, results = run(tmp_path, STATUS, target.base_url, "--var", "want=created", "--var", "other=none")
    unreadable, unrendered = results.suites[0].flow_runs[0].steps[0].assertions
    assert proc.returncode == 1 and results.suites[0].verdict == "failed"
    assert unreadable.status == "error"
    assert unreadable.reason.startswith('\'expected\' "{{ vars.want }}" rendered to "created": \'expected\' must be')
    assert unrendered.status == "error"
    assert unrendered.reason.startswith(
        '\'expected\' ["{{ vars.other | int }}", 201] could not be rendered: filter \'int\'')


OWN_SCENARIOS = """\
    version: 1
    suite: Orders
    context:
      scenarios: [{id: suite-a, data: {order: 1}}, {id: suite-b, data: {order: 2}}]
    flows:
      - name: shared
        steps:
          - name: s
            request: {url: "/orders/{{ scenario.data.order }}"}
            assertions: [{type: status_code, expected: 200}]
      - name: own
        scenarios: [{id: inline, data: {order: 7, status: 200}}]
        scenarios_file: cases.csv
        steps:
          - name: s
            request: {url: "/orders/{{ scenario.data.order }}"}
            assertions: [{type: status_code, expected: "{{ scenario.data.status }}"}]
"""


def test_a_flow_with_its_own_scenarios_runs_them_instead_of_the_suites(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "cases.csv").write_text("id,order,status\nfile-row,8,200\n")
    with Target() as target:
        for order in (1, 2, 7, 8):
            target.json(f"/orders/{order}", {"order": order})
        proc, results = run(tmp_path, OWN_SCENARIOS, target.base_url)
        assert sorted(r.path for r in target.requests) == ["/orders/1", "/orders/2", "/orders/7", "/orders/8"]
    assert proc.returncode == 0, proc.stdout
    runs = [(r.flow, r.scenario, r.status) for r in results.suites[0].flow_runs]
    assert runs == [("shared", "suite-a", "passed"), ("shared", "suite-b", "passed"),
                    ("own", "inline", "passed"), ("own", "file-row", "passed")]


def test_a_flows_own_scenario_that_fails_fails_under_its_id(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "cases.csv").write_text("id,order,status\nfile-row,8,201\n")
    with Target() as target:
        for order in (1, 2, 7, 8):
            target.json(f"/orders/{order}", {"order": order})
        proc, results = run(tmp_path, OWN_SCENARIOS, target.base_url)
    assert proc.returncode == 1
    failed = [(r.flow, r.scenario) for r in results.suites[0].flow_runs if r.status != "passed"]
    assert failed == [("own", "file-row")]
    assert results.suites[0].verdict == "failed"


def test_validate_positions_a_flows_scenarios_file_and_checks_its_templates_against_it(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "s.yaml").write_text(textwrap.dedent("""\
        version: 1
        suite: S
        context:
          scenarios: [{id: a, data: {sku: X1}}]
        flows:
          - name: outside
            scenarios_file: ../../etc/passwd
            steps: [{name: s, request: {url: /x}}]
          - name: own
            scenarios: [{id: b, data: {order: 7}}]
            steps: [{name: s, request: {url: "/o/{{ scenario.data.sku }}"}}]
        """))
    proc = litmus(tmp_path, "validate", "probes")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2
    assert "s.yaml:7:21: error:" in out and "outside" in out.split("s.yaml:7:21: error:")[1].splitlines()[0]
    assert "s.yaml:11:42: error: 'scenario.data.sku': scenario 'b' has no data.sku" in out
