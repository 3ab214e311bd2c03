"""The probe loader: YAML files in, validated `Suite`s out, or every problem with its position.

    result = load_suites(["probes/"])          # LoadResult(suites, warnings)

Every file is checked even after one fails; `ProbeError` carries the diagnostics of all files
(errors, and the warnings found alongside them). A `.yaml`/`.yml` file whose top level is a
mapping without `suite:` is not a suite and is skipped silently (shared schemas, data), unless it
has a suite's own keys (`flows:`, `steps:`, `version:`): then it was meant as one (`suit:`) and is
an error. Any other file that cannot be read as such a mapping is reported too, except a list that a
suite reads as its scenario rows or tool definitions. Finding no suite at all is an error: a run that
checks nothing must not pass.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from litmus import files
from litmus.errors import Diagnostic, Position, ProbeError
from litmus.files import MAX_FILE_BYTES
from litmus.load.diagnostics import Collector, Span
from litmus.load.known_valid import known_valid
from litmus.load.source import SourceError, read_yaml
from litmus.load.suite import SuiteBuilder
from litmus.model import Suite
from litmus.text import count, did_you_mean
from litmus.trust import Trust

SUFFIXES = (".yaml", ".yml")
# Top-level keys only a probe suite has: a mapping with one of them but no `suite:` was meant as a suite.
SUITE_ONLY_KEYS = ("flows", "steps", "version")


@dataclass
class LoadResult:
    suites: list[Suite] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)


def repo_root(start: Path | None = None) -> Path:
    """The enclosing git work tree of `start` (default: the current directory), else `start` itself."""
    start = Path(start or Path.cwd()).resolve()
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return start


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """The YAML files under `paths` (directories searched recursively, hidden ones and symlinked
    ones skipped), sorted.

    A path given explicitly as a file is returned whatever its suffix. Only names are listed here:
    every file is resolved (`litmus.files`) before it is read. Raises ProbeError for paths
    that do not exist.
    """
    found: list[Path] = []
    missing = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            # os.walk does not descend into symlinked directories: a link to / is not searched.
            for directory, subdirs, names in os.walk(path):
                subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
                found.extend(Path(directory, name) for name in sorted(names) if name.endswith(SUFFIXES))
        elif path.exists() or path.is_symlink():
            found.append(path)
        else:
            missing.append(Diagnostic("error", "no such file or directory", Position(str(raw), 1, 1)))
    if missing:
        raise ProbeError(missing)
    return list(dict.fromkeys(found))


def load_suites(paths: list[str | Path], *, root: Path | None = None,
                environ: Mapping[str, str] = os.environ, strict_env: bool = True,
                run_vars: Mapping[str, object] | None = None, trust: Trust | None = None,
                named_anywhere: bool = False, fetch_file: Callable[[Path], None] | None = None) -> LoadResult:
    """Load and validate every suite under `paths`.

    `root` is the repository root (default `repo_root()`): referenced files must stay inside it,
    and `Suite.file` / positions are relative to it. With `strict_env` (litmus run) a missing
    `env.`/`secrets.` variable, or a `vars.` name not in `run_vars`, is an error; without
    (litmus validate) a warning. `trust` (default `Trust.local()`) says which names `env.`/`secrets.`
    may read; a name it refuses is an error in either mode. Every file found must resolve inside `root`;
    with `named_anywhere` (the command line: the operator's own paths) a file named in `paths` may lie
    outside it, and the files found in a directory named outside it stay inside that directory.
    `fetch_file`, when given, is called with the path of each file a suite names (joined to the suite's
    folder, not yet resolved) before it is resolved: loading from a partial copy of a repository (the
    comment commands' scratch folder), it brings the file in; it may raise FileRefused, reported like any
    file the resolver refuses.
    """
    root = Path(root).resolve() if root else repo_root()
    found = discover(paths)
    explicit = {Path(p) for p in paths if not Path(p).is_dir()}
    boundaries = _boundaries(paths, root, named_anywhere)
    collector = Collector()
    suites: list[Suite] = []
    names: dict[str, Suite] = {}
    # Files whose top level is a list: an error, unless a suite reads them as its data or tool definitions
    # (checked last).
    lists: dict[Path, Collector] = {}
    for path in found:
        display = _display(path, root)
        try:
            real = _resolve_probe_file(path, display, root, boundaries, named_anywhere and path in explicit)
        except files.FileRefused as exc:
            collector.error(Span(Position(display, 1, 1)), str(exc))
            continue
        target = collector
        if path not in explicit and _top_level_is_list(real):
            target = lists[real] = Collector()
        with _gc_paused():
            suite = _load_file(real, display, root, target, environ, strict_env, run_vars or {},
                               warn_if_not_suite=path in explicit, trust=trust, fetch_file=fetch_file)
        if suite is None:
            continue
        if suite.name in names:
            first = names[suite.name]
            collector.error(Span(suite.at("suite"), len(suite.name)),
                            f"duplicate suite name '{suite.name}' (also in {first.file}:{first.at('suite').line}); "
                            "suite names must be unique across the run")
            continue
        names[suite.name] = suite
        suites.append(suite)
    data_files = {c.scenarios_file for s in suites for c in s.contexts if c.scenarios_file}
    data_files |= {Path(path) for s in suites for path in s.tool_definitions}
    for path, diagnostics in lists.items():
        if path not in data_files:
            collector.diagnostics.extend(diagnostics.diagnostics)
    known_valid.save()
    if not suites and not collector.errors:
        where = ", ".join(str(p) for p in paths)
        what = (f"{count(len(found), 'YAML file')}, none with a top-level 'suite:'" if found
                else "no .yaml or .yml files")
        collector.error(Span(Position(_display(Path(paths[0]), root) if paths else ".", 1, 1)),
                        f"no probe suite found in {where} ({what}); nothing would be checked")
    if collector.errors:
        raise ProbeError(sorted(collector.diagnostics, key=_order))
    return LoadResult(suites, sorted(collector.warnings, key=_order))


def _boundaries(paths: Iterable[str | Path], root: Path, named_anywhere: bool) -> list[tuple[Path, Path]]:
    """(named directory, what its files must resolve inside): the root, or with `named_anywhere` the
    directory itself where it lies outside the root."""
    found = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            real = Path(os.path.realpath(path))
            found.append((path, real if named_anywhere and not real.is_relative_to(root) else root))
    return found


def _resolve_probe_file(path: Path, display: str, root: Path, boundaries: list[tuple[Path, Path]],
                        anywhere: bool) -> Path:
    if anywhere:
        return files.resolve_named(path, shown=display)
    inside = next((bound for named, bound in boundaries if path.is_relative_to(named)), root)
    return files.resolve_found(path, inside, shown=display)


def _top_level_is_list(path: Path) -> bool:
    """Whether a YAML file starts as a list (a scenarios file, perhaps), judged by its first
    meaningful line: cheap, and only deciding whether its errors wait for the suites to load."""
    try:
        with files.open_file(path, MAX_FILE_BYTES) as handle:
            for line in handle:
                text = line.strip()
                if text and not text.startswith((b"#", b"---", b"%")):
                    return text.startswith((b"- ", b"[")) or text == b"-"
    except (OSError, files.FileRefused):
        pass  # reading it as a suite reports why
    return False


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while one file loads.

    Loading builds large acyclic trees fast (YAML nodes, positioned Items, the model): the collector
    would traverse them again and again as they grow, for nothing to free (it made loading 1000
    steps 2.5 times slower). The file size is capped, so memory stays bounded; refcounting still frees.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _order(diagnostic: Diagnostic) -> tuple:
    return diagnostic.position.path, diagnostic.position.line, diagnostic.position.column


def _display(path: Path, root: Path) -> str:
    """`path` relative to the root, as found: a symlink is shown by its own name, not its target's."""
    where = Path(os.path.realpath(path.parent), path.name)
    try:
        return where.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _suite_typo(item) -> str:
    """` (is 'suit:' meant to be 'suite:'?)` for a top-level key close to 'suite', else ''."""
    for key in item.value:
        if isinstance(key, str) and did_you_mean(key, ["suite"]):
            return f" (is '{key}:' meant to be 'suite:'?)"
    return ""


def _load_file(path: Path, display: str, root: Path, collector: Collector, environ: Mapping[str, str],
               strict_env: bool, run_vars: Mapping[str, object], *, warn_if_not_suite: bool,
               trust: Trust | None, fetch_file: Callable[[Path], None] | None) -> Suite | None:
    """The suite in `path` (its real path, resolved), shown as `display`."""
    start = Span(Position(display, 1, 1))
    errors_before = collector.count_errors()
    try:
        item = read_yaml(path, display, collector)
    except SourceError as exc:
        collector.error(exc.span, exc.message)
        return None
    if item is None:
        collector.error(start, "the file is empty; a probe suite is a mapping with 'version: 1' and 'suite:'")
        return None
    if not isinstance(item.value, dict):
        kind = "a list" if isinstance(item.value, list) else "a single value"
        collector.error(item.span, f"the top level is {kind}; a probe suite is a mapping with 'version: 1' "
                                   "and 'suite:'")
        return None
    if "suite" not in item.value:
        meant = [key for key in item.value if key in SUITE_ONLY_KEYS]
        if meant:
            collector.error(item.keys[meant[0]].span,
                            f"looks like a probe suite but has no 'suite:' key (it has '{meant[0]}:')"
                            f"{_suite_typo(item)}; every probe suite is named by a top-level 'suite:'")
            return None
        if warn_if_not_suite:
            collector.warning(start, "not a probe suite (no top-level 'suite:'): skipped")
        return None
    suite = SuiteBuilder(item, display, path, root, collector, environ, strict_env, run_vars, trust,
                         fetch_file).build()
    return suite if collector.count_errors() == errors_before else None
