"""Requests through `litmus run` against a real target that checks what it received on the wire:
auth header bytes, multipart parts and file bytes, body_file, GraphQL bodies, encoded paths,
repeated form fields, generated values, run variables and base URLs."""

from __future__ import annotations

import base64
import os
from email.parser import BytesParser
from email.policy import HTTP

import pytest

from litmus.cli import main
from litmus.results import load_results
from support.target import Target

SECRET = "s3cr3t pass/wörd"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probes").mkdir()
    monkeypatch.setenv("PROBE_PASS", SECRET)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for name in [n for n in os.environ if n.startswith("LITMUS_")]:
        monkeypatch.delenv(name)
    with Target() as target:
        target.json("/ok", {"ok": True})
        yield tmp_path, target


def suite(tmp_path, text: str, name: str = "s.yaml") -> None:
    (tmp_path / "probes" / name).write_text(text)


def run(target, *extra: str) -> int:
    return main(["run", "--base-url", target.base_url, "--format", "sarif,markdown", *extra])


def results(tmp_path):
    return load_results(tmp_path / "litmus-report" / "results.json")


def written_text(tmp_path) -> str:
    return "".join(p.read_text("utf-8") for p in (tmp_path / "litmus-report").iterdir())


def test_basic_auth_sends_the_encoded_header_and_masks_it_everywhere(project, capsys):
    tmp_path, target = project
    suite(tmp_path, """\
version: 1
suite: Auth
flows:
  - name: f
    steps:
      - name: basic
        request:
          url: /ok
          auth: {basic: {username: probe, password: "{{ secrets.PROBE_PASS }}"}}
        assertions: [{type: status_code, expected: 201}]
      - name: bearer
        request: {url: /ok, auth: {bearer: "tok-{{ secrets.PROBE_PASS | sha256 }}"}}
""")
    assert run(target) == 1
    encoded = base64.b64encode(f"probe:{SECRET}".encode()).decode()
    assert target.requests[0].headers["Authorization"] == f"Basic {encoded}"
    import hashlib

    token = "tok-" + hashlib.sha256(SECRET.encode()).hexdigest()
    assert target.requests[1].headers["Authorization"] == f"Bearer {token}"
    out, err = capsys.readouterr()
    for leaked in (encoded, SECRET, token):
        assert leaked not in out + err + written_text(tmp_path)


def test_multipart_sends_fields_and_file_bytes_with_their_content_types(project):
    tmp_path, target = project
    (tmp_path / "probes" / "fixtures").mkdir()
    payload = bytes(range(256)) + b"\r\n--not-a-boundary\r\n" * 3
    (tmp_path / "probes" / "fixtures" / "report.pdf").write_bytes(payload)
    suite(tmp_path, """\
version: 1
suite: Upload
variables: {quarter: Q3}
flows:
  - name: f
    steps:
      - name: upload
        request:
          method: POST
          url: /ok
          multipart:
            title: "Quarterly report {{ quarter }}"
            meta: {value: '{"pages": 2}', content_type: application/json}
            attachment: {file: fixtures/report.pdf, content_type: application/pdf}
            renamed: {file: fixtures/report.pdf, filename: r.bin}
""")
    assert run(target) == 0
    received = target.requests[0]
    assert int(received.headers["Content-Length"]) == len(received.body)  # a length, not chunked
    message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + received.headers["Content-Type"].encode() + b"\r\n\r\n" + received.body)
    parts = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
    assert list(parts) == ["title", "meta", "attachment", "renamed"]
    assert parts["title"].get_payload(decode=True) == b"Quarterly report Q3"
    assert parts["meta"].get_content_type() == "application/json"
    assert parts["attachment"].get_filename() == "report.pdf"
    assert parts["attachment"].get_content_type() == "application/pdf"
    assert parts["attachment"].get_payload(decode=True) == payload
    assert parts["renamed"].get_filename() == "r.bin"
    assert parts["renamed"].get_content_type() == "application/octet-stream"
    step = results(tmp_path).suites[0].flow_runs[0].steps[0]
    assert "attachment=@report.pdf;type=application/pdf" in step.request.body


def test_body_file_sends_the_file_bytes(project):
    tmp_path, target = project
    data = b'{"order": 1042}\n\x00\xff'
    (tmp_path / "probes" / "payload.bin").write_bytes(data)
    suite(tmp_path, """\
version: 1
suite: Body
flows:
  - name: f
    steps:
      - name: put
        request: {method: PUT, url: /ok, body_file: payload.bin, headers: {Content-Type: application/octet-stream}}
""")
    assert run(target) == 0
    assert target.requests[0].method == "PUT" and target.requests[0].body == data
    assert results(tmp_path).suites[0].flow_runs[0].steps[0].request.body == "[the bytes of payload.bin, 18 bytes]"


