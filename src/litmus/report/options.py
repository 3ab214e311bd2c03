"""Options every reporter accepts: where links point and how SARIF is categorised.

Each value falls back to what the results document recorded (`run.repository`, `run.server_url`,
`run.git_sha`), so `litmus report` on a past run links the same lines `litmus run` did.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from litmus.results import RunResult


@dataclass(frozen=True)
class Options:
    repository: str | None = None  # "owner/name"
    server_url: str | None = None  # e.g. "https://github.com"
    sha: str | None = None  # the commit the probe files are linked at
    category: str = "litmus"  # SARIF automationDetails category: one per concurrent Litmus run
    artifact_url: str | None = None  # where the full report lives (linked when findings are cut)


def probe_url(result: RunResult, options: Options, file: str, line: int) -> str | None:
    """A link to a probe line on the forge, when repository, server and commit are all known."""
    repository = options.repository or result.run.repository
    server = options.server_url or result.run.server_url
    sha = options.sha or result.run.git_sha
    if not (repository and server and sha):
        return None
    return f"{server.rstrip('/')}/{repository}/blob/{sha}/{quote(file)}#L{line}"
