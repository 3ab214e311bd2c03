"""The one rule for every file that probe content makes Litmus read.

A pull request writes its probes, and every path in them: a probe file may be a symlink, a
`schema_file` may be `../../.git/config`, a `body_file` may be swapped for a FIFO after the suite
loaded. So every such file goes through here, once at load (`resolve`) and at every open
(`open_file` / `read_bytes`):

- the path is joined to its base directory and its symlinks resolved (realpath); the RESULT must be
  inside the repository root, and neither it nor the path as written may pass through a
  version-control folder (`.git`, also the `.git` file of a worktree, `.hg`, `.svn`, ...);
- it must be a regular file: checked with `stat` after resolving, and again with `fstat` on the
  descriptor, which is opened with O_NOFOLLOW (a symlink swapped in is refused) and O_NONBLOCK (a
  FIFO swapped in cannot hang the open);
- each caller passes its size cap; a file over it is refused before it is read, and no more than
  cap + 1 bytes are ever read (a file growing meanwhile is refused too).

Files Litmus writes inside the repository (accepted references) follow the same rule, stricter:
`writable` also refuses a symbolic link anywhere on the path, whatever it points at.

A refusal is `FileRefused`, whose message names the path as written and a short reason, never the
file's content; loaders turn it into an error at the field that named the file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

# The cap on a file probe content makes Litmus read whole (probe files, data, schemas, python checks).
MAX_FILE_BYTES = 2 * 1024 * 1024

# Version-control metadata: credentials live there (a checkout's persisted token in .git/config),
# so no file is ever read from it, whatever the field.
VCS_DIRECTORIES = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", "CVS"})

# Files a request streams (`body_file`, multipart parts): sent, never held in memory, so larger than a document.
MAX_REQUEST_FILE_BYTES = 256 * 1024 * 1024

_NOT_FOUND = "does not exist"
_MIB = 1024 * 1024
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


class FileRefused(OSError):
    """A file the resolver will not read: `'<path as written>' <reason>`. An OSError, as the failure
    to read a file that it is: code sending a request already turns those into the step's error."""

    def __init__(self, written: str | Path, reason: str) -> None:
        super().__init__(f"{'file ' if reason == _NOT_FOUND else ''}'{written}' {reason}")
        self.written = str(written)
        self.reason = reason


def resolve(written: str, base_dir: Path, root: Path) -> Path:
    """The real path of the regular file `written` names, relative to `base_dir`, inside `root`.

    For paths probe content writes (schema_file, body_file, scenarios_file, python checks, ...):
    they must be relative. Raises FileRefused.
    """
    if not written:
        raise FileRefused(written, "is empty: a file path is needed")
    if os.path.isabs(written) or (len(written) > 2 and written[1] == ":" and written[2] in "\\/"):
        raise FileRefused(written, "must be a path relative to the suite file, not an absolute path")
    return _resolve_inside(written, Path(base_dir) / written, root)


def resolve_found(path: Path, root: Path, *, shown: str | None = None) -> Path:
    """The real path of `path` (a probe file found in a directory, or named where only files inside
    `root` may be read, as in the action), which must be inside `root`. Raises FileRefused."""
    return _resolve_inside(shown or str(path), Path(os.path.abspath(path)), root)


def resolve_named(path: Path, *, shown: str | None = None) -> Path:
    """The real path of a file the operator named on the command line, wherever it is: still a
    regular file, and never inside version-control metadata. Raises FileRefused."""
    written = shown or str(path)
    target = Path(os.path.realpath(path))
    _refuse_vcs(written, Path(os.path.abspath(path)).parts + target.parts)
    _check_regular(written, target)
    return target


