"""The run's trust decision for the checked-out commit: real git repositories made here, GitHub's answers
from the fake GitHub (fed the same history) and real-shaped events (tests/github/events/)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from litmus.github.api import GitHubClient
from litmus.github.context import GitHubContext
from litmus.github.trust_decision import branch_verdict, decide_trust, same_repository_pull_request

EVENTS = Path(__file__).parent / "events"
PROBES = ["probes"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@example.test", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


@dataclass
class Repo:
    root: Path
    older: str  # a commit of main behind its head
    main: str
    fork: str  # the fork PR's head: main plus a changed probe
    merge: str  # the fork PR's merge commit, as `refs/pull/7/merge`
    feature: str  # a branch of the repository itself
    feature_merge: str

    def checkout(self, sha: str) -> None:
        git(self.root, "checkout", "-q", "--detach", sha)


@pytest.fixture
def repo(tmp_path) -> Repo:
    root = tmp_path / "ws"
    (root / "probes").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("probes/local/\n.litmus/cache/\n")
    (root / "litmus.yaml").write_text("probes: probes\n")
    (root / "probes" / "shop.yaml").write_text("name: shop\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "probes")
    older = git(root, "rev-parse", "HEAD")
    (root / "README.md").write_text("shop\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "readme")
    main = git(root, "rev-parse", "HEAD")
    merges = {}
    for branch, change in (("patch-1", "python: steal.py\n"), ("feature", "name: shop, checked\n")):
        git(root, "checkout", "-q", "-b", branch, main)
        (root / "probes" / "shop.yaml").write_text(change)
        git(root, "commit", "-q", "-am", branch)
        git(root, "checkout", "-q", "--detach", main)
        (root / "other.txt").write_text(branch)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "base moves on")
        git(root, "merge", "-q", "--no-edit", branch)
        merges[branch] = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    return Repo(root, older, main, git(root, "rev-parse", "patch-1"), merges["patch-1"],
                git(root, "rev-parse", "feature"), merges["feature"])


@pytest.fixture
def github(fake_github, repo):
    """GitHub knows the repository's branches (main, feature) and, through the fork PR's refs, the fork's commits."""
    fake_github.state.load_git(repo.root, ["main", "feature"])
    return fake_github


def context(tmp_path: Path, name: str, event_name: str, *, sha: str | None = None,
            github_sha: str = "9" * 40) -> GitHubContext:
    """The fixture event, its PR's head (or deployed) commit `sha`, one of the test repository's."""
    event = json.loads((EVENTS / name).read_text("utf-8"))
    if sha:
        (event["pull_request"]["head"] if "pull_request" in event else event["deployment"])["sha"] = sha
    path = tmp_path / f"{name}.event"
    path.write_text(json.dumps(event), encoding="utf-8")
    return GitHubContext.from_environ({"GITHUB_EVENT_PATH": str(path), "GITHUB_EVENT_NAME": event_name,
                                       "GITHUB_REPOSITORY": "acme/shop", "GITHUB_SHA": github_sha})


def client(github) -> GitHubClient:
    return GitHubClient(github.base_url, "ghs_token", retries=0)


def test_pull_request_target_that_checked_out_the_base_branch_is_trusted(github, repo, tmp_path):
    ctx = context(tmp_path, "pull_request_fork.json", "pull_request_target", sha=repo.fork, github_sha=repo.main)
    assert decide_trust(ctx, client(github), repo.root, PROBES) == (
        True, f"trusted: commit {repo.main[:8]} is the head of branch main of acme/shop")
    repo.checkout(repo.older)  # an older commit of the branch: compare says `behind`
    assert decide_trust(ctx, client(github), repo.root, PROBES) == (
        True, f"trusted: commit {repo.older[:8]} is on branch main of acme/shop "
              f"(compare main...{repo.older[:8]}: behind)")


