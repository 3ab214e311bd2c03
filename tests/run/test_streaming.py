"""Streamed responses end to end: real streaming servers on 127.0.0.1, `litmus run` in a subprocess.

What a user sees: the assembled text checked by `contains`, `json_path` over `{events, text, done,
tool_calls}`, time to first event, and cut, endless, malformed and oversized streams as errors.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
import time

import pytest

from litmus.errors import Position
from litmus.model import Stream
from litmus.results import load_results
from litmus.run.http import HttpClient, OutgoingRequest
from reliability.pipeline import run_litmus
from support.cli import litmus
from support.stream_target import Script, StreamTarget, anthropic_events, openai_chunks, sse

pytestmark = pytest.mark.timing  # streams cut by deadlines; time to first event measured to 20 ms

ANSWER = ("Order 1042 ", "is delayed ", "and should arrive ", "on 3 December.")


def litmus_run(tmp_path, suite: str, base_url: str, *extra: str) -> tuple[subprocess.CompletedProcess, object]:
    probes = tmp_path / "probes"
    probes.mkdir(exist_ok=True)
    (probes / "chat.yaml").write_text(textwrap.dedent(suite))
    proc = litmus(tmp_path, "run", "probes", "--base-url", base_url, "--out", "out", "--format", "markdown", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    return proc, load_results(tmp_path / "out" / "results.json")


def steps_by_flow(results) -> dict:
    return {run.flow: run.steps[0] for suite in results.suites for run in suite.flow_runs}


def tool_call_frames() -> list[bytes]:
    def chunk(**delta):
        return sse({"choices": [{"index": 0, "delta": delta}]})

    return [
        chunk(role="assistant", content=None, tool_calls=[
            {"index": 0, "id": "call_7", "type": "function",
             "function": {"name": "get_order_status", "arguments": ""}}]),
        chunk(tool_calls=[{"index": 0, "function": {"arguments": "{\"order"}}]),
        chunk(tool_calls=[{"index": 0, "function": {"arguments": "_id\": 1042, \"verbose\": false}"}}]),
        sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        sse("[DONE]"),
    ]


COMPLETE = """\
    version: 1
    suite: Streams
    flows:
      - name: openai
        steps:
          - name: ask
            request:
              method: POST
              url: /openai
              json: {stream: true}
              stream: openai
            assertions:
              - {type: status_code, expected: 200}
              - {type: contains, value: "is delayed and should arrive on 3 December."}
              - {type: not_contains, value: "data:"}
              - {type: json_path, path: $.done, expected: true}
              - {type: json_path, path: $.text, matches: "^Order 1042 is delayed"}
              - {type: json_path, path: "$.events[1].data.choices[0].delta.content", expected: "Order 1042 "}
              - {type: response_time, until: first_event, max_ms: 5000}
              - {type: response_time, until: first_event, max_ms: 1, name: too strict}
      - name: anthropic
        steps:
          - name: ask
            request: {method: POST, url: /anthropic, stream: anthropic}
            assertions:
              - {type: contains, value: "Order 1042 is delayed"}
              - {type: json_path, path: "$.events[?(@.event == 'message_stop')]", exists: true}
      - name: plain sse
        steps:
          - name: ask
            request: {url: /sse, stream: sse}
            assertions:
              - {type: contains, value: "first line\\nsecond line"}
              - {type: json_path, path: "$.events[1].id", expected: "42"}
      - name: ndjson
        steps:
          - name: ask
            request:
              url: /ndjson
              stream: {format: ndjson, text_path: $.message.content, done: $.done}
            assertions:
              - {type: contains, value: "Order 1042 is delayed"}
      - name: tool call
        steps:
          - name: ask
            request: {method: POST, url: /tools, stream: openai}
            assertions:
              - {type: json_path, path: "$.tool_calls[0].name", expected: get_order_status}
              - {type: json_path, path: "$.tool_calls[0].arguments.order_id", expected: 1042}
              - {type: json_path, path: "$.tool_calls[0].arguments.verbose", expected: false}
      - name: refused
        steps:
          - name: ask
            request: {url: /refused, stream: openai}
            assertions:
              - {type: status_code, expected: 401}
              - {type: json_path, path: $.error.code, expected: invalid_api_key}
