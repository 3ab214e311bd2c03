"""Options every reporter accepts: where links point and how SARIF is categorised.

Each value falls back to what the results document recorded (`run.repository`, `run.server_url`,
`run.git_sha`), so `litmus report` on a past run links the same lines `litmus run` did.
"""

from __future__ import annotations

import argparse
import unicodedata
from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

from litmus.results import RunResult


@dataclass(frozen=True)
class Options:
    repository: str | None = None  # "owner/name"
    server_url: str | None = None  # e.g. "https://github.com"
    sha: str | None = None  # the commit the probe files are linked at
    # SARIF category (`automationDetails.id` = "<category>/"); None: the file names none, the uploader's applies.
    sarif_category: str | None = None
    artifact_url: str | None = None  # where the full report lives (linked when findings are cut)

    def __post_init__(self) -> None:
        if self.sarif_category is not None:
            check_sarif_category(self.sarif_category)


# Characters a category must not hold, by Unicode category: they would show as nothing, or as something else.
_UNPRINTABLE = {"Cc": "a control character", "Cf": "an invisible formatting character", "Cs": "a lone surrogate",
                "Co": "a private-use character", "Cn": "an unassigned code point", "Zl": "a line separator",
                "Zp": "a paragraph separator"}


def check_sarif_category(category: str) -> str:
    """`category` when it can name a SARIF run's category, else ValueError saying why. Any printable
    text can: GitHub sets none of its own rules, and codeql's own categories look like `/language:python`."""
    if not category.strip():
        raise ValueError("a SARIF category must not be empty (leave the setting out to let the uploader choose)")
    for position, char in enumerate(category, 1):
        unprintable = _UNPRINTABLE.get(unicodedata.category(char))
        if unprintable:
            raise ValueError(f"a SARIF category is printable text such as api-probes/staging, but {category!r} has "
                             f"{unprintable} (U+{ord(char):04X}) at character {position}")
    if category != category.strip():
        raise ValueError(f"a SARIF category must not start or end with a space: {category!r}")
    return category


def add_sarif_category_argument(parser: argparse.ArgumentParser) -> None:
    """`--sarif-category`, the same on every command that writes SARIF."""
    parser.add_argument("--sarif-category", type=_sarif_category, metavar="CATEGORY",
                        help="the SARIF file's category (automationDetails.id = CATEGORY/): give each Litmus run "
                             "uploaded for one commit its own, e.g. api-probes/staging (default: none, so "
                             "upload-sarif's category: applies)")


def _sarif_category(text: str) -> str:
    try:
        return check_sarif_category(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
