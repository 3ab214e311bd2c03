"""The pull-request comment commands (`/litmus accept|reject FINDING-ID [reason]`, `/litmus accept-references
[SUITE]`): which `issue_comment` events carry one, and who may give one.

Any GitHub user can comment on a public repository's pull request, so everything here is data from a
stranger. A command is the first line of a newly created comment (`action: created`: an edit cannot turn
an old comment into a command) by a `User` (a `Bot` is ignored without a reply, so two bots cannot answer
each other forever) on a pull request (not an issue), matching `COMMAND`; quoted lines (`> /litmus ...`)
and every later line are text. The finding id must be a finding id's 32 hex digits and is then only looked
up in stored results; the suite name is only compared with the stored results' suite names. Neither is ever
a path or part of a command line.

Permission is GitHub's answer for the commenter (`collaborators/{login}/permission`): `write` or `admin`,
compared by value, since GitHub answers a stranger on a public repository 200 with `read`.
`author_association` is logged and only turns away, without asking, the two kinds of account that cannot
hold write access (a placeholder, or an account that never committed anywhere); it never lets anyone in,
because it describes a relationship, not a permission (and under-reports private organization members).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.text import clip

COMMAND = re.compile(r"^/litmus (accept|reject|accept-references)\b")
_DECIDE = re.compile(r"^/litmus (accept|reject) ([0-9a-f]{32})(?: (.*))?$")
_REFERENCES = re.compile(r"^/litmus accept-references(?: (.+))?$")
USAGE = ("`/litmus accept FINDING-ID [reason]`, `/litmus reject FINDING-ID [reason]` or "
         "`/litmus accept-references [SUITE]` on the first line of a new comment (the FINDING-ID is the 32 hex "
         "digits the Litmus comment shows next to each judged finding)")
WRITE_PERMISSIONS = ("admin", "write")
# Accounts that cannot hold write access: turned away without asking GitHub.
NEVER_WRITERS = ("MANNEQUIN", "FIRST_TIMER")
MAX_REASON_CHARS = 500
MAX_SUITE_CHARS = 200


@dataclass(frozen=True)
class Command:
    verb: str  # accept | reject | accept-references
    finding: str | None
    reason: str
    suite: str | None
    # From the event, never from the body.
    login: str
    association: str
    comment_id: int
    comment_url: str
    created_at: str
    number: int


@dataclass(frozen=True)
class NotACommand:
    """Why the event carries no command to carry out; `reply` is what to answer (None: answer nothing)."""

    why: str
    reply: str | None = None


def read_command(event: dict[str, Any]) -> Command | NotACommand:
    """The command an `issue_comment` event carries, or why it carries none (and whether to say so)."""
    comment, issue = event.get("comment") or {}, event.get("issue") or {}
    if event.get("action") != "created":
        return NotACommand(f"the comment was {event.get('action')}, not created: only new comments are commands")
    if not issue.get("pull_request"):
        return NotACommand("the comment is on an issue, not a pull request")
    user = comment.get("user") or {}
    if user.get("type") != "User":
        return NotACommand(f"the comment is by a {user.get('type')!r} account, not a User: no reply, no loop")
    body = comment.get("body") or ""
    first = body.split("\n", 1)[0].rstrip("\r")
    if not COMMAND.match(first):
        return NotACommand("the comment's first line is not a /litmus command")
    common = {"login": user["login"], "association": str(comment.get("author_association") or ""),
              "comment_id": comment["id"], "comment_url": comment["html_url"], "created_at": comment["created_at"],
              "number": issue["number"]}
    decide = _DECIDE.match(first)
    if decide:
        verb, finding, reason = decide.groups()
        return Command(verb, finding, clip(_printable(reason or ""), MAX_REASON_CHARS), None, **common)
    references = _REFERENCES.match(first)
    if references:
        suite = _printable(references.group(1) or "")
        if len(suite) <= MAX_SUITE_CHARS:
            return Command("accept-references", None, "", suite or None, **common)
    return NotACommand("the command is malformed", reply=f"I could not read this command. Write {USAGE}.")


def _printable(text: str) -> str:
    """Text without control or format characters (a bidi override could make a reason read otherwise)."""
    return " ".join("".join(c for c in text if unicodedata.category(c)[0] != "C").split())


def permission_problem(client: GitHubClient, repository: str, command: Command) -> str | None:
    """Why the commenter may not give commands (None: `write` or `admin` on the repository, as GitHub says)."""
    if command.association in NEVER_WRITERS:
        return f"your account ({command.association}) cannot have write access to {repository}"
    try:
        answer = client.get(f"/repos/{repository}/collaborators/{quote(command.login, safe='')}/permission")
    except GitHubAPIError as exc:
        return f"GitHub did not say what permission you have (HTTP {exc.status})"
    permission = answer.get("permission") if isinstance(answer, dict) else None
    if permission not in WRITE_PERMISSIONS:
        return f"deciding needs write or admin permission on {repository}; GitHub says yours is {permission!r}"
    return None
