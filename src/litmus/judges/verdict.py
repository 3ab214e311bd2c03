"""The verdict contract: what a judge must reply, parsed strictly.

A verdict is one JSON object `{"score": 0-100, "reason": str, "mismatches": [{path, expected, actual,
reason}]}`, optionally inside one fenced code block; a verdict without `mismatches` listed none (read
as `[]`). Anything else (prose around the JSON, a score outside 0-100 or not a number, a missing
score or reason, a key given twice, a reply over 64 KiB) is unparseable: the caller escalates it
and, if no judge can resolve it, reports `needs_review`. Nothing is guessed or defaulted to a pass.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from litmus.response import without_lone_surrogates
from litmus.results import Mismatch
from litmus.text import clip

FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n(.*?)\n?[ \t]*```", re.DOTALL)
REQUIRED = ("score", "reason")
MISMATCH_FIELDS = ("path", "expected", "actual", "reason")
# A verdict is a score, a reason and a few mismatches: a longer reply is not one, and its text must
# not reach results.json and every report (a 50 MB "reason" would).
MAX_REPLY_BYTES = 64 * 1024


class VerdictError(ValueError):
    """The judge's reply is not a verdict; the message says why."""


@dataclass(frozen=True)
class Verdict:
    score: float
    reason: str
    mismatches: tuple[Mismatch, ...] = ()


def parse_verdict(text: str) -> Verdict:
    # A lone surrogate (raw, or as a "\ud800" escape inside the verdict) cannot be written as UTF-8:
    # it would crash writing results.json and the reports.
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_REPLY_BYTES:
        raise VerdictError(f"reply of {size:,} bytes is over the {MAX_REPLY_BYTES // 1024} KiB a verdict may take: "
                           f"{_excerpt(text)}")
    text = without_lone_surrogates(text)
    body = text.strip()
    fenced = FENCE.fullmatch(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = json.loads(body, object_pairs_hook=_unique_keys)
    except ValueError as exc:
        raise VerdictError(f"not JSON ({exc.args[0] if exc.args else exc}): {_excerpt(text)}") from None
    except RecursionError:
        raise VerdictError(f"JSON nested too deeply: {_excerpt(text)}") from None
    data = without_lone_surrogates(data)
    if not isinstance(data, dict):
        raise VerdictError(f"expected a JSON object, got {type(data).__name__}: {_excerpt(text)}")
    missing = [name for name in REQUIRED if name not in data]
    if missing:
        raise VerdictError(f"missing field(s) {', '.join(missing)}: {_excerpt(text)}")
    score = data["score"]
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise VerdictError(f"score must be a number from 0 to 100, got {score!r}")
    if not 0 <= score <= 100:
        raise VerdictError(f"score {score} is outside 0-100")
    if not isinstance(data["reason"], str):
        raise VerdictError(f"reason must be a string, got {type(data['reason']).__name__}")
    mismatches = data.get("mismatches", [])
    if not isinstance(mismatches, list):
        raise VerdictError("mismatches must be a list")
    return Verdict(float(score), data["reason"].strip(), tuple(_mismatch(m) for m in mismatches))


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """An object whose keys are all different: `{"score": 10, "score": 95}` has no single score."""
    data: dict[str, object] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"key {key!r} given twice")
        data[key] = value
    return data


def _mismatch(item) -> Mismatch:
    if not isinstance(item, dict) or any(name not in item for name in MISMATCH_FIELDS):
        raise VerdictError(f"each mismatch needs {', '.join(MISMATCH_FIELDS)}, got {_excerpt(json.dumps(item))}")
    if not isinstance(item["path"], str) or not isinstance(item["reason"], str):
        raise VerdictError("mismatch path and reason must be strings")
    return Mismatch(item["path"], item["expected"], item["actual"], item["reason"])


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(clip(flat, limit))
