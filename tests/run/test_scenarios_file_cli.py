"""`context.scenarios_file` through `litmus run`: CSV, JSONL, YAML and JSON rows become scenarios,
and a bad row is an error naming the file, row and column."""

from __future__ import annotations

import json
import os

import pytest

from litmus.cli import main
from litmus.results import load_results
from support.target import Target

SUITE = """\
version: 1
suite: Orders
context:
  name: orders
  scenarios:
    - {id: inline, data: {order_id: "7", items: [{sku: i}]}}
  scenarios_file: data/cases.{ext}
flows:
  - name: ask
    steps:
      - name: ask
        request:
          method: POST
          url: "/order/{{ scenario.data.order_id | urlencode }}"
          json: {id: "{{ scenario.id }}", first_sku: "{{ scenario.data.items.0.sku }}",
                 items: "{{ scenario.data.items }}"}
        assertions: [{type: status_code, expected: 200}]
"""

ROWS = {
    "csv": 'id,order_id,items:json,reference_response\n'
           'a,1042,"[{""sku"": ""x""}]",Order 1042 is delayed.\n'
           'b,"10 43","[{""sku"": ""y""}, {""sku"": ""z""}]",\n',
    "jsonl": '{"id": "a", "order_id": "1042", "items": [{"sku": "x"}], '
             '"reference_response": "Order 1042 is delayed."}\n'
             '\n{"id": "b", "order_id": "10 43", "items": [{"sku": "y"}, {"sku": "z"}]}\n',
    "yaml": '- {id: a, order_id: "1042", items: [{sku: x}], reference_response: Order 1042 is delayed.}\n'
            '- {id: b, order_id: "10 43", items: [{sku: y}, {sku: z}]}\n',
    "json": json.dumps([{"id": "a", "order_id": "1042", "items": [{"sku": "x"}],
                         "reference_response": "Order 1042 is delayed."},
                        {"id": "b", "order_id": "10 43", "items": [{"sku": "y"}, {"sku": "z"}]}]),
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probes" / "data").mkdir(parents=True)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for name in [n for n in os.environ if n.startswith("LITMUS_")]:
        monkeypatch.delenv(name)
    with Target() as target:
        for path in ("/order/7", "/order/1042", "/order/10%2043"):
            target.json(path, {"ok": True})
        yield tmp_path, target


@pytest.mark.parametrize("ext", list(ROWS))
def test_every_row_is_a_scenario_after_the_inline_ones(project, ext):
    tmp_path, target = project
    (tmp_path / "probes" / "orders.yaml").write_text(SUITE.replace("{ext}", ext))
    (tmp_path / "probes" / "data" / f"cases.{ext}").write_text(ROWS[ext])
    assert main(["run", "--base-url", target.base_url, "--format", "summary", "-q"]) == 0
    received = sorted((r.path, json.dumps(r.json(), sort_keys=True)) for r in target.requests)
    assert received == sorted([
        ("/order/7", json.dumps({"id": "inline", "first_sku": "i", "items": [{"sku": "i"}]}, sort_keys=True)),
        ("/order/1042", json.dumps({"id": "a", "first_sku": "x", "items": [{"sku": "x"}]}, sort_keys=True)),
        ("/order/10%2043", json.dumps({"id": "b", "first_sku": "y", "items": [{"sku": "y"}, {"sku": "z"}]},
                                      sort_keys=True)),
    ])
    result = load_results(tmp_path / "litmus-report" / "results.json")
    assert [run.scenario for run in result.suites[0].flow_runs] == ["inline", "a", "b"]


@pytest.mark.parametrize("rows, where, message", [
    ("id,order_id,items:json\na,1,[]\nb,2,[]\na,3,[]\n", "probes/data/cases.csv:4:1",
     "duplicate scenario id 'a' (first at line 2)"),
    ("id,order_id,items:json\na,1,[]\nb,2\n", "probes/data/cases.csv:3:3",
     "the row has 2 cells; the header has 3 columns"),
    ("id,order_id,items:json\na,1,[]\nb,2,[oops\n", "probes/data/cases.csv:3:3",
     "column 3 ('items:json') is not JSON"),
    ("order_id,items:json\n1,[]\n", "probes/data/cases.csv:1:1", "the header has no 'id' column"),
    ("id,order_id\na,1\n", "probes/orders.yaml:15:55:",
     "not every row of probes/data/cases.csv has 'items'"),
])
def test_a_bad_row_is_an_error_with_file_row_and_column(project, capsys, rows, where, message):
    tmp_path, target = project
    (tmp_path / "probes" / "orders.yaml").write_text(SUITE.replace("{ext}", "csv"))
    (tmp_path / "probes" / "data" / "cases.csv").write_text(rows)
    assert main(["run", "--base-url", target.base_url]) == 2
    err = capsys.readouterr().err
    assert any(line.startswith(where) and message in line for line in err.splitlines()), err
    assert target.requests == []


def test_scenarios_file_must_stay_inside_the_repository(project, capsys):
    tmp_path, target = project
    (tmp_path / "probes" / "orders.yaml").write_text(SUITE.replace("{ext}", "csv").replace(
        "data/cases.csv", "../../../../../../../../etc/passwd.csv"))
    assert main(["run", "--base-url", target.base_url]) == 2
    assert "probes/orders.yaml:7:19: error:" in capsys.readouterr().err
