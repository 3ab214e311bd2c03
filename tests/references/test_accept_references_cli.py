"""`litmus run --update-references` and `litmus accept-references` against a real target and the fake judge:
what is written where, that the next run judges against it, and every refusal (nothing written)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess

from reference_helpers import SUITE, changed_lines, litmus, refused, reply_for, tree

from litmus.results import load_results


def test_update_references_writes_each_reply_and_the_next_run_judges_against_it(project, target, capsys, fake_judge):
    code, out, err = litmus(capsys, "run", "--base-url", target.base_url, "--update-references")
    # `fresh` had no reference: its assertion could not judge (an error), so this run fails; its reply is kept.
    assert code == 1, err
    outcomes = {fr.scenario: fr.steps[0].assertions[0] for fr in
                load_results(project / "litmus-report" / "results.json").suites[0].flow_runs}
    assert outcomes["fresh"].status == "error"
    assert outcomes["fresh"].reply.text == reply_for(7)
    assert (outcomes["delayed"].reply.text, outcomes["delayed"].reply.truncated,
            outcomes["delayed"].reply.masked) == (reply_for(1042), False, False)

    references = project / "probes" / "references" / "orders"
    assert (references / "delayed.txt").read_text() == reply_for(1042) + "\n"
    assert (references / "fresh.txt").read_text() == reply_for(7) + "\n"
    assert (project / "probes" / "answers" / "filed.txt").read_text() == reply_for(8) + "\n"
    assert "written to probes/references/orders/delayed.txt" in out
    removed, added = changed_lines(SUITE, (project / "probes" / "orders.yaml").read_text())
    assert removed == ["      reference_response: Order 1042 is delayed.   # approved in March"]
    assert added == ["      reference_response_file: references/orders/delayed.txt   # approved in March",
                     "      reference_response_file: references/orders/fresh.txt"]

    judged_before = len(fake_judge.calls())
    code, out, err = litmus(capsys, "run", "--base-url", target.base_url)
    assert code == 0, out + err
    prompts = [call.prompt for call in fake_judge.calls()[judged_before:]]
    assert len(prompts) == 3 and any("Approved reference response" in p and reply_for(7) in p for p in prompts)


def test_accepting_again_changes_nothing(project, target, capsys):
    litmus(capsys, "run", "--base-url", target.base_url, "--update-references")
    before = tree(project)
    code, out, err = litmus(capsys, "accept-references", "litmus-report/results.json")
    assert code == 0, err
    assert "3 scenario(s) already have their reply as reference" in out
    assert tree(project) == before


def test_accept_references_patch_is_what_it_would_write(project, target, capsys, tmp_path_factory):
    litmus(capsys, "run", "--base-url", target.base_url)
    before = tree(project)
    code, out, err = litmus(capsys, "accept-references", "litmus-report/results.json", "--patch", "refs.patch")
    assert code == 0, err
    after_patch = tree(project)
    assert after_patch.pop("refs.patch") and after_patch == before  # the probes are left as they were
    applied = subprocess.run(["git", "apply", "refs.patch"], cwd=project, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    patched = tree(project)
    # The same change written directly, on a fresh copy of the probes.
    for path, data in before.items():
        if path.startswith("probes"):
            (project / path).write_bytes(data)
    for path in set(patched) - set(before) - {"refs.patch"}:
        os.remove(project / path)
    code, out, err = litmus(capsys, "accept-references", "litmus-report/results.json")
    assert code == 0, err
    assert tree(project) == patched


def test_accept_references_for_one_suite(project, target, capsys):
    (project / "probes" / "other.yaml").write_text(SUITE.replace("suite: Orders", "suite: Other"))
    (project / "probes" / "answers" / "filed.txt").write_text("Order 8 was delivered.\n")
    litmus(capsys, "run", "--base-url", target.base_url)
    code, out, err = litmus(capsys, "accept-references", "litmus-report/results.json", "--suite", "Other")
    # Both suites name answers/filed.txt: accepting one suite writes it once.
    assert code == 0, err
    assert (project / "probes" / "references" / "other").is_dir()
    assert not (project / "probes" / "references" / "orders").exists()
    assert (project / "probes" / "orders.yaml").read_text() == SUITE

    code, out, err = litmus(capsys, "accept-references", "litmus-report/results.json", "--suite", "Ordrs")
    assert code == 2 and "did you mean 'Orders'" in err


# ---- refusals: each names what and why, and nothing is written


def test_a_reply_cut_at_the_body_cap_is_refused(project, target, capsys):
    long = "Order 1042 is late. " * 50
    target.route("/chat", lambda req: (200, {"Content-Type": "text/plain"}, long.encode()))
    suite = SUITE.replace("            select: $.reply\n", "")
    (project / "probes" / "orders.yaml").write_text(suite)
    err = refused(project, capsys, "run", "--base-url", target.base_url, "--max-body-bytes", "100",
                  "--update-references")
    assert "probes/orders.yaml:20:13: suite 'Orders', scenario 'delayed': flow 'Ask', step 'ask': the reply was " \
           "cut at the body cap" in err


def test_a_reply_with_a_masked_secret_is_refused(project, target, capsys, monkeypatch):
    monkeypatch.setenv("SHOP_TOKEN", "tok-canary-5e1d-secret")
    target.route("/chat", lambda req: (200, {"Content-Type": "application/json"}, json.dumps(
        {"reply": f"Order 1042 for session {req.headers['Authorization'][7:]}"}).encode()))
    suite = SUITE.replace("request: {method: POST,",
                          "request: {headers: {Authorization: 'Bearer {{ secrets.SHOP_TOKEN }}'}, method: POST,")
    (project / "probes" / "orders.yaml").write_text(suite)
    err = refused(project, capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "scenario 'delayed': flow 'Ask', step 'ask': redaction masked part of the reply" in err
    assert "tok-canary-5e1d-secret" not in err
    reply = load_results(project / "litmus-report" / "results.json").suites[0].flow_runs[0].steps[0].assertions[0].reply
    assert reply.masked and "tok-canary" not in reply.text and "***" in reply.text


def test_runs_of_one_scenario_that_disagree_are_refused(project, target, capsys):
    counter = itertools.count()
    target.route("/chat", lambda req: (200, {"Content-Type": "application/json"}, json.dumps(
        {"reply": f"Order {req.json()['order_id']}, answer {next(counter) % 2}"}).encode()))
    (project / "probes" / "orders.yaml").write_text(SUITE.replace("  - name: Ask\n", "  - name: Ask\n    runs: 2\n"))
    err = refused(project, capsys, "run", "--base-url", target.base_url, "--concurrency", "1", "--update-references")
    assert ("suite 'Orders', scenario 'delayed': the runs disagree, 2 different replies (reply 1 from flow 'Ask' "
            "run 1 of 2, step 'ask'; reply 2 from flow 'Ask' run 2 of 2, step 'ask')") in err


def test_no_reply_recorded_is_refused(project, target, capsys):
    litmus(capsys, "run", "--base-url", target.base_url, "--no-judge")
    err = refused(project, capsys, "accept-references", "litmus-report/results.json")
    assert "scenario 'delayed': flow 'Ask', step 'ask': no reply was recorded (skipped:" in err


def test_an_empty_reply_is_refused(project, target, capsys):
    target.route("/chat", lambda req: (200, {"Content-Type": "application/json"}, b'{"reply": "  "}'))
    err = refused(project, capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "the reply is empty" in err


def test_an_anchored_reference_other_places_alias_is_refused(project, target, capsys):
    suite = SUITE.replace("reference_response: Order 1042 is delayed.", "reference_response: &late Order 1042 is late")
    suite = suite.replace("      reference_response_file: answers/filed.txt", "      reference_response: *late")
    (project / "probes" / "orders.yaml").write_text(suite)
    err = refused(project, capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "probes/orders.yaml:6:7: scenario 'delayed': its reference_response carries the anchor &late, which " \
           "aliases elsewhere use; set `reference_response_file: references/orders/delayed.txt` by hand" in err


ROW_SUITE = SUITE.replace("""  scenarios:
    - id: delayed
      data: {order_id: 1042}
      reference_response: Order 1042 is delayed.   # approved in March
    - id: fresh
      data: {order_id: 7}
    - id: filed
      data: {order_id: 8}
      reference_response_file: answers/filed.txt
