"""The PR comment commands end to end, through the real `litmus action` entrypoint against the fake GitHub.

A real git repository is the pull request's branch (`probes`, on top of `main`, in this repository); the
fake GitHub knows the same commits (their history for the trust decision, their trees for the contents and
Git database endpoints). A `pull_request` run makes the results, with one `needs_review`, and fails the
check; its `litmus-report` artifact is what the `issue_comment` job decides on. The commands job has no
checkout: it is an empty workspace, as in docs/workflows/litmus-commands.yml.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml

import decisions.test_decision_provenance as provenance
import github.test_trust_attacks as attacks
import references.reference_helpers as reference_helpers
from litmus.decisions import DECISIONS_FILE, Decision
from litmus.github.decision_records import RECORD_MARKER, record_block
from litmus.load import load_suites
from litmus.references import patch, plan_reference_updates
from litmus.report.markdown import MARKER
from litmus.results import load_results
from support.cli import litmus
from support.fake_github import BOT, FORK, REPOSITORY
from support.fake_judge import FakeJudge

EVENTS = Path(__file__).parent / "events"
REPO = attacks.REPO
PR = 42
KEY = attacks.CREDENTIALS["INPUT_JUDGE-API-KEY"]
SUITE = """\
version: 1
suite: Orders
flows:
  - name: ask
    steps:
      - name: one
        request: {url: /answer}
        assertions:
          - {type: status_code, expected: 200}
          - {type: llm_rubric, rubric: "Names the delivery day"}