"""


def test_complete_streams_are_assembled_and_checked_through_the_cli(tmp_path):
    with StreamTarget() as target:
        target.script("/openai", Script(openai_chunks(*ANSWER), interval=0.005))
        target.script("/anthropic", Script(anthropic_events(*ANSWER), framing="close"))
        target.script("/sse", Script([b": comment\n\n", b"data: first line\r\ndata: second line\r\n\r\n",
                                      b"id: 42\ndata: !\n\n"]))
        ndjson = [json.dumps({"message": {"content": piece}, "done": False}).encode() + b"\n" for piece in ANSWER]
        target.script("/ndjson", Script(ndjson + [b'{"message": {"content": ""}, "done": true}\n'],
                                        content_type="application/x-ndjson"))
        target.script("/tools", Script(tool_call_frames()))
        target.script("/refused", Script([json.dumps({"error": {"code": "invalid_api_key"}}).encode()],
                                         status=401, content_type="application/json"))
        proc, results = litmus_run(tmp_path, COMPLETE, target.base_url)
    steps = steps_by_flow(results)
    outcomes = {flow: [(o.name or o.type, o.status) for o in step.assertions] for flow, step in steps.items()}
    failing = {flow: [o for o in pairs if o[1] != "passed"] for flow, pairs in outcomes.items()}
    assert failing == {"openai": [("too strict", "failed")], "anthropic": [], "plain sse": [], "ndjson": [],
                       "tool call": [], "refused": []}, proc.stdout

    openai = steps["openai"].stream
    assert (openai.format, openai.events_count, openai.done) == ("openai", 7, True)
    assert openai.text == "".join(ANSWER)
    assert steps["openai"].response.body == "".join(ANSWER)  # what reports and the intent judge read
    assert 0 < openai.first_byte_ms <= openai.first_event_ms <= steps["openai"].response.elapsed_ms
    assert openai.raw.startswith("data: {")
    assert steps["anthropic"].stream.text == "".join(ANSWER)
    assert steps["plain sse"].stream.text == "first line\nsecond line!"
    assert steps["tool call"].stream.tool_calls == [
        {"id": "call_7", "name": "get_order_status", "arguments": {"order_id": 1042, "verbose": False}}]
    assert steps["refused"].stream is None  # an error reply is a body, not a stream

    strict = next(o for o in steps["openai"].assertions if o.name == "too strict")
    assert strict.mismatches[0].path == "first_event_ms"
    assert strict.mismatches[0].actual == openai.first_event_ms


BROKEN = """\
    version: 1
    suite: Broken streams
    flows:
      - name: cut
        steps:
          - name: ask
            request: {url: /cut, stream: openai}
            assertions:
              - {type: not_contains, value: "sorry"}
      - name: endless
        steps:
          - name: ask
            request: {url: /endless, stream: openai, timeout_ms: 2000}
            assertions:
              - {type: contains, value: "tick"}
      - name: endless without chunking
        steps:
          - name: ask
            request: {url: /endless-close, stream: openai, timeout_ms: 2000}
            assertions:
              - {type: contains, value: "tick"}
      - name: malformed
        steps:
          - name: ask
            request: {url: /malformed, stream: openai}
            assertions:
              - {type: contains, value: "Order"}
      - name: cut sse event
        steps:
          - name: ask
            request: {url: /cut-sse, stream: sse}
            assertions:
              - {type: contains, value: "a"}
