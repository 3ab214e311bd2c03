"""The run's side of `simulate:` and `conversation_assertions`, against the chat server on 127.0.0.1.

The judge here is `ScriptedJudge`, a TEST-ONLY stand-in for `litmus.judges.service.JudgeService` with the two
agreed methods (`simulate_turn`, `evaluate_transcript`): the real service, its simulator, cassettes and
transcript prompts are tested on their own; this file checks what the run does with what they answer.
"""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from litmus.assertions.base import BudgetExhausted
from litmus.load import load_suites
from litmus.results import AssertionOutcome, JudgeTotals, Mismatch, write_json_atomic
from litmus.run.conversation import TRANSCRIPT_MESSAGE_CHARS
from litmus.run.runner import RunOptions, run_suites
from litmus.verdict import findings
from support.chat_server import ChatServer
from support.cli import litmus

OPENAI = "/openai/v1/chat/completions"


@dataclass(frozen=True)
class Played:
    message: str
    done: bool


@dataclass
class Config:
    max_calls: int = 3


@dataclass
class ScriptedJudge:
    """TEST-ONLY: plays the user from a script (or raises a scripted error) and judges transcripts by a
    function of them; records every call."""

    script: list[Played | Exception]
    verdict: str = "passed"
    # Mismatches a failed verdict names (e.g. `turns[3]`).
    blame: list[Mismatch] = field(default_factory=list)
    config: Config = field(default_factory=Config)
    simulated: list[tuple] = field(default_factory=list)
    judged: list[list[dict]] = field(default_factory=list)
    executor: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(2))

    def simulate_turn(self, persona, goal, transcript, *, turn):
        self.simulated.append((persona, goal, [dict(m) for m in transcript], turn))
        played = self.script[len(self.simulated) - 1]
        if isinstance(played, Exception):
            raise played
        return played

    def evaluate_transcript(self, assertion, transcript, ctx):
        self.judged.append(transcript)
        return AssertionOutcome(type=assertion.type, status=self.verdict, reason=f"judged {len(transcript)} messages",
                                line=assertion.pos.line, column=assertion.pos.column, name=assertion.name,
                                id=ctx.finding_id(assertion), mismatches=list(self.blame))

    def totals(self):
        return JudgeTotals()


SUITE = """\
    version: 1
    suite: Sim
    flows:
      - name: refund
        conversation:
          request: {method: POST, url: /openai/v1/chat/completions, json: {model: m}}
          system: "Be kind."
        steps:
          - name: greet
            user: "Hi, my order is 1042."
          - name: push
            simulate: {persona: "an impatient customer", goal: "a refund", max_turns: 3}
            assertions: [{type: contains, value: "order 1042"}]
        conversation_assertions:
          - {type: llm_rubric, rubric: "stays polite"}
    """


def run(tmp_path, judge, chat, suite=SUITE):
    (tmp_path / "sim.yaml").write_text(textwrap.dedent(suite))
    suites = load_suites([tmp_path / "sim.yaml"], root=tmp_path, environ={}).suites
    return run_suites(suites, RunOptions(base_url=chat.base_url), judge=judge, environ={})


def test_simulated_turns_expand_into_one_step_each_until_done(tmp_path):
    judge = ScriptedJudge([Played("I want a refund now.", False), Played("Fine, thanks.", False),
                           Played("", True)])
    with ChatServer() as chat:
        result = run(tmp_path, judge, chat)
        sent = chat.sent(OPENAI)
    flow_run = result.suites[0].flow_runs[0]
    assert [(s.name, s.turn, s.user) for s in flow_run.steps] == [
        ("greet", 1, "Hi, my order is 1042."), ("push #1", 2, "I want a refund now."), ("push #2", 3, "Fine, thanks.")]
    assert len({s.id for s in flow_run.steps}) == 3  # each turn its own identity
    # The simulator saw the transcript so far, turn numbers 1-based.
    assert [(t, len(transcript)) for _, _, transcript, t in judge.simulated] == [(2, 3), (3, 5), (4, 7)]
    assert judge.simulated[0][:2] == ("an impatient customer", "a refund")
    assert sent[2]["messages"][-1] == {"role": "user", "content": "Fine, thanks."}
    # Judged once, on the whole transcript.
    assert judge.judged == [flow_run.transcript] and len(flow_run.transcript) == 7
    [outcome] = flow_run.conversation_assertions
    assert outcome.status == "passed" and outcome.id
    assert result.suites[0].verdict == "passed"


def test_max_turns_bounds_a_simulator_that_never_ends(tmp_path):
    judge = ScriptedJudge([Played(f"again {k}", False) for k in range(5)])
    with ChatServer() as chat:
        result = run(tmp_path, judge, chat)
    assert [s.name for s in result.suites[0].flow_runs[0].steps] == ["greet", "push #1", "push #2", "push #3"]


def test_a_failed_conversation_assertion_fails_the_flow_run_as_a_finding(tmp_path):
    judge = ScriptedJudge([Played("bye", True)], verdict="failed")  # done at once: no simulated turn
    with ChatServer() as chat:
        result = run(tmp_path, judge, chat)
    suite = result.suites[0]
    assert [(s.name, s.status) for s in suite.flow_runs[0].steps] == [("greet", "passed"), ("push", "skipped")]
    assert "ended the conversation before its first turn" in suite.flow_runs[0].steps[1].assertions[0].reason
    assert suite.flow_runs[0].status == "failed" and suite.verdict == "failed"
    [finding] = list(findings(result.suites))
    assert finding.step is None and finding.part == "conversation#llm_rubric#0"
    assert finding.record.id == suite.flow_runs[0].conversation_assertions[0].id


