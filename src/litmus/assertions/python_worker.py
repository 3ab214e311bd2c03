"""The process `python` checks run in, and the handle a run keeps on it.

A check is code from the repository; it must not run inside Litmus (where it could patch the runner,
`os._exit(0)` with no results, or read the action's credentials) nor with Litmus's rights. So each run
has one worker process, started on its first python check and reused: it gets JSON (the check's source
the first time, then the response excerpt, context and args of each call) and answers JSON. Its
confinement, applied by the worker itself before it reads the first check:

- an environment built from an allowlist (PATH, LANG, TZ, the run's `env-allow` names; HOME and TMPDIR
  a private temp dir, its working directory too), no inherited file descriptors, its own session;
- when Litmus runs as root: every group dropped and the uid/gid of `nobody` (65534 when there is none);
- no-new-privs and not dumpable;
- where the kernel has Landlock: reads only under the Python installation, /usr, /lib*, /bin, /sbin and
  /etc, writes only in its temp dir (and /dev/null), no signals to processes outside it.

Calls are serialised: one process keeps start-up paid once and the loaded modules shared, a call costs
well under a millisecond (bench/python_worker.py), and a slow check holds the others up for at most its
step's deadline, after which it is killed and the next call starts a new worker.

This file is also the worker's program (`python -I python_worker.py UID GID`): its imports are the
standard library's, so the worker needs nothing from Litmus.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import os
import pwd
import struct
import sys
import traceback
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from litmus.deadline import Deadline

# The worker's first answer comes within this, whatever the step's deadline (start-up is not the check's).
STARTUP_TIMEOUT_S = 30.0
# A request or an answer is one line of JSON; an answer longer than this is refused (and the worker killed
# when it writes one itself), so a check cannot fill Litmus's memory.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
# Environment variables the worker inherits besides the run's env-allow names.
ENVIRONMENT_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "TZ")
# Linux's overflow id: the unprivileged identity when the system has no `nobody`.
OVERFLOW_ID = 65534


class WorkerGone(Exception):
    """The worker ended or overran during a call (it is replaced on the next call)."""


class PythonWorker:
    """One run's worker process: started on the first `call`, reused, killed on `close`."""

    def __init__(self, environ, env_allow=()) -> None:
        import threading  # lazy: the worker's program imports this file; its start-up counts against a check

        from litmus.trust import never_resolves  # lazy: this file is also the worker's program (stdlib only)

        names = [*ENVIRONMENT_ALLOWLIST, *(n for n in sorted(env_allow) if not never_resolves(n))]
        self._environment = {name: environ[name] for name in names if name in environ}
        self._lock = threading.Lock()
        self._process = None
        self._buffer = b""
        self._home: str | None = None
        # (path, sha256) of the sources the current process has loaded: sent once per process.
        self._loaded: set[tuple[str, str]] = set()
        self._calls = 0
        self._closed = False

    def call(self, request: dict, source: bytes, deadline: Deadline) -> dict:
        """The worker's answer to one check call (see `_answer`), or WorkerGone; waiting for another
        check's call counts against `deadline`."""
        import hashlib  # lazy: the worker's program imports this file; its start-up counts against a check

        if not self._lock.acquire(timeout=max(deadline.remaining(), 0)):
            raise WorkerGone("waited for the worker until the step's deadline (another python check held it)")
        try:
            if self._closed:
                raise WorkerGone("was not run: the run has ended")
            if self._process is None:
                left = deadline.remaining()
                self._start()
                # Starting the worker (tens of ms, more on a busy machine) is not the check's own time.
                deadline = type(deadline)(deadline.at + left - deadline.remaining())
            key = (request["path"], hashlib.sha256(source).hexdigest())
            self._calls += 1
            message = {**request, "id": self._calls, "key": list(key),
                       "source": None if key in self._loaded else source.decode("latin-1")}
            self._send(json.dumps(message, default=str, separators=(",", ":")).encode() + b"\n")
            overran = f"did not return within the step's deadline ({deadline.remaining() * 1000:.0f} ms)"
            answer = self._receive(self._calls, deadline, overran)
            if answer["kind"] not in ("unloadable", "load_raised"):
                self._loaded.add(key)
            return answer
        except WorkerGone:
            self._stop()
            raise
        finally:
            self._lock.release()

    def close(self) -> None:
        """Kill the worker and remove its temp dir; a call in progress ends as WorkerGone."""
        import shutil  # lazy: the worker's program imports this file; its start-up counts against a check

        self._closed = True
        self._stop()
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)
            self._home = None

    def _start(self) -> None:
        import subprocess  # lazy: the worker's program imports this file; its start-up counts against a check
        import tempfile  # lazy: the worker's program imports this file; its start-up counts against a check

        if self._home is None:
            self._home = tempfile.mkdtemp(prefix="litmus-python-")
        uid, gid = unprivileged_ids() if os.geteuid() == 0 else (os.getuid(), os.getgid())
        os.chown(self._home, uid, gid)
        environment = {**self._environment, "HOME": self._home, "TMPDIR": self._home}
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-B", os.path.abspath(__file__), str(uid), str(gid)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=self._home,
            env=environment, close_fds=True, start_new_session=True)
        self._buffer = b""
        from litmus.deadline import Deadline  # lazy: this file is also the worker's program (stdlib only)

        self._receive(0, Deadline.after(STARTUP_TIMEOUT_S), "was not run: its worker process did not start")

    def _send(self, line: bytes) -> None:
        try:
            self._process.stdin.write(line)
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerGone(self._ended()) from None

    def _receive(self, call_id: int, deadline: Deadline, overran: str) -> dict:
        """The answer line to call `call_id`; lines with another id (written by a check itself) are skipped."""
        import select  # lazy: the worker's program imports this file; its start-up counts against a check

        stdout = self._process.stdout.fileno()
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > MAX_ANSWER_BYTES:
                    raise WorkerGone(f"wrote an answer of over {MAX_ANSWER_BYTES} bytes to the worker's pipe")
                remaining = deadline.remaining()
                if remaining <= 0 or not select.select([stdout], [], [], remaining)[0]:
                    raise WorkerGone(overran)
                chunk = os.read(stdout, 1 << 16)
                if not chunk:
                    raise WorkerGone(self._ended())
                self._buffer += chunk
                continue
            line, self._buffer = self._buffer[:end], self._buffer[end + 1:]
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if isinstance(answer, dict) and answer.get("id") == call_id:
                return answer

    def _ended(self) -> str:
        try:
            status = self._process.wait(timeout=1)
        except Exception:  # noqa: BLE001 - still running after closing its pipe: it is killed next
            return "made its worker process stop reading"
        return f"ended its worker process (exit status {status})"

    def _stop(self) -> None:
        """Kill the worker's whole session (a check may have started processes of its own)."""
        import signal  # lazy: the worker's program imports this file; its start-up counts against a check
        import subprocess  # lazy: the worker's program imports this file; its start-up counts against a check

        process, self._process = self._process, None
        self._loaded = set()
        if process is None:
            return
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)


