"""A conversation flow's history: what each turn sends, how its reply is read, what the transcript holds.

A turn is one user message and its reply. Per `format`:
- `openai`: `json.messages` = the system message, then the history as the API's own messages (assistant
  messages with their `tool_calls` as returned, a `role: tool` message per answered call), then the user's;
- `anthropic`: `json.system` + `json.messages`; answered calls go as `tool_result` blocks at the head of
  the next user message (Anthropic's roles alternate, so they cannot be a message of their own);
- the mapping form: `[{role, content}]` at `history_path`, the reply read at `reply_path` (or the
  assembled stream text); with `history: none`, only the new message (the server keeps the rest).
The history is added after the request is rendered: a reply is never read as a template.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from litmus.assertions._jsonpaths import find
from litmus.assertions.base import BudgetExhausted
from litmus.model import Flow, Step
from litmus.response import Response
from litmus.results import StepResult
from litmus.run.http import OutgoingRequest
from litmus.text import clip
from litmus.toolcalls import NotAReply, ToolCall, assistant_message, read_tool_calls

# How much of an unreadable reply an error quotes (and of a tool call's name or id).
QUOTED_CHARS = 200
# Each transcript message is kept up to this many characters (results.json, judges, the simulator): a
# target answering megabytes per turn does not make the results, or every judge prompt, that big.
TRANSCRIPT_MESSAGE_CHARS = 16_384


# --no-judge: simulate steps are skipped on purpose (they fail nothing), as judged checks are.
JUDGING_OFF = "judging is turned off"


class UnreadableReply(Exception):
    """The reply cannot be read in the conversation's format (or the API answered with an error status)."""


@dataclass
class ReplyResponse(Response):
    """The assistant's reply as the step's body: what its assertions read. `received` is the API's
    response itself (its JSON or stream, tool calls included), which extractions and the record keep."""

    received: Response | None = None
    api: str = "mapping"
    tool_calls: list[ToolCall] = field(default_factory=list)

    @property
    def api_response(self) -> Response:
        return self.received