def test_graphql_posts_query_variables_and_operation_name_and_records_errors(project):
    tmp_path, target = project
    target.json("/graphql", {"data": None, "errors": [{"message": "order 1042 not found", "path": ["order"]}]})
    suite(tmp_path, """\
version: 1
suite: GraphQL
variables: {order_id: 1042}
flows:
  - name: f
    steps:
      - name: q
        request:
          url: /graphql
          graphql:
            query: "query Order($id: ID!) { order(id: $id) { status } }"
            variables: {id: "{{ order_id }}"}
            operation_name: Order
        assertions: [{type: json_path, path: $.errors, exists: false}]
      - name: operation name null, as in the contract's example
        request: {url: /graphql, graphql: {query: "{ shop { name } }", operation_name: null}}
""")
    assert run(target) == 1
    received = target.requests[0]
    assert received.method == "POST" and received.headers["Content-Type"] == "application/json"
    assert received.json() == {"query": "query Order($id: ID!) { order(id: $id) { status } }",
                               "variables": {"id": 1042}, "operationName": "Order"}
    assert target.requests[1].json() == {"query": "{ shop { name } }"}
    step = results(tmp_path).suites[0].flow_runs[0].steps[0]
    assert step.graphql_errors == [{"message": "order 1042 not found", "path": ["order"]}]
    assert step.assertions[0].status == "failed"


def test_urlencode_keeps_a_value_inside_its_path_segment_and_form_lists_repeat(project):
    tmp_path, target = project
    raw = "a b/c?d=1#frag"
    target.json("/items/a%20b%2Fc%3Fd%3D1%23frag", {"ok": True})
    target.json("/r", {"ok": True})
    suite(tmp_path, """\
version: 1
suite: Encoding
flows:
  - name: f
    steps:
      - name: path
        request: {url: "/items/{{ vars.raw | urlencode }}"}
        assertions: [{type: status_code, expected: 200}]
      - name: form
        request: {method: POST, url: /ok, form: {tag: [a, "b c"], name: x}}
      - name: relative with a URL in its query
        request: {url: "/r?next=https://elsewhere.invalid/x"}
        assertions: [{type: status_code, expected: 200}]
""")
    assert run(target, "--var", f"raw={raw}") == 0
    path, form, relative = target.requests
    assert path.path == "/items/a%20b%2Fc%3Fd%3D1%23frag" and path.query == {}
    assert form.body == b"tag=a&tag=b+c&name=x"
    assert form.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert relative.path == "/r" and relative.query == {"next": ["https://elsewhere.invalid/x"]}


def test_generated_values_are_fresh_per_step_shared_within_one_and_recorded(project):
    tmp_path, target = project
    suite(tmp_path, """\
version: 1
suite: Generated
flows:
  - name: f
    steps:
      - name: one
        request: {url: "/ok?id={{ gen.uuid }}", headers: {X-Id: "{{ gen.uuid }}", X-N: "{{ gen.random_int }}"}}
        assertions: [{type: status_code, expected: 500}]
      - name: two
        request: {url: "/ok?id={{ gen.uuid }}&at={{ gen.now | urlencode }}"}
""")
    assert run(target) == 1
    first, second = target.requests
    steps = results(tmp_path).suites[0].flow_runs[0].steps
    assert first.query["id"] == [first.headers["X-Id"]] == [steps[0].generated["uuid"]]
    assert first.headers["X-N"] == str(steps[0].generated["random_int"])
    assert second.query["id"] == [steps[1].generated["uuid"]] != first.query["id"]
    assert second.query["at"] == [steps[1].generated["now"]]
    assert set(steps[1].generated) == {"uuid", "now"}
    comment = (tmp_path / "litmus-report" / "comment.md").read_text()
    curl = comment[comment.index("curl "):].splitlines()[0]
    assert steps[0].generated["uuid"] in curl  # the finding's reproduction carries the value


def test_filters_default_and_types(project):
    tmp_path, target = project
    suite(tmp_path, """\
version: 1
suite: Filters
variables: {count: "42", name: "  Ada  "}
flows:
  - name: f
    steps:
      - name: s
        request:
          method: POST
          url: /ok
          json:
            n: "{{ count | int }}"
            f: "{{ count | float }}"
            who: "{{ name | trim | upper }}"
            len: "{{ name | trim | length }}"
            fallback: "{{ env.LITMUS_TEST_UNSET | default('none') }}"
            b64: "{{ name | trim | base64 }}"
            b64url: "{{ vars.bin | base64url }}"
            as_json: "{{ vars.items | json }}"
""")
    (tmp_path / "vars.yaml").write_text("bin: \"\\xfb\\xff\"\nitems: [1, two]\n")
    assert run(target, "--vars-file", "vars.yaml") == 0
    body = target.requests[0].json()
    assert body == {"n": 42, "f": 42.0, "who": "ADA", "len": 3, "fallback": "none",
                    "b64": base64.b64encode(b"Ada").decode(),
                    "b64url": base64.urlsafe_b64encode("\xfb\xff".encode()).decode().rstrip("="),
                    "as_json": '[1, "two"]'}


