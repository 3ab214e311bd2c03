"""What a green check means, through `litmus run` in a subprocess against real servers on 127.0.0.1.

Nothing that was not checked passes: unevaluated LLM-based assertions (no judge, spent budget) fail
their suite with a reason; `--no-judge` / `judge: {provider: none}` is the explicit opt-out; filters
that leave a suite out leave it out of every output; a critical assertion no judge can overrule;
an exception inside a step is that step's outcome, never a lost flow run.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from litmus.results import load_results
from support.cli import litmus, write_judge_config
from support.fake_judge import API_KEY

POLITE = """\
version: 1
suite: Polite
flows:
  - name: Greets
    steps:
      - name: hello
        request: {url: /hello}
        assertions:
          - type: status_code
            expected: 200
          - type: tone
            tone: polite
          - type: llm_rubric
            rubric: greets the user
          - type: answers_question
            question: how are you?
"""

DETERMINISTIC = """\
version: 1
suite: Plain
flows:
  - name: Status
    steps:
      - name: hello
        request: {url: /hello}
        assertions:
          - type: status_code
            expected: 200
  - name: Other
    steps:
      - name: hello again
        request: {url: /hello}
        assertions:
          - type: contains
            value: Go away
"""


@pytest.fixture
def project(tmp_path, target):
    target.text("/hello", "Go away.")
    (tmp_path / "probes").mkdir()
    return tmp_path


def write(project: Path, name: str, text: str) -> None:
    (project / "probes" / name).write_text(text)


def results(project: Path):
    return load_results(project / "litmus-report" / "results.json")  # validates against the schema


def test_without_a_judge_llm_assertions_fail_their_suite_saying_how_many_and_why(project, target):
    write(project, "polite.yaml", POLITE)
    done = litmus(project, "run", "--base-url", target.base_url)
    assert done.returncode == 1
    reason = ("3 LLM-based assertions were not evaluated: no judge configured: add a judge: block to litmus.yaml (or "
              "--judge-provider / LITMUS_JUDGE_PROVIDER) and set its API key variable, or replay recorded verdicts "
              "with --judge-provider replay; --no-judge runs deterministic checks only (docs/judges.md)")
    assert reason in done.stdout  # the default terminal output says it, with the ways to a judge
    assert done.stdout.splitlines()[-1].startswith("FAILED: 0 of 1 suite passed")
    suite = results(project).suites[0]
    assert (suite.verdict, suite.reason, suite.pass_rate) == ("failed", reason, 100.0)
    skipped = [o for *_, o in results(project).iter_outcomes() if o.status == "skipped"]
    assert [o.judge_skip for o in skipped] == ["no_judge"] * 3


@pytest.mark.parametrize("how", ["flag", "config", "environment"])
def test_no_judge_is_the_explicit_opt_out_skipped_counted_and_said(project, target, how):
    write(project, "polite.yaml", POLITE)
    argv, env = ["run", "--base-url", target.base_url], {}
    if how == "flag":
        argv.append("--no-judge")
    elif how == "config":
        (project / "litmus.yaml").write_text("judge:\n  provider: none\n")
    else:
        env["LITMUS_JUDGE_PROVIDER"] = "none"
    done = litmus(project, *argv, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith(
        "PASSED: 1 of 1 suite passed (3 LLM-based assertions skipped: judging turned off)")
    suite = results(project).suites[0]
    assert suite.verdict == "passed"
    assert suite.reason.startswith("3 LLM-based assertions skipped: judging turned off")
    assert {o.judge_skip for *_, o in results(project).iter_outcomes() if o.type != "status_code"} == {"disabled"}


@pytest.mark.parametrize(("intent", "reason"), [
    (False, "2 LLM-based assertions were not evaluated: the judge budget (max_calls) ran out"),
    (True, "2 LLM-based assertions and 1 Intent Evaluation were not evaluated: the judge budget (max_calls) ran out"),
])
def test_a_spent_judge_budget_fails_the_suite_instead_of_passing_it(project, target, fake_judge, intent, reason):
    text = POLITE.replace("suite: Polite\n", "suite: Polite\nintent: a polite greeting\n") if intent else POLITE
    write(project, "polite.yaml", text)
    write_judge_config(project, fake_judge.openai_base_url, concurrency=1, max_calls=1)
    done = litmus(project, "run", "--base-url", target.base_url, env={"JUDGE_KEY": API_KEY})
    assert done.returncode == 1
    assert len(fake_judge.calls()) == 1
    assert reason in done.stdout
    assert results(project).suites[0].reason == reason


def test_filters_leave_other_suites_out_of_every_output_and_a_filter_matching_nothing_exits_2(project, target):
    write(project, "plain.yaml", DETERMINISTIC)
    write(project, "polite.yaml", POLITE)
    done = litmus(project, "run", "--base-url", target.base_url, "--flow", "Status")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Polite" not in done.stdout
    assert [s.name for s in results(project).suites] == ["Plain"]
    assert [fr.flow for s in results(project).suites for fr in s.flow_runs] == ["Status"]
    for report in (project / "litmus-report").iterdir():
        assert "Polite" not in report.read_text(), report.name
    both_named = ["--suite", "Polite", "--suite", "Plain", "--flow", "Status"]
    for argv in (["--flow", "Nope"], ["--suite", "Nope"], both_named):
        refused = litmus(project, "run", "--base-url", target.base_url, *argv)
        assert refused.returncode == 2, argv
        assert "Nope" in refused.stderr or "suite 'Polite' has no flow named 'Status'" in refused.stderr


JUDGED_WITH_INTENT = """\
version: 1
suite: Guarded
intent: the user gets a friendly answer
flows:
  - name: Injected
    steps:
      - name: ask
        request: {url: /hello}
        assertions:
          - type: status_code
            expected: 201
            critical: CRITICAL
          - type: not_contains
            value: Go away
