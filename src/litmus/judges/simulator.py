"""The simulated user of a `simulate:` step: its turn, how its reply is read, and why it may give none.

The simulator (`judge.simulator`, default the tier-1 judge) is asked through its provider's chat API
(`litmus.judges.prompts.simulator_prompt`) for `{"message": "...", "done": true|false}`. A reply that
is not such JSON is the message text with `done` false (the contract's reading): the conversation goes
on with what the model wrote, and the turn budget (`max_turns`) still ends it. The service
(`JudgeService.simulate_turn`) owns the call, the budget, the cache and the cassettes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from litmus.judges.verdict import FENCE


@dataclass(frozen=True)
class SimulatedTurn:
    # The user's next message (empty when the simulator ended the conversation with nothing more to say).
    message: str
    # The goal was reached or refused: the simulated user sends nothing more.
    done: bool


class SimulatorError(Exception):
    """The simulator gave no turn (its provider failed, or its recording may not be used); the message
    says why, with no secret in it. The step is an `error`, never a pass."""


class NoCassette(SimulatorError):
    """Replay: no recording for the transcript so far; `turn` is the first turn (1-based) with none."""

    def __init__(self, turn: int, detail: str):
        super().__init__(f"turn {turn}: no recorded simulated user turn for the conversation so far ({detail}); "
                         "the target answered differently than when it was recorded, or the recording is missing: "
                         "record again with --record and a live simulator")
        self.turn = turn


def parse_turn(text: str) -> SimulatedTurn:
    """The simulator's reply as a turn: `{"message": str, "done": bool}` (optionally in one fenced block),
    else the whole reply as the message, not done."""
    body = text.strip()
    fenced = FENCE.fullmatch(body)
    try:
        data = json.loads(fenced.group(1) if fenced else body)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("message"), str) and isinstance(data.get("done"), bool):
        return SimulatedTurn(data["message"].strip(), data["done"])
    return SimulatedTurn(body, False)
