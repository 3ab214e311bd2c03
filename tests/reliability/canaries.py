"""Canaries for the secrets test: values that must never be written anywhere, in any encoding.

Each canary holds characters that every encoding changes (`"`, `&`, `/`, `+`, space, `<`), so a
leak through URL encoding, JSON escaping, HTML/XML escaping or workflow-command escaping is caught.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from urllib.parse import quote, quote_plus
from xml.sax.saxutils import escape as xml_escape

from litmus.github.workflow import escape_data, escape_property

PROBE_SECRET = 'sec-canary" &/+ <7Q9xK'
JUDGE_KEY = 'judge-canary" &/+ <4Lm2P'
GITHUB_TOKEN = 'ghs-canary" &/+ <8Vb3R'
CANARIES = (PROBE_SECRET, JUDGE_KEY, GITHUB_TOKEN)


def forms(value: str) -> set[str]:
    """Every way the value could be written by something that encodes it."""
    return {
        value, quote(value, safe=""), quote(value), quote_plus(value), json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=True)[1:-1], html.escape(value), html.escape(value, quote=False),
        xml_escape(value), escape_data(value), escape_property(value),
    }


def leaks(data: bytes | str, where: str) -> list[str]:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [f"{where}: {form!r}" for canary in CANARIES for form in forms(canary) if form in text]


def leaks_in_files(*roots: Path) -> list[str]:
    found = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                found += leaks(path.read_bytes(), str(path))
    return found
