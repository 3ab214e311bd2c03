"""The action on `issue_comment`: carry out a `/litmus accept|reject FINDING-ID [reason]` or
`/litmus accept-references [SUITE]` comment.

`litmus action` comes here when the event is `issue_comment`. Nothing from the pull request is fetched,
checked out or run: its results come from a results artifact of the expected workflow's runs
(`artifacts.fetch_pr_results`, digest checked), its files are read through the contents API as bytes and
parsed as data, and the verdict is decided again from the stored results (`decisions.apply_decisions`).

In order:
  1. the command (`pr_command.read_command`): edits, bots, quoted lines and issues are ignored; a malformed
     command is answered with the usage;
  2. the commenter's permission (`write` or `admin`, from the collaborator-permission endpoint): others get
     a reply saying why;
  3. the pull request's current head H' and results that hold for it: made for H', or for an earlier head H
     when H...H' changes only files this handler wrote (`.litmus/decisions.yaml`, and each file an earlier
     accept-references committed, with the blob its reply records). None: the check run on H' is `neutral`,
     saying why, and the reply says so too;
  4. accept/reject: the finding looked up in those results (`review.named_candidates`: a deterministic check,
     an unknown id or one not judged is refused with the reason), the decision made (`by` the commenter's
     login from the event, `at` the comment's time, `url` the comment). accept-references: SUITE looked up
     among the results' suite names (never a path), the head's probe files read into a private scratch folder
     and loaded there (`head_files`), and the references planned (`references.plan_reference_updates`): any
     refusal is the reply, with nothing committed;
  5. the change recorded: for a branch of this repository, one commit (of `.litmus/decisions.yaml`, or of every
     file the plan edits) on top of H' through the Git database API, refused cleanly when the branch moved
     meanwhile; for a fork's branch, which the token cannot push to, the patch to apply (`references.patch`),
     in the reply;
  6. the verdict decided again with the decisions that count (the branch's file; for a fork, the base
     branch's file and what this handler recorded before, `decision_records`; a reference change leaves the
     verdict as it is: the next run judges against the new references), the reports written to `output-dir`,
     a check run on the new head, the sticky comment updated, and a reply saying what changed that also
     records it for later runs. A check run or comment GitHub refuses after the commit is said in the reply:
     the commit stands.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from litmus.commands.review import Candidate, ReviewError, named_candidates
from litmus.decisions import (
    DECISIONS_FILE,
    Decision,
    DecisionsError,
    DecisionSource,
    apply_decisions,
    load_decisions,
    record_decision,
)
from litmus.errors import ProbeError
from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.github.artifacts import fetch_pr_results
from litmus.github.checks import publish_check_run
from litmus.github.comment import BODY_LIMIT, token_login, upsert_comment
from litmus.github.context import GitHubContext
from litmus.github.decision_records import record_block, recorded_sources, written_files
from litmus.github.findings import annotations
from litmus.github.gitdb import BranchMoved, changes_beyond, commit_files, file_at
from litmus.github.head_files import HeadFiles, HeadFilesError
from litmus.github.pr_command import Command, NotACommand, permission_problem, read_command
from litmus.github.workflow import WorkflowCommands
from litmus.pipeline import write_outputs as write_reports
from litmus.references import FileEdit, patch, plan_reference_updates
from litmus.report.markdown_text import code, fenced, prose
from litmus.results import RunResult
from litmus.text import count, did_you_mean
from litmus.verdict import conclusion as conclusion_of

# Room a reply keeps for its other lines when it shows a diff (GitHub refuses a longer comment).
REPLY_RESERVE = 4000
# Refusals listed in a reply; the rest are counted.
MAX_LISTED_REFUSALS = 20


@dataclass(frozen=True)
class CommandSettings:
    """What the action's inputs say about handling commands (see action.yml)."""

    results_workflow: str
    results_artifact: str
    fail_on: str
    output_dir: Path
    check_run: bool
    comment: bool
    # The probe paths (input `probes`, of the base branch's workflow): where accept-references finds the suites.
    probes: tuple[str, ...]


class CommandRefused(Exception):
    """The command cannot be carried out; the message is the reply (Markdown, untrusted text escaped)."""


@dataclass
class _PullRequest:
    number: int
    head_sha: str
    head_ref: str
    base_sha: str
    same_repository: bool


@dataclass
class _Change:
    """What a command changed: the head the check run goes on, the decisions that count there, and the reply's
    parts (its record block, what was done, whether the verdict can have changed)."""

    head: str
    decisions: list[Decision]
    record: str
    said: list[str]
    title: str
    keeps_verdict: bool = False
    notes: list[str] = field(default_factory=list)


