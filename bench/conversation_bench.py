#!/usr/bin/env python3
"""What a conversation costs per turn: a 20-turn chat against the test chat server on 127.0.0.1.

Prints, over --repeat runs (median):
- end to end: wall time per turn of a 20-turn `conversation` flow (openai, whole and streamed), and per
  step of a plain 20-step flow sending one user message each time to the same server: the difference is
  what keeping the history costs, HTTP of a growing body included;
- bookkeeping alone: Litmus's own work per turn (putting the history in the body, reading the reply,
  appending it), no HTTP, at the 20th turn (the longest history).

    python3 bench/conversation_bench.py              # 20 turns, 5 repetitions
    python3 bench/conversation_bench.py --turns 50 --repeat 3

Figures to read, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR / "tests"))  # the chat server the tests use: one server, not a copy

from litmus.load import load_suites  # noqa: E402
from litmus.response import Response  # noqa: E402
from litmus.run.conversation import History  # noqa: E402
from litmus.run.http import OutgoingRequest  # noqa: E402
from litmus.run.runner import RunOptions, run_suites  # noqa: E402
from support.chat_server import ChatServer  # noqa: E402

PATH = "/openai/v1/chat/completions"


def suite_text(turns: int, *, conversation: bool, stream: bool) -> str:
    if conversation:
        request = {"method": "POST", "url": PATH, "json": {"model": "m", "stream": stream}}
        if stream:
            request["stream"] = "openai"
        head = f"    conversation:\n      request: {json.dumps(request)}\n      system: Be brief.\n"
        steps = "".join(f"      - {{name: t{k}, user: \"message {k} about order 1042\", "
                        f"assertions: [{{type: contains, value: \"turn {k}:\"}}]}}\n" for k in range(1, turns + 1))
    else:
        head = ""
        steps = "".join(
            f"      - name: t{k}\n        request: {{method: POST, url: {PATH}, json: {{model: m, messages: "
            f"[{{role: user, content: \"message {k} about order 1042\"}}]}}}}\n"
            f"        assertions: [{{type: contains, value: \"turn 1:\"}}]\n" for k in range(1, turns + 1))
    return f"version: 1\nsuite: Bench\nflows:\n  - name: chat\n{head}    steps:\n{steps}"


def per_turn_ms(text: str, turns: int, base_url: str) -> float:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench.yaml"
        path.write_text(text)
        suites = load_suites([path], root=Path(directory), environ={}).suites
        started = time.perf_counter()
        result = run_suites(suites, RunOptions(base_url=base_url), environ={})
        elapsed = time.perf_counter() - started
    steps = result.suites[0].flow_runs[0].steps
    failed = [s.name for s in steps if s.status != "passed"]
    if failed:
        raise SystemExit(f"bench suite did not pass: {failed}")
    return elapsed * 1000 / turns


def bookkeeping_us(turns: int, repeat: int) -> float:
    """Litmus's own work for the last turn of a `turns`-turn conversation: shape + read + append."""
    text = textwrap.dedent(f"""\
        version: 1
        suite: B
        flows:
          - name: f
            conversation: {{request: {{method: POST, url: {PATH}, json: {{model: m}}}}, system: Be brief.}}
            steps: [{{name: s, user: hi}}]
        """)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "b.yaml"
        path.write_text(text)
        flow = load_suites([path], root=Path(directory), environ={}).suites[0].flows[0]

    def reply(k: int) -> Response:
        body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": f"turn {k}: " + "x" * 120}}]}
        return Response(status=200, headers={"Content-Type": "application/json"}, body=json.dumps(body).encode(),
                        elapsed_ms=1.0)

    samples = []
    for _ in range(repeat):
        history = History(flow, "Be brief.")
        for k in range(1, turns):
            history.append(f"message {k}", history.read(reply(k)), None)
        out = OutgoingRequest(method="POST", url="http://127.0.0.1/x", json={"model": "m"}, has_json=True)
        last = reply(turns)
        rounds = 200
        started = time.perf_counter()
        for _ in range(rounds):
            history.shape(out, "last message")
            read = history.read(last)
        samples.append((time.perf_counter() - started) * 1e6 / rounds)
        history.append("last message", read, None)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = []
    with ChatServer() as chat:
        for label, conversation, stream in (("conversation, whole replies", True, False),
                                            ("conversation, streamed replies", True, True),
                                            ("plain steps (no history)", False, False)):
            text = suite_text(args.turns, conversation=conversation, stream=stream)
            per_turn_ms(text, args.turns, chat.url())  # warm-up: imports, the connection pool
            samples = [per_turn_ms(text, args.turns, chat.url()) for _ in range(args.repeat)]
            rows.append((label, statistics.median(samples), min(samples), max(samples)))
    print(f"{args.turns}-turn flow against the chat server on 127.0.0.1, {args.repeat} runs (ms per turn):")
    for label, median, low, high in rows:
        print(f"  {label:<32} median {median:7.2f}   min {low:7.2f}   max {high:7.2f}")
    plain = rows[2][1]
    print(f"  history overhead per turn (whole): {rows[0][1] - plain:+.2f} ms; streamed: {rows[1][1] - plain:+.2f} ms")
    print(f"bookkeeping alone at turn {args.turns} (shape + read, no HTTP): "
          f"{bookkeeping_us(args.turns, args.repeat):.1f} µs per turn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