def test_pull_request_target_that_checked_out_the_forks_head_is_untrusted(github, repo, tmp_path):
    ctx = context(tmp_path, "pull_request_fork.json", "pull_request_target", sha=repo.fork, github_sha=repo.main)
    repo.checkout(repo.fork)
    assert decide_trust(ctx, client(github), repo.root, PROBES) == (
        False, f"untrusted: commit {repo.fork[:8]} is not on a branch of acme/shop "
               f"(branches-where-head: none; compare main...{repo.fork[:8]}: ahead)")


@pytest.mark.parametrize("checkout", ["fork", "merge"])
def test_a_fork_pull_request_is_untrusted_at_its_head_and_at_its_merge_commit(github, repo, tmp_path, checkout):
    ctx = context(tmp_path, "pull_request_fork.json", "pull_request", sha=repo.fork, github_sha=repo.merge)
    repo.checkout(getattr(repo, checkout))
    trusted, reason = decide_trust(ctx, client(github), repo.root, PROBES)
    assert not trusted and reason.startswith(f"untrusted: commit {getattr(repo, checkout)[:8]} is not on a branch")


@pytest.mark.parametrize(("checkout", "what"), [("feature", "the head"), ("feature_merge", "the merge commit")])
def test_a_pull_request_from_the_repository_itself_is_trusted_without_asking_github(fake_github, repo, tmp_path,
                                                                                    checkout, what):
    ctx = context(tmp_path, "pull_request.json", "pull_request", sha=repo.feature, github_sha=repo.feature_merge)
    repo.checkout(getattr(repo, checkout))
    assert decide_trust(ctx, None, repo.root, PROBES) == (
        True, f"trusted: commit {getattr(repo, checkout)[:8]} is {what} of pull request #42, "
              "whose branch is in acme/shop itself")
    assert fake_github.calls() == []


def test_the_same_repository_rule_holds_only_for_its_head_or_merge_commit(github, repo, tmp_path):
    """A same-repository PR whose job checked out something else (here a fork's commit) is judged by GitHub."""
    ctx = context(tmp_path, "pull_request.json", "pull_request", sha=repo.feature, github_sha=repo.feature_merge)
    repo.checkout(repo.fork)
    assert decide_trust(ctx, client(github), repo.root, PROBES)[0] is False


def test_deployment_status_of_a_fork_commit_is_untrusted(github, repo, tmp_path):
    ctx = context(tmp_path, "deployment_status_fork.json", "deployment_status", sha=repo.fork)
    repo.checkout(repo.fork)
    trusted, reason = decide_trust(ctx, client(github), repo.root, PROBES)
    assert not trusted and f"compare main...{repo.fork[:8]}: ahead" in reason
    repo.checkout(repo.main)  # the same deployment, probed with the base branch's suites
    assert decide_trust(ctx, client(github), repo.root, PROBES)[0] is True


def test_an_api_error_is_untrusted_and_says_so(github, repo, tmp_path):
    ctx = context(tmp_path, "pull_request_fork.json", "pull_request_target", sha=repo.fork)
    github.state.fail.update({"branches_where_head": 500, "compare": 500})
    assert decide_trust(ctx, client(github), repo.root, PROBES) == (
        False, f"untrusted: commit {repo.main[:8]} is not on a branch of acme/shop "
               f"(branches-where-head: HTTP 500; compare main...{repo.main[:8]}: HTTP 500)")


def test_no_token_is_untrusted(github, repo, tmp_path):
    ctx = context(tmp_path, "pull_request_fork.json", "pull_request_target", sha=repo.fork)
    assert decide_trust(ctx, None, repo.root, PROBES) == (
        False, f"untrusted: commit {repo.main[:8]} cannot be shown to be on a branch of acme/shop: "
               "no GitHub token to ask")