def handle_comment(ctx: GitHubContext, client: GitHubClient | None, settings: CommandSettings,
                   out: WorkflowCommands) -> int:
    """Carry out the command the event's comment carries, if any: 0 whatever the command's fate (it is
    answered in the pull request), 2 when the action cannot work at all (no token or repository)."""
    command = read_command(ctx.event)
    if isinstance(command, NotACommand):
        out.log(f"Litmus: no command: {command.why}")
        if command.reply and client is not None:
            _reply(client, ctx.repository, ctx.event["issue"]["number"], command.reply, out)
        return 0
    out.log(f"Litmus: /litmus {command.verb} from {command.login} (author_association {command.association}: "
            "logged, not trusted; the permission is asked of GitHub)")
    if client is None:
        out.error("Litmus: the comment commands need the GitHub API (github-token, GITHUB_REPOSITORY)", title="Litmus")
        return 2
    handler = _Handler(ctx, client, settings, out, command)
    try:
        reply = handler.run()
    except CommandRefused as exc:
        reply = f"@{command.login} nothing changed: {exc}"
        out.warning(f"Litmus: /litmus {command.verb} from {command.login} refused")
    except GitHubAPIError as exc:
        reply = f"@{command.login} nothing changed: GitHub refused {prose(exc.method + ' ' + exc.path)} " \
                f"(HTTP {exc.status})."
        out.warning(f"Litmus: /litmus {command.verb} failed: GitHub answered HTTP {exc.status}")
        out.echo_untrusted(str(exc))
    _reply(client, ctx.repository, command.number, reply, out)
    return 0


def _reply(client: GitHubClient, repository: str, number: int, body: str, out: WorkflowCommands) -> None:
    try:
        client.post(f"/repos/{repository}/issues/{number}/comments", {"body": body})
    except GitHubAPIError as exc:
        out.warning(f"Litmus: could not reply on #{number} (HTTP {exc.status}): the job needs `permissions:` "
                    "issues: write")


