"""Decision provenance through the real `litmus action` entrypoint: in an untrusted run only the base branch's
`.litmus/decisions.yaml` counts. A fork that adds a correct-looking decision for its own finding stays red,
the judge is still asked, and the comment lists the decisions file and the ignored decision; the same decision
on the base branch does count."""

from __future__ import annotations

import github.test_trust_attacks as attacks
from litmus.decisions import Decision, record_decision
from support.cli import JUDGED_SUITE
from support.fake_judge import FakeJudge

KEY = attacks.CREDENTIALS["INPUT_JUDGE-API-KEY"]


def judged_repository(tmp_path, target):
    target.json("/answer", {"reply": "Your order arrives some day."})
    workspace, _ = attacks.make_repository(tmp_path)
    (workspace / "probes" / "orders.yaml").unlink()
    (workspace / "probes" / "judged.yaml").write_text(JUDGED_SUITE)
    (workspace / "litmus.yaml").write_text("judge:\n  provider: openai\n  model: judge-small\n")
    attacks.git(workspace, "add", "-A")
    attacks.git(workspace, "commit", "-q", "-m", "judged probes")
    return workspace, attacks.git(workspace, "rev-parse", "HEAD")


def run(workspace, tmp_path, fake_github, target, judge, head, base):
    fake_github.state.load_git(workspace, branches=["main"])
    event = attacks.pull_request_target_event(tmp_path / "event.json", head, base)
    return attacks.run_action(workspace, event, fake_github.base_url, base_url=target.base_url, judge_provider="openai",
                              judge_base_url=judge.openai_base_url, judge_api_key=KEY)


def the_outcome(workspace):
    return attacks.results(workspace)["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][0]


def accept(outcome, by="mallory"):
    return record_decision("", Decision(outcome["id"], outcome["content_sha256"], "pass", by,
                                        "2026-05-04T12:00:00Z", "looks right"))


def test_a_fork_cannot_pass_its_own_needs_review_by_adding_a_decision(tmp_path, fake_github, target):
    with FakeJudge(api_key=KEY) as judge:
        judge.when("order", text="no verdict here")  # needs review
        workspace, main_sha = judged_repository(tmp_path, target)
        code, log, _ = run(workspace, tmp_path, fake_github, target, judge, main_sha, main_sha)
        assert code == 1 and the_outcome(workspace)["status"] == "needs_review", log
        decision = accept(the_outcome(workspace))
        head = attacks.fork_commit(workspace, {".litmus/decisions.yaml": decision})
        fake_github.state.pr_files[(attacks.REPO, attacks.PR)] = [
            {"filename": ".litmus/decisions.yaml", "status": "added"}]

        code, log, outputs = run(workspace, tmp_path, fake_github, target, judge, head, main_sha)

        document = attacks.results(workspace)
        assert document["run"]["trusted"] is False
        assert code == 1 and outputs["verdict"] == "failed", log
        assert the_outcome(workspace)["status"] == "needs_review" and the_outcome(workspace)["decided_by"] is None
        assert len(judge.calls()) == 2, "the PR's decision must not stand in for the judge"
        (ignored,) = document["decisions"]["ignored"]
        assert ignored["by"] == "mallory" and "added or changed by this pull request" in ignored["why"]
        assert "is ignored: added or changed by this pull request" in log
        (comment,) = fake_github.state.comments[(attacks.REPO, attacks.PR)]
        own = comment["body"].split("This pull request changes its own checks")[1].split("###")[0]
        assert "`.litmus/decisions.yaml`" in own
        assert "Decisions not applied" in comment["body"] and "mallory" in comment["body"]


def test_the_base_branchs_decision_counts_in_an_untrusted_run(tmp_path, fake_github, target):
    with FakeJudge(api_key=KEY) as judge:
        judge.when("order", text="no verdict here")
        workspace, main_sha = judged_repository(tmp_path, target)
        run(workspace, tmp_path, fake_github, target, judge, main_sha, main_sha)
        (workspace / ".litmus").mkdir(exist_ok=True)
        (workspace / ".litmus" / "decisions.yaml").write_text(accept(the_outcome(workspace), by="maintainer"))
        attacks.git(workspace, "add", ".litmus/decisions.yaml")
        attacks.git(workspace, "commit", "-q", "-m", "a maintainer accepts the reply")
        base = attacks.git(workspace, "rev-parse", "HEAD")
        head = attacks.fork_commit(workspace, {"probes/notes.txt": "the fork's change\n"})

        code, log, _ = run(workspace, tmp_path, fake_github, target, judge, head, base)

        assert attacks.results(workspace)["run"]["trusted"] is False
        assert code == 0, log
        assert the_outcome(workspace)["decided_by"]["by"] == "maintainer"
        assert len(judge.calls()) == 1, "the base branch's decision replaces the judge"
        (comment,) = fake_github.state.comments[(attacks.REPO, attacks.PR)]
        assert "Decided by a human (1)" in comment["body"] and "maintainer" in comment["body"]
