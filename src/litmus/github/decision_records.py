"""What the comment commands recorded, kept where only the action's own token writes: its reply comments.

Contract, provenance: in an untrusted run a decision counts only from the base branch's file or when it "was
recorded by the action's own command handling (found through the token's own comment or check-run
output)". Each reply to an accept/reject command starts with `RECORD_MARKER` and carries, in the line after
it, the decisions it recorded (finding, content, verdict, by, at, reason, url), the commit that wrote
them (none for a fork, whose branch the token cannot push to) and the files that commit wrote with their blob
shas (`/litmus accept-references`: the reference files; `written_files` reads them back, so that results made
before that commit still hold after it). An untrusted run reads the decisions back
(`recorded_sources`): only comments on this pull request whose author is the token's own identity and
whose body *starts* with the marker, so neither a commenter pasting the marker nor text quoted inside the
sticky report (a reply body, a suite name) can add a decision. The records are then loaded like any
decisions file (validated against the decisions schema), with the base branch's file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence

from litmus.decisions import Decision, DecisionSource
from litmus.github.api import GitHubClient

RECORD_MARKER = "<!-- litmus:decision-record -->"


def record_block(decisions: Sequence[Decision], commit: str | None, files: Mapping[str, str] | None = None) -> str:
    """The first two lines of a reply that records `decisions` and the `files` (path -> blob sha) `commit` wrote:
    the marker, and the records as JSON in an HTML comment (`<` and `>` escaped, so no reason can close it)."""
    data = json.dumps({"decisions": [d.entry() for d in decisions], "commit": commit, "files": dict(files or {})},
                      ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    escaped = data.replace("<", "\\u003c").replace(">", "\\u003e")
    return f"{RECORD_MARKER}\n<!-- {escaped} -->\n"


def recorded_sources(client: GitHubClient, repository: str, number: int, author: str) -> list[DecisionSource]:
    """The decisions the action's own command handling recorded on pull request `number`, one source per reply
    comment `author` (the token's identity) wrote that records any; a comment that is not a record is skipped."""
    sources = []
    for url, record in _records(client, repository, number, author):
        entries = record.get("decisions")
        if isinstance(entries, list) and entries:
            # JSON is YAML: the decisions module loads and validates it like a decisions file.
            sources.append(DecisionSource(f"comment {url}", json.dumps(entries).encode("utf-8")))
    return sources


def written_files(client: GitHubClient, repository: str, number: int, author: str) -> dict[str, set[str]]:
    """path -> the blob shas the action's own command handling committed as that file on pull request `number`."""
    written: dict[str, set[str]] = {}
    for _, record in _records(client, repository, number, author):
        files = record.get("files")
        for path, blob in (files.items() if isinstance(files, dict) else ()):
            if isinstance(blob, str):
                written.setdefault(path, set()).add(blob)
    return written


def _records(client: GitHubClient, repository: str, number: int, author: str) -> Iterator[tuple[str, dict]]:
    """(comment URL, its record) of each comment on pull request `number` that `author` wrote and that starts with
    the marker and a readable record."""
    for comment in client.paginate(f"/repos/{repository}/issues/{number}/comments"):
        body = comment.get("body") or ""
        if (comment.get("user") or {}).get("login") != author or not body.startswith(RECORD_MARKER + "\n"):
            continue
        line = body[len(RECORD_MARKER) + 1:].split("\n", 1)[0]
        if not (line.startswith("<!-- ") and line.endswith(" -->")):
            continue
        try:
            record = json.loads(line[5:-4])
        except ValueError:
            continue
        if isinstance(record, dict):
            yield str(comment.get("html_url")), record
