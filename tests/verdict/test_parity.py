"""Parity: every row of docs/verdict.md's table, run through `litmus run` (a subprocess against a target
on 127.0.0.1 and the fake judge), and every output compared with the row: results.json's suite verdict,
the findings, SARIF results and levels, JUnit counts, the comment's heading and the exit code under each
`--fail-on`. The table is parsed from the doc, so the doc and the code cannot drift.

Every row also runs through the action (its entrypoint in process, a trusted checkout of the repository,
the fake GitHub), under each `fail-on`: there the annotation and check-run columns are checked too, and
the rows only the action can make (an untrusted python check, `changed-only`).
"""

from __future__ import annotations

import io
import itertools
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from litmus.commands.action import main as action_main
from litmus.decisions import Decision, content_sha256, record_decision
from litmus.identity import finding_key, fingerprint
from support.checkout import trusted_checkout
from support.cli import litmus, write_judge_config
from support.fake_judge import API_KEY

DOC = Path(__file__).resolve().parents[2] / "docs" / "verdict.md"
FAIL_ON = ("suite", "assertion", "new", "never")


def table() -> dict[str, dict[str, str]]:
    text = DOC.read_text("utf-8")
    body = text.split("<!-- verdict-table -->")[1].split("<!-- /verdict-table -->")[0].strip().splitlines()
    header = [cell.strip() for cell in body[0].strip("|").split("|")]
    rows = [dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
            for line in body[2:]]
    return {row["case"]: row for row in rows}


ROWS = table()

STEP = """\
      - name: s
        request: {{url: {url}}}
        assertions:
{assertions}"""


def suite(assertions: str, url: str = "/ok", *, extra: str = "", flow_extra: str = "") -> str:
    return (f"version: 1\nsuite: S\n{extra}flows:\n  - name: f\n{flow_extra}    steps:\n"
            + STEP.format(url=url, assertions=assertions))


OK = "          - {type: status_code, expected: 200}\n"
RUBRIC = '          - {type: llm_rubric, rubric: "Says when the order arrives"}\n'
SETUP_FAILS = ("setup:\n  - name: log in\n    request: {url: /down}\n"
               "    assertions: [{type: status_code, expected: 200}]\n")

CHAT = """\
version: 1
suite: S
flows:
  - name: f
    conversation:
      request: {{method: POST, url: /chat}}
      format: {{history_path: $.history, reply_path: $.reply}}
    steps:
      - {{name: s, user: "When does my order arrive?"}}
{more}"""
# The transcript judged (the fake judge fails a reply about the order), or a simulated user the budget stops.
JUDGED_CHAT = CHAT.format(more='    conversation_assertions:\n      - {type: llm_rubric, rubric: "Says when the order '
                               'arrives"}\n')
SIMULATED_CHAT = CHAT.format(more='      - name: more\n        simulate: {persona: a customer, goal: know the date, '
                                  'max_turns: 2}\n')

# case -> (suite YAML, litmus.yaml judge settings or None for no judge config, extra `litmus run` args)
CASES: dict[str, tuple[str, dict | None, tuple[str, ...]]] = {
    "deterministic-failure": (suite(OK, "/down"), None, ()),
    "judged-failure": (suite(RUBRIC, "/answer"), {}, ()),
    "needs-review": (suite(RUBRIC.replace("order", "parcel"), "/answer"), {}, ()),
    "setup-failure": (suite(OK, extra=SETUP_FAILS), None, ()),
    "all-flow-runs-skipped": (suite(OK, extra=SETUP_FAILS + "pass_threshold: 0\n"), None, ()),
    # Every flow says `skip:`: nothing checked, no finding, yet not passed.
    "all-flows-skip": (suite(OK, flow_extra="    skip: true\n"), None, ()),
    "teardown-failure": (suite(OK, extra="teardown:\n  - name: clean\n    request: {url: /down}\n"
                               "    assertions: [{type: status_code, expected: 200}]\n"), None, ()),
    "teardown-error": (suite(OK, extra="teardown:\n  - name: clean\n    request: {url: /hangup}\n"), None, ()),
    "budget-skipped-judge": (suite(RUBRIC, "/answer"), {"max_calls": 0}, ()),
    "budget-skipped-similar": (suite('          - {type: similar, value: "Order 1042 arrives Monday"}\n', "/answer"),
                               {"max_calls": 0, "embeddings": "{provider: openai, model: embed-small, "
                                "base_url: JUDGE_URL, api_key_env: JUDGE_KEY}"}, ()),
    "no-judge-configured": (suite(RUBRIC, "/answer"), None, ()),
    "no-judge-flag": (suite(OK + RUBRIC, "/answer"), {}, ("--no-judge",)),
    "critical": (suite("          - {type: status_code, expected: 201, critical: true}\n",
                       extra="intent: The item can be read\n"), {}, ()),
    "flaky-passing-by-threshold": (suite(OK, "/flaky", extra="pass_threshold: 60\n", flow_extra="    runs: 3\n"),
                                   None, ("--concurrency", "1")),
    "human-decided": (suite(RUBRIC.replace("order", "parcel"), "/answer"), {}, ()),
    "conversation-judged-failure": (JUDGED_CHAT, {}, ()),
    "budget-simulated-turn": (SIMULATED_CHAT, {"max_calls": 0}, ()),
    # Run against the base deployment first (TARGET_URL: the target), whose reply reports fewer tokens.
    "cost-over-limit": (suite(OK, "/usage"), None, ("--baseline", "TARGET_URL", "--max-cost-increase", "20")),
}
# case -> the .litmus/decisions.yaml it commits: a human accepts the needs-review row's exact reply.
DECISIONS: dict[str, str] = {
    "human-decided": record_decision("", Decision(
        fingerprint(finding_key("S", "f", None, "s", "llm_rubric#0")),
        content_sha256("llm_rubric", {"rubric": "Says when the parcel arrives"}, "Your order 1042 arrives on Monday."),
        "pass", "ann", "2026-05-04T12:00:00Z", "says Monday")),
}