def test_templated_base_url_and_per_suite_base_url(project, monkeypatch):
    tmp_path, target = project
    with Target() as other:
        other.json("/ok", {"other": True})
        monkeypatch.setenv("PREVIEW_URL", other.base_url)
        suite(tmp_path, """\
version: 1
suite: Preview
base_url: "{{ env.PREVIEW_URL }}"
flows: [{name: f, steps: [{name: s, request: {url: /ok}}]}]
""", "a.yaml")
        suite(tmp_path, """\
version: 1
suite: Other
base_url: http://127.0.0.1:9/never
flows: [{name: f, steps: [{name: s, request: {url: /ok}}]}]
""", "b.yaml")
        code = main(["run", "--base-url", f"Other={target.base_url}", "--format", "summary"])
        assert code == 0
        assert len(other.requests) == 1 and len(target.requests) == 1
        assert main(["run", "--base-url", f"Nope={target.base_url}"]) == 2


def test_delay_ms_waits_before_sending(project):
    tmp_path, target = project
    suite(tmp_path, """\
version: 1
suite: Delay
flows: [{name: f, steps: [{name: s, request: {url: /ok, delay_ms: 300}}]}]
""")
    assert run(target) == 0
    assert results(tmp_path).suites[0].flow_runs[0].duration_ms >= 300


def test_unknown_run_variable_is_an_error_for_run_and_a_warning_for_validate(project, capsys):
    tmp_path, target = project
    suite(tmp_path, """\
version: 1
suite: Vars
flows: [{name: f, steps: [{name: s, request: {url: "/ok?t={{ vars.tenant }}"}}]}]
""")
    assert run(target) == 2
    err = capsys.readouterr().err
    assert "probes/s.yaml:3:" in err and "run variable 'tenant'" in err and "error" in err
    assert main(["validate"]) == 0
    assert "warning" in capsys.readouterr().err
    assert run(target, "--var", "tenant=acme") == 0
    assert target.requests[0].query == {"t": ["acme"]}
    assert main(["run", "--var", "no-equals"]) == 2


def test_a_rendered_string_is_bounded_and_a_provably_huge_one_fails_at_load(project, capsys):
    tmp_path, target = project
    chain = "\n".join(f"  v{i}: \"{('{{ v' + str(i - 1) + ' }}') * 10}\"" for i in range(1, 9))
    suite(tmp_path, f"""\
version: 1
suite: Bomb
variables:
  v0: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
{chain}
flows: [{{name: f, steps: [{{name: s, request: {{url: /ok, body: "{{{{ v8 }}}}"}}}}]}}]
""")
    assert run(target) == 2
    assert "expands to at least" in capsys.readouterr().err
    assert target.requests == []


def test_values_filters_derive_from_a_secret_are_masked(project, capsys):
    tmp_path, target = project
    suite(tmp_path, """\
version: 1
suite: Derived
flows:
  - name: f
    steps:
      - name: s
        request: {url: "/ok?sig={{ secrets.PROBE_PASS | base64 }}&low={{ secrets.PROBE_PASS | upper }}"}
        assertions: [{type: status_code, expected: 500}]
""")
    assert run(target, "-v") == 1
    encoded = base64.b64encode(SECRET.encode()).decode()
    assert target.requests[0].query == {"sig": [encoded], "low": [SECRET.upper()]}
    out, err = capsys.readouterr()
    for leaked in (encoded, SECRET.upper()):
        assert leaked not in out + err + written_text(tmp_path)


def test_a_rendered_string_over_1_mib_at_run_time_is_the_steps_error(project):
    tmp_path, target = project
    target.json("/big", {"text": "x" * 600_000})
    suite(tmp_path, """\
version: 1
suite: Big
flows:
  - name: f
    steps:
      - name: read
        request: {url: /big}
        extract: {big: {json_path: $.text}}
      - name: echo twice
        request: {method: POST, url: /ok, body: "{{ big }}{{ big }}"}
      - name: never sent
        request: {url: /ok}
""")
    assert run(target) == 1
    steps = results(tmp_path).suites[0].flow_runs[0].steps
    assert steps[1].status == "error" and "exceed 1048576 characters" in steps[1].error
    assert steps[2].status == "skipped"
    assert [r.path for r in target.requests] == ["/big"]
