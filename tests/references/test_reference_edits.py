"""Accepted references, the edit itself: a suite written every way YAML allows keeps every line but its
references, and the paths a pull request controls (names, links, files) never lead a write elsewhere."""

from __future__ import annotations

import os

import pytest
from reference_helpers import SUITE, changed_lines, litmus, refused, reply_for, tree

from litmus.load import load_suites
from litmus.references import ApplyError, apply_edits, plan_reference_updates
from litmus.results import load_results

# 4-space indents, sequences indented past their key, flow mappings, quoted keys and values, comments,
# block scalars (`|` with a blank line after it, `>-`), anchors, an alias as a reference, a merge key.
LAYOUT = """\
# Orders, as a person writes them.
version: 1
suite:   "Order assistant"     # spaced out on purpose
defaults: &defaults {timeout_ms: 5000, headers: {X-A: "1"}}
context:
    name: orders
    scenarios:
        -   id: delayed
            data: {order_id: 1042, status: delayed}   # flow data
            "reference_response": |
                Order 1042 is delayed.
                It should arrive on 3 December.

        -   {id: flowed, data: {order_id: 7}, reference_response: 'Order 7 was delivered.'}
        -   id: folded
            data:
                order_id: 8
            reference_response: >-
                Order 8 is
                on its way.
            # a comment closing the mapping
        -   id: plain
            data: {order_id: 9, note: &note Order 9 is lost}
            reference_response: Order 9 is lost   # comment after
        -   id: aliased
            data: {order_id: 11}
            reference_response: *note
        -   id: 'empty'
            data: {order_id: 10}
        -   {id: bare, data: {order_id: 12}}
flows:
    -   name: Ask
        steps:
            -   name: ask
                request: {method: POST, url: /chat, json: {order_id: "{{ scenario.data.order_id }}"}}
                assertions:
                    - type: accurate_with_scenario_context
                      select: $.reply     # the reply text
"""


