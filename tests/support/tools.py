"""Programs the tests run on or against Litmus, from npm, pinned by tests/tools/package-lock.json: Microsoft's
SARIF Multitool, Mermaid's own parser, and Stoplight's Prism (an OpenAPI mock server no one here wrote).

`npm ci` installs them into tests/tools/node_modules (ignored by git) the first time a test needs one, so a
plain clone's `.ci/run` needs nothing but npm and node. Without them the tests that need a tool are skipped,
saying so; a failed install fails them.
"""

from __future__ import annotations

import fcntl
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"
MODULES = TOOLS / "node_modules"
MULTITOOL = MODULES / "@microsoft" / "sarif-multitool-linux" / "Sarif.Multitool"
MERMAID_PARSE = TOOLS / "mermaid_parse.mjs"
# What a complete install leaves: each tool's own entry point.
PRISM = MODULES / "@stoplight" / "prism-cli" / "dist" / "index.js"
INSTALLED = (MULTITOOL, MODULES / "mermaid" / "package.json", MODULES / "jsdom" / "package.json", PRISM)


def sarif_multitool() -> Path:
    """Microsoft's SARIF Multitool (a self-contained binary inside its npm package), installed when missing."""
    _install("SARIF MULTITOOL")
    # The package's postinstall makes it executable; npm configured to run no install scripts skips that.
    MULTITOOL.chmod(MULTITOOL.stat().st_mode | stat.S_IXUSR)
    return MULTITOOL


def mermaid_parser() -> list[str]:
    """The command that parses Mermaid diagrams with Mermaid itself (see mermaid_parse.mjs), installed when missing."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("MERMAID PARSER TESTS SKIPPED: no node to run Mermaid's parser (apt-get install nodejs)")
    _install("MERMAID PARSER")
    return [node, str(MERMAID_PARSE)]


def prism() -> list[str]:
    """The command that runs Prism (`prism mock SPEC` serves a spec's own examples), installed when missing."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("PRISM TESTS SKIPPED: no node to run Prism (apt-get install nodejs)")
    _install("PRISM")
    return [node, str(PRISM)]


def _install(what: str) -> None:
    if all(path.exists() for path in INSTALLED):
        return
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"{what} TESTS SKIPPED: no npm to install tests/tools (apt-get install npm)")
    # One install at a time: parallel test workers share the folder.
    with open(TOOLS / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all(path.exists() for path in INSTALLED):
            done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=TOOLS, capture_output=True, text=True,
                                  timeout=600)
            missing = [str(path) for path in INSTALLED if not path.exists()]
            assert done.returncode == 0 and not missing, f"npm ci in {TOOLS} failed ({missing}):\n{done.stderr}"
