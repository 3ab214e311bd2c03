"""Secrets through `litmus action`, as the container runs it: a probe secret, the judge key and the GitHub
token (under a name the workflow chose: `env.GITHUB_TOKEN` itself never resolves, and an `env.` value is
masked like a secret) are sent in headers, query strings and JSON bodies, echoed back by the target in bodies and
headers, compared in failing assertions, extracted and judged. Not one byte written anywhere holds
them, in any encoding: the output directory, the verdict cache, stdout/stderr (bar the `::add-mask::`
lines that tell the runner to hide them), $GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY, every request body the
fake GitHub API and the fake judge received."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from canaries import CANARIES, GITHUB_TOKEN, JUDGE_KEY, PROBE_SECRET, leaks, leaks_in_files
from pipeline import check_run, run_litmus, write_suite

from support.checkout import trusted_checkout
from support.fake_github import FakeGitHub, parse_output_file
from support.fake_judge import FakeJudge, Rule
from support.target import Target

EVENTS = Path(__file__).resolve().parents[1] / "github" / "events"
REPO = "acme/shop"

SUITE = """version: 1
suite: Shop
intent: The shop echoes requests back.
defaults:
  headers:
    Authorization: "Bearer {{ secrets.SHOP_TOKEN }}"
flows:
  - name: echo
    steps:
      - name: send
        request:
          method: POST
          url: /echo
          headers:
            X-Token: "{{ secrets.SHOP_TOKEN }}"
            X-Judge: "{{ env.LITMUS_JUDGE_API_KEY }}"
            X-GitHub: "{{ env.TOKEN_COPY }}"
          query:
            key: "{{ secrets.SHOP_TOKEN }}"
            judge: "{{ env.LITMUS_JUDGE_API_KEY }}"
            gh: "{{ env.TOKEN_COPY }}"
          json:
            token: "{{ secrets.SHOP_TOKEN }}"
            judge: "{{ env.LITMUS_JUDGE_API_KEY }}"
            gh: "{{ env.TOKEN_COPY }}"
            all: "{{ secrets.SHOP_TOKEN }} {{ env.LITMUS_JUDGE_API_KEY }} {{ env.TOKEN_COPY }}"
        extract:
          echoed: {json_path: $.json.token}
          echoed_header: {header: X-Echo-Judge}
        assertions:
          - {type: status_code, expected: 201}
          - {type: json_path, path: $.json.token, expected: "not {{ secrets.SHOP_TOKEN }}"}
          - {type: json_path, path: $.json.judge, expected: "x"}
          - {type: json_path, path: $.json.gh, expected: "x"}
          - {type: json_path, path: $.headers, json_type: string}
          - {type: contains, value: "absent {{ env.TOKEN_COPY }}"}
          - {type: not_contains, value: canary}
          - {type: llm_rubric, rubric: "Echoes nothing secret"}
      - name: reuse
        request:
          method: POST
          url: /echo
          json: {again: "{{ echoed }}", header: "{{ echoed_header }}"}
        assertions:
          - {type: extract_match, variable: echoed_header, expected: "x"}
          - {type: json_path, path: $.json.again, expected: "no"}
"""


def echo(req):
    payload = {"headers": req.headers, "query": req.query, "json": req.json()}
    return 200, {"Content-Type": "application/json", "X-Echo-Token": req.headers.get("X-Token", ""),
                 "X-Echo-Judge": req.headers.get("X-Judge", ""), "X-Echo-GitHub": req.headers.get("X-GitHub", ""),
                 }, json.dumps(payload).encode()


@pytest.fixture(scope="module")
def action_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("secrets")
    workspace = root / "ws"
    write_suite(workspace, "shop.yaml", SUITE)
    (root / "output").write_text("")
    (root / "summary").write_text("")
    with Target() as target, FakeJudge(api_key=JUDGE_KEY) as judge, FakeGitHub() as github:
        target.route("/echo", echo)
        judge.default = Rule(score=20, reason="The reply repeats what it was sent.")
        github.state.pr_files[(REPO, 42)] = [{"filename": "probes/shop.yaml", "status": "modified"}]
        trusted_checkout(workspace, github)
        env = {
            "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_EVENT_PATH": str(EVENTS / "pull_request.json"), "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": github.base_url, "GITHUB_OUTPUT": str(root / "output"),
            "GITHUB_STEP_SUMMARY": str(root / "summary"), "GITHUB_TOKEN": GITHUB_TOKEN,
            "INPUT_GITHUB-TOKEN": GITHUB_TOKEN, "INPUT_BASE-URL": target.base_url,
            "INPUT_JUDGE-PROVIDER": "openai", "INPUT_JUDGE-MODEL": "judge-small",
            "INPUT_JUDGE-BASE-URL": judge.openai_base_url, "INPUT_JUDGE-API-KEY": JUDGE_KEY,
            "SHOP_TOKEN": PROBE_SECRET, "TOKEN_COPY": GITHUB_TOKEN,
        }
        ran = run_litmus(["action"], cwd=workspace, env=env)
        sent_to_github = [(c.method, c.path, c.query, c.body) for c in github.state.calls]
        sent_to_judge = [r.body for r in judge.calls()]
        received = list(target.requests)
    return ran, root, workspace, sent_to_github, sent_to_judge, received


def test_the_action_ran_end_to_end(action_run):
    ran, root, workspace, sent_to_github, sent_to_judge, received = action_run
    assert ran.code == 1, ran.output
    outputs = parse_output_file((root / "output").read_text())
    check_run(workspace / outputs["results-path"].rsplit("/", 1)[0])
    # The canaries really went out (so their absence below means something).
    first = received[0]
    assert first.headers["X-Token"] == PROBE_SECRET and first.json()["judge"] == JUDGE_KEY
    assert first.query["gh"] == [GITHUB_TOKEN]
    assert any(method == "POST" and "/comments" in path for method, path, *_ in sent_to_github)
    assert any("check-runs" in path for _, path, *_ in sent_to_github)
    assert len(sent_to_judge) >= 2  # the rubric and the Intent Evaluation


def test_no_canary_in_any_byte_written(action_run):
    ran, root, workspace, sent_to_github, sent_to_judge, _ = action_run
    found = leaks_in_files(workspace, root / "output", root / "summary")
    stdout = "\n".join(line for line in ran.stdout.decode().splitlines() if not line.startswith("::add-mask::"))
    found += leaks(stdout, "stdout") + leaks(ran.stderr, "stderr")
    found += leaks(json.dumps(sent_to_github, ensure_ascii=False), "GitHub API request bodies")
    found += leaks(json.dumps(sent_to_judge, ensure_ascii=False), "judge request bodies")
    assert found == []


def test_every_canary_is_masked_before_anything_else_is_printed(action_run):
    ran = action_run[0]
    lines = ran.stdout.decode().splitlines()
    masks = {line.removeprefix("::add-mask::") for line in lines if line.startswith("::add-mask::")}
    assert set(CANARIES) <= masks
    first_other = next(i for i, line in enumerate(lines) if not line.startswith("::add-mask::"))
    assert all(not line.startswith("::add-mask::") or line.removeprefix("::add-mask::") not in CANARIES
               for line in lines[first_other:])