"""


def tracked_files(workspace: Path, commit: str) -> dict[str, bytes]:
    names = attacks.git(workspace, "ls-tree", "-r", "--name-only", commit).splitlines()
    return {name: subprocess.run(["git", "-C", str(workspace), "show", f"{commit}:{name}"], check=True,
                                 capture_output=True).stdout for name in names}


class PullRequestRepo:
    """The repository of a same-repository pull request, in git and in the fake GitHub alike."""

    def __init__(self, tmp_path: Path, github, target, judge, probes: dict[str, str] | None = None,
                 head_repository: tuple[str, int] = REPOSITORY) -> None:
        """`probes`: the repository's probe files (path -> text; default: SUITE, whose reply needs review)."""
        self.tmp_path, self.github, self.target, self.judge = tmp_path, github, target, judge
        if probes is None:
            target.json("/answer", {"reply": "Your parcel arrives some day."})
            judge.when("delivery day", text="no verdict here")  # unparseable, no tier 2: needs review
            probes = {"probes/orders.yaml": SUITE}
        self.workspace, self.main = attacks.make_repository(tmp_path)
        for name, text in probes.items():
            (self.workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (self.workspace / name).write_text(text)
        (self.workspace / "litmus.yaml").write_text("judge:\n  provider: openai\n  model: judge-small\n")
        self.main = self.commit("judged probes")
        attacks.git(self.workspace, "checkout", "-q", "-b", "probes")
        (self.workspace / "probes" / "notes.txt").write_text("the pull request's change\n")
        self.head = self.commit("the pull request")
        github.state.load_git(self.workspace, branches=["main", "probes"])
        github.state.add_commit(tracked_files(self.workspace, self.main), sha=self.main, branch="main")
        github.state.add_commit(tracked_files(self.workspace, self.head), [self.main], sha=self.head,
                                branch="probes")
        github.state.add_pr(REPO, PR, head_sha=self.head, base_sha=self.main, head_repository=head_repository)

    def commit(self, message: str) -> str:
        attacks.git(self.workspace, "add", "-A")
        attacks.git(self.workspace, "commit", "-q", "-m", message)
        return attacks.git(self.workspace, "rev-parse", "HEAD")

    def pull_request_run(self, head: str) -> tuple[int, str, dict]:
        """The PR workflow's run of `head` (checked out), as litmus-pull-request.yml makes it."""
        event = json.loads((EVENTS / "pull_request.json").read_text("utf-8"))
        event["pull_request"]["head"]["sha"], event["pull_request"]["base"]["sha"] = head, self.main
        path = self.tmp_path / "pull_request.json"
        path.write_text(json.dumps(event))
        return attacks.run_action(self.workspace, path, self.github.base_url, event_name="pull_request",
                                  base_url=self.target.base_url, judge_provider="openai",
                                  judge_base_url=self.judge.openai_base_url, judge_api_key=KEY)

    def upload(self, head: str, run_id: int = 501, **run) -> dict:
        """The run's `litmus-report` artifact, as actions/upload-artifact leaves it."""
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as bundle:
            bundle.writestr("results.json", (self.workspace / "litmus-report" / "results.json").read_bytes())
        made = self.github.state.add_run(run_id, **{"event": "pull_request", "head_branch": "probes",
                                                    "head_sha": head, **run})
        self.github.state.add_artifact(made, archive.getvalue(), name="litmus-report")
        return made

    def outcome(self) -> dict:
        return attacks.results(self.workspace)["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][1]


def comment_event(tmp_path: Path, body: str, *, login: str = "ann", kind: str = "User", action: str = "created",
                  association: str = "MEMBER", number: int = PR, on_pull_request: bool = True) -> Path:
    """GitHub's `issue_comment` payload for a comment on pull request `number` (tests/github/events/)."""
    event = json.loads((EVENTS / "issue_comment_pr.json").read_text("utf-8"))
    event["action"] = action
    event["issue"]["number"] = number
    if not on_pull_request:
        del event["issue"]["pull_request"]
    comment = event["comment"]
    comment.update({"body": body, "author_association": association, "id": 900 + len(body),
                    "html_url": f"https://github.com/{REPO}/pull/{number}#issuecomment-{900 + len(body)}"})
    comment["user"].update({"login": login, "type": kind})
    event["sender"].update({"login": login, "type": kind})
    path = tmp_path / f"comment-{len(list(tmp_path.glob('comment-*.json')))}.json"
    path.write_text(json.dumps(event))
    return path


def run_command(tmp_path: Path, event: Path, gh_url: str, **inputs: str) -> tuple[int, str]:
    """`python -m litmus action` on `issue_comment`, in an empty workspace (no checkout), with what a runner gives."""
    workspace = tmp_path / "commands-job"
    workspace.mkdir(exist_ok=True)
    environ = dict(attacks.CREDENTIALS)
    environ.update({
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": gh_url,
        "GITHUB_SHA": "f" * 40, "GITHUB_REF": "refs/heads/main", "GITHUB_RUN_ID": "777",
        "INPUT_RESULTS-WORKFLOW": "litmus.yml", "INPUT_FAIL-ON": "suite",
        **{f"INPUT_{name.replace('_', '-').upper()}": value for name, value in inputs.items()},
    })
    done = litmus(workspace, "action", env=environ)
    attacks.assert_no_credential_in(done.stdout + done.stderr)
    return done.returncode, done.stdout + done.stderr


def replies(github) -> list[dict]:
    """The comments on the pull request other than the sticky report, with the body's Markdown escapes undone
    (`plain`)."""
    return [{**c, "plain": plain(c["body"])} for c in github.state.comments.get((REPO, PR), [])
            if MARKER not in c["body"]]


def plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def sticky(github) -> dict:
    (comment,) = [c for c in github.state.comments.get((REPO, PR), []) if MARKER in c["body"]]
    return comment


def checks_on(github, sha: str) -> list[dict]:
    return [run for run in github.state.check_runs.values() if run["head_sha"] == sha]


def decisions_at(github, sha: str) -> list[dict]:
    return yaml.safe_load(github.state.files_at(sha)[DECISIONS_FILE])


@pytest.fixture
def pr(tmp_path, fake_github, target):
    with FakeJudge(api_key=KEY) as judge:
        repo = PullRequestRepo(tmp_path, fake_github, target, judge)
        code, log, outputs = repo.pull_request_run(repo.head)
        assert code == 1 and outputs["verdict"] == "failed", log
        assert repo.outcome()["status"] == "needs_review"
        (check,) = checks_on(fake_github, repo.head)
        assert check["conclusion"] == "failure"
        repo.upload(repo.head)
        yield repo


def test_accept_from_a_writer_commits_the_decision_and_turns_the_check_green(tmp_path, fake_github, pr):
    fake_github.state.permissions["ann"] = "write"
    finding = pr.outcome()["id"]
    event = comment_event(tmp_path, f"/litmus accept {finding} looks right\nthe rest is not part of it")

    code, log = run_command(tmp_path, event, fake_github.base_url)

    assert code == 0, log
    head = fake_github.state.branches["probes"]
    assert head != pr.head and fake_github.state.commits[head]["parents"] == [pr.head]
    (patch,) = fake_github.calls("PATCH", "/git/refs/heads/probes")
    assert patch.body == {"sha": head, "force": False}
    (decision,) = decisions_at(fake_github, head)
    comment = json.loads(event.read_text())["comment"]
    assert decision == {"finding": finding, "content": pr.outcome()["content_sha256"], "verdict": "pass",
                        "by": "ann", "at": comment["created_at"], "reason": "looks right", "url": comment["html_url"]}
    (check,) = checks_on(fake_github, head)
    assert check["conclusion"] == "success" and "decided by ann" in check["output"]["title"]
    body = sticky(fake_github)["body"]
    assert "Decided by a human" in body and "ann" in body and "looks right" in body
    (reply,) = replies(fake_github)
    assert reply["user"]["login"] == BOT and reply["body"].startswith(RECORD_MARKER)
    assert "@ann accepted" in reply["body"] and "now **passed** (was failed)" in reply["body"]
    # Nothing of the pull request's was fetched: its files were read through the contents API only.
    assert not fake_github.calls("GET", "/tarball|/zipball")
    assert [c.query["ref"] for c in fake_github.calls("GET", "/contents/")] == [pr.head]


def test_a_second_command_right_after_the_first_commits_on_top_and_the_next_run_needs_no_judge(
        tmp_path, fake_github, pr, target):
    fake_github.state.permissions["ann"] = "write"
    finding = pr.outcome()["id"]
    run_command(tmp_path, comment_event(tmp_path, f"/litmus reject {finding} wrong day"), fake_github.base_url)
    first = fake_github.state.branches["probes"]
    assert checks_on(fake_github, first)[0]["conclusion"] == "failure"

    code, log = run_command(tmp_path, comment_event(tmp_path, f"/litmus accept {finding} on second thought"),
                            fake_github.base_url)

    assert code == 0, log
    second = fake_github.state.branches["probes"]
    assert fake_github.state.commits[second]["parents"] == [first]
    (decision,) = decisions_at(fake_github, second)
    assert (decision["verdict"], decision["reason"]) == ("pass", "on second thought")
    assert checks_on(fake_github, second)[0]["conclusion"] == "success"
    assert "only files these commands wrote changed" in replies(fake_github)[-1]["body"]

    # The next `litmus run` of the branch as the commands left it: the same reply is not judged again.
    (pr.workspace / ".litmus").mkdir(exist_ok=True)
    (pr.workspace / DECISIONS_FILE).write_bytes(fake_github.state.files_at(second)[DECISIONS_FILE])
    head = pr.commit("the commands' decisions, as pulled")
    fake_github.state.load_git(pr.workspace, branches=["main", "probes"])
    calls = len(pr.judge.calls())
    code, log, _ = pr.pull_request_run(head)
    assert code == 0 and pr.outcome()["decided_by"]["by"] == "ann", log
    assert len(pr.judge.calls()) == calls, "a decided reply must not reach the judge"
    target.json("/answer", {"reply": "Your parcel arrives on Monday."})
    code, log, _ = pr.pull_request_run(head)
    assert code == 1 and pr.outcome()["decided_by"] is None and len(pr.judge.calls()) == calls + 1, log


@pytest.mark.parametrize("who, permission, association", [("rita", "read", "CONTRIBUTOR"),
                                                           ("mallory", "read", "NONE"),
                                                           ("newbie", "write", "FIRST_TIMER")])
def test_a_commenter_without_write_permission_is_answered_and_nothing_changes(tmp_path, fake_github, pr, who,
                                                                               permission, association):
    fake_github.state.permissions[who] = permission
    event = comment_event(tmp_path, f"/litmus accept {pr.outcome()['id']} trust me", login=who,
                          association=association)

    code, log = run_command(tmp_path, event, fake_github.base_url)

    assert code == 0, log
    assert fake_github.state.branches["probes"] == pr.head and not fake_github.calls("POST", "/git/")
    assert len(fake_github.state.check_runs) == 1
    (reply,) = replies(fake_github)
    assert f"@{who} nothing changed" in reply["body"] and not reply["body"].startswith(RECORD_MARKER)
    if association == "FIRST_TIMER":
        assert not fake_github.calls("GET", "/permission$")
    else:
        assert "write or admin permission" in reply["plain"] and "'read'" in reply["plain"]
    assert f"author_association {association}" in log


@pytest.mark.parametrize("case", ["bot", "quoted", "edited", "deleted", "later line", "issue", "not a command"])
def test_comments_that_are_no_command_change_nothing_and_get_no_reply(tmp_path, fake_github, pr, case):
    fake_github.state.permissions.update({"ann": "write", "helper[bot]": "admin"})
    command = f"/litmus accept {pr.outcome()['id']} looks right"
    event = {
        "bot": lambda: comment_event(tmp_path, command, login="helper[bot]", kind="Bot"),
        "quoted": lambda: comment_event(tmp_path, f"> {command}\n\nI agree with this"),
        "edited": lambda: comment_event(tmp_path, command, action="edited"),
        "deleted": lambda: comment_event(tmp_path, command, action="deleted"),
        "later line": lambda: comment_event(tmp_path, f"Thanks!\n{command}"),
        "issue": lambda: comment_event(tmp_path, command, on_pull_request=False),
        "not a command": lambda: comment_event(tmp_path, f"/litmus acceptance {pr.outcome()['id']}"),
    }[case]()
    calls = len(fake_github.state.calls)

    code, log = run_command(tmp_path, event, fake_github.base_url)

    assert code == 0 and "Litmus: no command:" in log, log
    assert fake_github.state.calls[calls:] == [] and replies(fake_github) == []
    assert fake_github.state.branches["probes"] == pr.head


@pytest.mark.parametrize("finding", ["../../.github/workflows/x.yml", "$(id)", "0123abcd" * 3, "DEADBEEF" * 4])
def test_an_id_that_is_no_finding_id_is_never_used_as_anything(tmp_path, fake_github, pr, finding):
    fake_github.state.permissions["ann"] = "write"
    code, log = run_command(tmp_path, comment_event(tmp_path, f"/litmus accept {finding}"), fake_github.base_url)
    assert code == 0, log
    (reply,) = replies(fake_github)
    assert "I could not read this command" in reply["body"]
    assert all(finding not in call.path for call in fake_github.state.calls)
    assert fake_github.state.branches["probes"] == pr.head and not fake_github.calls("GET", "/contents/")


def test_an_unknown_or_deterministic_finding_is_refused_with_the_reason(tmp_path, fake_github, pr):
    fake_github.state.permissions["ann"] = "write"
    status_check = attacks.results(pr.workspace)["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][0]["id"]
    run_command(tmp_path, comment_event(tmp_path, f"/litmus accept {status_check}"), fake_github.base_url)
    finding = pr.outcome()["id"]
    typo = finding[:-1] + ("0" if finding[-1] != "0" else "1")
    run_command(tmp_path, comment_event(tmp_path, f"/litmus reject {typo}"), fake_github.base_url)
    deterministic, unknown = replies(fake_github)
    assert "deterministic check" in deterministic["plain"] and "nothing changed" in deterministic["plain"]
    assert f"no finding '{typo}'" in unknown["plain"] and f"did you mean '{finding}'" in unknown["plain"]
    assert fake_github.state.branches["probes"] == pr.head


def test_a_push_between_reading_and_updating_the_branch_fails_the_command_cleanly(tmp_path, fake_github, pr):
    fake_github.state.permissions["ann"] = "write"
    pushed = {}

    def someone_pushes():
        pushed["sha"] = fake_github.state.add_commit({"probes/orders.yaml": "changed\n"}, [pr.head], branch="probes")

    fake_github.state.before["update_ref"] = someone_pushes
    code, log = run_command(tmp_path, comment_event(tmp_path, f"/litmus accept {pr.outcome()['id']}"),
                            fake_github.base_url)

    assert code == 0, log
    assert fake_github.state.branches["probes"] == pushed["sha"], "the push must not be overwritten"
    (reply,) = replies(fake_github)
    assert "branch moved" in reply["body"] and "nothing was committed" in reply["body"]
    assert not reply["body"].startswith(RECORD_MARKER) and len(fake_github.state.check_runs) == 1


def test_results_of_a_head_whose_probes_changed_since_are_not_used(tmp_path, fake_github, pr):
    """The branch moved on with a change to the probes: the results of the old head no longer hold."""
    fake_github.state.permissions["ann"] = "write"
    moved = fake_github.state.add_commit({**fake_github.state.files_at(pr.head), "probes/orders.yaml": "changed\n"},
                                         [pr.head], branch="probes")
    fake_github.state.pulls[(REPO, PR)]["head"]["sha"] = moved

    run_command(tmp_path, comment_event(tmp_path, f"/litmus accept {pr.outcome()['id']}"), fake_github.base_url)

    (check,) = checks_on(fake_github, moved)
    assert check["conclusion"] == "neutral" and "changes probes/orders.yaml" in plain(check["output"]["summary"])
    (reply,) = replies(fake_github)
    assert "no results for" in reply["body"] and fake_github.state.branches["probes"] == moved


@pytest.mark.parametrize("attack", ["another workflow", "a fork's run", "bad digest", "another head"])
def test_results_without_provenance_give_a_neutral_check_and_no_decision(tmp_path, fake_github, pr, attack):
    fake_github.state.permissions["ann"] = "write"
    fake_github.state.workflow_runs.clear()
    if attack == "another workflow":
        pr.upload(pr.head, 601, path=".github/workflows/evil.yml")
    elif attack == "a fork's run":
        pr.upload(pr.head, 602, head_repository=FORK)
    elif attack == "bad digest":
        run = pr.upload(pr.head, 603)
        fake_github.state.artifacts[run["id"]][0]["digest"] = "sha256:" + "0" * 64
    else:
        pr.upload("9" * 40, 604)

    run_command(tmp_path, comment_event(tmp_path, f"/litmus accept {pr.outcome()['id']}"), fake_github.base_url)

    neutral = [c for c in checks_on(fake_github, pr.head) if c["conclusion"] == "neutral"]
    assert len(neutral) == 1 and "not vouched for" in neutral[0]["output"]["title"]
    why = {"another workflow": None, "a fork's run": "a fork's", "bad digest": "do not match its digest",
           "another head": None}[attack]
    if why:
        assert why in plain(neutral[0]["output"]["summary"])
    assert fake_github.state.branches["probes"] == pr.head and not fake_github.calls("POST", "/git/")
    assert "nothing changed" in replies(fake_github)[0]["body"]


def test_a_pull_request_target_run_of_a_fork_is_a_source_but_its_pull_request_run_is_not(tmp_path, fake_github, pr):
    """The base branch's workflow made the first; the fork's own workflow file made the second."""
    fake_github.state.permissions["ann"] = "write"
    fake_github.state.workflow_runs.clear()
    pr.upload(pr.head, 701, event="pull_request_target", head_repository=FORK)
    run_command(tmp_path, comment_event(tmp_path, f"/litmus accept {pr.outcome()['id']}"), fake_github.base_url)
    head = fake_github.state.branches["probes"]
    assert head != pr.head and checks_on(fake_github, head)[0]["conclusion"] == "success"


def test_a_malformed_event_field_is_an_error_naming_it(tmp_path, fake_github):
    event = json.loads((EVENTS / "issue_comment_pr.json").read_text("utf-8"))
    event["comment"]["user"]["login"] = "ann\n::set-output name=x::y"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(event))
    code, log = run_command(tmp_path, path, fake_github.base_url)
    assert code == 2 and "comment.user.login" in log and fake_github.state.calls == []



# ---- a fork's pull request: no push, a patch; the recorded decision counts in later untrusted runs


@pytest.fixture
def fork_pr(tmp_path, fake_github, target):
    """A fork's pull request, checked by the untrusted `pull_request_target` run of docs/security.md: one
    `needs_review`, the check failed, its results uploaded by that (base-branch workflow) run."""
    with FakeJudge(api_key=KEY) as judge:
        judge.when("order", text="no verdict here")
        workspace, main = provenance.judged_repository(tmp_path, target)
        head = attacks.fork_commit(workspace, {"probes/notes.txt": "the fork's change\n"})
        fake_github.state.add_commit(tracked_files(workspace, main), sha=main, branch="main")
        fake_github.state.add_commit(tracked_files(workspace, head), [main], sha=head)
        fake_github.state.add_pr(REPO, attacks.PR, head_sha=head, base_sha=main, head_repository=FORK)
        code, log, _ = provenance.run(workspace, tmp_path, fake_github, target, judge, head, main)
        assert code == 1 and provenance.the_outcome(workspace)["status"] == "needs_review", log
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as bundle:
            bundle.writestr("results.json", (workspace / "litmus-report" / "results.json").read_bytes())
        run = fake_github.state.add_run(801, event="pull_request_target", head_branch="probes", head_sha=head,
                                        head_repository=FORK)
        fake_github.state.add_artifact(run, archive.getvalue(), name="litmus-report")
        yield workspace, main, head, judge


def fork_comments(github) -> list[dict]:
    return github.state.comments.get((REPO, attacks.PR), [])


def test_a_command_on_a_fork_replies_with_the_patch_and_counts_in_the_next_untrusted_run(
        tmp_path, fake_github, target, fork_pr):
    workspace, main, head, judge = fork_pr
    fake_github.state.permissions["ann"] = "admin"
    finding = provenance.the_outcome(workspace)["id"]

    code, log = run_command(tmp_path, comment_event(tmp_path, f"/litmus accept {finding} fine by me",
                                                    number=attacks.PR), fake_github.base_url)

    assert code == 0, log
    assert not fake_github.calls("POST", "/git/") and not fake_github.calls("PATCH", "/git/")
    (reply,) = [c for c in fork_comments(fake_github) if c["body"].startswith(RECORD_MARKER)]
    patch = reply["body"].split("```diff\n")[1].split("\n```")[0]
    assert patch.startswith(f"diff --git a/{DECISIONS_FILE} b/{DECISIONS_FILE}\nnew file mode 100644\n--- /dev/null\n")
    assert f"\n+- finding: {finding}\n" in patch
    (tmp_path / "decision.patch").write_text(patch + "\n")
    attacks.git(workspace, "apply", "--check", str(tmp_path / "decision.patch"))
    checks = [c for c in checks_on(fake_github, head) if "decided by ann" in c["output"]["title"]]
    assert [c["conclusion"] for c in checks] == ["success"]

    # The fork's next untrusted run: the base branch has no decision, but the action's own record counts.
    calls = len(judge.calls())
    code, log, _ = provenance.run(workspace, tmp_path, fake_github, target, judge, head, main)
    assert code == 0, log
    assert provenance.the_outcome(workspace)["decided_by"]["by"] == "ann"
    assert len(judge.calls()) == calls, "the recorded decision replaces the judge"


def test_a_record_in_a_comment_not_written_by_the_actions_token_counts_for_nothing(
        tmp_path, fake_github, target, fork_pr):
    workspace, main, head, judge = fork_pr
    forged = provenance.the_outcome(workspace)
    decision = Decision(forged["id"], forged["content_sha256"], "pass", "maintainer", "2026-05-04T12:00:00Z", "ok")
    # The attacker's own comment, shaped exactly like the action's record.
    fake_github.state.add_comment(REPO, attacks.PR, record_block([decision], None) + "\nlooks right", "mallory")
    calls = len(judge.calls())

    code, log, outputs = provenance.run(workspace, tmp_path, fake_github, target, judge, head, main)

    assert code == 1 and outputs["verdict"] == "failed", log
    assert provenance.the_outcome(workspace)["decided_by"] is None
    assert len(judge.calls()) == calls + 1, "a forged record must not stand in for the judge"
    assert "decision record" not in log


def test_a_record_quoted_inside_the_actions_own_report_counts_for_nothing(tmp_path, fake_github, target, fork_pr):
    """Text the pull request controls can end up inside the action's sticky comment (a reply body, a name):
    only a comment that *starts* with the marker is a record."""
    workspace, main, head, judge = fork_pr
    forged = provenance.the_outcome(workspace)
    decision = Decision(forged["id"], forged["content_sha256"], "pass", "maintainer", "2026-05-04T12:00:00Z", "ok")
    fake_github.state.add_comment(REPO, attacks.PR, "## Litmus\n\n```\n" + record_block([decision], None) + "```\n",
                                  BOT)
    calls = len(judge.calls())
    code, log, _ = provenance.run(workspace, tmp_path, fake_github, target, judge, head, main)
    assert code == 1 and len(judge.calls()) == calls + 1, log


# ---- a command whose commit lands but whose check run GitHub refuses


def test_a_check_run_refused_after_the_commit_is_said_and_the_commit_still_recorded(tmp_path, fake_github, pr):
    fake_github.state.permissions["ann"] = "write"
    fake_github.state.fail["create_check_run"] = 500

    code, log = run_command(tmp_path, comment_event(tmp_path, f"/litmus accept {pr.outcome()['id']} fine"),
                            fake_github.base_url)

    assert code == 0, log
    head = fake_github.state.branches["probes"]
    assert head != pr.head and decisions_at(fake_github, head)[0]["by"] == "ann"
    (reply,) = replies(fake_github)
    assert reply["body"].startswith(RECORD_MARKER) and "nothing changed" not in reply["plain"]
    assert f"committed as {head[:12]}" in reply["plain"]
    assert f"the check run on {head[:12]} was not updated" in reply["plain"] and "HTTP 500" in reply["plain"]
    assert "Decided by a human" in sticky(fake_github)["body"], "the comment is still updated"


# ---- /litmus accept-references [SUITE]

RETURNS_SUITE = """\
version: 1
suite: Returns
context:
  name: returns
  scenarios_file: data/returns.csv
flows:
  - name: Ask
    steps:
      - name: ask
        request: {method: POST, url: /chat, json: {order_id: "{{ scenario.data.order_id }}"}}
        assertions:
          - type: accurate_with_scenario_context
            select: $.reply
"""
RETURNS_CSV = "id,order_id,reference_response\nr1,21,Order 21 is refunded.\nr2,22,Order 22 arrives on 5 December.\n"
REFERENCE_PROBES = {"probes/orders.yaml": reference_helpers.SUITE,
                    "probes/answers/filed.txt": "Order 8 was delivered.\n",
                    "probes/returns.yaml": RETURNS_SUITE, "probes/data/returns.csv": RETURNS_CSV}


def reference_pr(tmp_path, github, target, judge, head_repository=REPOSITORY, event="pull_request") -> PullRequestRepo:
    """A pull request whose run judged each scenario's reply against its reference (needs review: the judge
    answers nothing it can read), its results uploaded by a run of `event`."""
    target.route("/chat", lambda req: (200, {"Content-Type": "application/json"}, json.dumps(
        {"reply": reference_helpers.reply_for(req.json()["order_id"])}).encode()))
    judge.when(None, text="no verdict here")
    repo = PullRequestRepo(tmp_path, github, target, judge, REFERENCE_PROBES, head_repository)
    code, log, _ = repo.pull_request_run(repo.head)
    assert code == 1, log
    repo.upload(repo.head, event=event, head_repository=head_repository)
    return repo


def planned(repo: PullRequestRepo, suite_names=()) -> list:
    """The edits `litmus accept-references` makes on a checkout of the head, with the same results."""
    result = load_results(repo.workspace / "litmus-report" / "results.json")
    suites = load_suites([repo.workspace / "probes"], root=repo.workspace, environ={}, strict_env=False).suites
    plan = plan_reference_updates(result, suites, repo.workspace, suite_names)
    assert not plan.refusals and plan.edits
    return plan.edits


@pytest.fixture
def references_judge():
    with FakeJudge(api_key=KEY) as judge:
        yield judge


def test_accept_references_commits_exactly_the_planned_bytes_and_replies_with_the_diff(
        tmp_path, fake_github, target, references_judge):
    repo = reference_pr(tmp_path, fake_github, target, references_judge)
    fake_github.state.permissions["ann"] = "write"
    edits = planned(repo)
    assert {e.display for e in edits} == {"probes/orders.yaml", "probes/answers/filed.txt", "probes/data/returns.csv",
                                          "probes/references/orders/delayed.txt",
                                          "probes/references/orders/fresh.txt"}

    code, log = run_command(tmp_path, comment_event(tmp_path, "/litmus accept-references"), fake_github.base_url)

    assert code == 0, log
    head = fake_github.state.branches["probes"]
    assert fake_github.state.commits[head]["parents"] == [repo.head]
    before = fake_github.state.files_at(repo.head)
    assert fake_github.state.files_at(head) == {**before, **{e.display: e.new for e in edits}}
    (reply,) = replies(fake_github)
    assert reply["body"].startswith(RECORD_MARKER) and f"committed as {head[:12]} (5 files changed)" in reply["plain"]
    shown = reply["body"].split("```diff\n")[1].split("\n```")[0]
    assert shown + "\n" == patch(edits)
    assert "\n-      reference_response: Order 1042 is delayed.   # approved in March\n" in shown
    assert "\n+r1,21,Order 21 arrives on 5 December.\n" in shown
    assert "a reference change does not change it" in reply["plain"]
    (check,) = checks_on(fake_github, head)
    assert check["conclusion"] == "failure" and "references accepted by ann" in check["output"]["title"]
    # Nothing of the pull request's was fetched or checked out: its files came through the contents API, at the head.
    assert not fake_github.calls("GET", "/tarball|/zipball")
    assert {c.query["ref"] for c in fake_github.calls("GET", "/contents")} == {repo.head}

    # Results of the first head still hold after the handler's own commit: a later command decides on them.
    finding = attacks.results(repo.workspace)["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][0]["id"]
    run_command(tmp_path, comment_event(tmp_path, f"/litmus reject {finding} wrong"), fake_github.base_url)
    third = fake_github.state.branches["probes"]
    assert fake_github.state.commits[third]["parents"] == [head]
    assert "only files these commands wrote changed" in replies(fake_github)[-1]["plain"]

    # A person's later change to a reference file is not the handler's: the results no longer hold.
    pushed = fake_github.state.add_commit({**fake_github.state.files_at(third),
                                           "probes/references/orders/fresh.txt": "edited by hand\n"},
                                          [third], branch="probes")
    run_command(tmp_path, comment_event(tmp_path, f"/litmus accept {finding} fine"), fake_github.base_url)
    (neutral,) = checks_on(fake_github, pushed)
    assert neutral["conclusion"] == "neutral" and "probes/references/orders/fresh.txt" in plain(
        neutral["output"]["summary"])


def test_accept_references_on_a_fork_replies_with_a_patch_that_applies_to_the_head(
        tmp_path, fake_github, target, references_judge):
    repo = reference_pr(tmp_path, fake_github, target, references_judge, head_repository=FORK,
                        event="pull_request_target")
    fake_github.state.permissions["ann"] = "admin"

    event = comment_event(tmp_path, "/litmus accept-references Returns")
    code, log = run_command(tmp_path, event, fake_github.base_url)

    assert code == 0, log
    assert not fake_github.calls("POST", "/git/") and not fake_github.calls("PATCH", "/git/")
    (reply,) = replies(fake_github)
    assert "in a fork" in reply["plain"] and not reply["body"].startswith(RECORD_MARKER)
    shown = reply["body"].split("```diff\n")[1].split("\n```")[0]
    assert shown + "\n" == patch(planned(repo, ["Returns"]))
    (tmp_path / "references.patch").write_text(shown + "\n")
    attacks.git(repo.workspace, "apply", "--check", str(tmp_path / "references.patch"))
    checks = [c for c in checks_on(fake_github, repo.head) if "references accepted by ann" in c["output"]["title"]]
    assert [c["conclusion"] for c in checks] == ["failure"]


@pytest.mark.parametrize("spoil, why", [
    ("truncated", "cut at the body cap"),
    ("disagree", "the runs disagree"),
])
def test_accept_references_refuses_what_is_not_the_whole_one_reply_and_commits_nothing(
        tmp_path, fake_github, target, references_judge, spoil, why):
    repo = reference_pr(tmp_path, fake_github, target, references_judge)
    fake_github.state.permissions["ann"] = "write"
    results = attacks.results(repo.workspace)
    flow_runs = results["suites"][0]["flow_runs"]
    if spoil == "truncated":
        flow_runs[0]["steps"][0]["assertions"][0]["reply"]["truncated"] = True
    else:  # a second run of the same scenario that answered otherwise
        other = json.loads(json.dumps(flow_runs[0]))
        other["run_index"] = 1
        other["steps"][0]["assertions"][0]["reply"]["text"] = "Order 1042 is lost."
        flow_runs.append(other)
    (repo.workspace / "litmus-report" / "results.json").write_text(json.dumps(results))
    fake_github.state.workflow_runs.clear()
    repo.upload(repo.head, 502)
    checks = len(fake_github.state.check_runs)

    code, log = run_command(tmp_path, comment_event(tmp_path, "/litmus accept-references Orders"), fake_github.base_url)

    assert code == 0, log
    (reply,) = replies(fake_github)
    assert "@ann nothing changed" in reply["plain"] and why in reply["plain"] and "delayed" in reply["plain"]
    assert "Nothing was committed" in reply["plain"]
    assert fake_github.state.branches["probes"] == repo.head and not fake_github.calls("POST", "/git/")
    assert len(fake_github.state.check_runs) == checks


@pytest.mark.parametrize("who, suite, why", [
    ("ann", "../../etc", "no suite"),
    ("ann", "Order", "did you mean 'Orders'"),
    ("rita", "Orders", "'read'"),
])
def test_accept_references_for_no_suite_of_the_results_or_from_a_reader_reads_nothing(
        tmp_path, fake_github, target, references_judge, who, suite, why):
    repo = reference_pr(tmp_path, fake_github, target, references_judge)
    fake_github.state.permissions.update({"ann": "write", "rita": "read"})

    event = comment_event(tmp_path, f"/litmus accept-references {suite}", login=who)
    run_command(tmp_path, event, fake_github.base_url)

    (reply,) = replies(fake_github)
    assert f"@{who} nothing changed" in reply["plain"] and why in reply["plain"]
    assert not fake_github.calls("GET", "/contents") and all("etc" not in c.path for c in fake_github.state.calls)
    assert fake_github.state.branches["probes"] == repo.head


def test_accept_references_when_someone_pushes_meanwhile_fails_cleanly(tmp_path, fake_github, target,
                                                                        references_judge):
    repo = reference_pr(tmp_path, fake_github, target, references_judge)
    fake_github.state.permissions["ann"] = "write"
    pushed = {}

    def someone_pushes():
        pushed["sha"] = fake_github.state.add_commit({"probes/orders.yaml": "changed\n"}, [repo.head], branch="probes")

    fake_github.state.before["update_ref"] = someone_pushes
    checks = len(fake_github.state.check_runs)

    code, log = run_command(tmp_path, comment_event(tmp_path, "/litmus accept-references"), fake_github.base_url)

    assert code == 0, log
    assert fake_github.state.branches["probes"] == pushed["sha"], "the push must not be overwritten"
    (reply,) = replies(fake_github)
    assert "branch moved" in reply["plain"] and "nothing was committed" in reply["plain"]
    assert not reply["body"].startswith(RECORD_MARKER) and len(fake_github.state.check_runs) == checks