def test_a_budget_spent_mid_conversation_fails_the_suite(tmp_path):
    judge = ScriptedJudge([Played("refund!", False), BudgetExhausted()])
    with ChatServer() as chat:
        result = run(tmp_path, judge, chat)
    suite = result.suites[0]
    steps = suite.flow_runs[0].steps
    assert [(s.name, s.status) for s in steps] == [("greet", "passed"), ("push #1", "passed"), ("push #2", "error")]
    assert steps[2].error.startswith("turn 3: the judge budget (max_calls 3) ran out")
    assert steps[2].judge_skip == "budget"
    assert suite.verdict == "failed" and "1 simulated user turn was not evaluated" in suite.reason


def test_a_missing_cassette_is_an_error_naming_the_turn(tmp_path):
    missing = RuntimeError("turn 2: no recorded simulated user turn for the conversation so far")
    judge = ScriptedJudge([missing])
    with ChatServer() as chat:
        result = run(tmp_path, judge, chat)
    push = result.suites[0].flow_runs[0].steps[1]
    assert push.status == "error" and push.error == f"the simulated user: {missing}"
    assert result.suites[0].verdict == "failed"


def test_without_a_judge_simulate_is_an_error_and_nothing_passes(tmp_path):
    with ChatServer() as chat:
        result = run(tmp_path, None, chat)
    suite = result.suites[0]
    push = suite.flow_runs[0].steps[1]
    assert push.status == "error" and "no simulator" in push.error
    assert suite.flow_runs[0].conversation_assertions[0].judge_skip == "no_judge"
    assert suite.verdict == "failed"


FOUR = """\
    version: 1
    suite: Memory
    flows:
      - name: remembers
        conversation:
          request: {method: POST, url: /openai/v1/chat/completions, json: {model: m}}
        steps:
          - {name: greet, user: "Hi, my order is 1042."}
          - {name: eta, user: "When does it arrive?"}
          - {name: address, user: "Which order was that?"}
          - {name: thanks, user: "Thanks!"}
        conversation_assertions:
          - {type: llm_rubric, name: remembers the order, rubric: "keeps the order number"}
    """


def test_reports_show_the_numbered_transcript_with_the_turn_at_fault(tmp_path):
    blame = [Mismatch("turns[3]", "the order number 1042", "order unknown", "forgot the order at turn 3")]
    judge = ScriptedJudge([], verdict="failed", blame=blame)
    with ChatServer(forget_at=3) as chat:
        result = run(tmp_path, judge, chat, FOUR)
    write_json_atomic(tmp_path / "results.json", result.to_dict())
    proc = litmus(tmp_path, "report", "results.json", "--out", "reports", "--format", "markdown,html,junit")
    assert proc.returncode == 0, proc.stderr
    comment = (tmp_path / "reports" / "comment.md").read_text()
    assert "Conversation (4 turns, turn 3 at fault)" in comment
    assert "▶ 3      user: Which order was that?" in comment
    assert "   ◀ turn 3 at fault" in comment
    assert "  1      user: Hi, my order is 1042." in comment  # other turns numbered, not marked
    html = (tmp_path / "reports" / "report.html").read_text()
    assert '<li value="3" class="turn at-fault" title="turn 3 at fault">' in html
    assert '<li value="2" class="turn">' in html
    cases = ET.parse(tmp_path / "reports" / "junit.xml").getroot().iter("testcase")
    names = [case.get("name") for case in cases]
    assert [n.split(" [")[0] for n in names] == ["greet", "eta", "address", "thanks",
                                                  "conversation › remembers the order", "intent evaluation"]


def test_a_simulated_message_is_sent_as_is_never_rendered(tmp_path):
    judge = ScriptedJudge([Played("show me {{ env.HOME }} and {{ secrets.X }}", False), Played("", True)])
    with ChatServer() as chat:
        result = run(tmp_path, judge, chat)
        sent = chat.sent(OPENAI)
    assert sent[1]["messages"][-1] == {"role": "user", "content": "show me {{ env.HOME }} and {{ secrets.X }}"}
    assert result.suites[0].flow_runs[0].steps[1].status == "passed"


def test_a_huge_message_is_sent_whole_and_cut_in_the_transcript(tmp_path):
    judge = ScriptedJudge([Played("x" * 50_000, False), Played("", True)])
    with ChatServer() as chat:
        result = run(tmp_path, judge, chat)
        sent = chat.sent(OPENAI)
    assert sent[1]["messages"][-1]["content"] == "x" * 50_000
    transcript = result.suites[0].flow_runs[0].transcript
    assert max(len(m["content"]) for m in transcript) == TRANSCRIPT_MESSAGE_CHARS
    assert judge.judged[0] == transcript


def test_no_judge_skips_simulated_turns_on_purpose_and_the_conversation_goes_on(tmp_path):
    suite = SUITE.replace("""            assertions: [{type: contains, value: "order 1042"}]
""", """            assertions: [{type: contains, value: "order 1042"}]
          - {name: last, user: "Still there?", assertions: [{type: contains, value: "turn 2:"}]}
""")
    (tmp_path / "sim.yaml").write_text(textwrap.dedent(suite))
    suites = load_suites([tmp_path / "sim.yaml"], root=tmp_path, environ={}).suites
    with ChatServer() as chat:
        result = run_suites(suites, RunOptions(base_url=chat.base_url, judge_disabled=True), environ={})
    suite_result = result.suites[0]
    steps = suite_result.flow_runs[0].steps
    assert [(s.name, s.status, s.turn) for s in steps] == [("greet", "passed", 1), ("push", "skipped", None),
                                                            ("last", "passed", 2)]
    assert "--no-judge" in steps[1].assertions[0].reason
    assert suite_result.flow_runs[0].conversation_assertions[0].judge_skip == "disabled"
    assert suite_result.verdict == "passed"
