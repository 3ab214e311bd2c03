"""Reports rendered from a results document: one module per format, one registry.

Every reporter is a pure function `render(result: RunResult, **options) -> str` reading only the
`RunResult` (`litmus.results`); `write_reports` is the one place that writes files. `litmus run`
and `litmus report results.json` both call it, so any past run renders exactly as it did.
Options (see `litmus.report.options.Options`): repository, server_url, sha (links to probe
lines), sarif_category, artifact_url (linked when findings are cut for size).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from litmus.results import OutputError, RunResult, write_bytes_atomic


@dataclass(frozen=True)
class Format:
    module: str
    filename: str
    description: str


# format name -> reporter. Adding a format = one module + one line here.
FORMATS: dict[str, Format] = {
    "sarif": Format("litmus.report.sarif", "litmus.sarif", "SARIF 2.1.0 for GitHub code scanning"),
    "junit": Format("litmus.report.junit", "junit.xml", "JUnit XML for test reporters"),
    "markdown": Format("litmus.report.markdown", "comment.md", "the sticky PR comment (65,536 characters at most)"),
    "html": Format("litmus.report.html", "report.html", "a self-contained HTML report: findings first, filters, plots"),
    "summary": Format("litmus.report.summary", "summary.md", "the job summary for $GITHUB_STEP_SUMMARY (1 MiB)"),
}


class UnknownFormat(ValueError):
    pass


def check_formats(formats: list[str] | None) -> list[str]:
    chosen = list(FORMATS) if formats is None else formats
    unknown = [name for name in chosen if name not in FORMATS]
    if unknown:
        raise UnknownFormat(f"unknown report format {', '.join(map(repr, unknown))}: choose from {', '.join(FORMATS)}")
    return chosen


def render(name: str, result: RunResult, **options) -> str:
    return importlib.import_module(FORMATS[check_formats([name])[0]].module).render(result, **options)


def write_reports(result: RunResult, out_dir: Path, formats: list[str] | None = None, **options) -> dict[str, Path]:
    """Render each format (default: all) into out_dir; returns format name -> file written.

    Each file is written atomically, never through a symlink planted in out_dir (`write_text_atomic`).
    A file that cannot be written does not stop the others: OutputError, raised after all were tried,
    names every one that failed.
    """
    chosen = check_formats(formats)
    # Render all before writing any; each kept as UTF-8, half the size of a text with a character past
    # U+00FF (which Python holds at two bytes a character), while the next one renders.
    texts = {name: render(name, result, **options).encode("utf-8") for name in chosen}
    out_dir = Path(out_dir)
    paths, failures = {}, []
    for name, data in texts.items():
        path = out_dir / FORMATS[name].filename
        try:
            write_bytes_atomic(path, data)
        except OSError as exc:
            failures.append(f"{path}: {exc.strerror or exc}")
            continue
        paths[name] = path
    if failures:
        raise OutputError("could not write " + "; ".join(failures), paths)
    return paths