def unprivileged_ids() -> tuple[int, int]:
    """The uid and gid a root Litmus runs checks as: `nobody`'s, else the overflow id."""
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return OVERFLOW_ID, OVERFLOW_ID
    return entry.pw_uid, entry.pw_gid


# ---- the worker's side: everything below runs in the worker process


def contract_problem(value, depth: int = 0) -> str | None:
    """What makes a check's return value not plain JSON (None when it is): the type, a NaN or infinite float,
    an int past Python's int-to-string limit, a non-string key."""
    if value is None or isinstance(value, (bool, str)):
        return None
    if isinstance(value, int):
        try:
            str(value)
        except ValueError:
            return f"an int of more than {sys.get_int_max_str_digits()} digits"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"float {value!r}"
    if depth > 100:
        return "a value nested more than 100 levels deep"
    if isinstance(value, (list, tuple)):
        return next(filter(None, (contract_problem(item, depth + 1) for item in value)), None)
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"a dict key of type {type(key).__name__}"
            problem = contract_problem(item, depth + 1)
            if problem:
                return problem
        return None
    return type(value).__name__


class _Headers(dict):
    """Response headers, looked up case-insensitively as `requests` does."""

    def __init__(self, pairs) -> None:
        super().__init__(pairs)
        self._lower = {k.lower(): v for k, v in pairs}

    def __getitem__(self, name):
        return self._lower[name.lower()]

    def get(self, name, default=None):
        return self._lower.get(name.lower(), default)

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and name.lower() in self._lower


