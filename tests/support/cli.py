"""`litmus` as a user runs it, for every test that starts it: `python -m litmus` with this interpreter, in
the one test environment `litmus_env` makes.

    done = litmus(project, "run", "--base-url", url, env={"JUDGE_KEY": KEY})  # run to its end (text output)
    proc = start_litmus(project, "run", ..., stdout=subprocess.PIPE)          # left running: signals, streaming

`env` adds or replaces variables of that environment, for this call only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# What litmus needs of the environment of the tests: the interpreter and its imports (PATH, PYTHONPATH,
# SYSTEMROOT), the locale, HOME (git's configuration) and the temporary and cache folders (conftest.py
# gives each test session its own cache). Nothing else passes: no GITHUB_*, RUNNER_*, INPUT_* or
# ACTIONS_* of a CI runner (litmus would act as the action), no LITMUS_* setting, no proxy or CA-bundle
# variable (a run would go through the proxy), no judge API key, and no variable a probe could read.
PASSED_THROUGH = ("PATH", "PYTHONPATH", "SYSTEMROOT", "LANG", "LC_ALL", "LC_CTYPE", "HOME", "TMPDIR",
                  "XDG_CACHE_HOME")


def litmus_env(**overrides: str) -> dict[str, str]:
    """The environment of every litmus the tests start: PASSED_THROUGH, plain output (NO_COLOR) that is
    written as it is printed (PYTHONUNBUFFERED: a test that stops a run reads what it printed so far),
    then `overrides`."""
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    env.update(NO_COLOR="1", PYTHONUNBUFFERED="1")
    env.update(overrides)
    return env


def litmus(cwd: Path, *argv: str, env: Mapping[str, str] | None = None, timeout: float = 120,
           input: str = "") -> subprocess.CompletedProcess[str]:
    """`litmus *argv` in `cwd`, run to its end (killed after `timeout` s), with its output as text; `input`
    is what it reads on stdin (nothing, by default)."""
    return subprocess.run([sys.executable, "-m", "litmus", *argv], cwd=cwd, env=litmus_env(**(env or {})),
                          capture_output=True, text=True, timeout=timeout, input=input)


def start_litmus(cwd: Path, *argv: str, env: Mapping[str, str] | None = None, **popen) -> subprocess.Popen:
    """`litmus *argv` in `cwd`, started and left running; `popen` are Popen's own arguments (stdout,
    stderr, text, ...). Its stdin is empty unless `popen` gives one (a pty, say)."""
    popen.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen([sys.executable, "-m", "litmus", *argv], cwd=cwd, env=litmus_env(**(env or {})),
                            **popen)


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
