"""What the runner tells a step: its inputs (`INPUT_*`) and the `GITHUB_*` context, read from an environment.

Input names follow the runner: `INPUT_` + the input id upper-cased with spaces turned into `_`;
hyphens are kept (`base-url` -> `INPUT_BASE-URL`). Values are trimmed, like the toolkit's `getInput`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_TRUE = ("true", "True", "TRUE")
_FALSE = ("false", "False", "FALSE")


class InputError(ValueError):
    """An action input with a value the action cannot use."""


def input_env_name(name: str) -> str:
    return "INPUT_" + name.replace(" ", "_").upper()


def read_input(environ: Mapping[str, str], name: str, default: str = "") -> str:
    value = environ.get(input_env_name(name), "").strip()
    return value or default


def read_bool_input(environ: Mapping[str, str], name: str, default: bool) -> bool:
    """YAML 1.2 core booleans only, as the toolkit's `getBooleanInput` accepts."""
    value = read_input(environ, name)
    if not value:
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise InputError(f"input '{name}' must be true or false, got {value!r}")


def read_choice_input(environ: Mapping[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    value = read_input(environ, name, default)
    if value not in choices:
        raise InputError(f"input '{name}' must be one of {', '.join(choices)}; got {value!r}")
    return value


@dataclass(frozen=True)
class PullRequest:
    number: int
    head_sha: str | None = None
    base_sha: str | None = None
    head_repository: str | None = None
    # The head branch lives in another repository: the workflow token is then read-only.
    from_fork: bool = False


_MERGE_REF = re.compile(r"^refs/pull/(\d+)/(?:merge|head)$")


@dataclass(frozen=True)
class GitHubContext:
    event_name: str = ""
    event: dict[str, Any] = field(default_factory=dict)
    repository: str = ""
    sha: str = ""
    ref: str = ""
    server_url: str = "https://github.com"
    api_url: str = "https://api.github.com"
    workspace: Path = Path(".")
    output_path: Path | None = None
    summary_path: Path | None = None
    run_url: str | None = None
    # The PR's base branch (GITHUB_BASE_REF) and this workflow's ref ('owner/repo/.github/workflows/x.yml@ref').
    base_ref: str = ""
    workflow_ref: str = ""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> GitHubContext:
        event: dict[str, Any] = {}
        event_path = environ.get("GITHUB_EVENT_PATH")
        if event_path and Path(event_path).is_file():
            loaded = json.loads(Path(event_path).read_text("utf-8"))
            event = loaded if isinstance(loaded, dict) else {}
        server_url = environ.get("GITHUB_SERVER_URL") or "https://github.com"
        repository = environ.get("GITHUB_REPOSITORY", "")
        run_id = environ.get("GITHUB_RUN_ID")
        return cls(
            event_name=environ.get("GITHUB_EVENT_NAME", ""),
            event=event,
            repository=repository,
            sha=environ.get("GITHUB_SHA", ""),
            ref=environ.get("GITHUB_REF", ""),
            server_url=server_url.rstrip("/"),
            api_url=(environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            workspace=Path(environ.get("GITHUB_WORKSPACE") or "."),
            output_path=Path(environ["GITHUB_OUTPUT"]) if environ.get("GITHUB_OUTPUT") else None,
            summary_path=Path(environ["GITHUB_STEP_SUMMARY"]) if environ.get("GITHUB_STEP_SUMMARY") else None,
            run_url=f"{server_url.rstrip('/')}/{repository}/actions/runs/{run_id}" if run_id and repository else None,
            base_ref=environ.get("GITHUB_BASE_REF", ""),
            workflow_ref=environ.get("GITHUB_WORKFLOW_REF", ""),
        )

    def pull_request(self) -> PullRequest | None:
        """The PR this run is about: from a pull_request(_target) payload, else from `refs/pull/N/merge`."""
        payload = self.event.get("pull_request")
        if self.event_name in ("pull_request", "pull_request_target") and isinstance(payload, dict):
            head = payload.get("head") or {}
            head_repo = (head.get("repo") or {}).get("full_name")
            return PullRequest(
                number=int(payload.get("number") or self.event.get("number")),
                head_sha=head.get("sha"),
                base_sha=(payload.get("base") or {}).get("sha"),
                head_repository=head_repo,
                from_fork=bool(head_repo and self.repository and head_repo != self.repository),
            )
        match = _MERGE_REF.match(self.ref)
        if match:
            return PullRequest(number=int(match.group(1)))
        return None

    def deployment_url(self) -> str | None:
        """The deployed URL a `deployment_status` event carries (`environment_url`, else `target_url`)."""
        if self.event_name != "deployment_status":
            return None
        status = self.event.get("deployment_status") or {}
        return status.get("environment_url") or status.get("target_url") or None

    def deployment_state(self) -> str | None:
        if self.event_name != "deployment_status":
            return None
        return (self.event.get("deployment_status") or {}).get("state")

    def head_sha(self) -> str:
        """The commit checks and links refer to: the PR head, the deployed commit, else `GITHUB_SHA`."""
        pr = self.pull_request()
        if pr and pr.head_sha:
            return pr.head_sha
        if self.event_name == "deployment_status":
            return (self.event.get("deployment") or {}).get("sha") or self.sha
        return self.sha
