"""Test builders for probe-model objects, with positions like the loader gives them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litmus.errors import Position
from litmus.model import (
    MISSING,
    Assertion,
    Context,
    Extraction,
    Flow,
    Request,
    Retry,
    Scenario,
    Step,
    Suite,
)

FILE = "probes/test.yaml"


def pos(line: int, column: int = 1) -> Position:
    return Position(FILE, line, column)


def check(type_: str, line: int = 40, *, name: str | None = None, on_failure: str = "continue",
          **params: Any) -> Assertion:
    return Assertion(pos=pos(line, 13), type=type_, name=name, on_failure=on_failure, params=params)


def request(url: str = "/", method: str = "GET", *, json: Any = MISSING, timeout_ms: float | None = None,
            **fields: Any) -> Request:
    field_pos = {"timeout_ms": pos(1)} if timeout_ms is not None else {}
    return Request(pos=pos(31), field_pos=field_pos, method=method, url=url, json=json,
                   timeout_ms=timeout_ms or 30_000, **fields)


def step(name: str, req: Request, *assertions: Assertion, extract: tuple[Extraction, ...] = (),
         retry: Retry | None = None, line: int = 30) -> Step:
    return Step(pos=pos(line, 9), name=name, request=req, extract=extract, retry=retry, assertions=assertions)


def extraction(name: str, kind: str, expr: str = "", group: int | str = 0) -> Extraction:
    return Extraction(pos=pos(35), name=name, kind=kind, expr=expr, group=group)


def flow(name: str, *steps: Step, runs: int = 1, line: int = 20) -> Flow:
    return Flow(pos=pos(line, 5), name=name, runs=runs, steps=steps)


def suite(name: str, *flows: Flow, scenarios: tuple[Scenario, ...] = (), intent: str | None = None,
          pass_threshold: float = 100, variables: dict | None = None, base_url: str | None = None) -> Suite:
    context = Context(pos=pos(10), name="ctx", scenarios=scenarios) if scenarios else None
    return Suite(pos=pos(1), name=name, file=FILE, abs_path=Path.cwd() / FILE, intent=intent,
                 pass_threshold=pass_threshold, variables=variables or {}, context=context, flows=flows,
                 base_url=base_url)


def scenario(id_: str, data: Any = None, reference: str | None = None) -> Scenario:
    return Scenario(pos=pos(12), id=id_, data=data, reference_response=reference)


def retry(attempts: int, interval_ms: float = 10) -> Retry:
    return Retry(pos=pos(36), attempts=attempts, interval_ms=interval_ms)
