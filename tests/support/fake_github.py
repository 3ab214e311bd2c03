"""A fake GitHub REST API on 127.0.0.1 that records every call: enough of it for the action.

Serves `GET /user`, issue comments (list with `Link` pagination, create, update), check runs (create,
update with appended annotations), a PR's files and the PRs of a commit (`deployment_status`); for the
trust decision, the branches whose head is a commit and the comparison of two commits (from a git
history the test sets, e.g. a real repository's through `load_git`), a collaborator's permission;
workflow runs (listed, and one by id) and their artifacts (with the producing run and a digest); for the
comment commands, a pull request by number, a git object database (blobs, trees, commits, branch refs
with a real fast-forward check on a non-forced update) and the contents of a file at a commit. Tokens
map to users: a token in `pats` is a personal access token of that login (`GET /user` answers it);
any other token behaves like the workflow's `GITHUB_TOKEN` (`GET /user` is 403, comments are
authored by `github-actions[bot]`). `deny` makes chosen operations answer 403 like a fork PR's
read-only token; `fail` makes chosen routes answer an error status (a failing endpoint).

Shaped like GitHub, and checked against GitHub's own description of it (tests/schemas/
github-rest-subset.json): response objects are built from real payloads (tests/support/
github_shapes.json), every request body is validated against its operation's `requestBody` schema
(a violation is answered 422, as GitHub does) and every response against its status's schema.
Each violation is recorded in `state.violations`, and leaving the `with` block fails the test.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import jsonschema

from support.schema_instances import minimal
from support.server import LocalServer

BOT = "github-actions[bot]"
SHAPES = json.loads((Path(__file__).with_name("github_shapes.json")).read_text("utf-8"))
REST = Path(__file__).resolve().parents[1] / "schemas" / "github-rest-subset.json"
DOCS = "https://docs.github.com/rest"
# The repository of the event fixtures (tests/github/events/) and the fork its PRs come from.
REPOSITORY = ("acme/shop", 186853002)
FORK = ("mallory/shop", 4343)
WORKFLOW = ".github/workflows/litmus.yml"
RUN = "GET /repos/{owner}/{repo}/actions/runs/{run_id}"
ARTIFACTS = "GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"


@cache
def _operations() -> dict[str, Any]:
    return json.loads(REST.read_text("utf-8"))["operations"]


@cache
def _validator(operation: str, part: str) -> jsonschema.Draft7Validator | None:
    """The validator of an operation's request body (`part` "request") or of one response status."""
    spec = _operations()[operation]
    schema = (spec.get("requestBody") if part == "request" else spec["responses"].get(part, {}).get("schema"))
    return jsonschema.Draft7Validator(schema) if schema else None


