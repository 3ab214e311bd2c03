"""`litmus compare` and `litmus run --baseline PATH|URL` end to end, in subprocesses against real targets."""

from __future__ import annotations

import json

from jsonschema import Draft4Validator
from test_compare import SUITE, serve

from litmus.results import load_results
from support.cli import litmus
from support.target import Target

SARIF_SCHEMA = json.loads((__import__("pathlib").Path(__file__).parents[1] / "schemas" / "sarif-2.1.0.json")
                          .read_text("utf-8"))


def project(tmp_path, runs: int = 1):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "shop.yaml").write_text(SUITE.format(runs=runs))
    return tmp_path


def new_findings(result) -> list[tuple[str, str]]:
    return [(step.name, o.mismatches[0].path) for _, _, step, o in result.iter_outcomes() if o.baseline == "new"]


def test_run_against_a_base_deployment_finds_exactly_the_planted_regression(tmp_path):
    cwd = project(tmp_path, runs=2)
    # Both deployments share an old bug (status); the head adds one (total as a string).
    with serve(Target(), status="shipped", total=12.5) as base, \
            serve(Target(), status="shipped", total="12.50") as head:
        done = litmus(cwd, "run", "--base-url", head.base_url, "--baseline", base.base_url, "--fail-on", "new")
        assert len(base.requests) == len(head.requests) == 2 + 1  # the same suites ran against both
    assert done.returncode == 1, done.stderr
    assert "1 new finding, 1 already failing, 0 fixed" in done.stdout
    result = load_results(cwd / "litmus-report" / "results.json")
    assert new_findings(result) == [("get order", "$.total")] * 2  # one finding, failing in both runs
    assert result.baseline.source == base.base_url
    baseline = load_results(cwd / "litmus-report" / "baseline.json")
    assert baseline.run.base_url == base.base_url and baseline.baseline is None
    sarif = json.loads((cwd / "litmus-report" / "litmus.sarif").read_text("utf-8"))
    Draft4Validator(SARIF_SCHEMA).validate(sarif)
    states = sorted(r["baselineState"] for r in sarif["runs"][0]["results"])
    assert states == ["new", "unchanged"]


def test_fail_on_new_passes_when_every_finding_was_already_failing(tmp_path):
    cwd = project(tmp_path)
    with serve(Target(), status="shipped") as base, serve(Target(), status="shipped") as head:
        first = litmus(cwd, "run", "--base-url", base.base_url, "--out", "base")
        assert first.returncode == 1  # the shared bug fails the suite
        done = litmus(cwd, "run", "--base-url", head.base_url, "--baseline", "base/results.json", "--fail-on", "new")
        plain = litmus(cwd, "run", "--base-url", head.base_url, "--out", "plain", "--fail-on", "new")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 new findings, 1 already failing, 0 fixed" in done.stdout
    # Without a baseline nothing proves a finding was failing before: it counts as new.
    assert plain.returncode == 1


def test_compare_command_writes_the_compared_document(tmp_path):
    cwd = project(tmp_path)
    with serve(Target(), total="12.50") as base, serve(Target(), total=12.5) as head:
        litmus(cwd, "run", "--base-url", base.base_url, "--out", "base")
        litmus(cwd, "run", "--base-url", head.base_url, "--out", "head")
    done = litmus(cwd, "compare", "base/results.json", "head/results.json", "-o", "compared.json", "--fail-on", "new")
    assert done.returncode == 0, done.stderr
    compared = load_results(cwd / "compared.json")
    assert (compared.baseline.new, compared.baseline.unchanged, compared.baseline.fixed) == (0, 0, 1)
    assert compared.baseline.fixed_findings[0].step == "get order"
    # Reports render from the compared document like from any other.
    report = litmus(cwd, "report", "compared.json", "--out", "reports")
    assert report.returncode == 0, report.stderr


def test_unreadable_baselines_are_usage_errors(tmp_path):
    cwd = project(tmp_path)
    (cwd / "broken.json").write_text("{not json")
    for args in (("run", "--base-url", "http://127.0.0.1:9", "--baseline", "broken.json"),
                 ("run", "--base-url", "http://127.0.0.1:9", "--baseline", "missing.json"),
                 ("compare", "broken.json", "broken.json", "-o", "x.json")):
        done = litmus(cwd, *args)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (args, done.stderr)
        assert not (cwd / "litmus-report").exists()  # refused before anything ran


def test_reports_open_with_what_this_pr_changed(tmp_path):
    """The comment, summary and HTML report lead with "New in this PR", then "Fixed", then a folded
    "Already failing on the base branch"; the comment stays balanced Markdown as GitHub renders it."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    cwd = project(tmp_path)
    # The base fails the status and the catalogue; the head fixes the catalogue, keeps the status bug,
    # and adds a wrong type for the total.
    with serve(Target(), status="shipped", total=12.5, prices=("1",)) as base, \
            serve(Target(), status="shipped", total="12.50", prices=(1.0,)) as head:
        done = litmus(cwd, "run", "--base-url", head.base_url, "--baseline", base.base_url)
    assert done.returncode == 1, done.stderr
    out = cwd / "litmus-report"
    comment = (out / "comment.md").read_text("utf-8")
    new, fixed, old = (comment.index(h) for h in ("## New in this PR (1 finding)", "## Fixed (1)",
                                                  "<summary>Already failing on the base branch (1)</summary>"))
    assert new < fixed < old
    assert comment.index("$.total", new) < fixed  # the new finding is the total's
    assert comment.index("$.status", old) > old  # the old one is folded
    assert "1 new finding, 1 already failing, 1 fixed" in comment
    html = cmarkgfm.github_flavored_markdown_to_html(comment, options=Options.CMARK_OPT_UNSAFE)
    assert html.count("<details") == html.count("</details>")
    summary = (out / "summary.md").read_text("utf-8")
    assert summary.index("New in this PR") < summary.index("Already failing on the base branch")
    report = (out / "report.html").read_text("utf-8")
    section = report[report.index('<section id="baseline">'):report.index("</section>", report.index('id="baseline"'))]
    assert section.index("New in this PR (1)") < section.index("Fixed (1)") < section.index(
        "Already failing on the base branch (1)")


def test_a_setup_failing_on_both_sides_is_already_failing_not_new(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "life.yaml").write_text("""\
version: 1
suite: Life
setup:
  - name: log in
    request: {method: POST, url: /login}
    assertions: [{type: status_code, expected: 200}]
flows:
  - name: f
    steps: [{name: s, request: {url: /order}}]
""")
    with Target() as base, Target() as head:
        for target in (base, head):
            target.json("/login", {"error": "down"}, status=500)
        done = litmus(tmp_path, "run", "--base-url", head.base_url, "--baseline", base.base_url, "--fail-on", "new")
    assert done.returncode == 0, done.stdout + done.stderr
    result = load_results(tmp_path / "litmus-report" / "results.json")
    (step,) = result.suites[0].setup
    assert step.assertions[0].baseline == "unchanged" and result.baseline.new == 0
