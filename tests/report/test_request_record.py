"""What a run records for the reports, through the CLI against a real target: the request's own
headers and the secrets behind its masks (what the curl needs), and runs numbered from 1 for people."""

from __future__ import annotations

import json

from report_fixtures import litmus_run

from litmus.report import findings as fd
from litmus.results import load_results
from support.target import Target

TOKEN = "tok-81c4-record-secret"

SUITE = """\
version: 1
suite: Record
pass_threshold: 100
flows:
  - name: Ask
    runs: 3
    steps:
      - name: ask
        request:
          url: /ask
          query: {key: "{{ secrets.API_TOKEN }}"}
          headers:
            Authorization: "Bearer {{ secrets.API_TOKEN }}"
            X-Api-Key: hard-coded-key
            X-Trace: "t-{{ run.index }}"
        assertions:
          - {type: json_path, path: $.ok, expected: false}
"""


def test_request_record_and_run_numbers(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "record.yaml").write_text(SUITE)
    with Target() as target:
        target.json("/ask", {"ok": True})
        done, _ = litmus_run(tmp_path, target.base_url, {"API_TOKEN": TOKEN})
    assert done.returncode == 1, done.stderr
    document = json.loads((tmp_path / "out" / "results.json").read_text("utf-8"))
    result = load_results(tmp_path / "out" / "results.json")
    request = document["suites"][0]["flow_runs"][0]["steps"][0]["request"]
    assert request["probe_headers"] == ["Authorization", "X-Api-Key", "X-Trace"]
    assert request["headers"]["Authorization"] == "Bearer ***"  # shaped, the secret masked
    assert request["headers"]["X-Api-Key"] == "***"  # a credential header without a declared secret: whole
    assert "User-Agent" in request["headers"]  # still recorded, just not the probe's
    assert request["secrets"] == ["API_TOKEN", "API_TOKEN"]  # the url's mask, then the header's
    for path in (tmp_path / "out").iterdir():
        assert TOKEN not in path.read_text("utf-8") and "hard-coded-key" not in path.read_text("utf-8"), path.name
    curl = fd.step_curl(result.suites[0].flow_runs[0], result.suites[0].flow_runs[0].steps[0])
    assert "-H 'Authorization: Bearer '\"$API_TOKEN\"" in curl and "-H 'X-Api-Key: ***'" in curl
    assert "*** is a value the results never hold" in curl  # said, since that header cannot be replayed
    # People count runs from 1; the data stays 0-based.
    assert [r["run_index"] for r in document["suites"][0]["flow_runs"]] == [0, 1, 2]
    assert "run 1 of 3" in done.stdout and "run 3 of 3" in done.stdout and "run 0" not in done.stdout
    comment = (tmp_path / "out" / "comment.md").read_text("utf-8")
    assert "3 of 3 runs \\(runs 1\\, 2\\, 3\\)" in comment
    junit = (tmp_path / "out" / "junit.xml").read_text("utf-8")
    assert 'name="ask [run 1 of 3]"' in junit and "run 0" not in junit
    html = (tmp_path / "out" / "report.html").read_text("utf-8")
    assert "run 1 of 3" in html and "run 0" not in html
