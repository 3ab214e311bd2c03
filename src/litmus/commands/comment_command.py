"""The action on `issue_comment`: carry out a `/litmus accept|reject FINDING-ID [reason]` comment.

`litmus action` comes here when the event is `issue_comment`. Nothing from the pull request is fetched,
checked out or run: its results come from a results artifact of the expected workflow's runs
(`artifacts.fetch_pr_results`, digest checked), its decisions file is read through the contents API as
bytes and parsed as data, and the verdict is decided again from the stored results (`decisions.apply_decisions`).

In order:
  1. the command (`pr_command.read_command`): edits, bots, quoted lines and issues are ignored; a malformed
     command is answered with the usage;
  2. the commenter's permission (`write` or `admin`, from the collaborator-permission endpoint): others get
     a reply saying why;
  3. the pull request's current head H' and results that hold for it: made for H', or for an earlier head H
     when H...H' changes only `.litmus/decisions.yaml`, the one file this handler writes. None: the check run
     on H' is `neutral`, saying why, and the reply says so too;
  4. the finding looked up in those results (`review.named_candidates`: a deterministic check, an unknown id
     or one not judged is refused with the reason);
  5. the decision recorded (`by` the commenter's login from the event, `at` the comment's time, `url` the
     comment): for a branch of this repository, a commit of `.litmus/decisions.yaml` on top of H' through the
     Git database API, refused cleanly when the branch moved meanwhile; for a fork's branch, which the token
     cannot push to, the patch to apply, in the reply;
  6. the verdict decided again with the decisions that count (the committed file; for a fork, the base
     branch's file and what this handler recorded before, `decision_records`), the reports written to
     `output-dir`, a check run on the new head, the sticky comment updated, and a reply saying what changed
     that also records the decision for later untrusted runs.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
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
from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.github.artifacts import fetch_pr_results
from litmus.github.checks import publish_check_run
from litmus.github.comment import token_login, upsert_comment
from litmus.github.context import GitHubContext
from litmus.github.decision_records import record_block, recorded_sources
from litmus.github.findings import annotations
from litmus.github.gitdb import BranchMoved, changes_beyond, commit_file, file_at
from litmus.github.pr_command import Command, NotACommand, permission_problem, read_command
from litmus.github.workflow import WorkflowCommands
from litmus.pipeline import write_outputs as write_reports
from litmus.report.markdown_text import code, fenced, prose
from litmus.results import RunResult
from litmus.verdict import conclusion as conclusion_of

# The files this handler writes to a pull request's branch: results made before such a commit still hold after it.
HANDLER_FILES = frozenset({DECISIONS_FILE})


@dataclass(frozen=True)
class CommandSettings:
    """What the action's inputs say about handling commands (see action.yml)."""

    results_workflow: str
    results_artifact: str
    fail_on: str
    output_dir: Path
    check_run: bool
    comment: bool


class CommandRefused(Exception):
    """The command cannot be carried out; the message is the reply (Markdown, untrusted text escaped)."""


