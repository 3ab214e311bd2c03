"""How far a run trusts the content it runs: one decision, made once at start, read everywhere.

The action checks pull requests, and a pull request can change its own probes, `python` checks,
`litmus.yaml`, cassettes and decisions. `Trust` says whether the commit checked out in the workspace
is the repository's own (trusted) or may come from anyone (untrusted), and carries the few facts the
untrusted policy needs; every rule of that policy (docs/security.md) asks this object, so a rule
cannot be enforced in one copy and missed in the next. A local `litmus run` is trusted: the files
are the operator's own.

`NEVER_RESOLVE` is the contract's list of names no template, `api_key_env` or `token_env` resolves,
in any mode: the action's credentials.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

# The contract's "Trust in the action": names that never resolve, whatever env-allow says. The action's own
# credentials, then the cloud credentials the judge providers read themselves from the real environment (Bedrock's
# AWS variables, Vertex's application-default credentials as google-github-actions/auth and gcloud set them, Azure's
# service-principal secrets): a probe's template, a python check or an `api_key_env` never sees them. Keys a user
# names for a judge (AZURE_OPENAI_API_KEY, GEMINI_API_KEY, GOOGLE_API_KEY) are not in this list.
NEVER_RESOLVE: tuple[str, ...] = (
    "GITHUB_TOKEN", "GH_TOKEN", "INPUT_*", "ACTIONS_*", "RUNNER_*",
    "AWS_*", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_GHA_CREDS_PATH", "CLOUDSDK_AUTH_*", "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_*", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_PASSWORD",
)

# Outside the probe paths, what decides a run's verdicts: the project config and `.litmus/` (decisions,
# recorded verdicts). The trust decision requires them as committed; the comment lists the PR's changes to them.
CHECK_PATHS: tuple[str, ...] = ("litmus.yaml", ".litmus")

# What an untrusted python check's outcome says.
FORK_CODE_INPUT = "allow-fork-code"
# The action input that lists the names an untrusted run may resolve (and that no run masks).
ENV_ALLOW_INPUT = "env-allow"


def never_resolves(name: str) -> bool:
    """Whether `name` is one of the action's credentials (case-insensitive: the runner's names are upper case,
    and a lower-case spelling must not slip past on a case-insensitive platform)."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in NEVER_RESOLVE)


def origin(url: str) -> str | None:
    """`scheme://host[:port]` of an http(s) URL, lower-cased, default ports dropped; None when it is not one."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".").lower()
    if scheme not in ("http", "https") or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[scheme]
    return f"{scheme}://{host}" + (f":{port}" if port and port != default else "")


@dataclass(frozen=True)
class Trust:
    """The one trust decision of a run and the untrusted policy's inputs."""

    trusted: bool
    # Why, in one sentence: logged at start and recorded as results.json `run.trust_reason`.
    reason: str
    # Names `env.`/`secrets.` (and `api_key_env`/`token_env`) may resolve in an untrusted run; in every run,
    # `env.` values whose names are listed here are not masked.
    env_allow: frozenset[str] = frozenset()
    # Untrusted runs send requests only to these origins (`base-url`, the deployment URL, `allowed-origins`).
    allowed_origins: frozenset[str] = frozenset()
    # Repository-relative POSIX paths the pull request changed; None when unknown (or not a PR).
    changed_files: frozenset[str] | None = None
    # `allow-fork-code: true`: the explicit, dangerous opt-out; the run is then treated as trusted.
    fork_code_allowed: bool = False
    # The base commit, where `litmus.yaml` is read from when untrusted.
    base_sha: str | None = None

    @classmethod
    def local(cls, env_allow: Iterable[str] = ()) -> Trust:
        return cls(True, "a local run: the files are the operator's own", frozenset(env_allow))

    @property
    def runs_pr_code(self) -> bool:
        """Whether content the PR may have written runs with the action's privileges (python checks)."""
        return self.trusted or self.fork_code_allowed

    def may_resolve(self, name: str) -> bool:
        """Whether `env.NAME` / `secrets.NAME` / `api_key_env: NAME` may be read at all."""
        if never_resolves(name):
            return False
        return self.runs_pr_code or name in self.env_allow

    def refusal(self, name: str) -> str | None:
        """Why `env.NAME` / `secrets.NAME` may not be read in this run, None when it may: the one wording
        of the loader's error and the renderer's."""
        if never_resolves(name):
            return f"{name} never resolves: the action's credentials ({', '.join(NEVER_RESOLVE)}) reach no template"
        if not self.may_resolve(name):
            return (f"{name} is not in {ENV_ALLOW_INPUT}: in an untrusted run ({self.reason}) env.* and secrets.* "
                    f"resolve only the names listed in the action input {ENV_ALLOW_INPUT}")
        return None

    def masks_env(self, name: str) -> bool:
        """`env.NAME` values are masked like secrets unless the name is in env-allow (every mode)."""
        return name not in self.env_allow

    def origin_allowed(self, url: str) -> bool:
        """Whether a request may go to `url` (before connecting)."""
        if self.runs_pr_code:
            return True
        found = origin(url)
        return found is not None and found in self.allowed_origins

    def distrusts(self, path: str) -> bool:
        """Whether a file that decides verdicts (a cassette, a decision file) must not be used: the run is
        untrusted and the PR changed it, or the PR's changes are unknown (then it may be the PR's own)."""
        if self.runs_pr_code:
            return False
        return self.changed_files is None or path in self.changed_files
