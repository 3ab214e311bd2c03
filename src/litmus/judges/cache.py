"""The verdict cache and the cassettes of the replay provider: one small JSON file per reply.

    <dir>/verdicts/<sha256>.json    key: provider, model, prompt version, messages, parameters
    <dir>/cassettes/<sha256>.json   key: prompt version, messages, tier (1 or 2): no provider, no model,
                                    so a cassette recorded with any judge replays under any config
    <dir>/embeddings/<sha256>.json  key: provider, model, text (the embeddings of `similar`)
    <dir>/cassettes/<sha256>.json   key: the text only, for embeddings (replayed like verdicts)

Files are written atomically (temporary file + rename), so concurrent writers of the same key
(identical prompts judged at once) leave one whole file, never a mix. Each file holds the reply as
received plus a human summary (what was asked, the verdict), so a reviewer can audit a cached
decision with `cat`. Unreadable files count as missing. Only replies that parsed as verdicts
enter the verdict cache (a transient garbage reply is retried next run); cassettes record every reply.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from litmus.judges.prompts import Prompt
from litmus.results import write_json_atomic

FORMAT = 1


def verdict_key(provider: str, model: str, parameters: dict[str, Any], prompt: Prompt) -> str:
    return _sha({"provider": provider, "model": model, "parameters": parameters,
                 "prompt_version": prompt.version, "messages": prompt.messages})


def cassette_key(prompt: Prompt, tier: int) -> str:
    return _sha({"prompt_version": prompt.version, "messages": prompt.messages, "tier": tier})


def embedding_key(provider: str, model: str, text: str) -> str:
    return _sha({"kind": "embedding", "provider": provider, "model": model, "text": text})


def embedding_cassette_key(text: str) -> str:
    return _sha({"kind": "embedding", "text": text})


class _Store:
    """One directory of JSON entries by key; an unreadable entry counts as missing."""

    def __init__(self, directory: Path):
        self.directory = directory

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def _read(self, key: str) -> dict[str, Any] | None:
        try:
            entry = json.loads(self.path(key).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) else None


class ReplyStore(_Store):
    """Judge replies by key (the verdict cache, or the cassettes)."""

    def get(self, key: str) -> dict[str, Any] | None:
        entry = self._read(key)
        return entry if entry is not None and isinstance(entry.get("reply"), str) else None

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
            "text": text if len(text) <= 200 else text[:200] + "…",
            "embeddings": {"provider": provider, "model": model},
            "usage": {"input_tokens": input_tokens, "latency_ms": round(latency_ms, 1)},
            "embedding": vector,
        }, indent=None)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def embedding_store(cache_dir: Path) -> VectorStore:
    return VectorStore(cache_dir / "embeddings")


def embedding_cassettes(cache_dir: Path) -> VectorStore:
    return VectorStore(cache_dir / "cassettes")


def verdict_store(cache_dir: Path) -> ReplyStore:
    return ReplyStore(cache_dir / "verdicts")


def cassette_store(cache_dir: Path) -> ReplyStore:
    return ReplyStore(cache_dir / "cassettes")


def _sha(data: dict[str, Any]) -> str:
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