def writable(path: Path, root: Path, *, shown: str, new: bool) -> Path:
    """`path` (absolute), a file Litmus is to write inside `root` (accepted references): the real path the
    resolver would give, which must also be the path as named, so that nothing is written through a symbolic
    link, wherever it points (a pull request can commit `probes/references` as one); never in version-control
    metadata; a regular file, or, when `new`, no file yet. Raises FileRefused."""
    named = Path(os.path.normpath(os.path.abspath(path)))
    real = Path(os.path.realpath(path))
    real_root = Path(os.path.realpath(root))
    if not real.is_relative_to(real_root):
        raise FileRefused(shown, f"resolves outside the repository root ({root})")
    relative = real.relative_to(real_root)
    if Path(os.path.relpath(named, os.path.abspath(root))) != relative:
        raise FileRefused(shown, "has a symbolic link on its path: Litmus writes no file through a link")
    _refuse_vcs(shown, relative.parts)
    if new:
        if os.path.lexists(real):
            raise FileRefused(shown, "already exists")
        return real
    _check_regular(shown, real)
    return real


def open_file(path: Path, cap: int, *, shown: str | None = None, what: str = "files") -> BinaryIO:
    """`path`, a real path `resolve*` returned, opened for reading, checked again on the descriptor.

    Used at every read, also of a path resolved long before (a request's `body_file`): a symlink
    placed anywhere on the path since, a FIFO, a device or a file over `cap` is refused.
    """
    written = shown or str(path)
    if os.path.realpath(path) != os.path.abspath(path):
        raise FileRefused(written, "has changed since it was resolved: a symbolic link is now on its path")
    _check_regular(written, path)  # so that opening a device swapped in has no effect either
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused(written, "has changed since it was resolved: it is now a symbolic link") from None
        raise FileRefused(written, _os_reason(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(written, f"is not a regular file ({_kind(info.st_mode)})")
        if info.st_size > cap:
            raise FileRefused(written, _over_cap(info.st_size, cap, what))
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
        handle.raw.name = str(path)  # named like open(path) would name it (requests and reports read it)
        return handle
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path, cap: int, *, shown: str | None = None, what: str = "files") -> bytes:
    """The bytes of `path` (a real path `resolve*` returned): at most `cap`, or FileRefused."""
    with open_file(path, cap, shown=shown, what=what) as handle:
        try:
            data = handle.read(cap + 1)
        except OSError as exc:
            raise FileRefused(shown or str(path), _os_reason(exc)) from None
    if len(data) > cap:  # it grew after fstat
        raise FileRefused(shown or str(path), _over_cap(None, cap, what))
    return data


def _resolve_inside(written: str, joined: Path, root: Path) -> Path:
    target = Path(os.path.realpath(joined))
    real_root = Path(os.path.realpath(root))
    if not target.is_relative_to(real_root):
        raise FileRefused(written, f"resolves outside the repository root ({root})")
    # Both the path as written and where it leads: `link/config` with link -> .git is refused like `.git/config`.
    as_written = Path(os.path.relpath(os.path.normpath(joined), real_root)).parts
    _refuse_vcs(written, target.relative_to(real_root).parts + as_written)
    _check_regular(written, target)
    return target


def _refuse_vcs(written: str, parts: tuple[str, ...]) -> None:
    vcs = next((part for part in parts if part in VCS_DIRECTORIES), None)
    if vcs:
        raise FileRefused(written, f"is inside {vcs}/: version-control metadata (credentials, history) is never read")


def _check_regular(written: str, target: Path) -> None:
    try:
        info = os.stat(target)
    except OSError as exc:
        raise FileRefused(written, _os_reason(exc)) from None
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(written, f"is not a regular file ({_kind(info.st_mode)})")


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a file")


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return _NOT_FOUND
    return f"cannot be read: {exc.strerror or exc}"


def _over_cap(size: int | None, cap: int, what: str) -> str:
    limit = f"{cap / _MIB:g} MiB" if cap >= _MIB // 16 else f"{cap} bytes"
    grown = f"is {size / _MIB:.1f} MiB" if size is not None else "grew while it was read"
    return f"{grown}; {what} are limited to {limit}"