class _Handler:
    def __init__(self, ctx: GitHubContext, client: GitHubClient, settings: CommandSettings, out: WorkflowCommands,
                 command: Command) -> None:
        self.ctx, self.client, self.settings, self.out, self.command = ctx, client, settings, out, command
        self.repository = ctx.repository
        self.written: dict[str, set[str]] | None = None

    def run(self) -> str:
        command = self.command
        problem = permission_problem(self.client, self.repository, command)
        if problem:
            self.out.notice(f"Litmus: {command.login} may not decide: {problem}")
            raise CommandRefused(prose(problem) + ".")
        pr = self._pull_request()
        result, made_for = self._results(pr)
        if command.verb == "accept-references":
            change = self._accept_references(pr, result, made_for)
        else:
            change = self._decide(pr, result)
        decided = apply_decisions(result, change.decisions)
        check_url, problems = self._publish(decided, change.head, change.title)
        check = f": [check run]({check_url})" if check_url else ""
        if change.keeps_verdict:
            verdict = (f"This run's verdict is **{decided.verdict}**{check}: a reference change does not change "
                       "it. The next run judges the replies against the new references.")
        else:
            verdict = f"The verdict is now **{decided.verdict}** (was {result.verdict}){check}."
        lines = [*([change.record.rstrip("\n")] if change.record else []), *change.said, verdict, *change.notes]
        if made_for != pr.head_sha:
            lines.append(f"The results are those of {made_for[:12]}: since then only files these commands wrote "
                         "changed.")
        return "\n\n".join([*lines, *problems])

    def _pull_request(self) -> _PullRequest:
        data = self.client.get(f"/repos/{self.repository}/pulls/{self.command.number}")
        if data.get("state") != "open":
            raise CommandRefused(f"pull request #{self.command.number} is {prose(str(data.get('state')))}.")
        head_repo = (data["head"].get("repo") or {}).get("full_name")
        return _PullRequest(self.command.number, data["head"]["sha"], data["head"]["ref"], data["base"]["sha"],
                            same_repository=bool(head_repo) and head_repo.casefold() == self.repository.casefold())

    def _results(self, pr: _PullRequest) -> tuple[RunResult, str]:
        """The stored results that hold for the head, and the head they were made for; none: a neutral check run
        on the head saying why, and the command refused."""
        settings = self.settings
        if not settings.results_workflow:
            raise CommandRefused("the action's input `results-workflow` is not set: it names the workflow file "
                                 "whose runs' results artifact the commands decide on.")
        found, made_for = fetch_pr_results(
            self.client, self.repository, workflow=settings.results_workflow, artifact_name=settings.results_artifact,
            head_sha=pr.head_sha, head_branch=pr.head_ref,
            still_valid=lambda sha: changes_beyond(self.client, self.repository, sha, pr.head_sha, self._handler_wrote),
            save_to=settings.output_dir / "pr-results.json")
        if found.result is None or made_for is None:
            self.out.warning(f"Litmus: no results to decide on: {found.notice}")
            if settings.check_run:
                publish_check_run(self.client, self.repository, pr.head_sha, conclusion="neutral",
                                  title="not vouched for: no results Litmus can vouch for",
                                  summary=f"The /litmus command could not be carried out: {prose(found.notice)}.",
                                  findings=[], details_url=self.ctx.run_url)
            raise CommandRefused(f"there are no results for {pr.head_sha[:12]} I can vouch for: {prose(found.notice)}.")
        self.out.log(f"Litmus: deciding on {found.source}")
        return found.result, made_for

    def _handler_wrote(self, path: str, blob: str | None) -> bool:
        """Whether a file changed since the results' head is one these commands wrote: the decisions file (any
        content: the decisions are applied again), or a file an earlier reply of the token's own records as
        committed with exactly this blob."""
        if path == DECISIONS_FILE:
            return True
        if self.written is None:
            self.written = written_files(self.client, self.repository, self.command.number, token_login(self.client))
        return blob is not None and blob in self.written.get(path, ())

    # ---- accept / reject

    def _decide(self, pr: _PullRequest, result: RunResult) -> _Change:
        command = self.command
        try:
            chosen = named_candidates(result, command.finding)
        except ReviewError as exc:
            raise CommandRefused(prose(str(exc)) + ".") from None
        verdict = "pass" if command.verb == "accept" else "fail"
        decisions = [Decision(c.outcome.id, c.outcome.content_sha256, verdict, command.login, command.created_at,
                              command.reason, command.comment_url) for c in chosen]
        what = f"{'accepted' if verdict == 'pass' else 'rejected'} {code(command.finding)} ({prose(_label(chosen[0]))})"
        old, new = self._edited(pr.head_sha, decisions)
        if not pr.same_repository:
            return _Change(pr.head_sha, self._counting(self._fork_sources(pr, decisions)),
                           record_block(decisions, None), [f"@{command.login} {what}: {self._fork_patch(old, new)}"],
                           f"decided by {command.login}")
        if new == (old or b""):
            head, said = pr.head_sha, f"{DECISIONS_FILE} already records this."
        else:
            self._counting([DecisionSource(f"the edited {DECISIONS_FILE}", new)])  # never commit what cannot load
            message = (f"Litmus: {command.login} {command.verb}s finding {command.finding}\n\n"
                       + (f"{command.reason}\n\n" if command.reason else "") + command.comment_url + "\n")
            head, _ = self._commit(pr, {DECISIONS_FILE: new}, message)
            said = f"recorded in {code(DECISIONS_FILE)}, committed as {head[:12]}."
        return _Change(head, self._counting([DecisionSource(f"{head[:12]}:{DECISIONS_FILE}", new)]),
                       record_block(decisions, head), [f"@{command.login} {what}: {said}"],
                       f"decided by {command.login}")

    def _edited(self, commit: str, decisions: list[Decision]) -> tuple[bytes | None, bytes]:
        """The decisions file at `commit` (read through the API as bytes, never checked out; None when there is
        none), and with `decisions` recorded."""
        try:
            old = file_at(self.client, self.repository, DECISIONS_FILE, commit)
            text = (old or b"").decode("utf-8")
            for decision in decisions:
                text = record_decision(text, decision)
        except (ValueError, DecisionsError) as exc:  # UnicodeDecodeError is a ValueError
            raise CommandRefused(f"{code(DECISIONS_FILE)} at {commit[:12]} cannot be edited: {prose(str(exc))}.") \
                from None
        return old, text.encode("utf-8")

    def _fork_patch(self, old: bytes | None, new: bytes) -> str:
        """What to say to a fork: the token cannot push to its branch, so the patch that records the decision."""
        diff = patch([FileEdit(Path(DECISIONS_FILE), DECISIONS_FILE, old, new)])
        return ("recorded here for Litmus's later runs on this pull request. This branch is in a fork, which my "
                f"token cannot push to: to keep the decision in {code(DECISIONS_FILE)}, apply this patch "
                "(`git apply`):\n\n" + fenced(diff, "diff"))

    # ---- accept-references

    def _accept_references(self, pr: _PullRequest, result: RunResult, made_for: str) -> _Change:
        command = self.command
        names = [suite.name for suite in result.suites]
        if command.suite is not None and command.suite not in names:
            raise CommandRefused(f"the results of {made_for[:12]} have no suite {code(command.suite)}"
                                 f"{prose(did_you_mean(command.suite, names))}; their suites: "
                                 + ", ".join(code(name) for name in names) + ".")
        with tempfile.TemporaryDirectory(prefix="litmus-head-") as scratch:
            head_files = HeadFiles(self.client, self.repository, pr.head_sha, Path(scratch))
            try:
                suites = head_files.load(self.settings.probes)
            except ProbeError as exc:
                errors = [d.render() for d in exc.diagnostics if d.severity == "error"]
                raise CommandRefused(f"the probe files at {pr.head_sha[:12]} do not load: "
                                     + prose("; ".join(errors[:3])) + ".") from None
            except HeadFilesError as exc:
                raise CommandRefused(prose(str(exc)) + ".") from None
            plan = plan_reference_updates(result, suites, head_files.folder,
                                          [command.suite] if command.suite else ())
            # A new reference file's name that the head already has (a file no suite names, so not read).
            refusals = [str(r) for r in plan.refusals] + [
                f"{edit.display}: exists at {pr.head_sha[:12]} but no suite names it: move it, or accept locally"
                for edit in plan.edits if edit.old is None and head_files.exists(edit.display)]
        if refusals:
            listed = "\n".join(f"- {prose(r)}" for r in refusals[:MAX_LISTED_REFUSALS])
            more = (f"\n- and {len(refusals) - MAX_LISTED_REFUSALS} more"
                    if len(refusals) > MAX_LISTED_REFUSALS else "")
            raise CommandRefused(f"no reply was accepted as a reference, because:\n\n{listed}{more}\n\nNothing was "
                                 "committed.")
        if not plan.edits:
            raise CommandRefused("every reply the results judged already is its scenario's reference."
                                 if plan.unchanged else "no `accurate_with_scenario_context` assertion judged a "
                                 "scenario's reply in these results: there is no reply to accept.")
        which = f" of suite {code(command.suite)}" if command.suite else ""
        accepted = f"@{command.login} accepted the replies of {count(len(plan.accepted), 'scenario')}{which} " \
                   f"(results of {made_for[:12]}) as their references"
        diff = patch(plan.edits)
        if not pr.same_repository:
            shown, cut = _diff_block(diff, BODY_LIMIT - REPLY_RESERVE)
            note = ("The patch is cut at GitHub's limit for a comment, so it cannot be applied as it is: run "
                    f"`litmus accept-references` with the results of {made_for[:12]} on a checkout of this pull "
                    "request instead." if cut else "")
            return _Change(pr.head_sha, self._counting(self._fork_sources(pr, [])), "",
                           [f"{accepted}. This branch is in a fork, which my token cannot push to: apply this patch "
                            f"(`git apply`) to make them the references:", shown, *([note] if note else [])],
                           f"references accepted by {command.login}", keeps_verdict=True)
        decisions = self._counting([DecisionSource(f"{pr.head_sha[:12]}:{DECISIONS_FILE}",
                                                   file_at(self.client, self.repository, DECISIONS_FILE, pr.head_sha)
                                                   or b"")])
        message = (f"Litmus: {command.login} accepts the replies of {made_for[:12]} as references"
                   + (f" (suite {command.suite})" if command.suite else "") + f"\n\n{command.comment_url}\n")
        head, blobs = self._commit(pr, {edit.display: edit.new for edit in plan.edits}, message)
        record = record_block([], head, blobs)
        shown, cut = _diff_block(diff, BODY_LIMIT - REPLY_RESERVE - len(record))
        return _Change(head, decisions, record,
                       [f"{accepted}: committed as {head[:12]} ({count(len(plan.edits), 'file')} changed):", shown,
                        *([f"The diff is cut at GitHub's limit for a comment: commit {head[:12]} has all of it."]
                          if cut else [])],
                       f"references accepted by {command.login}", keeps_verdict=True)

    # ---- shared

    def _counting(self, sources: list[DecisionSource]) -> list[Decision]:
        """The decisions of `sources`; the command refused when they do not load."""
        loaded = load_decisions(sources)
        if loaded.errors:
            raise CommandRefused("the decisions that count do not load: "
                                 + prose("; ".join(d.render() for d in loaded.errors[:3])))
        return loaded.decisions

    def _commit(self, pr: _PullRequest, changes: dict[str, bytes], message: str) -> tuple[str, dict[str, str]]:
        """`changes` committed to the branch on top of its head as one commit: (the new head, each file's blob)."""
        try:
            head, blobs = commit_files(self.client, self.repository, pr.head_ref, pr.head_sha, changes, message)
        except BranchMoved as exc:
            self.out.warning(f"Litmus: the branch moved: {exc}; nothing was committed")
            raise CommandRefused("the pull request's branch moved while I was committing (someone pushed): nothing "
                                 "was committed. Comment the command again to decide on the new head.") from None
        except GitHubAPIError as exc:
            if exc.forbidden:
                raise CommandRefused(f"the token may not push to the branch (HTTP {exc.status}): the job needs "
                                     "`permissions:` contents: write.") from None
            raise
        self.out.log(f"Litmus: committed {', '.join(changes)} as {head[:12]} on the pull request's branch")
        return head, blobs

    def _fork_sources(self, pr: _PullRequest, decisions: list[Decision]) -> list[DecisionSource]:
        """For a fork's pull request, the decisions that count: the base branch's file, what this handler
        recorded before on this pull request, and these."""
        base = file_at(self.client, self.repository, DECISIONS_FILE, pr.base_sha)
        earlier = recorded_sources(self.client, self.repository, pr.number, token_login(self.client))
        mine = {d.key for d in decisions}
        sources = [*([DecisionSource(f"{pr.base_sha[:12]}:{DECISIONS_FILE}", base)] if base else []), *earlier]
        kept = [d for d in load_decisions(sources).decisions if d.key not in mine]
        # One source of data: a decision made again replaces the earlier one rather than clashing with it.
        text = ""
        for decision in [*kept, *decisions]:
            text = record_decision(text, decision)
        return [DecisionSource("the base branch's decisions and this pull request's recorded ones",
                               text.encode("utf-8"))]

    def _publish(self, decided: RunResult, head: str, title: str) -> tuple[str | None, list[str]]:
        """The reports for the decided results, the check run on `head` and the sticky comment: the check run's URL,
        and what GitHub refused (said in the reply: what the command committed or recorded stands)."""
        settings = self.settings
        links = {"repository": self.repository, "server_url": self.ctx.server_url, "sha": head}
        paths, problems = write_reports(decided, settings.output_dir, links=links)
        for problem in problems:
            self.out.warning(f"Litmus: {problem}")
        summary = paths["summary"].read_text("utf-8") if "summary" in paths else ""
        check_url, refused = None, []
        if settings.check_run:
            failed = sum(1 for s in decided.suites if s.verdict == "failed")
            headline = (f"{failed} of {len(decided.suites)} suite(s) failed" if failed
                        else f"{len(decided.suites)} suite(s) passed")
            try:
                check = publish_check_run(self.client, self.repository, head,
                                          conclusion=conclusion_of(decided, settings.fail_on),
                                          title=f"{headline}, {title}", summary=summary,
                                          findings=annotations(decided), details_url=self.ctx.run_url)
                check_url = check.url
                self.out.log(f"Litmus: check run on {head[:12]}: {check.url}")
            except GitHubAPIError as exc:
                refused.append(_refused(f"the check run on {head[:12]} was not updated", exc, self.out))
        if settings.comment and "markdown" in paths:
            try:
                comment = upsert_comment(self.client, self.repository, self.command.number,
                                         paths["markdown"].read_text("utf-8"), author=token_login(self.client))
                self.out.log(f"Litmus: PR comment {comment.action}: {comment.url}")
            except GitHubAPIError as exc:
                refused.append(_refused("the Litmus comment was not updated", exc, self.out))
        return check_url, refused


def _refused(what: str, exc: GitHubAPIError, out: WorkflowCommands) -> str:
    out.warning(f"Litmus: {what}: GitHub answered HTTP {exc.status}")
    out.echo_untrusted(str(exc))
    return (f"**Not done:** {what}: GitHub refused {prose(exc.method + ' ' + exc.path)} (HTTP {exc.status}: "
            f"{prose(exc.message)}). What is said above stands.")


def _diff_block(diff: str, budget: int) -> tuple[str, bool]:
    """`diff` as a fenced `diff` block of at most `budget` characters, cut at a line end when longer; whether it
    was cut."""
    block = fenced(diff, "diff")
    if len(block) <= budget:
        return block, False
    cut = diff[:diff.rfind("\n", 0, max(0, budget - 20)) + 1]
    return fenced(cut, "diff"), True


def _label(candidate: Candidate) -> str:
    return f"{candidate.where} › {candidate.label}"