@dataclass
class _PullRequest:
    number: int
    head_sha: str
    head_ref: str
    base_sha: str
    same_repository: bool


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

    def run(self) -> str:
        command = self.command
        problem = permission_problem(self.client, self.repository, command)
        if problem:
            self.out.notice(f"Litmus: {command.login} may not decide: {problem}")
            raise CommandRefused(prose(problem) + ".")
        if command.verb == "accept-references":
            raise CommandRefused("`/litmus accept-references` is not handled by this version of the action: "
                                 "run `litmus accept-references` locally and commit the diff.")
        pr = self._pull_request()
        result, made_for = self._results(pr)
        try:
            chosen = named_candidates(result, command.finding)
        except ReviewError as exc:
            raise CommandRefused(prose(str(exc)) + ".") from None
        verdict = "pass" if command.verb == "accept" else "fail"
        decisions = [Decision(c.outcome.id, c.outcome.content_sha256, verdict, command.login, command.created_at,
                              command.reason, command.comment_url) for c in chosen]
        if pr.same_repository:
            head, sources, recorded = self._commit(pr, decisions)
        else:
            head, sources, recorded = pr.head_sha, self._fork_sources(pr, decisions), self._patch(pr, decisions)
        loaded = load_decisions(sources)
        if loaded.errors:
            raise CommandRefused("the decisions that count do not load: "
                                 + prose("; ".join(d.render() for d in loaded.errors[:3])))
        decided = apply_decisions(result, loaded.decisions)
        check_url = self._publish(decided, head, made_for)
        what = f"{'accepted' if verdict == 'pass' else 'rejected'} {code(command.finding)} ({prose(_label(chosen[0]))})"
        lines = [record_block(decisions, head if pr.same_repository else None).rstrip("\n"),
                 f"@{command.login} {what}: {recorded}",
                 f"The verdict is now **{decided.verdict}** (was {result.verdict})"
                 + (f": [check run]({check_url})" if check_url else "") + "."]
        if made_for != pr.head_sha:
            lines.append(f"The results are those of {made_for[:12]}: since then only {DECISIONS_FILE} changed.")
        return "\n\n".join(lines)

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
            still_valid=lambda sha: changes_beyond(self.client, self.repository, sha, pr.head_sha, HANDLER_FILES),
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

    def _commit(self, pr: _PullRequest, decisions: list[Decision]) -> tuple[str, list[DecisionSource], str]:
        """The decisions committed to the branch on top of its head: (the new head, the file as committed, what
        the reply says)."""
        old, new = self._edited(pr.head_sha, decisions)
        if new == old:
            return pr.head_sha, [DecisionSource(f"{pr.head_sha[:12]}:{DECISIONS_FILE}", new)], \
                f"{DECISIONS_FILE} already records this."
        message = (f"Litmus: {self.command.login} {self.command.verb}s finding {self.command.finding}\n\n"
                   + (f"{self.command.reason}\n\n" if self.command.reason else "") + self.command.comment_url + "\n")
        try:
            head = commit_file(self.client, self.repository, pr.head_ref, pr.head_sha, DECISIONS_FILE, new, message)
        except BranchMoved as exc:
            self.out.warning(f"Litmus: the branch moved: {exc}; nothing was committed")
            raise CommandRefused("the pull request's branch moved while I was recording the decision (someone "
                                 "pushed): nothing was committed. Comment the command again to decide on the new "
                                 "head.") from None
        except GitHubAPIError as exc:
            if exc.forbidden:
                raise CommandRefused(f"the token may not push to the branch (HTTP {exc.status}): the job needs "
                                     "`permissions:` contents: write.") from None
            raise
        self.out.log(f"Litmus: committed {DECISIONS_FILE} as {head[:12]} on the pull request's branch")
        return head, [DecisionSource(f"{head[:12]}:{DECISIONS_FILE}", new)], \
            f"recorded in {code(DECISIONS_FILE)}, committed as {head[:12]}."

    def _edited(self, commit: str, decisions: list[Decision]) -> tuple[bytes, bytes]:
        """The decisions file at `commit` (read through the API as bytes, never checked out), and with
        `decisions` recorded."""
        try:
            old = file_at(self.client, self.repository, DECISIONS_FILE, commit) or b""
            text = old.decode("utf-8")
            for decision in decisions:
                text = record_decision(text, decision)
        except (ValueError, DecisionsError) as exc:  # UnicodeDecodeError is a ValueError
            raise CommandRefused(f"{code(DECISIONS_FILE)} at {commit[:12]} cannot be edited: {prose(str(exc))}.") \
                from None
        return old, text.encode("utf-8")

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

    def _patch(self, pr: _PullRequest, decisions: list[Decision]) -> str:
        """What to say to a fork: the token cannot push to its branch, so the patch that records the decision."""
        old, new = self._edited(pr.head_sha, decisions)
        diff = "".join(difflib.unified_diff(
            old.decode("utf-8").splitlines(keepends=True), new.decode("utf-8").splitlines(keepends=True),
            "/dev/null" if not old else f"a/{DECISIONS_FILE}", f"b/{DECISIONS_FILE}"))
        return ("recorded here for Litmus's later runs on this pull request. This branch is in a fork, which my "
                f"token cannot push to: to keep the decision in {code(DECISIONS_FILE)}, apply this patch "
                "(`git apply`):\n\n" + fenced(diff, "diff"))

    def _publish(self, decided: RunResult, head: str, made_for: str) -> str | None:
        """The reports for the decided results, the check run on `head` and the sticky comment; the check run's
        URL."""
        settings = self.settings
        links = {"repository": self.repository, "server_url": self.ctx.server_url, "sha": head}
        paths, problems = write_reports(decided, settings.output_dir, links=links)
        for problem in problems:
            self.out.warning(f"Litmus: {problem}")
        summary = paths["summary"].read_text("utf-8") if "summary" in paths else ""
        check_url = None
        if settings.check_run:
            failed = sum(1 for s in decided.suites if s.verdict == "failed")
            title = (f"{failed} of {len(decided.suites)} suite(s) failed" if failed
                     else f"{len(decided.suites)} suite(s) passed") + f", decided by {self.command.login}"
            check = publish_check_run(self.client, self.repository, head,
                                      conclusion=conclusion_of(decided, settings.fail_on), title=title,
                                      summary=summary, findings=annotations(decided), details_url=self.ctx.run_url)
            check_url = check.url
            self.out.log(f"Litmus: check run on {head[:12]}: {check.url}")
        if settings.comment and "markdown" in paths:
            comment = upsert_comment(self.client, self.repository, self.command.number,
                                     paths["markdown"].read_text("utf-8"), author=token_login(self.client))
            self.out.log(f"Litmus: PR comment {comment.action}: {comment.url}")
        return check_url


def _label(candidate: Candidate) -> str:
    return f"{candidate.where} › {candidate.label}"

