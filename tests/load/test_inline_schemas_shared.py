"""Equal inline schemas of a suite are one object in the model (a suite repeats its schema in every step,
and each copy was kept for the whole run); a schema equal only once its keys are sorted stays its own, and
every step is still checked against its own schema."""

from __future__ import annotations

from pathlib import Path

from litmus.load import load_suites
from litmus.run.runner import RunOptions, run_suites
from support.target import Target

SUITE = """\
version: 1
suite: Shared
flows:
  - name: f
    steps:
      - name: first
        request: {url: /item}
        assertions: [{type: schema, schema: {type: object, required: [id], properties: {id: {type: integer}}}}]
      - name: again
        request: {url: /item}
        assertions: [{type: schema, schema: {type: object, required: [id], properties: {id: {type: integer}}}}]
      - name: reordered
        request: {url: /item}
        assertions: [{type: schema, schema: {required: [id], type: object, properties: {id: {type: integer}}}}]
      - name: stricter
        request: {url: /item}
        assertions: [{type: schema, schema: {type: object, required: [id], properties: {id: {type: string}}}}]
"""


def test_equal_inline_schemas_are_one_object_and_each_step_keeps_its_own_check(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "shared.yaml").write_text(SUITE)
    (suite,) = load_suites([tmp_path / "shared.yaml"], root=tmp_path, environ={}).suites
    first, again, reordered, stricter = (step.assertions[0].params["schema"] for step in suite.flows[0].steps)
    assert again is first
    assert reordered is not first and reordered == first  # the same keys in another order: its own object
    assert stricter is not first
    with Target() as target:
        target.json("/item", {"id": 7})
        result = run_suites([suite], RunOptions(base_url=target.base_url), environ={})
    (flow_run,) = result.to_dict()["suites"][0]["flow_runs"]
    assert [step["assertions"][0]["status"] for step in flow_run["steps"]] == ["passed", "passed", "passed", "failed"]