def serve(target, fake_judge) -> None:
    target.text("/ok", "fine")
    target.text("/down", "broken", status=500)
    target.text("/answer", "Your order 1042 arrives on Monday.")
    target.json("/chat", {"reply": "Your order 1042 arrives on Monday."})
    target.fault("/hangup", "close_no_response")
    count = itertools.count()
    target.route("/flaky", lambda req: (500 if next(count) % 3 == 0 else 200, {"Content-Type": "text/plain"}, b"x"))
    # Each run with a baseline asks twice, the base deployment first: 100 output tokens there, 150 here.
    calls = itertools.count()
    target.route("/usage", lambda req: (200, {"Content-Type": "application/json"}, json.dumps(
        {"usage": {"prompt_tokens": 10, "completion_tokens": 100 if next(calls) % 2 == 0 else 150}}).encode()))
    fake_judge.when("parcel", text="no verdict here")  # unparseable, no tier 2: needs review
    fake_judge.when("order", score=10, reason="does not say when")


def project(tmp_path: Path, case: str, judge_url: str) -> tuple[Path, tuple[str, ...]]:
    text, judge, args = CASES[case]
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "s.yaml").write_text(text)
    if case in DECISIONS:
        (tmp_path / ".litmus").mkdir()
        (tmp_path / ".litmus" / "decisions.yaml").write_text(DECISIONS[case])
    if judge is not None:
        settings = {k: v.replace("JUDGE_URL", judge_url) if isinstance(v, str) else v for k, v in judge.items()}
        write_judge_config(tmp_path, judge_url, **settings)
    return tmp_path, args


def levels(items, key) -> str:
    found = [key(item) for item in items]
    return f"{found.count('error')}/{found.count('warning')}"


def outputs(out: Path) -> dict[str, str]:
    results = json.loads((out / "results.json").read_text("utf-8"))
    sarif = json.loads((out / "litmus.sarif").read_text("utf-8"))["runs"][0]
    junit = ET.parse(out / "junit.xml").getroot()
    comment = (out / "comment.md").read_text("utf-8")
    heading = next(line[3:] for line in comment.splitlines() if line.startswith("## "))
    return {
        "suite verdict": results["suites"][0]["verdict"] if results["suites"] else "—",
        "SARIF": levels(sarif["results"], lambda r: r["level"]),
        "findings": f"{sarif['properties']['litmus']['findings']}",
        # The junit-10 XSD allows `skipped` on each <testsuite> only.
        "JUnit": "/".join(str(sum(int(s.get(k, 0)) for s in junit.iter("testsuite")))
                          for k in ("failures", "errors", "skipped")),
        "comment heading": heading,
    }


@pytest.mark.parametrize("case", [c for c, row in ROWS.items() if row["via"] == "run"])
def test_every_output_of_litmus_run_equals_the_table(case, tmp_path, target, fake_judge):
    assert set(CASES) == {c for c, row in ROWS.items() if row["via"] == "run"}, "a row without a case, or back"
    row = ROWS[case]
    serve(target, fake_judge)
    root, args = project(tmp_path, case, fake_judge.openai_base_url)
    env = {"JUDGE_KEY": API_KEY}
    for fail_on in FAIL_ON:
        out = root / f"out-{fail_on}"
        done = litmus(root, "run", "probes", "--base-url", target.base_url, "--fail-on", fail_on,
                      "--out", str(out), *(a.replace("TARGET_URL", target.base_url) for a in args), env=env)
        expected_code = int(row[fail_on].split()[0])
        assert done.returncode == expected_code, f"{case} --fail-on {fail_on}: {done.stdout}{done.stderr}"
        got = outputs(out)
        errors, warnings = (int(n) for n in row["findings"].split("/"))
        assert got["findings"] == str(errors + warnings), case
        for column in ("suite verdict", "SARIF", "JUnit", "comment heading"):
            assert got[column] == row[column], f"{case} {column}: {got[column]!r} != {row[column]!r}"
        summary = (out / "summary.md").read_text("utf-8") if (out / "summary.md").exists() else None
        if summary is not None:
            assert row["comment heading"] in summary, case
        document = json.loads((out / "results.json").read_text("utf-8"))
        assert document["verdict"] == ("passed" if row["suite verdict"] == "passed" else "failed"), case


