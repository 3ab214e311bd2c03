"""What the comment commands recorded, kept where only the action's own token writes: its reply comments.

Contract, provenance: in an untrusted run a decision counts only from the base branch's file or when it "was
recorded by the action's own command handling (found through the token's own comment or check-run
output)". Each reply to an accept/reject command starts with `RECORD_MARKER` and carries, in the line after
it, the decisions it recorded (finding, content, verdict, by, at, reason, url) and the commit that wrote
them (none for a fork, whose branch the token cannot push to). An untrusted run reads them back
(`recorded_sources`): only comments on this pull request whose author is the token's own identity and
whose body *starts* with the marker, so neither a commenter pasting the marker nor text quoted inside the
sticky report (a reply body, a suite name) can add a decision. The records are then loaded like any
decisions file (validated against the decisions schema), with the base branch's file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from litmus.decisions import Decision, DecisionSource
from litmus.github.api import GitHubClient

RECORD_MARKER = "<!-- litmus:decision-record -->"


def record_block(decisions: Sequence[Decision], commit: str | None) -> str:
    """The first two lines of a reply that records `decisions`: the marker, and the records as JSON in an HTML
    comment (`<` and `>` escaped, so no reason can close it)."""
    data = json.dumps({"decisions": [d.entry() for d in decisions], "commit": commit}, ensure_ascii=True,
                      sort_keys=True, separators=(",", ":"))
    escaped = data.replace("<", "\\u003c").replace(">", "\\u003e")
    return f"{RECORD_MARKER}\n<!-- {escaped} -->\n"


def recorded_sources(client: GitHubClient, repository: str, number: int, author: str) -> list[DecisionSource]:
    """The decisions the action's own command handling recorded on pull request `number`, one source per reply
    comment `author` (the token's identity) wrote; a comment that is not a record is skipped."""
    sources = []
    for comment in client.paginate(f"/repos/{repository}/issues/{number}/comments"):
        body = comment.get("body") or ""
        if (comment.get("user") or {}).get("login") != author or not body.startswith(RECORD_MARKER + "\n"):
            continue
        line = body[len(RECORD_MARKER) + 1:].split("\n", 1)[0]
        if not (line.startswith("<!-- ") and line.endswith(" -->")):
            continue
        try:
            entries = json.loads(line[5:-4])["decisions"]
        except (ValueError, TypeError, KeyError):
            continue
        # JSON is YAML: the decisions module loads and validates it like a decisions file.
        sources.append(DecisionSource(f"comment {comment.get('html_url')}", json.dumps(entries).encode("utf-8")))
    return sources
