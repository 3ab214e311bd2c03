"""Building blocks for judge tests: configs pointing at the fake judge, assertions, contexts."""

from __future__ import annotations

from pathlib import Path

from litmus.assertions.base import EvalContext
from litmus.config import EscalationConfig, JudgeConfig, ProviderConfig
from litmus.errors import Position
from litmus.judges import JudgeService
from litmus.model import Assertion, Scenario, Suite, SuiteJudge
from litmus.response import Response
from support.fake_judge import API_KEY

ENV = {"JUDGE_KEY": API_KEY}
SECRET = "canary-secret-value-7f3a"


def config(judge, cache: Path, provider: str = "openai", **fields) -> JudgeConfig:
    base_url = judge.openai_base_url if provider == "openai" else judge.base_url
    return JudgeConfig(provider=provider, model=fields.pop("model", "judge-small"), base_url=base_url,
                       api_key_env="JUDGE_KEY", cache=cache, **fields)


def escalation(judge, provider: str = "anthropic", band: float = 10, model: str = "judge-strong") -> EscalationConfig:
    base_url = judge.openai_base_url if provider == "openai" else judge.base_url
    return EscalationConfig(band=band, to=ProviderConfig(provider, model, base_url, "JUDGE_KEY"))


def service(cfg: JudgeConfig) -> JudgeService:
    return JudgeService.from_config(cfg, environ=ENV)


def assertion(kind: str = "llm_rubric", line: int = 12, **params) -> Assertion:
    threshold = params.pop("threshold", None)
    select = params.pop("select", None)
    if kind in ("llm_rubric", "contextual_evaluation") and "rubric" not in params:
        params["rubric"] = "Mentions the order status"
    return Assertion(pos=Position("probes/orders.yaml", line, 9), type=kind, params=params, threshold=threshold,
                     select=select)


def suite(intent: str | None = "Customers get accurate answers about their own orders.",
          threshold: float | None = None) -> Suite:
    return Suite(pos=Position("probes/orders.yaml", 1, 1), name="Orders", file="probes/orders.yaml", intent=intent,
                 judge=SuiteJudge(pos=Position("probes/orders.yaml", 5, 3), threshold=threshold) if threshold else None)


SCENARIO = Scenario(pos=Position("probes/orders.yaml", 20, 7), id="delayed-order",
                    data={"order_id": 1042, "status": "delayed", "eta": "2026-12-03"},
                    reference_response="Order 1042 is delayed and should arrive on 3 December.")


def context(judge_service, body: str | bytes, *, scenario=SCENARIO, suite_=None, render=None) -> EvalContext:
    raw = body if isinstance(body, bytes) else body.encode()
    return EvalContext(
        response=Response(status=200, headers={"Content-Type": "application/json"}, body=raw, elapsed_ms=5.0),
        suite=suite_ or suite(), variables={}, scenario=scenario, render=render or (lambda value: value),
        redact=lambda text: text.replace(SECRET, "***"), judge=judge_service,
    )


def evaluate(assertion_, ctx):
    from litmus.assertions import module

    return module(assertion_.type).evaluate(assertion_, ctx)
