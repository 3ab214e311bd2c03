"""Options every reporter accepts: where links point and how SARIF is categorised.

Each value falls back to what the results document recorded (`run.repository`, `run.server_url`,
`run.git_sha`), so `litmus report` on a past run links the same lines `litmus run` did.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

from litmus.results import RunResult


@dataclass(frozen=True)
class Options:
    repository: str | None = None  # "owner/name"
    server_url: str | None = None  # e.g. "https://github.com"
    sha: str | None = None  # the commit the probe files are linked at
    category: str = "litmus"  # SARIF automationDetails category: one per concurrent Litmus run
    artifact_url: str | None = None  # where the full report lives (linked when findings are cut)


def probe_url(result: RunResult, options: Options, file: str, line: int) -> str | None:
    """A link to a probe line on the forge, when repository, server and commit are all known. The
    parts may come from a results.json that is not ours: a link is made of it only by `http_url`."""
    repository = options.repository or result.run.repository
    server = options.server_url or result.run.server_url
    sha = options.sha or result.run.git_sha
    if not (repository and server and sha):
        return None
    return f"{server.rstrip('/')}/{quote(repository)}/blob/{quote(sha)}/{quote(file)}#L{line}"


# What a link target keeps as it is: the URL delimiters, bar those that end a Markdown link
# destination or an HTML attribute (quotes, parentheses, angle brackets, spaces, backslash, backtick).
_URL_SAFE = "/:?#[]@!$&*+,;=%~"
# What a browser strips from a URL before reading its scheme (WHATWG URL): so does the check.
_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_REMOVED = str.maketrans("", "", "\t\n\r")


def http_url(url: str | None) -> str | None:
    """`url` as a link target when it is an http(s) URL with a host, percent-encoded so nothing in it
    can end the link; None for anything else (`javascript:`, `data:`, relative): reports show that as text.
    The scheme is read as browsers read it (leading controls and spaces, tabs and newlines ignored)."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip(_C0_OR_SPACE).translate(_REMOVED))
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return quote(urlunsplit(parts), safe=_URL_SAFE)
