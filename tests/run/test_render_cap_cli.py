"""Attack 6: a whole template keeps its value's type, so one extracted JSON object used many times
renders a request body far past the 1 MiB a rendered string may have (the loader already refuses
suite variables that multiply each other; an extracted value is known only at run time). Every
rendered value is capped by its size as JSON: the step is an error naming the template before
anything is sent, and `litmus run` never builds the body, so its memory stays small.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from litmus.results import load_results
from support.target import Target

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from pipeline import run_litmus  # noqa: E402

# ~20 KB of JSON: under the cap alone, over it 60 times.
OBJECT = {"items": [{"id": i, "name": f"item {i:05d}", "tags": ["a", "b"]} for i in range(360)]}


def _suite(body: str) -> str:
    return f"""\
version: 1
suite: Reuse
flows:
  - name: f
    steps:
      - name: read
        request: {{url: /object}}
        extract: {{obj: {{json_path: $}}}}
      - name: reuse
        request:
          method: POST
          url: /sink
          {body}
"""


def _run(project, base_url: str) -> tuple[int, float]:
    """`litmus run` in a subprocess: its exit status and its peak resident memory in MiB (sampled VmHWM: a
    forked child's ru_maxrss would start at this test process's size)."""
    ran = run_litmus(["run", "--base-url", base_url, "--format", "markdown"], cwd=project)
    (project / "stdout").write_bytes(ran.stdout + ran.stderr)
    return ran.code, ran.max_rss_mib


def _attack(tmp_path, body: str, extracted: object) -> tuple[str, int, list[str]]:
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "reuse.yaml").write_text(_suite(body))
    with Target() as target:
        target.json("/object", extracted)
        target.json("/sink", {"ok": True})
        code, peak_mib = _run(tmp_path, target.base_url)
        sent = [r.path for r in target.requests]
    assert code == 1, (tmp_path / "stdout").read_text()
    reuse = load_results(tmp_path / "litmus-report" / "results.json").suites[0].flow_runs[0].steps[1]
    assert reuse.status == "error"
    return reuse.error, peak_mib, sent


def test_an_extracted_object_used_60_times_in_a_json_body_is_the_steps_error_before_sending(tmp_path):
    assert 15_000 < len(json.dumps(OBJECT)) < 25_000
    body = "json: {" + ", ".join(f'k{i}: "{{{{ obj }}}}"' for i in range(60)) + "}"
    error, _, sent = _attack(tmp_path, body, OBJECT)
    assert sent == ["/object"]  # the target never receives the body
    assert "{{ obj }} (60 times)" in error and "1,048,576" in error


def test_a_large_extracted_object_used_60_times_is_never_written_out(tmp_path):
    # 60 uses of a 2 MB object: 120 MB of JSON, which the old code built and sent.
    large = {"items": [OBJECT] * 100}
    body = "json: {" + ", ".join(f'k{i}: "{{{{ obj }}}}"' for i in range(60)) + "}"
    error, peak_mib, sent = _attack(tmp_path, body, large)
    assert sent == ["/object"]
    assert "{{ obj }} (60 times)" in error
    assert peak_mib < 150, f"litmus run peaked at {peak_mib} MiB"
