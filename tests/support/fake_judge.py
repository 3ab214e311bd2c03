"""A fake LLM judge on 127.0.0.1 speaking the real wire formats, scripted per test.

`POST /v1/chat/completions` answers like OpenAI's chat-completions API (bearer key checked);
`POST /v1/messages` like Anthropic's Messages API (`x-api-key` and `anthropic-version` checked).
Errors use each API's documented error body. Every request is recorded (path, headers, JSON body,
arrival time) so tests can check exactly what a provider sent and how often.

Script it with rules, first match wins: `judge.when("Order 1042", score=90)` answers prompts
containing that text; `times=1` makes a rule single-use (a 429 and then a verdict); `text=` sends
any raw content (garbage, a fenced block); `status=` an HTTP error; `delay=` slows the answer.
Unmatched prompts get `judge.default` (a score of 90 unless changed). `decide=` computes the reply
from the prompt it was sent (a judge that reads the transcript, not one scripted on a needle).

`judge.play_user([...])` makes it also play the simulated user of `simulate:` steps: the prompt's
turn N gets the N-th message, and `{"done": true}` after the last. `judge.connections` counts the TCP
connections accepted, so a test can prove that a replayed run made none.

`POST /v1/embeddings` answers like OpenAI's embeddings API with `embedding(text)`: a deterministic
bag-of-words vector, so texts sharing most words are close (cosine near 1) and unrelated ones are not.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from support.server import LocalServer

API_KEY = "sk-test-fake-judge-key-0123456789"
EMBEDDING_SIZE = 64
# What the simulated user's prompt starts with (litmus.judges.prompts.SIMULATOR_SYSTEM), and how it asks for a turn.
SIMULATOR_PROMPT = "You play the user of a chat assistant"
SIMULATOR_TURN = re.compile(r"Write your message of turn (\d+)")


def embedding(text: str) -> list[float]:
    """Each lower-cased word adds 1 to a bucket chosen by its hash; the vector is normalized."""
    vector = [0.0] * EMBEDDING_SIZE
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % EMBEDDING_SIZE] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [round(x / norm, 6) for x in vector]


@dataclass
class Rule:
    contains: str | None = None
    score: float | None = 90
    reason: str = "looks right"
    mismatches: list[dict] = field(default_factory=list)
    text: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: str = "scripted error"
    delay: float = 0.0
    times: int | None = None
    decide: Callable[[str], str] | None = None

    def content(self, prompt: str) -> str:
        if self.decide is not None:
            return self.decide(prompt)
        if self.text is not None:
            return self.text
        return json.dumps({"score": self.score, "reason": self.reason, "mismatches": self.mismatches})


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float

    @property
    def prompt(self) -> str:
        """Everything the judge was told: system and user text, in either wire format."""
        parts = [self.body.get("system") or ""]
        parts += [m.get("content", "") for m in self.body.get("messages", [])]
        return "\n".join(p for p in parts if isinstance(p, str))


class FakeJudge(LocalServer):
    def __init__(self, api_key: str = API_KEY, json_mode: bool = True):
        self.api_key = api_key
        # False: reject `response_format` with a 400 like servers without JSON mode.
        self.json_mode = json_mode
        self.rules: list[Rule] = []
        self.default = Rule()
        self.received: list[Received] = []
        self.connections = 0
        self._lock = threading.Lock()
        super().__init__(_handler(self))

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    def when(self, contains: str | None = None, **reply) -> FakeJudge:
        with self._lock:
            self.rules.append(Rule(contains=contains, **reply))
        return self

    def play_user(self, messages: list[str]) -> FakeJudge:
        """Answer the simulated user's prompts: turn N says messages[N-1]; past the last, done."""

        def turn(prompt: str) -> str:
            number = int(SIMULATOR_TURN.search(prompt).group(1))
            if number > len(messages):
                return json.dumps({"message": "", "done": True})
            return json.dumps({"message": messages[number - 1], "done": False})

        return self.when(SIMULATOR_PROMPT, decide=turn)

    def calls(self, path: str | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.received if path is None or r.path == path]

    def _rule_for(self, prompt: str) -> Rule:
        with self._lock:
            for rule in self.rules:
                if rule.times == 0 or (rule.contains is not None and rule.contains not in prompt):
                    continue
                if rule.times is not None:
                    rule.times -= 1
                return rule
            return self.default

    def _record(self, received: Received) -> None:
        with self._lock:
            self.received.append(received)


def _handler(judge: FakeJudge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: without TCP_NODELAY, Nagle plus delayed ACKs add ~40 ms.
        disable_nagle_algorithm = True

        def log_message(self, *args) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            with judge._lock:
                judge.connections += 1

        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            received = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
            judge._record(received)
            if self.path == "/v1/chat/completions":
                self._openai(received)
            elif self.path == "/v1/messages":
                self._anthropic(received)
            elif self.path == "/v1/embeddings":
                self._embeddings(received)
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def _openai(self, received: Received) -> None:
            if received.headers.get("authorization") != f"Bearer {judge.api_key}":
                got = received.headers.get("authorization", "")
                return self._send(401, {"error": {"message": f"Incorrect API key provided: {got[7:]}",
                                                  "type": "invalid_request_error", "code": "invalid_api_key"}})
            if not judge.json_mode and "response_format" in received.body:
                return self._send(400, {"error": {"message": "response_format is not supported by this model",
                                                  "type": "invalid_request_error", "param": "response_format"}})
            rule = judge._rule_for(received.prompt)
            time.sleep(rule.delay)
            if rule.status != 200:
                return self._send(rule.status, {"error": {"message": rule.error, "type": "server_error"}},
                                  rule.headers)
            text = rule.content(received.prompt)
            self._send(200, {
                "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                "model": received.body.get("model"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": _usage(received.prompt, text, "prompt_tokens", "completion_tokens"),
            })

        def _embeddings(self, received: Received) -> None:
            if received.headers.get("authorization") != f"Bearer {judge.api_key}":
                return self._send(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})
            text = received.body.get("input")
            if not isinstance(text, str) or not text:
                return self._send(400, {"error": {"message": "'input' must be a non-empty string"}})
            self._send(200, {
                "object": "list", "model": received.body.get("model"),
                "data": [{"object": "embedding", "index": 0, "embedding": embedding(text)}],
                "usage": {"prompt_tokens": max(1, len(text) // 4), "total_tokens": max(1, len(text) // 4)},
            })

        def _anthropic(self, received: Received) -> None:
            if received.headers.get("x-api-key") != judge.api_key or not received.headers.get("anthropic-version"):
                return self._send(401, {"type": "error", "error": {"type": "authentication_error",
                                                                   "message": "invalid x-api-key"}})
            rule = judge._rule_for(received.prompt)
            time.sleep(rule.delay)
            if rule.status != 200:
                return self._send(rule.status, {"type": "error", "error": {"type": "api_error",
                                                                           "message": rule.error}}, rule.headers)
            text = rule.content(received.prompt)
            self._send(200, {
                "id": "msg_fake", "type": "message", "role": "assistant", "model": received.body.get("model"),
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": _usage(received.prompt, text, "input_tokens", "output_tokens"),
            })

        def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (a timeout test)

    return Handler


def _usage(prompt: str, text: str, input_name: str, output_name: str) -> dict[str, int]:
    return {input_name: max(1, len(prompt) // 4), output_name: max(1, len(text) // 4)}
