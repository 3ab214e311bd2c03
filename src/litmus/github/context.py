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

from litmus.text import clip

_TRUE = ("true", "True", "TRUE")
_FALSE = ("false", "False", "FALSE")


class InputError(ValueError):
    """An action input (or event file) with a value the action cannot use."""


# GitHub caps a webhook payload at 25 MB; a bigger event file is not one GitHub wrote.
MAX_EVENT_BYTES = 25 * 1024 * 1024
# SHA-1, or SHA-256 repositories. `(?!\n)`: Python's `$` also matches before a final newline.
_SHA = {"type": "string", "pattern": "^[0-9a-f]{40}(?:[0-9a-f]{24})?(?!\n)$"}
_URL = {"type": ["string", "null"], "pattern": "^(?:https?://\\S+)?(?!\n)$"}
_PULL_REQUEST = {
    "type": "object",
    "required": ["number", "head", "base"],
    "properties": {
        "number": {"type": "integer", "minimum": 1},
        "head": {"type": "object", "required": ["sha"], "properties": {
            "sha": _SHA,
            "repo": {"type": ["object", "null"], "properties": {"full_name": {"type": "string"}}},
        }},
        "base": {"type": "object", "required": ["sha"], "properties": {"sha": _SHA}},
    },
}
# What the action reads of each event it uses, and so what must be well-formed (GitHub's own schemas,
# copied under tests/schemas/, say much more; the action checks only what it relies on).
EVENT_FIELDS: dict[str, dict[str, Any]] = {
    "pull_request": {"type": "object", "required": ["pull_request"], "properties": {"pull_request": _PULL_REQUEST}},
    "deployment_status": {
        "type": "object", "required": ["deployment_status", "deployment"],
        "properties": {
            "deployment_status": {"type": "object", "required": ["state"], "properties": {
                "state": {"type": "string"}, "environment_url": _URL, "target_url": _URL}},
            "deployment": {"type": "object", "required": ["sha"], "properties": {"sha": _SHA}},
        },
    },
}
EVENT_FIELDS["pull_request_target"] = EVENT_FIELDS["pull_request"]
_LOGIN = {"type": "string", "pattern": "^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}|[A-Za-z0-9-]{0,38}\\[bot\\])(?!\n)$"}
EVENT_FIELDS["issue_comment"] = {
    "type": "object", "required": ["action", "issue", "comment"],
    "properties": {
        "action": {"type": "string"},
        "issue": {"type": "object", "required": ["number"], "properties": {
            "number": {"type": "integer", "minimum": 1}, "pull_request": {"type": ["object", "null"]}}},
        "comment": {"type": "object", "required": ["id", "body", "user", "html_url", "created_at"], "properties": {
            "id": {"type": "integer"}, "body": {"type": ["string", "null"]},
            "html_url": {"type": "string", "pattern": "^https?://\\S+(?!\n)$"},
            "created_at": {"type": "string", "pattern": "^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ(?!\n)$"},
            "author_association": {"type": "string"},
            "user": {"type": "object", "required": ["login", "type"],
                     "properties": {"login": _LOGIN, "type": {"type": "string"}}}}},
    },
}


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
        """The context; InputError naming the file and field when the event file is not one the action can use."""
        event_name = environ.get("GITHUB_EVENT_NAME", "")
        event_path = environ.get("GITHUB_EVENT_PATH")
        event = read_event(Path(event_path), event_name) if event_path else {}
        server_url = environ.get("GITHUB_SERVER_URL") or "https://github.com"
        repository = environ.get("GITHUB_REPOSITORY", "")
        run_id = environ.get("GITHUB_RUN_ID")
        return cls(
            event_name=event_name,
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
        if self.event_name in ("pull_request", "pull_request_target"):
            return pull_request_from_payload(self.event["pull_request"], self.repository)
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

    def deployed_sha(self) -> str | None:
        """The commit a `deployment_status` event says was deployed."""
        if self.event_name != "deployment_status":
            return None
        return self.event["deployment"]["sha"]

    def head_sha(self) -> str:
        """The commit checks and links refer to: the PR head, the deployed commit, else `GITHUB_SHA`."""
        pr = self.pull_request()
        if pr and pr.head_sha:
            return pr.head_sha
        return self.deployed_sha() or self.sha


def read_event(path: Path, event_name: str) -> dict[str, Any]:
    """The event payload at `path`, checked where the action relies on it (`EVENT_FIELDS`)."""
    import jsonschema  # lazy: jsonschema: ~115 ms, only when a schema is checked

    where = f"event file {path} ({event_name or 'no GITHUB_EVENT_NAME'})"
    try:
        size = path.stat().st_size
        if size > MAX_EVENT_BYTES:
            raise InputError(f"{where}: {size} bytes, more than GitHub's {MAX_EVENT_BYTES // 2**20} MB payload limit")
        event = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise InputError(f"{where}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError(f"{where}: nested too deeply to be a GitHub event") from None
    if not isinstance(event, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(event).__name__}")
    schema = EVENT_FIELDS.get(event_name)
    if schema:
        error = jsonschema.exceptions.best_match(jsonschema.Draft7Validator(schema).iter_errors(event))
        if error is not None:
            field = ".".join(str(part) for part in error.absolute_path) or "the payload"
            raise InputError(f"{where}: {field}: {_shorten(error.message)} (the action reads this field)")
    return event


def pull_request_from_payload(payload: dict[str, Any], repository: str) -> PullRequest:
    """A PR as an event or the REST API describes it; InputError when it lacks what the action uses."""
    import jsonschema  # lazy: jsonschema: ~115 ms, only when a schema is checked

    error = jsonschema.exceptions.best_match(jsonschema.Draft7Validator(_PULL_REQUEST).iter_errors(payload))
    if error is not None:
        field = ".".join(str(part) for part in error.absolute_path) or "the pull request"
        raise InputError(f"pull request: {field}: {_shorten(error.message)}")
    head = payload["head"]
    head_repo = (head.get("repo") or {}).get("full_name")
    return PullRequest(
        number=payload["number"],
        head_sha=head["sha"],
        base_sha=payload["base"]["sha"],
        head_repository=head_repo,
        from_fork=bool(head_repo and repository and head_repo != repository),
    )


def _shorten(text: str, limit: int = 200) -> str:
    """jsonschema quotes the offending value, which an event can make megabytes long."""
    flat = " ".join(text.split())
    return clip(flat, limit)
