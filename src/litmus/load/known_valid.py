"""JSONPaths and JSON Schemas already found valid, remembered across processes.

Checking them needs jsonpath-ng (whose parser builds its tables in every process) and jsonschema
(~0.1 s to import, ~6 ms per 2020-12 meta-schema check): most of what `litmus validate` costs on
unchanged files. Only "valid" is remembered, keyed by a hash of the text and of the versions that
judged it, so an invalid value is always re-checked and an upgrade starts afresh. The store is a
small JSON file in the user's cache directory (`$XDG_CACHE_HOME/litmus`, `LITMUS_CHECK_CACHE=0`
turns it off); any problem reading or writing it only means checking again.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib.util import find_spec
from pathlib import Path

from litmus import __version__
from litmus.results import write_json_atomic

# Enough for every expression and schema of a large repository; the oldest are dropped past it.
_CAPACITY = 20_000


def _store_path() -> Path | None:
    if os.environ.get("LITMUS_CHECK_CACHE", "1") == "0":
        return None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "litmus" / "known-valid.json"


def _judges_identity() -> str:
    """litmus's version and the installed checkers' files: a reinstall or upgrade changes it."""
    parts = [__version__]
    for name in ("jsonpath_ng", "jsonschema"):
        spec = find_spec(name)
        origin = spec.origin if spec and spec.origin else ""
        try:
            parts.append(f"{origin}:{os.stat(origin).st_mtime_ns}")
        except OSError:
            parts.append(origin)
    return "|".join(parts)


class KnownValid:
    def __init__(self, path: Path | None):
        self._path = path
        self._keys: dict[str, None] | None = None  # read on first use; insertion order = age
        self._added = False
        self._salt = ""

    def _load(self) -> dict[str, None]:
        if self._keys is None:
            self._salt = _judges_identity()
            self._keys = {}
            if self._path is not None:
                try:
                    data = json.loads(self._path.read_text("utf-8"))
                    if data.get("identity") == self._salt:
                        self._keys = dict.fromkeys(data["keys"])
                except (OSError, ValueError, TypeError, KeyError, AttributeError):
                    pass
        return self._keys

    def _key(self, kind: str, text: str) -> str:
        self._load()
        return hashlib.sha256(f"{self._salt}\0{kind}\0{text}".encode()).hexdigest()[:32]

    def __contains__(self, item: tuple[str, str]) -> bool:
        return self._key(*item) in self._load()

    def add(self, kind: str, text: str) -> None:
        keys = self._load()
        key = self._key(kind, text)
        if key not in keys:
            keys[key] = None
            self._added = True

    def save(self) -> None:
        if not self._added or self._path is None or self._keys is None:
            return

        keys = list(self._keys)[-_CAPACITY:]
        try:
            write_json_atomic(self._path, {"identity": self._salt, "keys": keys}, indent=None)
            self._added = False
        except OSError:
            pass  # a read-only home or a full disk: next time we check again


known_valid = KnownValid(_store_path())