@pytest.mark.parametrize(("change", "named"), [
    (lambda root: (root / "probes" / "shop.yaml").write_text("python: steal.py\n"), "probes/shop.yaml"),
    (lambda root: (root / "probes" / "new.yaml").write_text("name: new\n"), "probes/new.yaml"),
    (lambda root: (root / "probes" / "shop.yaml").unlink(), "probes/shop.yaml"),
    (lambda root: (root / "litmus.yaml").write_text("probes: elsewhere\n"), "litmus.yaml"),
    (lambda root: ((root / ".litmus").mkdir(), (root / ".litmus" / "decisions.yaml").write_text("{}")),
     ".litmus/decisions.yaml"),
    # Ignored by the commit's .gitignore, but not the commit's: a file dropped there by an earlier step.
    (lambda root: ((root / "probes" / "local").mkdir(), (root / "probes" / "local" / "x.yaml").write_text("")),
     "probes/local/"),
])
def test_probes_or_config_changed_in_the_work_tree_are_untrusted(github, repo, tmp_path, change, named):
    ctx = context(tmp_path, "pull_request_fork.json", "pull_request_target", sha=repo.fork)
    change(repo.root)
    assert decide_trust(ctx, client(github), repo.root, PROBES) == (
        False, f"untrusted: the work tree differs from commit {repo.main[:8]} in {named} (files no branch holds)")


def test_litmus_own_cache_and_files_outside_the_probes_do_not_count(github, repo, tmp_path):
    ctx = context(tmp_path, "pull_request_fork.json", "pull_request_target", sha=repo.fork)
    (repo.root / ".litmus" / "cache").mkdir(parents=True)
    (repo.root / ".litmus" / "cache" / "judge.json").write_text("{}")
    (repo.root / "README.md").write_text("edited by an earlier step\n")
    assert decide_trust(ctx, client(github), repo.root, PROBES)[0] is True


def test_no_git_checkout_is_untrusted(fake_github, tmp_path):
    ctx = context(tmp_path, "pull_request_fork.json", "pull_request_target")
    (tmp_path / "plain").mkdir()
    trusted, reason = decide_trust(ctx, client(fake_github), tmp_path / "plain", PROBES)
    assert not trusted and reason.startswith(f"untrusted: no commit is checked out in {tmp_path / 'plain'}")
    assert fake_github.calls() == []


# --- the pure rules


def test_the_same_repository_rule_compares_repository_ids_too(tmp_path):
    event = json.loads((EVENTS / "pull_request.json").read_text("utf-8"))
    ctx = GitHubContext(event_name="pull_request", event=event, repository="acme/shop", sha="9" * 40)
    head = event["pull_request"]["head"]["sha"]
    assert same_repository_pull_request(ctx, head) is not None
    event["pull_request"]["head"]["repo"]["id"] = 4343  # same name, another repository (deleted and re-made)
    assert same_repository_pull_request(ctx, head) is None
    event["pull_request"]["head"]["repo"] = None  # the head repository was deleted
    assert same_repository_pull_request(ctx, head) is None
    target = GitHubContext(event_name="pull_request_target", event=event, repository="acme/shop")
    assert same_repository_pull_request(target, head) is None  # the rule is pull_request's only


def test_branch_verdict_needs_a_branch_head_or_a_comparison_on_a_branch():
    sha = "1a2b3c4d" + "0" * 32
    assert branch_verdict(sha, "o/r", ["dev"], [("main", "ahead")])[0] is True
    assert branch_verdict(sha, "o/r", [], [("main", "diverged"), ("release", "identical")]) == (
        True, "trusted: commit 1a2b3c4d is on branch release of o/r (compare release...1a2b3c4d: identical)")
    assert branch_verdict(sha, "o/r", [], [("main", "ahead")]) == (
        False, "untrusted: commit 1a2b3c4d is not on a branch of o/r "
               "(branches-where-head: none; compare main...1a2b3c4d: ahead)")
    assert branch_verdict(sha, "o/r", "HTTP 403", []) == (
        False, "untrusted: commit 1a2b3c4d is not on a branch of o/r "
               "(branches-where-head: HTTP 403; compare: no default or base branch in the event)")