def test_the_diff_is_exactly_the_reference_lines(project, target, capsys):
    (project / "probes" / "orders.yaml").write_text(LAYOUT)
    code, out, err = litmus(capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "written to" in out, err
    removed, added = changed_lines(LAYOUT, (project / "probes" / "orders.yaml").read_text())
    assert removed == [
        '            "reference_response": |',
        "                Order 1042 is delayed.",
        "                It should arrive on 3 December.",
        "        -   {id: flowed, data: {order_id: 7}, reference_response: 'Order 7 was delivered.'}",
        "            reference_response: >-",
        "                Order 8 is",
        "                on its way.",
        "            reference_response: Order 9 is lost   # comment after",
        "            reference_response: *note",
        "        -   {id: bare, data: {order_id: 12}}",
    ]
    folder = "references/order-assistant"
    assert added == [
        f'            "reference_response_file": {folder}/delayed.txt',
        f"        -   {{id: flowed, data: {{order_id: 7}}, reference_response_file: {folder}/flowed.txt}}",
        f"            reference_response_file: {folder}/folded.txt",
        f"            reference_response_file: {folder}/plain.txt   # comment after",
        f"            reference_response_file: {folder}/aliased.txt",
        f"            reference_response_file: {folder}/empty.txt",
        f"        -   {{id: bare, reference_response_file: {folder}/bare.txt, data: {{order_id: 12}}}}",
    ]
    for scenario, order in (("delayed", 1042), ("flowed", 7), ("aliased", 11), ("empty", 10), ("bare", 12)):
        assert (project / "probes" / folder / f"{scenario}.txt").read_text() == reply_for(order) + "\n"
    code, out, err = litmus(capsys, "run", "--base-url", target.base_url)
    assert code == 0, out + err


def test_a_suite_with_crlf_line_ends_keeps_them(project, target, capsys):
    (project / "probes" / "orders.yaml").write_bytes(SUITE.replace("\n", "\r\n").encode())
    code, out, err = litmus(capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "written to" in out, err
    data = (project / "probes" / "orders.yaml").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") == SUITE.count("\n") + 1
    removed, added = changed_lines(SUITE, data.decode().replace("\r\n", "\n"))
    assert removed == ["      reference_response: Order 1042 is delayed.   # approved in March"]
    assert added == ["      reference_response_file: references/orders/delayed.txt   # approved in March",
                     "      reference_response_file: references/orders/fresh.txt"]


def test_a_merged_reference_is_refused(project, target, capsys):
    suite = SUITE.replace("    - id: fresh\n",
                          "    - <<: {reference_response: Order 7 is shared}\n      id: fresh\n")
    (project / "probes" / "orders.yaml").write_text(suite)
    err = refused(project, capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "scenario 'fresh': it takes keys from a merge key (<<)" in err


# ---- attacks: what a pull request controls never leads a write out of place


def test_ids_are_never_paths(project, target, capsys):
    suite = SUITE.replace("suite: Orders", "suite: ../../../outside").replace("id: delayed", "id: ../../escape/x")
    (project / "probes" / "orders.yaml").write_text(suite)
    outside = set(os.listdir(project.parent))
    code, out, err = litmus(capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "written to probes/references/outside/escape-x.txt" in out, err
    assert (project / "probes" / "references" / "outside" / "escape-x.txt").read_text() == reply_for(1042) + "\n"
    assert set(os.listdir(project.parent)) == outside


def test_a_symlinked_references_folder_is_refused(project, target, capsys, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (project / "probes" / "references").symlink_to(elsewhere, target_is_directory=True)
    err = refused(project, capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "probes/orders.yaml:6:7: suite 'Orders', scenario 'delayed': 'probes/references/orders/delayed.txt' " \
           "resolves outside the repository root" in err
    assert list(elsewhere.iterdir()) == []

    # A link inside the repository is refused as well: nothing is written through a link.
    (project / "probes" / "references").unlink()
    (project / "probes" / "inside").mkdir()
    (project / "probes" / "references").symlink_to(project / "probes" / "inside", target_is_directory=True)
    err = refused(project, capsys, "accept-references", "litmus-report/results.json")
    assert "has a symbolic link on its path: Litmus writes no file through a link" in err


def test_a_link_planted_at_a_new_reference_file_is_refused(project, target, capsys, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "stolen.txt"
    (project / "probes" / "references" / "orders").mkdir(parents=True)
    (project / "probes" / "references" / "orders" / "delayed.txt").symlink_to(outside)
    err = refused(project, capsys, "run", "--base-url", target.base_url, "--update-references")
    assert "'probes/references/orders/delayed.txt' resolves outside the repository root" in err
    assert not outside.exists()


@pytest.mark.parametrize("how", ["symlink", "relative"])
def test_a_reference_file_outside_the_repository_is_a_load_error(project, target, capsys, tmp_path_factory, how):
    outside = tmp_path_factory.mktemp("elsewhere") / "answer.txt"
    outside.write_text("Order 8 was delivered.\n")
    filed = project / "probes" / "answers" / "filed.txt"
    if how == "symlink":
        filed.unlink()
        filed.symlink_to(outside)
    else:
        suite = SUITE.replace("answers/filed.txt", os.path.relpath(outside, project / "probes"))
        (project / "probes" / "orders.yaml").write_text(suite)
    before = tree(project)
    code, out, err = litmus(capsys, "run", "--base-url", target.base_url, "--update-references")
    assert code == 2 and "probes/orders.yaml:13:32: error:" in err and "resolves outside the repository root" in err
    assert tree(project) == before and outside.read_text() == "Order 8 was delivered.\n"


def test_a_reference_file_swapped_for_a_link_after_loading_is_refused(project, target, capsys, tmp_path_factory):
    litmus(capsys, "run", "--base-url", target.base_url)
    result = load_results(project / "litmus-report" / "results.json")
    suites = load_suites(["probes"], root=project, environ={}, strict_env=False).suites
    outside = tmp_path_factory.mktemp("elsewhere") / "answer.txt"
    outside.write_text("kept\n")
    filed = project / "probes" / "answers" / "filed.txt"
    filed.unlink()
    filed.symlink_to(outside)
    plan = plan_reference_updates(result, suites, project)
    assert plan.edits == [] and [str(r) for r in plan.refusals] == [
        "probes/orders.yaml:11:7: suite 'Orders', scenario 'filed': 'probes/answers/filed.txt' resolves outside "
        f"the repository root ({project})"]


def test_apply_writes_nothing_when_a_file_changed_or_became_a_link_since_the_plan(project, target, capsys,
                                                                                  tmp_path_factory):
    litmus(capsys, "run", "--base-url", target.base_url)
    result = load_results(project / "litmus-report" / "results.json")
    suites = load_suites(["probes"], root=project, environ={}, strict_env=False).suites
    plan = plan_reference_updates(result, suites, project)
    assert plan.refusals == [] and len(plan.edits) == 4

    (project / "probes" / "orders.yaml").write_text(SUITE + "# edited meanwhile\n")
    before = tree(project)
    with pytest.raises(ApplyError, match="probes/orders.yaml changed since the references were planned"):
        apply_edits(plan.edits, project)
    assert tree(project) == before

    (project / "probes" / "orders.yaml").write_text(SUITE)
    outside = tmp_path_factory.mktemp("elsewhere")
    (project / "probes" / "references").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ApplyError, match="resolves outside the repository root"):
        apply_edits(plan.edits, project)
    assert list(outside.iterdir()) == []
    (project / "probes" / "references").unlink()

    apply_edits(plan.edits, project)
    assert (project / "probes" / "references" / "orders" / "fresh.txt").read_text() == reply_for(7) + "\n"
