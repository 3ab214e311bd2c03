"""Flow runs against a real HTTP target: templating, extraction, on_failure, retry, judges, results."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from build import check, extraction, flow, request, retry, scenario, step, suite

from litmus.results import IntentEvaluation, JudgeTotals, RunResult, validate
from litmus.run.runner import RunOptions, plan, run_suites
from litmus.verdict import fails


def run(suite_list, target, environ=None, **options):
    result = run_suites(suite_list, RunOptions(base_url=target.base_url, **options), environ=environ or {})
    data = result.to_dict()
    assert validate(data) == []
    assert RunResult.from_dict(data).to_dict() == data
    return result


def outcomes(result):
    return [(o.type, o.status, o.reason) for _, _, _, o in result.iter_outcomes()]


def test_templating_extraction_and_cookies_within_a_flow_run(target):
    target.route("/login", lambda req: (200, {"Set-Cookie": "sid=abc; Path=/", "X-Trace-Id": "T-9",
                                              "Content-Type": "application/json"},
                                        b'{"token": "tok-1", "count": 3}'))
    target.route("/me", lambda req: (200, {"Content-Type": "application/json"}, json.dumps(
        {"cookie": req.headers.get("Cookie"), "body": req.json(), "q": req.query["n"][0]}).encode()))
    s = suite("S", flow(
        "F",
        step("login", request("/login", "POST"), check("status_code", expected=200),
             extract=(extraction("token", "json_path", "$.token"), extraction("count", "json_path", "$.count"),
                      extraction("trace", "header", "x-trace-id"), extraction("code", "status"),
                      extraction("num", "regex", r'"count": (\d+)', 1))),
        step("me", request("/me", "POST", json={"t": "{{ token }}", "n": "{{ count }}", "s": "{{ scenario.data.x }}",
                                                 "label": "run {{ run.index }} of {{ v }}"},
                           query={"n": "{{ num }}"}),
             check("json_path", path="$.cookie", expected="sid=abc"),
             check("json_path", path="$.body", expected={"t": "tok-1", "n": 3, "s": [1, 2], "label": "run 0 of var"}),
             check("json_path", path="$.q", expected="3"),
             check("extract_match", variable="trace", expected="T-9"),
             check("extract_match", variable="code", expected=200)),
    ), scenarios=(scenario("one", {"x": [1, 2]}),), variables={"v": "var"})
    result = run([s, ], target)
    assert [o[1] for o in outcomes(result)] == ["passed"] * 6, outcomes(result)
    fr = result.suites[0].flow_runs[0]
    assert fr.scenario == "one" and fr.intent_evaluation.status == "passed"
    assert fr.steps[0].extracted == {"token": "tok-1", "count": 3, "trace": "T-9", "code": 200, "num": "3"}
    assert result.verdict == "passed" and result.suites[0].pass_rate == 100


def test_cookies_never_cross_flow_runs(target):
    target.route("/set", lambda req: (200, {"Set-Cookie": "sid=1; Path=/"}, b"ok"))
    target.route("/get", lambda req: (200, {}, (req.headers.get("Cookie") or "none").encode()))
    s = suite("S", flow("F", step("set", request("/set")),
                        step("get", request("/get"), check("contains", value="sid=1")), runs=3),
              flow("G", step("get", request("/get"), check("contains", value="none"))))
    result = run([s], target, concurrency=1)
    assert all(o[1] == "passed" for o in outcomes(result)), outcomes(result)


def test_on_failure_modes(target):
    target.json("/a", {"x": 1})
    s = suite("S", flow(
        "F",
        step("one", request("/a"),
             check("json_path", path="$.x", expected=2),  # continue
             check("status_code", expected=500, on_failure="stop_request"),
             check("contains", value="x")),
        step("two", request("/a"),
             check("status_code", expected=200),
             check("json_path", path="$.x", expected=9, on_failure="stop_flow"),
             check("contains", value="x")),
        step("three", request("/a"), check("status_code", expected=200)),
    ))
    result = run([s], target)
    steps = result.suites[0].flow_runs[0].steps
    assert [st.status for st in steps] == ["failed", "failed", "skipped"]
    assert [o.status for o in steps[0].assertions] == ["failed", "failed", "skipped"]
    assert steps[0].assertions[2].reason == "status_code (line 40) did not pass; on_failure: stop_request"
    assert [o.status for o in steps[1].assertions] == ["passed", "failed", "skipped"]
    assert steps[2].assertions[0].status == "skipped"
    assert "on_failure: stop_flow" in steps[2].assertions[0].reason
    assert len(target.requests) == 2  # step three was never sent
    assert result.suites[0].flow_runs[0].intent_evaluation.status == "failed"
    assert result.verdict == "failed"


def test_a_raising_evaluator_is_an_error_outcome_and_others_are_unaffected(target):
    target.json("/a", {"x": 1})
    s = suite("S", flow("F", step("one", request("/a"),
                                  check("json_path", path="$.x", expected="{{ nope }}"),
                                  check("json_path", path="$.x", expected=1))))
    result = run([s], target)
    assert [(o[1]) for o in outcomes(result)] == ["error", "passed"]
    assert "unknown template name 'nope'" in outcomes(result)[0][2]


def test_unknown_template_in_request_is_a_step_error_naming_the_position(target):
    s = suite("S", flow("F", step("one", request("/a?x={{ missing }}"), check("status_code", expected=200)),
                        step("two", request("/a"))))
    result = run([s], target)
    one, two = result.suites[0].flow_runs[0].steps
    assert one.status == "error" and one.error.startswith("probes/test.yaml:31:1: unknown template name 'missing'")
    assert two.status == "skipped"
    assert target.requests == []


def test_retry_polls_until_deterministic_assertions_pass(target):
    calls = []

    def ready(req):
        calls.append(1)
        return 200, {"Content-Type": "application/json"}, b'{"ready": %s}' % (b"true" if len(calls) >= 3 else b"false")
    target.route("/ready", ready)
    s = suite("S", flow("F", step("poll", request("/ready"), check("json_path", path="$.ready", expected=True),
                                  retry=retry(5))))
    result = run([s], target)
    st = result.suites[0].flow_runs[0].steps[0]
    assert st.status == "passed" and st.attempts == 3
    target.json("/never", {"ready": False})
    s = suite("S", flow("F", step("poll", request("/never"), check("json_path", path="$.ready", expected=True),
                                  retry=retry(2))))
    st = run([s], target).suites[0].flow_runs[0].steps[0]
    assert st.status == "failed" and st.attempts == 2


class FakeJudge:
    """Just enough of a JudgeService for the runner: an executor, evaluate(), intents, totals."""

    def __init__(self, score=90):
        self.executor = ThreadPoolExecutor(4)
        self.score = score
        self.calls = []
        self.lock = threading.Lock()

    def evaluate_assertion(self, assertion, ctx):
        from litmus.assertions._common import outcome

        with self.lock:
            self.calls.append((assertion.type, ctx.response.text))
        status = "passed" if self.score >= 75 else "failed"
        result = outcome(assertion, status, f"judge says {self.score}")
        result.score, result.threshold = self.score, 75
        return result

    def evaluate_intent(self, suite, flow_run, scenario, unmasked=None):
        return IntentEvaluation(status="passed", method="judge", reason="intent met", score=88, threshold=75)

    def totals(self):
        return JudgeTotals(calls=len(self.calls))


@pytest.fixture
def fake_judge(monkeypatch):
    judge = FakeJudge()
    # The judges helper's evaluate() calls ctx.judge.evaluate_assertion; stand in for the modules here.
    from litmus import assertions

    for name in ("llm_rubric", "consistent_with_scenario_data"):
        monkeypatch.setattr(assertions.module(name), "evaluate",
                            lambda a, ctx: ctx.judge.evaluate_assertion(a, ctx), raising=False)
    yield judge
    judge.executor.shutdown()


def test_llm_assertions_skip_without_judge_and_without_scenario(target):
    target.text("/chat", "hello")
    s = suite("S", flow("F", step("ask", request("/chat"), check("llm_rubric", rubric="polite"),
                                  check("consistent_with_scenario_data"), check("contains", value="hello"))))
    result = run([s], target)
    assert outcomes(result) == [
        ("llm_rubric", "skipped", "no judge configured"),
        ("consistent_with_scenario_data", "skipped",
         "scenario-aware assertion, and this flow run has no scenario (the suite has no context)"),
        ("contains", "passed", 'body contains "hello"'),
    ]
    assert result.suites[0].flow_runs[0].intent_evaluation.method == "deterministic"


def test_judge_path_order_intent_totals_and_retry_runs_judges_once(target, fake_judge):
    calls = []

    def chat(req):
        calls.append(1)
        return 200, {}, b"ready" if len(calls) >= 2 else b"wait"
    target.route("/chat", chat)
    s = suite("S", flow("F", step("ask", request("/chat"), check("llm_rubric", rubric="polite"),
                                  check("contains", value="ready"), check("consistent_with_scenario_data"),
                                  retry=retry(3))),
              scenarios=(scenario("sc", {"a": 1}),), intent="be nice")
    result = run_suites([s], RunOptions(base_url=target.base_url), judge=fake_judge, environ={})
    assert [o[:2] for o in outcomes(result)] == [("llm_rubric", "passed"), ("contains", "passed"),
                                                 ("consistent_with_scenario_data", "passed")]
    assert sorted(fake_judge.calls) == [("consistent_with_scenario_data", "ready"), ("llm_rubric", "ready")]
    ie = result.suites[0].flow_runs[0].intent_evaluation
    assert (ie.method, ie.status, ie.score) == ("judge", "passed", 88)
    assert result.judge.calls == 2
    assert validate(result.to_dict()) == []


def test_llm_stop_request_waits_for_the_judge(target, fake_judge):
    fake_judge.score = 10
    target.text("/chat", "meh")
    s = suite("S", flow("F", step("ask", request("/chat"), check("llm_rubric", rubric="x", on_failure="stop_request"),
                                  check("llm_rubric", rubric="y"))))
    result = run_suites([s], RunOptions(base_url=target.base_url), judge=fake_judge, environ={})
    assert [o[1] for o in outcomes(result)] == ["failed", "skipped"]
    assert len(fake_judge.calls) == 1


def many_suites():
    flows = [flow(f"F{i}", step("s", request(f"/n/{i}"), check("json_path", path="$.i", expected=i)), runs=3)
             for i in range(8)]
    return [suite("A", *flows[:5]), suite("B", *flows[5:], scenarios=(scenario("x"), scenario("y")))]


def echo_target(target):
    import random
    import time

    def handler(req):
        time.sleep(random.random() / 200)
        return 200, {"Content-Type": "application/json"}, json.dumps({"i": int(req.path.rsplit("/", 1)[1])}).encode()
    for i in range(8):
        target.route(f"/n/{i}", handler)


def identity(result):
    return [(s.name, f.flow, f.scenario, f.run_index, f.intent_evaluation.status)
            for s in result.suites for f in s.flow_runs]


def test_results_are_ordered_deterministically_whatever_the_concurrency(target):
    echo_target(target)
    one = run(many_suites(), target, concurrency=1)
    eight = run(many_suites(), target, concurrency=8)
    assert identity(one) == identity(eight)
    assert len(identity(one)) == 5 * 3 + 3 * 3 * 2
    assert all(i[-1] == "passed" for i in identity(one))


def test_union_of_shards_equals_the_unsharded_run_and_shards_are_balanced(target):
    echo_target(target)
    full = identity(run(many_suites(), target))
    shards = [run(many_suites(), target, shard=(k, 3)) for k in (1, 2, 3)]
    parts = [identity(r) for r in shards]
    assert sorted(sum(parts, [])) == sorted(full)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert shards[1].run.shard == "2/3"
    # stable: the same shard twice is the same subset
    assert [p.key for p in plan(many_suites(), RunOptions(shard=(2, 3)))] == \
           [p.key for p in plan(many_suites(), RunOptions(shard=(2, 3)))]


def test_pass_threshold_and_filters(target):
    target.json("/ok", {"v": 1})
    target.json("/bad", {"v": 2})
    good = step("s", request("/ok"), check("json_path", path="$.v", expected=1))
    bad = step("s", request("/bad"), check("json_path", path="$.v", expected=1))
    s = suite("S", flow("A", good, runs=3), flow("B", bad), pass_threshold=75)
    result = run([s], target)
    assert (result.suites[0].pass_rate, result.suites[0].verdict) == (75.0, "passed")
    assert fails(result, "suite") is False and fails(result, "assertion") is True
    assert fails(result, "never") is False
    only_b = run([s, suite("T", flow("A", good))], target, suites=("S",), flows=("B",))
    assert [x.name for x in only_b.suites] == ["S"] and identity(only_b) == [("S", "B", None, 0, "failed")]
    empty = run([s], target, flows=("nope",))
    # Left out by the filter: absent, not "passed"; a run that checked nothing does not pass.
    assert (empty.suites, empty.verdict) == ([], "failed")


def test_secrets_are_redacted_everywhere(target):
    canary = "CANARY-s3cr3t-value"
    target.route("/echo", lambda req: (200, {"Content-Type": "application/json", "X-Echo": req.headers["X-Key"]},
                                       json.dumps({"got": req.headers["X-Key"], "q": req.query["k"][0]}).encode()))
    s = suite("S", flow("F", step("e", request("/echo", headers={"X-Key": "{{ secrets.KEY }}"},
                                               query={"k": "{{ secrets.KEY }} &x"}),
                                  check("json_path", path="$.got", expected="nope"),
                                  check("contains", value="{{ secrets.KEY }}"),
                                  extract=(extraction("got", "json_path", "$.got"),))))
    result = run_suites([s], RunOptions(base_url=target.base_url), environ={"KEY": canary})
    text = json.dumps(result.to_dict())
    assert canary not in text and "CANARY-s3cr3t" not in text
    assert "***" in text
    assert target.requests[0].headers["X-Key"] == canary  # the target got the real value
    st = result.suites[0].flow_runs[0].steps[0]
    assert st.extracted == {"got": "***"} and st.response.headers["X-Echo"] == "***"
    assert "***" in st.request.url