class CheckResponse:
    """What the function sees of the response: `status`, `headers`, `text`, `body`, `json()`, `elapsed_ms`."""

    def __init__(self, excerpt: dict) -> None:
        self.status = excerpt["status"]
        self.headers = _Headers(excerpt["headers"])
        self.body = excerpt["body"].encode("latin-1")
        self.elapsed_ms = excerpt["elapsed_ms"]
        self._encoding = excerpt["encoding"]
        self._truncated = excerpt["truncated"]

    @property
    def text(self) -> str:
        return self.body.decode(self._encoding, errors="replace")

    def json(self):
        if self._truncated:
            raise ValueError("body is not JSON (cut at the size cap)")
        return json.loads(self.body)


class CheckContext:
    """What the function sees of the flow run: `variables`, `scenario` (or None), `run_index`."""

    def __init__(self, context: dict) -> None:
        self.variables = context["variables"]
        self.scenario = context["scenario"]
        self.run_index = context["run_index"]


def _answer(request: dict, modules: dict) -> dict:
    """Load (once) and call the check; the answer says what happened:
    `unloadable` (no such function, invalid Python), `load_raised`, `raised` (with `at`, the line in the
    check's file), `invalid` (a return value that is not plain JSON) or `returned` (`value`, `type`)."""
    key = tuple(request["key"])
    path, name = request["path"], request["function"]
    module = modules.get(key)
    if module is None:
        module = types.ModuleType(f"litmus_probe_check_{key[1][:16]}")
        module.__file__ = path
        try:
            code = compile(request["source"].encode("latin-1"), path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            return {"kind": "unloadable", "error": f"{type(exc).__name__}: {exc}"}
        sys.modules[module.__name__] = module  # what dataclasses and pickling look a module up by
        try:
            exec(code, module.__dict__)  # noqa: S102 - the suite's own check, run as the docs say
        except BaseException as exc:  # noqa: BLE001 - SystemExit at import is the check's error too
            return {"kind": "load_raised", "error": _last_line(exc)}
        modules[key] = module
    function = getattr(module, name, None)
    if not callable(function):
        return {"kind": "unloadable", "error": f"LookupError: the file defines no function {name}"}
    code = getattr(function, "__code__", None)
    line = code.co_firstlineno if code else 1
    try:
        result = function(CheckResponse(request["response"]), CheckContext(request["context"]), **request["args"])
    except BaseException as exc:  # noqa: BLE001 - SystemExit from user code is an error outcome too
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        return {"kind": "raised", "line": line, "error": _last_line(exc), "at": frames[-1].lineno if frames else None}
    try:
        problem = contract_problem(result)
    except RecursionError:
        problem = "a value nested too deeply (or containing itself)"
    if problem:
        return {"kind": "invalid", "line": line, "problem": problem}
    shape = type(result).__name__ if not isinstance(result, (bool, str, list, type(None))) else None
    return {"kind": "returned", "line": line, "value": result, "type": shape}


def _last_line(exc: BaseException) -> str:
    lines = traceback.format_exception_only(type(exc), exc)
    return lines[-1].strip() if lines else type(exc).__name__


def _confine(uid: int, gid: int, home: str) -> None:
    """Drop to `uid`/`gid` (when they differ from ours), set no-new-privs and not dumpable, then restrict
    the filesystem with Landlock where the kernel has it. Directories of sys.path that `uid` cannot reach
    (an interpreter under /root, as pyenv installs it) stay importable through a directory descriptor
    opened before the drop."""
    libc = ctypes.CDLL(None, use_errno=True)
    readable = [p for p in dict.fromkeys([*sys.path, sys.prefix, sys.base_prefix, sys.exec_prefix,
                                          "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc"])
                if p and os.path.isdir(p)]
    kept = {path: os.open(path, os.O_RDONLY | os.O_DIRECTORY) for path in readable}
    if (uid, gid) != (os.getuid(), os.getgid()):
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE: 0
    _landlock(libc, kept, home)
    moved = {}
    for index, entry in enumerate(sys.path):
        if entry in kept and not os.access(entry, os.R_OK | os.X_OK):
            moved[entry] = sys.path[index] = f"/proc/self/fd/{kept.pop(entry)}"
    for module in list(sys.modules.values()):  # packages imported already (encodings) find submodules there too
        search = getattr(module, "__path__", None)
        if isinstance(search, list):
            search[:] = [next((fd + p[len(old):] for old, fd in moved.items() if p.startswith(old + "/")), p)
                         for p in search]
    sys.path_importer_cache.clear()
    for fd in kept.values():
        os.close(fd)


def _landlock(libc, readable: dict[str, int], home: str) -> None:
    """Reads beneath `readable` only, writes beneath `home` only, no signals out: a no-op without Landlock.
    (Syscalls 444-446 on every architecture; rights and sizes as in linux/landlock.h.)"""
    abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        return
    read = 1 | 4 | 8  # EXECUTE, READ_FILE, READ_DIR
    handled = (1 << 13) - 1 | (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0) \
        | (1 << 15 if abi >= 5 else 0)
    file_rights = 1 | 2 | 4 | (1 << 14 if abi >= 3 else 0)  # EXECUTE, WRITE_FILE, READ_FILE, TRUNCATE
    scoped = 1 | 2 if abi >= 6 else 0  # abstract unix sockets, signals
    attr = struct.pack("=QQQ", handled, 0, scoped) if scoped else struct.pack("=Q", handled)
    ruleset = libc.syscall(444, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return

    def allow(fd: int, rights: int) -> None:
        rule = struct.pack("=Qi", rights, fd)
        libc.syscall(445, ruleset, 1, ctypes.c_char_p(rule), ctypes.c_uint32(0))  # PATH_BENEATH

    for fd in readable.values():
        allow(fd, read)
    home_fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
    allow(home_fd, handled)
    os.close(home_fd)
    for device, rights in (("/dev/null", 2 | 4), ("/dev/urandom", 4), ("/dev/random", 4)):
        try:
            fd = os.open(device, os.O_RDONLY)
        except OSError:
            continue
        allow(fd, rights & file_rights)
        os.close(fd)
    libc.syscall(446, ruleset, ctypes.c_uint32(0))
    os.close(ruleset)


def serve(uid: int, gid: int) -> None:
    """Answer requests on stdin, one JSON line each, until it closes. What a check prints goes nowhere."""
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    _confine(uid, gid, os.getcwd())
    answers.write(b'{"id":0}\n')
    answers.flush()
    modules: dict = {}
    for line in requests:
        request = json.loads(line)
        answer = _answer(request, modules)
        answer["id"] = request["id"]
        encoded = json.dumps(answer, allow_nan=False, separators=(",", ":")).encode()
        if len(encoded) > MAX_ANSWER_BYTES:
            encoded = json.dumps({"id": request["id"], "kind": "invalid", "line": answer.get("line"),
                                  "problem": f"a value of {len(encoded)} bytes as JSON (over "
                                             f"{MAX_ANSWER_BYTES})"}).encode()
        answers.write(encoded + b"\n")
        answers.flush()


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]))