def test_the_table_has_every_case_of_the_brief():
    assert set(ROWS) >= {"deterministic-failure", "judged-failure", "needs-review", "setup-failure",
                         "teardown-failure", "teardown-error", "budget-skipped-judge", "budget-skipped-similar",
                         "no-judge-flag", "critical", "flaky-passing-by-threshold", "all-flow-runs-skipped",
                         "changed-only-no-suite", "changed-only-unknown-files", "untrusted-python-check"}
    for row in ROWS.values():
        assert all(re.fullmatch(r"[01] (success|failure|neutral|cancelled)", row[f]) for f in FAIL_ON), row


# The rows only the action makes: case -> (suite YAML, files the PR changed, or None for an unreadable list).
CHECK = "def status_is_delivered(response, context):\n    return True\n"
ACTION_CASES: dict[str, tuple[str, list[str] | None]] = {
    "untrusted-python-check": (suite("          - {type: python, function: checks/c.py:status_is_delivered}\n"),
                               ["probes/checks/c.py"]),
    "changed-only-no-suite": (suite(OK, "/down"), ["src/app.py"]),
    "changed-only-unknown-files": (suite(OK, "/down"), None),
}
EVENT = Path(__file__).resolve().parents[1] / "github" / "events" / "pull_request.json"
PR = json.loads(EVENT.read_text("utf-8"))["number"]
# The check run's annotation levels, as the table counts them.
ANNOTATION_LEVELS = {"failure": "error", "warning": "warning"}


def action_project(tmp_path: Path, case: str, judge_url: str, fake_github) -> tuple[Path, dict[str, str]]:
    """The workspace (a trusted checkout of the repository, unless the case makes it untrusted) and inputs."""
    inputs = {"annotations": "all"}
    if case in ACTION_CASES:
        text, changed = ACTION_CASES[case]
        (tmp_path / "probes" / "checks").mkdir(parents=True)
        (tmp_path / "probes" / "s.yaml").write_text(text)
        (tmp_path / "probes" / "checks" / "c.py").write_text(CHECK)
        trusted_checkout(tmp_path, fake_github)
        if case == "untrusted-python-check":  # the work tree differs from every branch: untrusted
            (tmp_path / "probes" / "checks" / "c.py").write_text(CHECK + "# the pull request's own\n")
        else:
            inputs["changed-only"] = "true"
        if changed is None:
            fake_github.state.deny.add("pr-files")
        else:
            fake_github.state.pr_files[("acme/shop", PR)] = [{"filename": f, "status": "modified"} for f in changed]
        return tmp_path, inputs
    root, args = project(tmp_path, case, judge_url)
    if "--no-judge" in args:
        inputs["judge-provider"] = "none"
    if "--max-cost-increase" in args:
        inputs["max-cost-increase"] = args[args.index("--max-cost-increase") + 1]
        inputs["baseline-url"] = args[args.index("--baseline") + 1]
    trusted_checkout(root, fake_github)
    return root, inputs


def run_the_action(root: Path, gh_url: str, inputs: dict[str, str]) -> int:
    environ = {
        "GITHUB_WORKSPACE": str(root), "GITHUB_EVENT_PATH": str(EVENT), "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_REPOSITORY": "acme/shop", "GITHUB_API_URL": gh_url, "INPUT_GITHUB-TOKEN": "ghs_t",
        "JUDGE_KEY": API_KEY, **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
    }
    return action_main(environ, io.StringIO())


@pytest.mark.parametrize("case", list(ROWS))
def test_every_output_of_the_action_equals_the_table(case, tmp_path, target, fake_judge, fake_github):
    assert set(CASES) | set(ACTION_CASES) == set(ROWS), "a row without a case, or back"
    row = ROWS[case]
    serve(target, fake_judge)
    root, inputs = action_project(tmp_path, case, fake_judge.openai_base_url, fake_github)
    for fail_on in FAIL_ON:
        out = f"out-{fail_on}"
        given = {name: value.replace("TARGET_URL", target.base_url) for name, value in inputs.items()}
        code = run_the_action(root, fake_github.base_url, {**given, "base-url": target.base_url, "fail-on": fail_on,
                                                      "output-dir": out})
        expected_code, expected_conclusion = row[fail_on].split()
        assert code == int(expected_code), f"{case} fail-on {fail_on}"
        check = list(fake_github.state.check_runs.values())[-1]
        assert check["conclusion"] == expected_conclusion, f"{case} fail-on {fail_on}"
        annotations = levels(check["annotations"], lambda a: ANNOTATION_LEVELS[a["annotation_level"]])
        assert annotations == row["annotations"], f"{case} annotations: {annotations} != {row['annotations']}"
        got = outputs(root / out)
        for column in ("suite verdict", "SARIF", "JUnit", "comment heading"):
            assert got[column] == row[column], f"{case} {column}: {got[column]!r} != {row[column]!r}"
        (comment,) = fake_github.state.comments[("acme/shop", PR)]
        assert f"## {row['comment heading']}" in comment["body"], case