@dataclass
class History:
    """One flow run's conversation so far."""

    flow: Flow
    system: str | None
    # What the next request carries before the new user message, in the API's own shape.
    messages: list[dict[str, Any]] = field(default_factory=list)
    # Anthropic: the tool_result blocks that open the next user message.
    pending_results: list[dict[str, Any]] = field(default_factory=list)
    transcript: list[dict[str, str]] = field(default_factory=list)
    turn: int = 0

    def __post_init__(self) -> None:
        if self.system:
            self._say("system", self.system)

    @property
    def api(self) -> str:
        return self.flow.conversation.format.api

    def _say(self, role: str, content: str) -> None:
        self.transcript.append({"role": role, "content": clip(content, TRANSCRIPT_MESSAGE_CHARS)})

    def user_message(self, text: str) -> dict[str, Any]:
        if self.pending_results:
            return {"role": "user", "content": [*self.pending_results, {"type": "text", "text": text}]}
        return {"role": "user", "content": text}

    def shape(self, out: OutgoingRequest, user: str) -> None:
        """Put the history and the new user message into the rendered request's JSON body."""
        conversation_format = self.flow.conversation.format
        body = dict(out.json) if isinstance(out.json, dict) else {}
        new = self.user_message(user)
        if self.api == "openai":
            body["messages"] = [*self._system_messages(), *self.messages, new]
        elif self.api == "anthropic":
            if self.system:
                body["system"] = self.system
            body["messages"] = [*self.messages, new]
        else:
            earlier = self.messages if conversation_format.history else []
            first = conversation_format.history or self.turn == 0
            _put(body, conversation_format.history_path, [*(self._system_messages() if first else []), *earlier, new])
        out.json, out.has_json = body, True

    def _system_messages(self) -> list[dict[str, Any]]:
        return [{"role": "system", "content": self.system}] if self.system else []

    def read(self, response: Response) -> ReplyResponse:
        """The reply of a turn; UnreadableReply when the status is not 2xx or the body is not a reply."""
        if not 200 <= response.status < 300:
            raise UnreadableReply(f"the API answered {response.status}: {_quoted(response.text)}")
        try:
            text = self._reply_text(response)
            calls = read_tool_calls(response, self.api) if self.api in ("openai", "anthropic") else []
        except NotAReply as exc:
            raise UnreadableReply(f"the reply cannot be read as {self.api}: {exc}") from None
        return ReplyResponse(status=response.status, headers={"Content-Type": "text/plain; charset=utf-8"},
                             body=text.encode("utf-8"), elapsed_ms=response.elapsed_ms, url=response.url,
                             encoding="utf-8", received=response, api=self.api, tool_calls=calls)

    def _reply_text(self, response: Response) -> str:
        if self.api in ("openai", "anthropic"):
            return _message_text(assistant_message(response, self.api))
        reply_path = self.flow.conversation.format.reply_path
        if reply_path is None:  # streamed: the loader requires reply_path otherwise
            return response.text
        try:
            document = response.json()
        except ValueError as exc:
            raise UnreadableReply(f"the reply is not JSON, so {reply_path} cannot be read: {exc}") from None
        found = [value for _, value in find(reply_path, document)]
        if len(found) != 1 or not isinstance(found[0], str):
            got = "nothing" if not found else f"{len(found)} values" if len(found) > 1 else type(found[0]).__name__
            raise UnreadableReply(f"reply_path {reply_path} must find one string in the reply, found {got}: "
                                  f"{_quoted(response.text)}")
        return found[0]

    @staticmethod
    def unanswered(reply: ReplyResponse, tool_results: Mapping[str, Any] | None) -> list[ToolCall]:
        """The reply's tool calls that `tool_results` gives no value for."""
        return [call for call in reply.tool_calls if call.name not in (tool_results or {})]

    def append(self, user: str, reply: ReplyResponse, tool_results: Mapping[str, Any] | None) -> None:
        """The turn joins the history: the user's message, the reply as the API returned it, and an
        answer to each call the reply made (unanswered ones were refused before)."""
        self.turn += 1
        self.messages.append(self.user_message(user))
        self.pending_results = []
        self._say("user", user)
        if self.api == "mapping":
            self.messages.append({"role": "assistant", "content": reply.text})
            self._say("assistant", reply.text)
            return
        self.messages.append(assistant_message(reply.api_response, self.api))
        calls = reply.tool_calls
        said = reply.text + "".join(f"\n[calls {call.name}({_arguments(call)})]" for call in calls)
        self._say("assistant", said.strip())
        for call in calls:
            result = _text(tool_results[call.name])
            if self.api == "openai":
                self.messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            else:
                self.pending_results.append({"type": "tool_result", "tool_use_id": call.id, "content": result})
            self._say("tool", f"{call.name}: {result}")


@dataclass
class Turn:
    """One turn being run: the flow's history, and the user's message when it is not the step's own."""

    history: History
    # A simulated user's message, sent as is (never rendered: it came from an LLM); None: the step's `user`.
    given: str | None = None
    # Filled by the run: the message as sent, and the reply (None when none could be read).
    sent: str = ""
    reply: ReplyResponse | None = None


# Runs one turn of a step (named for the turn): its result, and why the rest of the conversation is
# skipped (None: go on).
RunTurn = Callable[[Step, Turn], tuple[StepResult, str | None]]


