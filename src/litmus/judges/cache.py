"""The verdict cache and the cassettes of the replay provider: one small JSON file per reply.

    <dir>/verdicts/<sha256>.json    key: provider, model, prompt version, messages, parameters
    <dir>/cassettes/<sha256>.json   key: prompt version, messages, tier (1 or 2): no provider, no model,
                                    so a cassette recorded with any judge replays under any config
    <dir>/embeddings/<sha256>.json  key: provider, model, text (the embeddings of `similar`)
    <dir>/cassettes/<sha256>.json   key: the text only, for embeddings (replayed like verdicts)
    <dir>/simulator/<sha256>.json   key: provider, model, prompt version, messages, parameters (the
                                    simulated user's turns, whose prompt holds the transcript so far)
    <dir>/cassettes/<sha256>.json   key: kind, prompt version, messages, for the simulated user's turns

Files are written atomically (temporary file + rename), so concurrent writers of the same key
(identical prompts judged at once) leave one whole file, never a mix. Each file holds the reply as
received plus a human summary (what was asked, the verdict), so a reviewer can audit a cached
decision with `cat`. Only replies that parsed as verdicts enter the verdict cache (a transient
garbage reply is retried next run); cassettes record every reply.

An entry is read only when it is a regular file (not a symlink, not a device such as /dev/zero, not
a FIFO) of at most MAX_ENTRY_BYTES, holds this format and its own key, and, in the verdict cache,
comes from the same judge and says the verdict its reply parses to. Anything else counts as
missing: the judge is asked again and the entry rewritten. (This stops corrupt, oversized and
mismatched entries; it cannot tell a consistent forgery, so keep the cache where the pull request
being checked cannot write, see docs/judges.md.) So an entry of the verdict or embeddings cache that
git tracks is never read, in any mode: a committed cache entry is whatever its commit's author
wrote. Cassettes are committed on purpose (replaying them is the point); a run that does not trust
the checkout refuses the ones the pull request changed (`Recordings`).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from litmus.git import tracked_names
from litmus.judges.prompts import Prompt
from litmus.judges.verdict import VerdictError, parse_verdict
from litmus.results import write_json_atomic
from litmus.text import clip
from litmus.trust import Trust

FORMAT = 1
# A reply is capped far below this (see the providers); a bigger file is not one of ours.
MAX_ENTRY_BYTES = 512 * 1024


def verdict_key(provider: str, model: str, parameters: dict[str, Any], prompt: Prompt) -> str:
    return _sha({"provider": provider, "model": model, "parameters": parameters,
                 "prompt_version": prompt.version, "messages": prompt.messages})


def cassette_key(prompt: Prompt, tier: int) -> str:
    return _sha({"prompt_version": prompt.version, "messages": prompt.messages, "tier": tier})


def simulator_key(provider: str, model: str, parameters: dict[str, Any], prompt: Prompt) -> str:
    return _sha({"kind": "simulated_turn", "provider": provider, "model": model, "parameters": parameters,
                 "prompt_version": prompt.version, "messages": prompt.messages})


def simulator_cassette_key(prompt: Prompt) -> str:
    return _sha({"kind": "simulated_turn", "prompt_version": prompt.version, "messages": prompt.messages})


def embedding_key(provider: str, model: str, text: str) -> str:
    return _sha({"kind": "embedding", "provider": provider, "model": model, "text": text})


def embedding_cassette_key(text: str) -> str:
    return _sha({"kind": "embedding", "text": text})


class _Store:
    """One directory of JSON entries by key. An entry not to be trusted (see the module docstring)
    counts as missing.

    `check(entry, provider, model)`: whether a well-formed entry may be used (the verdict cache's
    consistency check); a failed check makes the entry a miss. `ignored`: names of files never read
    (the cache entries git tracks)."""

    def __init__(self, directory: Path, check: Callable[[dict[str, Any], str, str], bool] | None = None,
                 ignored: frozenset[str] = frozenset()):
        self.directory = directory
        self._check = check
        self.ignored = ignored

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def _read(self, key: str) -> dict[str, Any] | None:
        """The entry: a bounded regular file holding this format and its own key; else None."""
        if f"{key}.json" in self.ignored:
            return None
        data = _read_bounded(self.path(key))
        if data is None:
            return None
        try:
            entry = json.loads(data)
        except ValueError:
            return None
        if not (isinstance(entry, dict) and entry.get("format") == FORMAT and entry.get("key") == key):
            return None
        return entry


class ReplyStore(_Store):
    """Judge replies by key (the verdict cache, or the cassettes)."""

    def get(self, key: str, provider: str = "", model: str = "") -> dict[str, Any] | None:
        entry = self._read(key)
        if entry is None or not isinstance(entry.get("reply"), str) or not isinstance(entry.get("usage", {}), dict):
            return None
        if self._check is not None and not self._check(entry, provider, model):
            return None
        return entry

    def put(self, key: str, *, prompt: Prompt, provider: str, model: str, reply: str, input_tokens: int,
            output_tokens: int, latency_ms: float, verdict: dict[str, Any] | None) -> None:
        write_json_atomic(self.path(key), {
            "format": FORMAT,
            "key": key,
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "prompt": {"kind": prompt.kind, "version": prompt.version, "summary": prompt.summary},
            "judge": {"provider": provider, "model": model},
            "verdict": verdict,
            "reply": reply,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, "latency_ms": round(latency_ms, 1)},
        })


class VectorStore(_Store):
    """Embedding vectors by key (the embeddings cache, or the cassettes)."""

    def get(self, key: str) -> list[float] | None:
        entry = self._read(key)
        vector = entry.get("embedding") if entry is not None else None
        if not isinstance(vector, list) or not vector or not all(_is_number(x) for x in vector):
            return None
        return [float(x) for x in vector]

    def put(self, key: str, *, text: str, provider: str, model: str, vector: list[float], input_tokens: int,
            latency_ms: float) -> None:
        write_json_atomic(self.path(key), {
            "format": FORMAT,
            "key": key,
            "kind": "embedding",
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            # What was embedded, for a reviewer (already redacted); the key is the whole text.
            "text": clip(text, 200),
            "embeddings": {"provider": provider, "model": model},
            "usage": {"input_tokens": input_tokens, "latency_ms": round(latency_ms, 1)},
            "embedding": vector,
        }, indent=None)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def embedding_store(cache_dir: Path, root: Path | None = None) -> VectorStore:
    """The embeddings cache; with the repository `root`, without the entries git tracks there."""
    return VectorStore(cache_dir / "embeddings", ignored=_tracked(cache_dir / "embeddings", root))


def embedding_cassettes(cache_dir: Path) -> VectorStore:
    return VectorStore(cache_dir / "cassettes")


def verdict_store(cache_dir: Path, root: Path | None = None) -> ReplyStore:
    """The verdict cache; with the repository `root`, without the entries git tracks there."""
    return ReplyStore(cache_dir / "verdicts", check=_consistent_verdict, ignored=_tracked(cache_dir / "verdicts", root))


def simulator_store(cache_dir: Path, root: Path | None = None) -> ReplyStore:
    """The simulated user's cache; with the repository `root`, without the entries git tracks there."""
    return ReplyStore(cache_dir / "simulator", check=_same_judge, ignored=_tracked(cache_dir / "simulator", root))