"""


@pytest.fixture
def judged(project, fake_judge):
    write_judge_config(project, fake_judge.openai_base_url)
    fake_judge.default.score = 100  # the intent judge was talked into a pass
    return project


def test_a_critical_assertion_fails_the_flow_run_whatever_the_intent_judge_says(judged, target, fake_judge):
    write(judged, "guarded.yaml", JUDGED_WITH_INTENT.replace("CRITICAL", "true"))
    done = litmus(judged, "run", "--base-url", target.base_url, env={"JUDGE_KEY": API_KEY})
    assert done.returncode == 1
    flow_run = results(judged).suites[0].flow_runs[0]
    assert flow_run.intent_evaluation.status == "passed"  # still run and reported
    assert flow_run.intent_evaluation.score == 100
    assert flow_run.status == "failed"
    assert flow_run.reason.startswith("critical assertion status_code (line 10, step 'ask') failed")
    assert results(judged).suites[0].verdict == "failed"
    assert "cannot overrule it" in done.stdout
    assert fake_judge.calls(), "the intent judge was asked"


def test_without_critical_the_intent_decides_and_the_run_records_what_it_overruled(judged, target):
    write(judged, "guarded.yaml", JUDGED_WITH_INTENT.replace("CRITICAL", "false"))
    done = litmus(judged, "run", "--base-url", target.base_url, env={"JUDGE_KEY": API_KEY})
    assert done.returncode == 0, done.stdout + done.stderr
    flow_run = results(judged).suites[0].flow_runs[0]
    assert (flow_run.status, flow_run.overruled_failures, flow_run.reason) == ("passed", 2, None)
    assert "passed by intent despite 2 failed checks" in done.stdout


def test_critical_must_be_a_boolean_with_its_position(project):
    write(project, "guarded.yaml", JUDGED_WITH_INTENT.replace("CRITICAL", "yes please"))
    done = litmus(project, "validate")
    assert done.returncode == 2
    assert "probes/guarded.yaml:12:23: error: 'critical' must be true or false" in done.stderr


def test_an_exception_inside_a_step_is_that_steps_outcome_and_the_flow_run_keeps_its_steps(project, target):
    target.json("/flat", {"a": {"b": 1}})
    deep = b"[" * 100_000 + b"]" * 100_000
    target.route("/deep", lambda req: (200, {"Content-Type": "application/json"}, deep))
    write(project, "hostile.yaml", textwrap.dedent("""\
        version: 1
        suite: Hostile
        flows:
          - name: Parent
            steps:
              - name: parent
                request: {url: /flat}
                extract:
                  up: {json_path: "$.`parent`"}
                assertions:
                  - type: status_code
                    expected: 200
              - name: after
                request: {url: /flat}
          - name: Deep
            steps:
              - name: deep
                request: {url: /deep}
                assertions:
                  - type: status_code
                    expected: 200
                  - type: json_path
                    path: $.x
                    exists: false
        """))
    done = litmus(project, "run", "--base-url", target.base_url)
    assert done.returncode == 1
    parent, deep_run = results(project).suites[0].flow_runs
    assert [s.status for s in parent.steps] == ["error", "skipped"]
    assert parent.steps[0].error.startswith("extract 'up' (line 9) could not be evaluated: AssertionError")
    assert parent.steps[0].response.status == 200 and parent.steps[0].assertions[0].status == "passed"
    assert [o.status for o in deep_run.steps[0].assertions] == ["passed", "error"]
    assert "nested deeper than 200 levels" in deep_run.steps[0].assertions[1].reason
    assert "internal error" not in done.stdout
    assert "probes/hostile.yaml:6 Parent › parent › error: extract 'up'" in done.stdout



def test_merged_shards_keep_the_runners_verdict_on_unevaluated_checks(project, target):
    write(project, "polite.yaml", POLITE.replace("  - name: Greets", "  - name: Greets\n    runs: 4"))
    for k in (1, 2):
        done = litmus(project, "run", "--base-url", target.base_url, "--shard", f"{k}/2", "--out", f"shard-{k}")
        assert done.returncode == 1
    done = litmus(project, "merge", "shard-1/results.json", "shard-2/results.json", "-o", "merged.json")
    assert done.returncode == 0, done.stderr
    suite = load_results(project / "merged.json").suites[0]
    assert (suite.verdict, suite.pass_rate) == ("failed", 100.0)
    assert suite.reason.startswith("12 LLM-based assertions were not evaluated: no judge configured: add a judge: ")