def turns(flow: Flow, history: History, run_turn: RunTurn, simulator: Any, render: Callable[[Any], Any],
          skip: Callable[[Step, str], StepResult], stopped: Callable[[], str | None]) -> list[StepResult]:
    """Every step of the conversation in order, `simulate` steps expanded into one result per turn.

    `simulator`: the judge service, JUDGING_OFF (--no-judge), or why there is none (a string)."""
    results: list[StepResult] = []
    ended: str | None = None
    for position, step in enumerate(flow.steps):
        ended = ended or stopped()
        if ended is not None:
            results.append(skip(step, ended))
            continue
        last = position == len(flow.steps) - 1
        if step.simulate is None:
            result, ended = _one_turn(step, Turn(history), run_turn, render, last)
            results.append(result)
            continue
        if simulator is JUDGING_OFF:  # a choice, like a judged check's: the conversation goes on without these turns
            results.append(skip(step, "judging is turned off (--no-judge): no simulated user"))
            continue
        for k in range(1, step.simulate.max_turns + 1):
            turn_step = replace(step, name=f"{step.name} #{k}")
            played = _simulated(turn_step, history, simulator, render)
            if isinstance(played, StepResult):
                results.append(played)
                ended = f"step '{turn_step.name}': {played.error}"
                break
            message, done = played
            if done or not message:  # the goal was reached or refused: the simulated user says nothing more
                if k == 1:  # the step still has its place in the results, and says why it sent nothing
                    results.append(skip(step, "the simulated user ended the conversation before its first turn "
                                              "(goal reached or refused)"))
                break
            final = k == step.simulate.max_turns
            result, ended = _one_turn(turn_step, Turn(history, message), run_turn, render, last and final)
            results.append(result)
            if final or ended is not None or (ended := stopped()) is not None:
                break
    return results


def _one_turn(step: Step, turn: Turn, run_turn: RunTurn, render: Callable[[Any], Any],
              last: bool) -> tuple[StepResult, str | None]:
    history = turn.history
    result, ended = run_turn(step, turn)
    result.turn, result.user = history.turn + 1, turn.sent or None
    if result.status == "error" or turn.reply is None:
        return result, ended or f"step '{step.name}' ended the conversation"
    tool_results = render(step.tool_results) if step.tool_results else None
    unanswered = history.unanswered(turn.reply, tool_results)
    if unanswered and not last:
        call = unanswered[0]
        result.status = "error"
        result.error = (f"the reply calls tool {_quoted(call.name)} (call id {_quoted(str(call.id))}) and the step "
                        "gives no tool_results for it: the conversation ends here (an API refuses a history with "
                        "an unanswered call)")
        return result, f"step '{step.name}': {result.error}"
    history.append(turn.sent, turn.reply, tool_results)
    return result, ended


def _simulated(step: Step, history: History, simulator: Any,
               render: Callable[[Any], Any]) -> tuple[str, bool] | StepResult:
    """The simulated user's next message and whether the simulator is done, or the step's error result."""
    turn = history.turn + 1
    if isinstance(simulator, str):
        return _not_played(step, turn, f"no simulator: {simulator}")
    try:
        simulated = simulator.simulate_turn(render(step.simulate.persona), render(step.simulate.goal),
                                            [dict(message) for message in history.transcript], turn=turn)
    except BudgetExhausted:
        result = _not_played(step, turn, f"the judge budget (max_calls {simulator.config.max_calls}) ran out: "
                                         "the simulated user could not play this turn")
        result.judge_skip = "budget"
        return result
    except Exception as exc:  # noqa: BLE001 - a simulator that fails (no cassette, provider error) errs this turn
        # Its message names the turn (a missing cassette: the first turn whose transcript has none).
        return _not_played(step, turn, f"the simulated user: {str(exc) or type(exc).__name__}", numbered=False)
    return simulated.message, simulated.done


def _not_played(step: Step, turn: int, why: str, *, numbered: bool = True) -> StepResult:
    return StepResult(name=step.name, line=step.pos.line, status="error", attempts=0, turn=turn,
                      error=f"turn {turn}: {why}" if numbered else why)


def _message_text(message: Mapping[str, Any]) -> str:
    """The text of an API's assistant message: its string content, or its text parts / blocks joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part["text"] for part in content
                       if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str))
    return ""


def _put(body: dict[str, Any], path: str, value: Any) -> None:
    """Set `value` at `$.a.b` (plain keys, checked at load), making the mappings on the way."""
    *parents, last = path[2:].split(".")
    node = body
    for key in parents:
        child = node.get(key)
        node[key] = child = dict(child) if isinstance(child, dict) else {}
        node = child
    node[last] = value


def _arguments(call: ToolCall) -> str:
    return call.raw_arguments if call.raw_arguments is not None else _text(call.arguments)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _quoted(text: str) -> str:
    return repr(clip(text, QUOTED_CHARS))