def _tracked(directory: Path, root: Path | None) -> frozenset[str]:
    return tracked_names(directory, root) if root is not None else frozenset()


@dataclass(frozen=True)
class Recordings:
    """Which cassettes (recorded replies, committed on purpose) a run may replay: in a run that does not
    trust the checkout, none that the pull request changed, for it could have written any verdict there.
    `root`: the git work tree the cassettes are in, None when they are in none (then what the pull request
    changed cannot be matched to them, and an untrusted run uses none)."""

    root: Path | None
    trust: Trust

    def refusal(self, path: Path) -> str | None:
        """Why the recording at `path` must not decide a verdict in this run; None when it may."""
        if self.trust.runs_pr_code:
            return None
        if self.root is None:
            return (f"the recorded verdict {path} is in no git checkout, so whether this pull request changed it "
                    "cannot be told; it is not used")
        try:
            relative = path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None  # outside the checkout: not a file the pull request carries
        if not self.trust.distrusts(relative):
            return None
        if self.trust.changed_files is None:
            return (f"the recorded verdict {relative} may have been changed by this pull request (its changed files "
                    "are unknown), so it is not used")
        return f"the recorded verdict was changed by this pull request: {relative} is not used"


class DistrustedRecording(Exception):
    """A recording exists but `Recordings.refusal` says it must not be used; the message is the reason."""


def _consistent_verdict(entry: dict[str, Any], provider: str, model: str) -> bool:
    """From this judge, and its summary says the verdict its reply parses to."""
    if not _same_judge(entry, provider, model):
        return False
    try:
        verdict = parse_verdict(entry["reply"])
    except VerdictError:
        return False
    summary = entry.get("verdict")
    return isinstance(summary, dict) and summary.get("score") == verdict.score


def _same_judge(entry: dict[str, Any], provider: str, model: str) -> bool:
    return entry.get("judge") == {"provider": provider, "model": model}


def _read_bounded(path: Path) -> bytes | None:
    """The bytes of a regular file of at most MAX_ENTRY_BYTES, opened without following a symlink."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
            return None
        try:
            data = handle.read(MAX_ENTRY_BYTES + 1)
        except OSError:
            return None
    return data if len(data) <= MAX_ENTRY_BYTES else None


def cassette_store(cache_dir: Path) -> ReplyStore:
    return ReplyStore(cache_dir / "cassettes")


def _sha(data: dict[str, Any]) -> str:
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