def violations_of(operation: str, part: str, instance: Any) -> list[str]:
    validator = _validator(operation, part)
    if validator is None:
        return []
    return [f"{operation} {part}: {'/'.join(map(str, e.absolute_path)) or '$'}: {e.message[:300]}"
            for e in validator.iter_errors(instance)]


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
    # (repo, issue number) -> comments, shaped like the REST API's (id, body, user.login, html_url, ...)
    comments: dict[tuple[str, int], list[dict]] = field(default_factory=dict)
    # id -> the check run as created, plus "annotations": every annotation of every request
    check_runs: dict[int, dict] = field(default_factory=dict)
    # (repo, PR number) -> files; entries need only "filename" and "status", the rest is filled in
    pr_files: dict[tuple[str, int], list[dict]] = field(default_factory=dict)
    # (repo, commit sha) -> the PRs `GET /repos/{repo}/commits/{sha}/pulls` lists (see `add_pull`)
    commit_pulls: dict[tuple[str, str], list[dict]] = field(default_factory=dict)
    # Operation names answering 403: "comment-write", "check-write", "pr-files", "commit-pulls", "artifacts",
    # "contents-write" (blobs and ref updates).
    deny: set[str] = field(default_factory=set)
    # Actions: workflow runs (newest first, as GitHub lists them), each run's artifacts, each artifact's zip
    # bytes; an artifact id in `gone` answers its download with 410 like an expired one.
    workflow_runs: list[dict] = field(default_factory=list)
    artifacts: dict[int, list[dict]] = field(default_factory=dict)
    artifact_zips: dict[int, bytes] = field(default_factory=dict)
    gone: set[int] = field(default_factory=set)
    # Git history, for the trust decision: branch -> its head commit, commit -> its parents.
    branches: dict[str, str] = field(default_factory=dict)
    parents: dict[str, list[str]] = field(default_factory=dict)
    # login -> `permission` of `GET .../collaborators/{login}/permission`; GitHub reportedly answers a
    # non-collaborator on a public repository 200 `read`, so that is the default.
    permissions: dict[str, str] = field(default_factory=dict)
    # Route (its handler's name, e.g. "compare", "branches_where_head", "workflow_run") -> error status it answers.
    fail: dict[str, int] = field(default_factory=dict)
    # (repo, number) -> the pull request `GET .../pulls/{number}` answers (see `add_pr`).
    pulls: dict[tuple[str, int], dict] = field(default_factory=dict)
    # The git object database: blob sha -> bytes, tree sha -> {path: blob sha} (flat), commit sha -> commit.
    blobs: dict[str, bytes] = field(default_factory=dict)
    trees: dict[str, dict[str, str]] = field(default_factory=dict)
    commits: dict[str, dict] = field(default_factory=dict)
    # Route name -> what to do once, just before that route answers (e.g. push to a branch: a race).
    before: dict[str, Callable[[], None]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    # Requests or responses that do not match GitHub's schema: each one fails the test.
    violations: list[str] = field(default_factory=list)
    next_id: int = 1000

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def add_comment(self, repo: str, number: int, body: str, login: str) -> dict:
        comment_id = self.new_id()
        comment = copy.deepcopy(SHAPES["issue_comment"])
        comment.update({
            "id": comment_id, "node_id": f"IC_{comment_id}", "body": body,
            "url": f"https://api.github.test/repos/{repo}/issues/comments/{comment_id}",
            "html_url": f"https://github.test/{repo}/pull/{number}#issuecomment-{comment_id}",
            "issue_url": f"https://api.github.test/repos/{repo}/issues/{number}",
        })
        comment["user"]["login"] = login
        comment["user"]["type"] = "Bot" if login.endswith("[bot]") else "User"
        self.comments.setdefault((repo, number), []).append(comment)
        return comment

    def add_pull(self, repo: str, sha: str, number: int, *, head_sha: str | None = None, state: str = "open") -> dict:
        """A PR that contains commit `sha` (its head unless `head_sha` says otherwise)."""
        pull = copy.deepcopy(SHAPES["pull_request"])
        pull.update({"number": number, "state": state, "url": f"https://api.github.test/repos/{repo}/pulls/{number}",
                     "html_url": f"https://github.test/{repo}/pull/{number}"})
        pull["head"]["sha"] = head_sha or sha
        self.commit_pulls.setdefault((repo, sha), []).append(pull)
        return pull

    def load_git(self, path: Path, branches: list[str]) -> None:
        """The history of the real repository at `path` as GitHub would know it: `branches` are the
        repository's branches; every commit reachable from a ref or HEAD is known (a fork's commits are,
        through the PR's `refs/pull/N/head`)."""
        git = ["git", "-C", str(path)]
        for branch in branches:
            self.branches[branch] = subprocess.run([*git, "rev-parse", f"refs/heads/{branch}"], check=True,
                                                   capture_output=True, text=True).stdout.strip()
        listing = subprocess.run([*git, "rev-list", "--parents", "--all", "HEAD"], check=True,
                                 capture_output=True, text=True).stdout
        for line in listing.splitlines():
            sha, *parents = line.split()
            self.parents[sha] = parents

    def ancestors(self, sha: str) -> set[str]:
        """`sha` and every commit it descends from."""
        seen, todo = set(), [sha]
        while todo:
            commit = todo.pop()
            if commit not in seen:
                seen.add(commit)
                todo += self.parents.get(commit, [])
        return seen

    def add_commit(self, files: dict[str, str | bytes], parents: list[str] = (), branch: str | None = None,
                   message: str = "commit", sha: str | None = None) -> str:
        """A commit whose tree holds `files` (path -> text or bytes), known to the compare endpoint too (`sha`:
        the real commit it stands for); `branch`, when given, is moved to it."""
        tree = {path: self._blob(data.encode() if isinstance(data, str) else data) for path, data in files.items()}
        return self._commit(self._tree(tree), list(parents), message, branch, sha)

    def files_at(self, sha: str) -> dict[str, bytes]:
        return {path: self.blobs[blob] for path, blob in self.trees[self.commits[sha]["tree"]].items()}

    def _blob(self, data: bytes) -> str:
        sha = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        self.blobs[sha] = data
        return sha

    def _tree(self, entries: dict[str, str]) -> str:
        sha = hashlib.sha1(json.dumps(sorted(entries.items())).encode()).hexdigest()
        self.trees[sha] = dict(entries)
        return sha

    def _commit(self, tree: str, parents: list[str], message: str, branch: str | None = None,
                sha: str | None = None) -> str:
        sha = sha or hashlib.sha1(json.dumps([tree, parents, message, self.new_id()]).encode()).hexdigest()
        self.commits[sha] = {"tree": tree, "parents": parents, "message": message}
        self.parents[sha] = parents
        if branch:
            self.branches[branch] = sha
        return sha

    def add_pr(self, repo: str, number: int, *, head_sha: str, base_sha: str, head_ref: str = "probes",
               head_repository: tuple[str, int] = REPOSITORY) -> dict:
        """The pull request `GET /repos/{repo}/pulls/{number}` answers: its head (`head_ref` of
        `head_repository`, at `head_sha`) and base (`main` at `base_sha`)."""
        pull = copy.deepcopy(SHAPES["pull_request"])
        pull.update({"number": number, "state": "open", "url": f"https://api.github.test/repos/{repo}/pulls/{number}",
                     "html_url": f"https://github.test/{repo}/pull/{number}"})
        full_name, repo_id = head_repository
        pull["head"].update({"sha": head_sha, "ref": head_ref, "label": f"{full_name.split('/')[0]}:{head_ref}"})
        pull["head"]["repo"].update({"id": repo_id, "full_name": full_name, "name": full_name.split("/")[1],
                                     "fork": head_repository != REPOSITORY})
        pull["head"]["repo"]["owner"]["login"] = full_name.split("/")[0]
        pull["base"].update({"sha": base_sha, "ref": "main"})
        self.pulls[(repo, number)] = pull
        return pull

    def add_run(self, run_id: int, *, event: str = "push", head_branch: str = "main", head_sha: str | None = None,
                path: str = WORKFLOW, conclusion: str = "success", head_repository: tuple[str, int] = REPOSITORY,
                repository: tuple[str, int] = REPOSITORY) -> dict:
        """A completed workflow run, shaped by GitHub's schema; listed newest first (add the oldest first)."""
        def repo(name_id: tuple[str, int]) -> dict:
            full_name, repo_id = name_id
            owner, name = full_name.split("/")
            return {"id": repo_id, "full_name": full_name, "name": name, "fork": name_id != repository,
                    "owner": {"login": owner}}
        run = minimal(_operations()[RUN]["responses"]["200"]["schema"], {
            "id": run_id, "event": event, "head_branch": head_branch, "head_sha": head_sha or f"{run_id:040x}",
            "path": path, "status": "completed", "conclusion": conclusion, "run_number": run_id,
            "head_repository": repo(head_repository), "repository": repo(repository)})
        self.workflow_runs.insert(0, run)
        return run

    def add_artifact(self, run: dict, archive: bytes, *, artifact_id: int | None = None, name: str = "litmus-results",
                     digest: str | None = "", **fields) -> dict:
        """`run`'s artifact holding `archive`, its `workflow_run` that run's and its `digest` the archive's sha256
        (or `digest` as given: None is an upload-artifact v3 artifact)."""
        artifact_id = artifact_id or self.new_id()
        item = _operations()[ARTIFACTS]["responses"]["200"]["schema"]["properties"]["artifacts"]["items"]
        artifact = minimal(item, {
            "id": artifact_id, "name": name, "expired": False, "size_in_bytes": len(archive),
            "digest": "sha256:" + hashlib.sha256(archive).hexdigest() if digest == "" else digest,
            "workflow_run": {"id": run["id"], "repository_id": run["repository"]["id"],
                             "head_repository_id": run["head_repository"]["id"], "head_branch": run["head_branch"],
                             "head_sha": run["head_sha"]}, **fields})
        self.artifacts.setdefault(run["id"], []).append(artifact)
        self.artifact_zips[artifact_id] = archive
        return artifact


# (method, path pattern, handler name, the operation in github-rest-subset.json)
_ROUTES = [
    ("GET", r"^/user$", "user", "GET /user"),
    ("GET", r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$", "list_comments",
     "GET /repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("POST", r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$", "create_comment",
     "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("PATCH", r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$", "update_comment",
     "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("POST", r"^/repos/([^/]+/[^/]+)/check-runs$", "create_check_run", "POST /repos/{owner}/{repo}/check-runs"),
    ("PATCH", r"^/repos/([^/]+/[^/]+)/check-runs/(\d+)$", "update_check_run",
     "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("GET", r"^/repos/([^/]+/[^/]+)/pulls/(\d+)/files$", "pr_files",
     "GET /repos/{owner}/{repo}/pulls/{pull_number}/files"),
    ("GET", r"^/repos/([^/]+/[^/]+)/commits/([^/]+)/pulls$", "commit_pulls",
     "GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls"),
    ("GET", r"^/repos/([^/]+/[^/]+)/actions/runs$", "list_workflow_runs", "GET /repos/{owner}/{repo}/actions/runs"),
    ("GET", r"^/repos/([^/]+/[^/]+)/actions/runs/(\d+)$", "workflow_run", RUN),
    ("GET", r"^/repos/([^/]+/[^/]+)/actions/runs/(\d+)/artifacts$", "list_run_artifacts",
     "GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"),
    ("GET", r"^/repos/([^/]+/[^/]+)/actions/artifacts/(\d+)/zip$", "download_artifact",
     "GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}"),
    ("GET", r"^/repos/([^/]+/[^/]+)/commits/([^/]+)/branches-where-head$", "branches_where_head",
     "GET /repos/{owner}/{repo}/commits/{commit_sha}/branches-where-head"),
    ("GET", r"^/repos/([^/]+/[^/]+)/compare/(.+)$", "compare", "GET /repos/{owner}/{repo}/compare/{basehead}"),
    ("GET", r"^/repos/([^/]+/[^/]+)/collaborators/([^/]+)/permission$", "permission",
     "GET /repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("GET", r"^/repos/([^/]+/[^/]+)/pulls/(\d+)$", "pull", "GET /repos/{owner}/{repo}/pulls/{pull_number}"),
    ("GET", r"^/repos/([^/]+/[^/]+)/contents/(.+)$", "contents", "GET /repos/{owner}/{repo}/contents/{path}"),
    ("GET", r"^/repos/([^/]+/[^/]+)/git/ref/heads/(.+)$", "get_ref", "GET /repos/{owner}/{repo}/git/ref/{ref}"),
    ("PATCH", r"^/repos/([^/]+/[^/]+)/git/refs/heads/(.+)$", "update_ref",
     "PATCH /repos/{owner}/{repo}/git/refs/{ref}"),
    ("GET", r"^/repos/([^/]+/[^/]+)/git/commits/([0-9a-f]+)$", "get_commit",
     "GET /repos/{owner}/{repo}/git/commits/{commit_sha}"),
    ("POST", r"^/repos/([^/]+/[^/]+)/git/blobs$", "create_blob", "POST /repos/{owner}/{repo}/git/blobs"),
    ("POST", r"^/repos/([^/]+/[^/]+)/git/trees$", "create_tree", "POST /repos/{owner}/{repo}/git/trees"),
    ("POST", r"^/repos/([^/]+/[^/]+)/git/commits$", "create_commit", "POST /repos/{owner}/{repo}/git/commits"),
    # Not GitHub's API: the storage host an artifact download redirects to (no schema to check).
    ("GET", r"^/_storage/(\d+)\.zip$", "storage_blob", ""),
]


def _error(status: int, message: str) -> tuple[int, dict, dict]:
    return status, {"message": message, "documentation_url": DOCS, "status": str(status)}, {}


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
            for route_method, pattern, name, operation in _ROUTES:
                match = re.match(pattern, split.path)
                if route_method == method and match:
                    problems = violations_of(operation, "request", body) if method != "GET" else []
                    if problems:
                        self.state.violations += problems
                        status, payload, headers = _error(422, "Invalid request: " + "; ".join(problems))
                    elif name in self.state.fail:
                        status, payload, headers = _error(self.state.fail[name], "Server Error")
                    else:
                        if name in self.state.before:
                            self.state.before.pop(name)()
                        groups = [unquote(group) for group in match.groups()]
                        status, payload, headers = getattr(self, name)(*groups, query=query, body=body)
                    if operation and not isinstance(payload, bytes):
                        self.state.violations += violations_of(operation, str(status), payload)
                    break
            else:
                status, payload, headers = _error(404, "Not Found")
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

    _FORBIDDEN = _error(403, "Resource not accessible by integration")

    # --- routes
    def user(self, query, body):
        login = self._login()
        if not login:
            return self._FORBIDDEN
        user = copy.deepcopy(SHAPES["authenticated_user"])
        user["login"] = login
        return 200, user, {}

    def list_comments(self, repo, number, query, body):
        return self._page(self.state.comments.get((repo, int(number)), []), query)

    def create_comment(self, repo, number, query, body):
        if "comment-write" in self.state.deny:
            return self._FORBIDDEN
        if len(body["body"]) > 65536:
            return _error(422, "Body is too long (maximum is 65536 characters)")
        return 201, self.state.add_comment(repo, int(number), body["body"], self._author()), {}

    def update_comment(self, repo, comment_id, query, body):
        if "comment-write" in self.state.deny:
            return self._FORBIDDEN
        for comment in (c for comments in self.state.comments.values() for c in comments):
            if comment["id"] == int(comment_id):
                comment["body"] = body["body"]
                return 200, comment, {}
        return _error(404, "Not Found")

    def _check_run(self, run: dict) -> dict:
        """The check run as the API returns it: GitHub's fields, the annotations only counted."""
        shaped = copy.deepcopy(SHAPES["check_run"])
        shaped.update({key: run[key] for key in ("id", "name", "head_sha", "status", "html_url") if key in run})
        shaped.update({"conclusion": run.get("conclusion"), "details_url": run.get("details_url"),
                       "url": f"https://api.github.test/repos/{run['repo']}/check-runs/{run['id']}"})
        given = run.get("output", {})
        shaped["output"].update({"title": given.get("title"), "summary": given.get("summary"),
                                 "annotations_count": len(run["annotations"])})
        return shaped

    def create_check_run(self, repo, query, body):
        if "check-write" in self.state.deny:
            return self._FORBIDDEN
        if len(body.get("output", {}).get("annotations", [])) > 50:
            return _error(422, "Only 50 annotations per request")
        run_id = self.state.new_id()
        run = {"id": run_id, "repo": repo, "html_url": f"https://github.test/{repo}/runs/{run_id}", **body}
        run["annotations"] = list(body.get("output", {}).get("annotations", []))
        self.state.check_runs[run_id] = run
        return 201, self._check_run(run), {}

    def update_check_run(self, repo, run_id, query, body):
        if "check-write" in self.state.deny:
            return self._FORBIDDEN
        run = self.state.check_runs.get(int(run_id))
        if run is None:
            return _error(404, "Not Found")
        annotations = body.get("output", {}).get("annotations", [])
        if len(annotations) > 50:
            return _error(422, "Only 50 annotations per request")
        run["annotations"].extend(annotations)
        run["output"] = {**run.get("output", {}), **{k: v for k, v in body.get("output", {}).items()
                                                      if k != "annotations"}}
        return 200, self._check_run(run), {}

    def pr_files(self, repo, number, query, body):
        if "pr-files" in self.state.deny:
            return self._FORBIDDEN
        files = [{"sha": "0" * 40, "additions": 1, "deletions": 0, "changes": 1,
                  "blob_url": f"https://github.test/{repo}/blob/HEAD/{f['filename']}",
                  "raw_url": f"https://github.test/{repo}/raw/HEAD/{f['filename']}",
                  "contents_url": f"https://api.github.test/repos/{repo}/contents/{f['filename']}", **f}
                 for f in self.state.pr_files.get((repo, int(number)), [])]
        return self._page(files, query)

    def commit_pulls(self, repo, sha, query, body):
        if "commit-pulls" in self.state.deny:
            return self._FORBIDDEN
        return self._page(self.state.commit_pulls.get((repo, sha), []), query)


    # --- Actions artifacts (the action's `baseline: artifact`)
    def list_workflow_runs(self, repo, query, body):
        runs = [r for r in self.state.workflow_runs
                if r["head_branch"] == query.get("branch", r["head_branch"])
                and r["head_sha"] == query.get("head_sha", r["head_sha"])
                and (query.get("status") != "success" or r["conclusion"] == "success")]
        per_page, page = min(100, int(query.get("per_page", 30))), int(query.get("page", 1))
        return 200, {"total_count": len(runs), "workflow_runs": runs[(page - 1) * per_page: page * per_page]}, {}

    def workflow_run(self, repo, run_id, query, body):
        run = next((r for r in self.state.workflow_runs if r["id"] == int(run_id)), None)
        return (200, run, {}) if run else _error(404, "Not Found")

    def list_run_artifacts(self, repo, run_id, query, body):
        if "artifacts" in self.state.deny:
            return self._FORBIDDEN
        artifacts = [a for a in self.state.artifacts.get(int(run_id), [])
                     if "name" not in query or a["name"] == query["name"]]
        return 200, {"total_count": len(artifacts), "artifacts": artifacts}, {}

    def download_artifact(self, repo, artifact_id, query, body):
        artifact_id = int(artifact_id)
        if artifact_id in self.state.gone:
            return _error(410, "Artifact has expired")
        if artifact_id not in self.state.artifact_zips:
            return _error(404, "Not Found")
        host = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}"
        # Like GitHub: a redirect to a short-lived storage URL, with an empty body.
        return 302, b"", {"Location": f"{host}/_storage/{artifact_id}.zip"}

    def storage_blob(self, artifact_id, query, body):
        return 200, self.state.artifact_zips[int(artifact_id)], {}

    # --- Commits and branches (the trust decision)
    def branches_where_head(self, repo, sha, query, body):
        return 200, [{"name": name, "protected": False, "commit": {
            "sha": sha, "url": f"https://api.github.test/repos/{repo}/commits/{sha}"}}
            for name, head in self.state.branches.items() if head == sha], {}

    def compare(self, repo, basehead, query, body):
        base, separator, head = basehead.partition("...")
        base_sha, head_sha = self.state.branches.get(base, base), self.state.branches.get(head, head)
        if not separator or not {base_sha, head_sha} <= set(self.state.parents):
            return _error(404, "Not Found")
        behind, ahead = self.state.ancestors(base_sha), self.state.ancestors(head_sha)
        status = ("identical" if base_sha == head_sha else "behind" if head_sha in behind
                  else "ahead" if base_sha in ahead else "diverged")
        schema = _operations()["GET /repos/{owner}/{repo}/compare/{basehead}"]["responses"]["200"]["schema"]
        compared = {"status": status, "ahead_by": len(ahead - behind), "behind_by": len(behind - ahead),
                    "total_commits": len(ahead - behind), "base_commit": {"sha": base_sha}}
        if status != "diverged":  # else the merge base is a common ancestor the fake does not work out
            compared["merge_base_commit"] = {"sha": base_sha if status == "ahead" else head_sha}
        if {base_sha, head_sha} <= set(self.state.commits):
            compared["files"] = self._changed_files(repo, base_sha, head_sha)
        return 200, minimal(schema, compared), {}

    def _changed_files(self, repo: str, base_sha: str, head_sha: str) -> list[dict]:
        before, after = (self.state.trees[self.state.commits[sha]["tree"]] for sha in (base_sha, head_sha))
        changed = []
        for path in sorted(set(before) | set(after)):
            if before.get(path) == after.get(path):
                continue
            status = "added" if path not in before else "removed" if path not in after else "modified"
            changed.append({"sha": after.get(path) or before[path], "filename": path, "status": status,
                            "additions": 1, "deletions": 1, "changes": 2,
                            "blob_url": f"https://github.test/{repo}/blob/{head_sha}/{path}",
                            "raw_url": f"https://github.test/{repo}/raw/{head_sha}/{path}",
                            "contents_url": f"https://api.github.test/repos/{repo}/contents/{path}?ref={head_sha}"})
        return changed

    def permission(self, repo, login, query, body):
        schema = _operations()["GET /repos/{owner}/{repo}/collaborators/{username}/permission"]["responses"]["200"]
        permission = self.state.permissions.get(login, "read")
        return 200, minimal(schema["schema"], {"permission": permission, "role_name": permission,
                                               "user": {"login": login}}), {}


    # --- Pull requests, contents and the git database (the comment commands)
    def pull(self, repo, number, query, body):
        pull = self.state.pulls.get((repo, int(number)))
        if pull is None:
            return _error(404, "Not Found")
        # A branch of this repository: the head is wherever the branch is now (a push, a commit by the API).
        if pull["head"]["repo"]["full_name"] == repo and pull["head"]["ref"] in self.state.branches:
            pull["head"]["sha"] = self.state.branches[pull["head"]["ref"]]
        return 200, pull, {}

    def contents(self, repo, path, query, body):
        ref = query.get("ref") or self.state.branches.get("main")
        data = self.state.files_at(ref).get(path) if ref in self.state.commits else None
        if data is None:
            return self._directory(repo, path, ref) if ref in self.state.commits else _error(404, "Not Found")
        blob = self._blob_of(ref, path)
        links = f"https://api.github.test/repos/{repo}/contents/{path}?ref={ref}"
        return 200, {"type": "file", "encoding": "base64", "size": len(data), "name": path.rsplit("/", 1)[-1],
                     "path": path, "content": base64.encodebytes(data).decode("ascii"), "sha": blob,
                     "url": links, "git_url": f"https://api.github.test/repos/{repo}/git/blobs/{blob}",
                     "html_url": f"https://github.test/{repo}/blob/{ref}/{path}",
                     "download_url": f"https://raw.github.test/{repo}/{ref}/{path}",
                     "_links": {"git": f"https://api.github.test/repos/{repo}/git/blobs/{blob}",
                                "html": f"https://github.test/{repo}/blob/{ref}/{path}", "self": links}}, {}

    def _directory(self, repo: str, path: str, ref: str) -> tuple[int, Any, dict]:
        """A folder's listing, as the contents API gives it: its files and folders, one level."""
        entries: dict[str, str | None] = {}  # name -> blob sha (None: a folder)
        for name, blob in self.state.trees[self.state.commits[ref]["tree"]].items():
            if name.startswith(path + "/"):
                first, _, deeper = name[len(path) + 1:].partition("/")
                entries[first] = None if deeper else blob
        if not entries:
            return _error(404, "Not Found")
        listing = []
        for name, blob in sorted(entries.items()):
            inside = f"{path}/{name}"
            links = f"https://api.github.test/repos/{repo}/contents/{inside}?ref={ref}"
            git = f"https://api.github.test/repos/{repo}/git/{'blobs' if blob else 'trees'}/{blob or ref}"
            html = f"https://github.test/{repo}/{'blob' if blob else 'tree'}/{ref}/{inside}"
            listing.append({"type": "file" if blob else "dir", "size": len(self.state.blobs[blob]) if blob else 0,
                            "name": name, "path": inside, "sha": blob or ref, "url": links, "git_url": git,
                            "html_url": html, "download_url": f"https://raw.github.test/{repo}/{ref}/{inside}"
                            if blob else None, "_links": {"git": git, "html": html, "self": links}})
        return 200, listing, {}

    def _blob_of(self, commit: str, path: str) -> str:
        return self.state.trees[self.state.commits[commit]["tree"]][path]

    def _ref(self, repo: str, branch: str) -> dict:
        sha = self.state.branches[branch]
        return {"ref": f"refs/heads/{branch}", "node_id": f"REF_{branch}",
                "url": f"https://api.github.test/repos/{repo}/git/refs/heads/{branch}",
                "object": {"type": "commit", "sha": sha,
                           "url": f"https://api.github.test/repos/{repo}/git/commits/{sha}"}}

    def get_ref(self, repo, branch, query, body):
        if branch not in self.state.branches:
            return _error(404, "Not Found")
        return 200, self._ref(repo, branch), {}

    def update_ref(self, repo, branch, query, body):
        if "contents-write" in self.state.deny:
            return self._FORBIDDEN
        if branch not in self.state.branches or body["sha"] not in self.state.commits:
            return _error(422, "Reference does not exist")
        # Like git: without `force`, only a fast-forward (the new commit descends from the branch's head).
        if not body.get("force") and self.state.branches[branch] not in self.state.ancestors(body["sha"]):
            return _error(422, "Update is not a fast forward")
        self.state.branches[branch] = body["sha"]
        return 200, self._ref(repo, branch), {}

    def _git_commit(self, repo: str, sha: str) -> dict:
        commit = self.state.commits[sha]
        schema = _operations()["GET /repos/{owner}/{repo}/git/commits/{commit_sha}"]["responses"]["200"]["schema"]
        person = {"name": "github-actions[bot]", "email": "41898282+github-actions[bot]@users.noreply.github.com",
                  "date": "2026-12-01T09:00:00Z"}
        return minimal(schema, {
            "sha": sha, "node_id": f"C_{sha[:8]}", "url": f"https://api.github.test/repos/{repo}/git/commits/{sha}",
            "html_url": f"https://github.test/{repo}/commit/{sha}", "author": person, "committer": person,
            "message": commit["message"],
            "tree": {"sha": commit["tree"], "url": f"https://api.github.test/repos/{repo}/git/trees/{commit['tree']}"},
            "parents": [{"sha": p, "url": f"https://api.github.test/repos/{repo}/git/commits/{p}",
                         "html_url": f"https://github.test/{repo}/commit/{p}"} for p in commit["parents"]],
            "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None,
                             "verified_at": None}})

    def get_commit(self, repo, sha, query, body):
        if sha not in self.state.commits:
            return _error(404, "Not Found")
        return 200, self._git_commit(repo, sha), {}

    def create_blob(self, repo, query, body):
        if "contents-write" in self.state.deny:
            return self._FORBIDDEN
        data = (base64.b64decode(body["content"]) if body.get("encoding") == "base64"
                else body["content"].encode("utf-8"))
        sha = self.state._blob(data)
        return 201, {"sha": sha, "url": f"https://api.github.test/repos/{repo}/git/blobs/{sha}"}, {}

    def create_tree(self, repo, query, body):
        entries = dict(self.state.trees.get(body.get("base_tree"), {})) if body.get("base_tree") else {}
        if body.get("base_tree") and body["base_tree"] not in self.state.trees:
            return _error(422, "base_tree is not a tree")
        for item in body["tree"]:
            if item.get("type") != "blob" or item.get("sha") not in self.state.blobs:
                return _error(422, "tree entries must name an existing blob")
            entries[item["path"]] = item["sha"]
        sha = self.state._tree(entries)
        return 201, {"sha": sha, "url": f"https://api.github.test/repos/{repo}/git/trees/{sha}", "truncated": False,
                     "tree": [{"path": path, "mode": "100644", "type": "blob", "sha": blob}
                              for path, blob in sorted(entries.items())]}, {}

    def create_commit(self, repo, query, body):
        if body["tree"] not in self.state.trees or not set(body.get("parents", [])) <= set(self.state.commits):
            return _error(422, "tree or parent does not exist")
        sha = self.state._commit(body["tree"], list(body.get("parents", [])), body["message"])
        return 201, self._git_commit(repo, sha), {}


class FakeGitHub(LocalServer):
    """`with FakeGitHub() as gh:` serves on `gh.base_url`; `gh.state` holds the data and the recorded calls.

    Leaving the block raises AssertionError when a request or response broke GitHub's schema.
    """

    def __init__(self, state: FakeGitHubState | None = None) -> None:
        self.state = state or FakeGitHubState()
        super().__init__(type("Handler", (_Handler,), {"state": self.state, "lock": threading.Lock()}))

    def __exit__(self, exc_type, *exc) -> None:
        self.stop()
        if exc_type is None and self.state.violations:
            raise AssertionError("GitHub's REST schema was broken:\n" + "\n".join(self.state.violations[:20]))

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
