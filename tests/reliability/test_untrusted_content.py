"""Response bodies crafted to break every output: the terminal (ANSI escapes), Markdown, HTML, SARIF JSON,
JUnit XML (control characters, invalid XML characters, `]]>`) and GitHub workflow commands (a body
holding `::error::` or `::set-output` on its own line). Through `litmus run -v` and `litmus action`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from lxml import etree
from markdown_it import MarkdownIt
from pipeline import check_run, run_litmus, write_suite

from support.fake_github import FakeGitHub, parse_output_file
from support.target import Target

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
EVENTS = Path(__file__).resolve().parents[1] / "github" / "events"

EVIL = (
    "\x1b[2J\x1b[31mRED\x1b[0m\x1b]0;pwned-title\x07\x1b]8;;https://evil.test\x07link\x1b]8;;\x07"  # terminal
    "\r\n::error file=probes/evil.yaml,line=1::pwned-error\n::set-output name=verdict::pwned-output\n"
    "::add-mask::pwned\n  ::stop-commands::pwned\n%0A::warning::pwned-encoded\n"  # workflow commands
    "</details></summary>\n```\n````\n| a | b |\n@octocat #1 <script>alert('pwned')</script>"  # Markdown/HTML
    "<img src=x onerror=alert(1)>[click](javascript:alert(1))\n"
    "]]><![CDATA[ \x00\x01\x08\x0b\x0c\x0e\x1f\x7f \ufffe\uffff \u202e bidi \ud800 lone surrogate"  # XML
)
KINDS = {
    "json": ("application/json", json.dumps({"reply": EVIL}).encode()),  # the lone surrogate as `\ud800`
    "text": ("text/plain; charset=utf-8", EVIL.encode("utf-8", "surrogatepass")),  # ... as invalid UTF-8
}

SUITE = """version: 1
suite: Evil
flows:
""" + "".join(f"""  - name: {kind}
    steps:
      - name: fetch
        request: {{url: /{kind}}}
        extract:
          echoed: {{regex: "(::set-output[^\\\\n]*)"}}
        assertions:
          - {{type: status_code, expected: 201}}
          - {{type: json_path, path: $.reply, expected: "calm"}}
          - {{type: contains, value: "calm"}}
          - {{type: not_contains, value: "pwned"}}
          - {{type: extract_match, variable: echoed, expected: "calm"}}
          - {{type: schema, schema: {{type: object, required: [calm]}}}}
""" for kind in KINDS)


def serve(target):
    for kind, (content_type, body) in KINDS.items():
        headers = {"Content-Type": content_type, "X-Evil": "::error::pwned-header"}
        target.route(f"/{kind}", lambda req, h=headers, b=body: (200, h, b))


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("evil-cli")
    write_suite(root, "evil.yaml", SUITE)
    with Target() as target:
        serve(target)
        ran = run_litmus(["run", "-v", "--base-url", target.base_url, "--out", "out"], cwd=root)
    return ran, root / "out"


def test_the_run_records_every_outcome(cli_run):
    ran, out = cli_run
    assert ran.code == 1 and "Traceback" not in ran.output
    result = check_run(out)
    statuses = [o.status for *_, o in result.iter_outcomes()]
    assert "passed" not in statuses[:1] and statuses.count("skipped") == 0


def test_no_escape_sequence_or_control_character_reaches_the_terminal(cli_run):
    ran, _ = cli_run
    for stream in (ran.stdout, ran.stderr):
        text = stream.decode("utf-8")
        assert "pwned" in text or stream is ran.stderr  # the body's text is shown, escaped
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202e]", text), repr(text[:2000])


def test_sarif_is_valid_json_against_the_schema(cli_run):
    _, out = cli_run
    log = json.loads((out / "litmus.sarif").read_text("utf-8"))
    jsonschema.validate(log, json.loads((SCHEMAS / "sarif-2.1.0.json").read_text()))
    assert log["runs"][0]["results"]


def test_junit_is_well_formed_xml_valid_against_its_schema(cli_run):
    _, out = cli_run
    document = etree.fromstring((out / "junit.xml").read_bytes())  # strict: an invalid character would fail
    for case in document.iter("testcase"):  # Litmus's file/line attributes are outside this XSD (see tests/report)
        case.attrib.pop("file", None)
        case.attrib.pop("line", None)
    schema = etree.XMLSchema(etree.parse(str(SCHEMAS / "junit-jenkins-xunit-10.xsd")))
    assert schema.validate(document), schema.error_log
    assert "pwned" in etree.tostring(document, encoding="unicode")


@pytest.mark.parametrize("name", ["comment.md", "summary.md"])
def test_markdown_structure_survives(cli_run, name):
    _, out = cli_run
    text = (out / name).read_text("utf-8")
    # Rendered as GitHub would (raw HTML on): no tag from the body becomes an element.
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert html.count("<details>") == html.count("</details>") == text.count("<details>") > 0
    assert "<script" not in html and "<img" not in html and 'href="javascript:' not in html
    assert not re.search(r"(^|[^`\w])@octocat", re.sub(r"<code>.*?</code>", "", html, flags=re.DOTALL))


def test_html_report_has_no_markup_from_the_body(cli_run):
    _, out = cli_run
    html = (out / "report.html").read_text("utf-8")
    # The report's own two scripts (its filters and their JSON) and nothing from the body.
    assert html.count("<script") == 2 and '<script type="application/json" id="litmus-data">' in html
    assert "<img" not in html and 'href="javascript:' not in html
    assert "&lt;script&gt;" in html  # shown, as text


def test_the_action_log_issues_no_command_from_a_body(tmp_path):
    workspace = tmp_path / "ws"
    write_suite(workspace, "evil.yaml", SUITE)
    (tmp_path / "output").write_text("")
    with Target() as target, FakeGitHub() as github:
        serve(target)
        github.state.deny.add("check-write")  # annotations go through the log
        ran = run_litmus(["action"], cwd=workspace, env={
            "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_EVENT_PATH": str(EVENTS / "pull_request.json"), "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_REPOSITORY": "acme/shop", "GITHUB_API_URL": github.base_url,
            "GITHUB_OUTPUT": str(tmp_path / "output"),
            "INPUT_GITHUB-TOKEN": "ghs_t", "INPUT_BASE-URL": target.base_url, "INPUT_ANNOTATIONS": "all"})
    assert ran.code == 1, ran.output
    assert parse_output_file((tmp_path / "output").read_text())["verdict"] == "failed"
    commands, stopped = [], None
    for line in ran.stdout.decode("utf-8").splitlines():
        stripped = line.lstrip()
        if stopped:
            stopped = None if stripped == f"::{stopped}::" else stopped
            continue
        if stripped.startswith("::stop-commands::"):
            stopped = stripped.removeprefix("::stop-commands::")
            assert "pwned" not in stopped
        elif stripped.startswith("::"):
            commands.append(stripped)
    names = {re.match(r"::([\w-]+)", c).group(1) for c in commands}
    assert names <= {"add-mask", "group", "endgroup", "error", "warning", "notice"}, names
    assert not any(c.startswith("::add-mask::pwned") for c in commands)
    for command in commands:
        # Properties and data escaped: one command per line, the body only in the message part.
        name_and_properties, _, message = command[2:].partition("::")
        assert "pwned" not in name_and_properties
        assert "\r" not in message and "\x1b" not in command
    assert any("pwned" in c for c in commands if c.startswith("::error"))  # the finding, escaped
