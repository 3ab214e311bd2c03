"""`litmus` as a user runs it: a subprocess of this interpreter, with no LITMUS_* or GITHUB_* variable
of the machine running the tests leaking into it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def litmus(cwd: Path, *argv: str, env: dict[str, str] | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("LITMUS_", "GITHUB_"))}
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "litmus", *argv], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=timeout)


# One judged check on `GET /answer`: the suite the judge tests run against a fake judge.
JUDGED_SUITE = """\
version: 1
suite: Judged
flows:
  - name: ask
    steps:
      - name: one
        request: {url: /answer}
        assertions:
          - {type: llm_rubric, rubric: "Says when the order arrives"}
"""


def write_judge_config(project: Path, base_url: str, **settings: object) -> None:
    """litmus.yaml with an OpenAI-compatible judge at `base_url` (key in JUDGE_KEY), plus `settings`."""
    lines = ["judge:", "  provider: openai", "  model: judge-small", f"  base_url: {base_url}",
             "  api_key_env: JUDGE_KEY", *(f"  {key}: {value}" for key, value in settings.items())]
    (project / "litmus.yaml").write_text("\n".join(lines) + "\n")
