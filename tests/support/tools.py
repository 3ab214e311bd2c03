"""Programs the tests run on Litmus's output, from npm, pinned by tests/tools/package-lock.json.

`npm ci` installs them into tests/tools/node_modules (ignored by git) the first time a test needs
one, so a plain clone's `.ci/run` needs nothing but npm. Without npm the tests that need a tool are
skipped, saying so; a failed install fails them.
"""

from __future__ import annotations

import fcntl
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"
MULTITOOL = TOOLS / "node_modules" / "@microsoft" / "sarif-multitool-linux" / "Sarif.Multitool"


def sarif_multitool() -> Path:
    """Microsoft's SARIF Multitool (a self-contained binary inside its npm package), installed when missing."""
    if not MULTITOOL.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("SARIF MULTITOOL TESTS SKIPPED: no npm to install @microsoft/sarif-multitool "
                        "(apt-get install npm)")
        # One install at a time: parallel test workers share the folder.
        with open(TOOLS / ".install.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not MULTITOOL.exists():
                done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=TOOLS, capture_output=True,
                                      text=True, timeout=600)
                assert done.returncode == 0 and MULTITOOL.exists(), f"npm ci in {TOOLS} failed:\n{done.stderr}"
    # The package's postinstall makes it executable; npm configured to run no install scripts skips that.
    MULTITOOL.chmod(MULTITOOL.stat().st_mode | stat.S_IXUSR)
    return MULTITOOL
