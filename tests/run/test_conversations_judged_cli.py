"""A conversation judged and simulated end to end: `litmus run` against the chat server (which forgets the
order at turn 3) with the fake judge on 127.0.0.1 as judge and simulated user; recorded, then replayed
offline with no connection to the judge."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap

from litmus.results import load_results
from support.chat_server import ChatServer
from support.cli import litmus, write_judge_config
from support.fake_judge import API_KEY, FakeJudge, Rule

SUITE = """\
    version: 1
    suite: Memory
    flows:
      - name: remembers the order
        conversation:
          request: {method: POST, url: /openai/v1/chat/completions, json: {model: shop}}
          system: "You are Shop's assistant."
        steps:
          - {name: greet, user: "Hi, my order is 1042."}
          - {name: eta, user: "When does it arrive?"}
          - name: push
            simulate: {persona: "an impatient customer", goal: "know the order's status", max_turns: 3}
        conversation_assertions:
          - {type: knowledge_retention}
    """
SIMULATED = ["Which order are we talking about?", "Is it on its way?"]
REPLY = re.compile(r"<turn-(\d+)-assistant-[0-9a-f]{16}>\n(.*?)\n</turn", re.DOTALL)


def retention(prompt: str) -> str:
    """A judge that reads the transcript: the first reply that lost the order number is the turn at fault."""
    for turn, text in REPLY.findall(prompt):
        if "order unknown" in text:
            return json.dumps({"score": 5, "reason": f"turn {turn} forgot the order", "mismatches": [
                {"path": f"turns[{turn}]", "expected": "order 1042", "actual": text, "reason": "forgot"}]})
    return json.dumps({"score": 95, "reason": "kept the order", "mismatches": []})


def play_user(prompt: str) -> str:
    turn = int(re.search(r"Write your message of turn (\d+)", prompt).group(1))
    index = turn - 3  # turns 1 and 2 are the user's own steps
    if index >= len(SIMULATED):
        return json.dumps({"message": "", "done": True})
    return json.dumps({"message": SIMULATED[index], "done": False})


def litmus_run(tmp_path, base_url: str, *extra: str) -> subprocess.CompletedProcess:
    return litmus(tmp_path, "run", "probes", "--base-url", base_url, "--out", "out", "--format", "markdown", *extra,
                  env={"JUDGE_KEY": API_KEY})


def test_forgetting_at_turn_3_fails_knowledge_retention_and_replays_offline(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "memory.yaml").write_text(textwrap.dedent(SUITE))
    with FakeJudge() as judge, ChatServer(forget_at=3) as chat:
        judge.when("You play the user of a chat assistant", decide=play_user)
        judge.default = Rule(decide=retention)
        write_judge_config(tmp_path, judge.openai_base_url)
        recorded = litmus_run(tmp_path, chat.base_url, "--record")
        first = load_results(tmp_path / "out" / "results.json")
        connections = judge.connections
        replayed = litmus_run(tmp_path, chat.base_url, "--judge-provider", "replay")
        second = load_results(tmp_path / "out" / "results.json")
        assert judge.connections == connections  # the replay asked neither judge nor simulator
    assert recorded.returncode == 1, recorded.stdout + recorded.stderr
    flow_run = first.suites[0].flow_runs[0]
    assert [(s.name, s.turn) for s in flow_run.steps] == [("greet", 1), ("eta", 2), ("push #1", 3), ("push #2", 4)]
    assert [s.user for s in flow_run.steps[2:]] == SIMULATED
    [retained] = flow_run.conversation_assertions
    assert retained.status == "failed" and [m.path for m in retained.mismatches] == ["turns[3]"]
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "turn 3 at fault" in comment and "▶ 3      user: Which order are we talking about?" in comment
    # Offline, the same conversation and the same verdict.
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    again = second.suites[0].flow_runs[0]
    assert again.transcript == flow_run.transcript
    assert [m.path for m in again.conversation_assertions[0].mismatches] == ["turns[3]"]
