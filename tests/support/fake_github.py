"""A fake GitHub REST API on 127.0.0.1 that records every call: enough of it for the action.

Serves `GET /user`, issue comments (list with `Link` pagination, create, update), check runs (create,
update with appended annotations) and a PR's files. Tokens map to users: a token in `pats` is a
personal access token of that login (`GET /user` answers it); any other token behaves like the
workflow's `GITHUB_TOKEN` (`GET /user` is 403, comments are authored by `github-actions[bot]`).
`deny` makes chosen operations answer 403 like a fork PR's read-only token.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

BOT = "github-actions[bot]"


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]


@dataclass
class FakeGitHubState:
    pats: dict[str, str] = field(default_factory=dict)
    # (repo, issue number) -> comments, each {"id", "body", "user": {"login"}, "html_url"}
    comments: dict[tuple[str, int], list[dict]] = field(default_factory=dict)
    check_runs: dict[int, dict] = field(default_factory=dict)
    pr_files: dict[tuple[str, int], list[dict]] = field(default_factory=dict)
    # Operation names answering 403: "comment-write", "check-write", "pr-files", "artifacts".
    deny: set[str] = field(default_factory=set)
    # Actions: workflow runs (newest first, as GitHub lists them), each run's artifacts, each artifact's zip
    # bytes; an artifact id in `gone` answers its download with 410 like an expired one.
    workflow_runs: list[dict] = field(default_factory=list)
    artifacts: dict[int, list[dict]] = field(default_factory=dict)
    artifact_zips: dict[int, bytes] = field(default_factory=dict)
    gone: set[int] = field(default_factory=set)
    calls: list[Call] = field(default_factory=list)
    next_id: int = 1000

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def add_comment(self, repo: str, number: int, body: str, login: str) -> dict:
        comment_id = self.new_id()
        comment = {"id": comment_id, "body": body, "user": {"login": login},
                   "html_url": f"https://github.test/{repo}/pull/{number}#issuecomment-{comment_id}"}
        self.comments.setdefault((repo, number), []).append(comment)
        return comment


_ROUTES = [
    ("GET", re.compile(r"^/user$"), "user"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$"), "list_comments"),
    ("POST", re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$"), "create_comment"),
    ("PATCH", re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$"), "update_comment"),
    ("POST", re.compile(r"^/repos/([^/]+/[^/]+)/check-runs$"), "create_check_run"),
    ("PATCH", re.compile(r"^/repos/([^/]+/[^/]+)/check-runs/(\d+)$"), "update_check_run"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/pulls/(\d+)/files$"), "pr_files"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/actions/runs$"), "list_workflow_runs"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/actions/runs/(\d+)/artifacts$"), "list_run_artifacts"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/actions/artifacts/(\d+)/zip$"), "download_artifact"),
    ("GET", re.compile(r"^/_storage/(\d+)\.zip$"), "storage_blob"),
]


class _Handler(BaseHTTPRequestHandler):
    state: FakeGitHubState
    lock: threading.Lock

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def _handle(self, method: str) -> None:
        split = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        with self.lock:
            self.state.calls.append(Call(method, split.path, query, body, dict(self.headers.items())))
            for route_method, pattern, name in _ROUTES:
                match = pattern.match(split.path)
                if route_method == method and match:
                    status, payload, headers = getattr(self, name)(*match.groups(), query=query, body=body)
                    break
            else:
                status, payload, headers = 404, {"message": "Not Found"}, {}
        binary = isinstance(payload, bytes)
        data = payload if binary else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/zip" if binary else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    # --- helpers
    def _login(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ").removeprefix("token ").strip()
        return self.state.pats.get(token)

    def _author(self) -> str:
        return self._login() or BOT

    def _page(self, items: list, query: dict) -> tuple[int, list, dict]:
        per_page = min(100, int(query.get("per_page", 30)))
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(items):
            host = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}"
            path = urlsplit(self.path).path
            headers["Link"] = (f'<{host}{path}?per_page={per_page}&page={page + 1}>; rel="next", '
                               f'<{host}{path}?per_page={per_page}&page={-(-len(items) // per_page)}>; rel="last"')
        return 200, chunk, headers

    _FORBIDDEN = (403, {"message": "Resource not accessible by integration"}, {})

    # --- routes
    def user(self, query, body):
        login = self._login()
        return (200, {"login": login}, {}) if login else self._FORBIDDEN

    def list_comments(self, repo, number, query, body):
        return self._page(self.state.comments.get((repo, int(number)), []), query)

    def create_comment(self, repo, number, query, body):
        if "comment-write" in self.state.deny:
            return self._FORBIDDEN
        if len(body["body"]) > 65536:
            return 422, {"message": "Body is too long (maximum is 65536 characters)"}, {}
        return 201, self.state.add_comment(repo, int(number), body["body"], self._author()), {}

    def update_comment(self, repo, comment_id, query, body):
        if "comment-write" in self.state.deny:
            return self._FORBIDDEN
        for comment in (c for comments in self.state.comments.values() for c in comments):
            if comment["id"] == int(comment_id):
                comment["body"] = body["body"]
                return 200, comment, {}
        return 404, {"message": "Not Found"}, {}

    def create_check_run(self, repo, query, body):
        if "check-write" in self.state.deny:
            return self._FORBIDDEN
        if len(body.get("output", {}).get("annotations", [])) > 50:
            return 422, {"message": "Only 50 annotations per request"}, {}
        run_id = self.state.new_id()
        run = {"id": run_id, "repo": repo, "html_url": f"https://github.test/{repo}/runs/{run_id}", **body}
        run["annotations"] = list(body.get("output", {}).get("annotations", []))
        self.state.check_runs[run_id] = run
        return 201, {k: v for k, v in run.items() if k != "annotations"}, {}

    def update_check_run(self, repo, run_id, query, body):
        if "check-write" in self.state.deny:
            return self._FORBIDDEN
        run = self.state.check_runs.get(int(run_id))
        if run is None:
            return 404, {"message": "Not Found"}, {}
        annotations = body.get("output", {}).get("annotations", [])
        if len(annotations) > 50:
            return 422, {"message": "Only 50 annotations per request"}, {}
        run["annotations"].extend(annotations)
        run["output"] = {**run.get("output", {}), **{k: v for k, v in body.get("output", {}).items()
                                                      if k != "annotations"}}
        return 200, {k: v for k, v in run.items() if k != "annotations"}, {}

    def pr_files(self, repo, number, query, body):
        if "pr-files" in self.state.deny:
            return self._FORBIDDEN
        return self._page(self.state.pr_files.get((repo, int(number)), []), query)


    # --- Actions artifacts (the action's `baseline: artifact`)
    def list_workflow_runs(self, repo, query, body):
        runs = [r for r in self.state.workflow_runs
                if r["head_branch"] == query.get("branch", r["head_branch"])
                and (query.get("status") != "success" or r["conclusion"] == "success")]
        per_page, page = min(100, int(query.get("per_page", 30))), int(query.get("page", 1))
        return 200, {"total_count": len(runs), "workflow_runs": runs[(page - 1) * per_page: page * per_page]}, {}

    def list_run_artifacts(self, repo, run_id, query, body):
        if "artifacts" in self.state.deny:
            return self._FORBIDDEN
        artifacts = [a for a in self.state.artifacts.get(int(run_id), [])
                     if "name" not in query or a["name"] == query["name"]]
        return 200, {"total_count": len(artifacts), "artifacts": artifacts}, {}

    def download_artifact(self, repo, artifact_id, query, body):
        artifact_id = int(artifact_id)
        if artifact_id in self.state.gone:
            return 410, {"message": "Artifact has expired"}, {}
        if artifact_id not in self.state.artifact_zips:
            return 404, {"message": "Not Found"}, {}
        host = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}"
        # Like GitHub: a redirect to a short-lived storage URL, with an empty body.
        return 302, b"", {"Location": f"{host}/_storage/{artifact_id}.zip"}

    def storage_blob(self, artifact_id, query, body):
        return 200, self.state.artifact_zips[int(artifact_id)], {}


class FakeGitHub:
    """`with FakeGitHub() as gh:` serves on `gh.url`; `gh.state` holds the data and the recorded calls."""

    def __init__(self, state: FakeGitHubState | None = None) -> None:
        self.state = state or FakeGitHubState()
        handler = type("Handler", (_Handler,), {"state": self.state, "lock": threading.Lock()})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def calls(self, method: str | None = None, path_pattern: str | None = None) -> list[Call]:
        return [c for c in self.state.calls
                if (method is None or c.method == method) and (path_pattern is None or re.search(path_pattern, c.path))]


def parse_output_file(text: str) -> dict[str, str]:
    """Read GITHUB_OUTPUT the way the runner does (name=value, or name<<DELIM ... DELIM)."""
    values, lines, i = {}, text.split("\n"), 0
    while i < len(lines) and lines[i]:
        line = lines[i]
        heredoc = re.match(r"^([^=<]+)<<(.+)$", line)
        if heredoc:
            name, delimiter = heredoc.groups()
            end = lines.index(delimiter, i + 1)
            values[name] = "\n".join(lines[i + 1:end])
            i = end + 1
        else:
            name, value = line.split("=", 1)
            values[name] = value
            i += 1
    return values