"""


def test_cut_endless_and_malformed_streams_are_errors_never_passes(tmp_path):
    with StreamTarget() as target:
        target.script("/cut", Script(openai_chunks(*ANSWER, done=False)[:3], then="drop"))
        target.script("/endless", Script(openai_chunks("tick ", "tick ", done=False), then="hang"))
        # Ended by closing: once the deadline shuts the socket, the read sees an end, not an error.
        target.script("/endless-close", Script(openai_chunks("tick ", done=False), framing="close", then="hang"))
        target.script("/malformed", Script([sse({"choices": [{"delta": {"content": "Order"}}]}),
                                            b": fine so far\n", b"data: {\"choices\": [\n\n"]))
        target.script("/cut-sse", Script([b"data: a\n\n", b"data: b"], framing="close"))
        started = time.monotonic()
        proc, results = litmus_run(tmp_path, BROKEN, target.base_url)
        wall = time.monotonic() - started
    assert proc.returncode == 1
    steps = steps_by_flow(results)
    assert {flow: step.status for flow, step in steps.items()} == dict.fromkeys(steps, "error")
    for step in steps.values():
        assert [o.status for o in step.assertions] == ["skipped"]
        assert step.stream is not None and step.stream.done is False

    # The chunked body ends without its last chunk: urllib3 reports the broken framing.
    assert steps["cut"].error.startswith("stream cut after 3 events: connection broken while reading the body")
    assert steps["cut"].stream.text == "Order 1042 is delayed "

    endless = steps["endless"]
    assert endless.error.startswith("stream cut after 4 events: timed out after 2000 ms")
    # The step timeout bounds the whole stream: within 10% of it (generous: a shared 2-core machine).
    assert 1800 <= endless.response.elapsed_ms <= 2200
    unchunked = steps["endless without chunking"]
    assert unchunked.error.startswith("stream cut after 3 events: timed out after 2000 ms")
    assert 1800 <= unchunked.response.elapsed_ms <= 2200
    assert wall < 20

    assert steps["malformed"].error.startswith("malformed openai stream: line 4: event data is not JSON")
    assert steps["cut sse event"].error.startswith(
        "stream cut after 1 event: the connection closed in the middle of an event")
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "stream cut after 3 events" in comment


def test_a_50_mb_stream_stops_at_the_size_cap_in_bounded_memory(tmp_path):
    event = sse({"choices": [{"index": 0, "delta": {"content": "x" * 200}}]})
    sent = []

    def fifty_megabytes():
        for _ in range(50 * 1024 * 1024 // len(event)):
            sent.append(len(event))
            yield event

    suite = """\
        version: 1
        suite: Big stream
        flows:
          - name: big
            steps:
              - name: ask
                request: {url: /big, stream: openai, timeout_ms: 60000}
                assertions:
                  - {type: not_contains, value: "secret"}
    """
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "big.yaml").write_text(textwrap.dedent(suite))
    with StreamTarget() as target:
        target.script("/big", Script(fifty_megabytes))
        ran = run_litmus(["run", "probes", "--base-url", target.base_url, "--out", "out", "--format", "markdown",
                          "--max-body-bytes", str(5 * 1024 * 1024)], cwd=tmp_path)
    assert ran.code == 1, ran.output
    step = steps_by_flow(load_results(tmp_path / "out" / "results.json"))["big"]
    assert step.status == "error"
    assert step.error.startswith("stream cut after ")
    assert "the body reached the size cap of 5242880 bytes" in step.error
    assert step.assertions[0].status == "skipped"
    assert step.stream.events_count > 20_000
    assert len(step.stream.events) == 100  # the results keep the first events, and say how many there were
    # The server stopped being read soon after the cap (socket buffers hold a few MB at most).
    assert sum(sent) < 20 * 1024 * 1024
    # Memory is bounded by the cap, not the stream: about 70 MB for 5 MiB of small events, all included.
    assert ran.max_rss_mib < 150


def test_time_to_first_event_agrees_with_the_server_within_20_ms():
    delay = 0.3
    client = HttpClient()
    session = client.session()
    with StreamTarget() as target:
        target.script("/slow-start", Script(openai_chunks(*ANSWER), first_delay=delay, interval=0.01))
        out = OutgoingRequest("POST", target.url("/slow-start"), timeout_ms=5000,
                              stream=Stream(Position("probes/chat.yaml", 1, 1), format="openai"))
        prepared = client.prepare(session, out)
        sent = time.perf_counter()
        response = client.send(session, prepared, out)
        server_first = (target.first_chunk_at["/slow-start"] - sent) * 1000
    measured = response.stream.first_event_ms
    assert abs(measured - server_first) < 20, (measured, server_first)
    assert abs(measured - delay * 1000) < 20 + 30  # and with the known sleep, allowing for the connection set-up
    assert response.elapsed_ms > measured


def test_until_first_event_on_a_step_that_does_not_stream_is_an_error(tmp_path, target):
    target.json("/plain", {"reply": "hi"})
    suite = """\
        version: 1
        suite: Plain
        flows:
          - name: plain
            steps:
              - name: ask
                request: {url: /plain}
                assertions:
                  - {type: response_time, until: first_event, max_ms: 1000}
    """
    proc, results = litmus_run(tmp_path, suite, target.base_url)
    outcome = steps_by_flow(results)["plain"].assertions[0]
    assert outcome.status == "error"
    assert "needs a streamed step" in outcome.reason
    assert proc.returncode == 1