""", "  scenarios_file: cases.{ext}\n")


def test_csv_rows_get_their_cell_and_every_other_byte_stays(project, target, capsys):
    rows = ('id,"order_id",reference_response,note\r\n'
            '"delayed",1042,"Order 1042 is ""delayed"".",kept\r\n'
            'fresh,7,,"a, b"\r\n'
            'same,8,Order 8 arrives on 5 December.,x\r\n')
    (project / "probes" / "cases.csv").write_text(rows, newline="")
    (project / "probes" / "orders.yaml").write_text(ROW_SUITE.replace("{ext}", "csv"))
    code, out, err = litmus(capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "1 scenario(s) already have their reply as reference" in out, err
    assert (project / "probes" / "cases.csv").read_bytes().decode() == (
        'id,"order_id",reference_response,note\r\n'
        '"delayed",1042,"Order 1042 arrives on 5 December.",kept\r\n'
        'fresh,7,Order 7 arrives on 5 December.,"a, b"\r\n'
        'same,8,Order 8 arrives on 5 December.,x\r\n')
    assert (project / "probes" / "orders.yaml").read_text() == ROW_SUITE.replace("{ext}", "csv")


def test_a_multi_line_reply_is_quoted_in_its_csv_cell(project, target, capsys):
    target.route("/chat", lambda req: (200, {"Content-Type": "application/json"}, json.dumps(
        {"reply": "Order 7:\n- arrives \"soon\", maybe"}).encode()))
    (project / "probes" / "cases.csv").write_text("id,order_id,reference_response\nfresh,7,\n")
    (project / "probes" / "orders.yaml").write_text(ROW_SUITE.replace("{ext}", "csv"))
    litmus(capsys, "run", "--base-url", target.base_url, "--update-references")
    assert (project / "probes" / "cases.csv").read_text() == \
        'id,order_id,reference_response\nfresh,7,"Order 7:\n- arrives ""soon"", maybe"\n'
    code, out, err = litmus(capsys, "run", "--base-url", target.base_url)
    assert code == 0, out + err


def test_a_csv_without_a_reference_column_is_refused_naming_file_and_row(project, target, capsys):
    (project / "probes" / "cases.csv").write_text("id,order_id\ndelayed,1042\nfresh,7\n")
    (project / "probes" / "orders.yaml").write_text(ROW_SUITE.replace("{ext}", "csv"))
    err = refused(project, capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "probes/cases.csv:3: suite 'Orders', scenario 'fresh': 'probes/cases.csv' has no reference_response " \
           "column" in err


def test_jsonl_rows_get_only_their_line_replaced(project, target, capsys):
    lines = ['{"id":"delayed","order_id":1042,"reference_response":"Order 1042 is delayed."}\n',
             '\n',
             '{ "id": "kept",  "order_id": 8, "reference_response": "Order 8 arrives on 5 December." }\n',
             '{"id": "fresh", "order_id": 7, "note": "caf\\u00e9"}']
    (project / "probes" / "cases.jsonl").write_text("".join(lines))
    (project / "probes" / "orders.yaml").write_text(ROW_SUITE.replace("{ext}", "jsonl"))
    code, out, err = litmus(capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "reference of suite 'Orders', scenario 'fresh' written to probes/cases.jsonl" in out, err
    assert (project / "probes" / "cases.jsonl").read_text() == "".join([
        '{"id":"delayed","order_id":1042,"reference_response":"Order 1042 arrives on 5 December."}\n',
        '\n',
        lines[2],
        '{"id": "fresh", "order_id": 7, "note": "caf\\u00e9", "reference_response": "Order 7 arrives on 5 December."}',
    ])


def test_a_yaml_scenarios_file_is_refused_naming_file_and_row(project, target, capsys):
    (project / "probes" / "cases.yaml").write_text("- {id: delayed, order_id: 1042}\n- {id: fresh, order_id: 7}\n")
    (project / "probes" / "orders.yaml").write_text(ROW_SUITE.replace("{ext}", "yaml"))
    err = refused(project, capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "probes/cases.yaml:2: suite 'Orders', scenario 'fresh': references are written into CSV and JSONL " \
           "scenario files only" in err
