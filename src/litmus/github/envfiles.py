"""The runner's environment files: step outputs (`GITHUB_OUTPUT`) and the job summary (`GITHUB_STEP_SUMMARY`).

Outputs are appended as `name=value`, or for multi-line values in the heredoc form the toolkit uses,
`name<<ghadelimiter_<uuid>` ... delimiter, with a fresh delimiter that occurs in neither name nor value.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path

from litmus.report.markdown_cut import fit

# GitHub refuses a step summary over 1 MiB (the upload fails with an error annotation).
SUMMARY_LIMIT_BYTES = 1024 * 1024


def format_output(name: str, value: str) -> str:
    if "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    delimiter = f"ghadelimiter_{uuid.uuid4()}"
    while delimiter in value or delimiter in name:  # a uuid4 collision: draw again
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def write_outputs(path: str | os.PathLike, outputs: Mapping[str, object]) -> None:
    text = "".join(format_output(name, "" if value is None else str(value)) for name, value in outputs.items())
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


def fit_summary(markdown: str, limit_bytes: int = SUMMARY_LIMIT_BYTES) -> str:
    """The summary within GitHub's limit, cut at a block boundary (`markdown_cut.fit`), saying where the rest is."""
    return fit(markdown, limit_bytes, measure=lambda text: len(text.encode("utf-8")),
               limit_text="GitHub's 1 MiB limit for a job summary",
               where="The whole report is in the uploaded report folder.")


def append_summary(path: str | os.PathLike, markdown: str) -> None:
    existing = Path(path).stat().st_size if Path(path).exists() else 0
    # The newline goes in before the cut, so that it is counted against the limit too.
    text = fit_summary(markdown if markdown.endswith("\n") else markdown + "\n", max(0, SUMMARY_LIMIT_BYTES - existing))
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
