"""An OpenAPI 3.0 / 3.1 description: the suite key `openapi:` and `litmus init --from-openapi` read it.

Loading parses the file (JSON, or YAML with libyaml) and nothing more: no validation of the whole spec
(`litmus validate` does that), no compile; each operation's checks are compiled when first used. A
pull request writes the spec and every file its `$ref`s name, so each file is read only through the one
resolver (`litmus.files`), and a `$ref` is followed only as a fragment (`#/components/...`) or a relative
file path inside the repository: a `file:`, `http(s):` or absolute reference is an error, never fetched.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from litmus import files

# The cap on a spec file and each file its `$ref`s name: real descriptions are large (GitHub's is 13 MB).
MAX_SPEC_BYTES = 64 * 1024 * 1024
# The mappings and lists a YAML spec may expand to, counting each use of an alias again: GitHub's 13 MB description
# has 90,570, so this is room for any real spec and none for a billion laughs.
MAX_EXPANDED_CONTAINERS = 1_000_000
# The operations of a path item, in the order OpenAPI lists them.
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# A `$ref` to another document, as it can be written in JSON or YAML: when a file has none, loading it
# reads no other file and walks nothing (walking GitHub's spec costs a third of a second).
_OTHER_FILE_REF = re.compile(rb"""\$ref['"]?\s*:\s*['"]?(?!['"]?#)""")


# Descriptions loaded in this process, by (repository, path): the suites that name one spec share it (GitHub's
# takes ~0.6 s to load, and its compiled validators are kept on it) while none of its files changed: on every
# hit each is resolved again by the one rule and compared by inode, size and modification time.
_LOADED: dict[tuple[Path, str], tuple[tuple, OpenAPIDocument]] = {}
_LOADED_MAX = 8


class SpecError(ValueError):
    """The spec, or a file its `$ref`s name, cannot be used: the message names the file and why."""


class _SpecLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """libyaml's safe loader, keeping dates as the text they read as (`example: 2026-12-03` is a string, as in
    JSON, so a response's "2026-12-03" matches it)."""


_SpecLoader.add_constructor("tag:yaml.org,2002:timestamp", _SpecLoader.construct_yaml_str)


@dataclass(frozen=True, slots=True)
class Located:
    """A node of a spec document, where it is: `file` repository-relative, `pointer` a JSON pointer."""

    node: Any
    file: str
    pointer: str


@dataclass(frozen=True, slots=True)
class Operation:
    method: str  # upper case: "GET"
    path: str  # the path template as the spec writes it: "/orders/{id}"
    operation: dict
    path_item: dict
    file: str = ""  # where the operation object is (a path item may be a `$ref` to another file)
    pointer: str = ""

    @property
    def key(self) -> str:
        """"GET /orders/{id}": how coverage and messages name the operation."""
        return f"{self.method} {self.path}"


class OpenAPIDocument:
    """A loaded spec: `path` repository-relative, `version` "3.0" or "3.1", `root` the parsed document."""

    def __init__(self, path: str, version: str, root: dict, repository: Path,
                 fetch_file: Callable[[Path], None] | None = None) -> None:
        self.path = path
        self.version = version
        self.root = root
        self.repository = repository
        # Brings a file a `$ref` names into a partial copy of the repository before it is resolved (see
        # `load_suites(fetch_file=)`); None reads the repository as it is.
        self.fetch_file = fetch_file
        # Every document read, by repository-relative path: the spec and the files its `$ref`s name.
        self.documents: dict[str, Any] = {path: root}
        # Validators compiled from its schemas (litmus.assertions._openapi), by (file, pointer, direction).
        self.validators: dict[tuple[str, str, str], Any] = {}
        # Held while a validator is built: flow runs check from several threads, and a schema being inlined is
        # shared (in `inlined`) before it is complete.
        self.compiling = threading.Lock()
        # Schemas with their `$ref`s inlined (litmus.assertions._openapi), by the (file, pointer) they are at.
        self.inlined: dict[tuple[str, str], Any] = {}
        self._operations: list[Operation] | None = None
        self._by_key: dict[tuple[str, str], Operation] = {}
        self._templates: dict[int, list[tuple[re.Pattern, int, str]]] | None = None

    # -- $refs ---------------------------------------------------------------------------------------

    def resolve(self, node: Any, file: str | None = None) -> Any:
        """`node` with its `$ref` chain followed (`file`: the document it is in, default the spec)."""
        return self.locate(node, file or self.path).node

    def locate(self, node: Any, file: str, pointer: str = "") -> Located:
        """`node` (found in `file` at `pointer`) or, when it is a `$ref`, the node its chain ends at, and where.
        SpecError for a reference that cannot be followed, or a chain that comes back to itself."""
        seen = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            file, pointer = self.target(node["$ref"], file)
            if (file, pointer) in seen:
                raise SpecError(f"{file}: $ref cycle at '#{pointer}'")
            seen.add((file, pointer))
            node = self.at_pointer(file, pointer)
        return Located(node, file, pointer)

    def target(self, ref: str, file: str) -> tuple[str, str]:
        """`(file, pointer)` that `ref`, written in `file`, names; SpecError unless it is a fragment or a
        relative file reference (no scheme, host or absolute path: nothing is fetched)."""
        parts = urlsplit(ref)
        if parts.scheme or parts.netloc or parts.query or parts.path.startswith("/"):
            raise SpecError(f"{file}: $ref '{ref}' is not a relative file reference: only files inside the "
                            "repository are read (no URLs, no absolute paths)")
        if parts.path:
            file = str(PurePosixPath(file).parent / unquote(parts.path))
            file = _normal(file)
        return file, unquote(parts.fragment)

    def at_pointer(self, file: str, pointer: str) -> Any:
        """The node at JSON pointer `pointer` of document `file` (read through the resolver when first named)."""
        node = self.document(file)
        if pointer in ("", "/"):
            return node
        if not pointer.startswith("/"):
            raise SpecError(f"{file}: '#{pointer}' is not a JSON pointer (it must start with '/')")
        for token in pointer[1:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise SpecError(f"{file}: $ref target '#{pointer}' does not exist")
        return node

    def document(self, file: str) -> Any:
        """The parsed document `file` (repository-relative), read through the one resolver once."""
        if file not in self.documents:
            if self.fetch_file is not None:
                try:
                    self.fetch_file(self.repository / file)
                except files.FileRefused as exc:
                    raise SpecError(str(exc)) from None
            self.documents[file] = _read(file, self.repository)[0]
        return self.documents[file]

    def uri(self, file: str) -> str:
        """The URI document `file` has for a JSON Schema registry (`$ref`s resolve relative to it)."""
        return (self.repository / file).as_uri()

    def file_of_uri(self, uri: str) -> str:
        """The repository-relative file of a URI `uri()` gave; SpecError for any other URI."""
        parts = urlsplit(uri)
        prefix = self.repository.as_uri() + "/"
        if parts.scheme != "file" or parts.query or not uri.startswith(prefix):
            raise SpecError(f"{self.path}: $ref '{uri}' is not a file inside the repository")
        return _normal(unquote(uri[len(prefix):].split("#", 1)[0]))

    def read_referenced_files(self) -> None:
        """Reads every document the spec's `$ref`s name, and theirs, through the resolver now (so that a file it
        refuses is an error at load); SpecError names the first one that cannot be read."""
        pending = [self.path]
        done = set()
        while pending:
            file = pending.pop()
            if file in done:
                continue
            done.add(file)
            for ref in _refs(self.document(file)):
                target, _ = self.target(ref, file)
                if target != file:
                    pending.append(target)

    # -- operations and servers ---------------------------------------------------------------------

    def operations(self) -> list[Operation]:
        """Every operation, in the order the spec writes them."""
        if self._operations is None:
            found = []
            paths = self.root.get("paths") or {}
            for template, item in paths.items() if isinstance(paths, dict) else ():
                where = self.locate(item, self.path, "/paths/" + escape_pointer(template))
                if not isinstance(where.node, dict):
                    continue
                for method in where.node:
                    if method in HTTP_METHODS and isinstance(where.node[method], dict):
                        found.append(Operation(method.upper(), template, where.node[method], where.node,
                                               where.file, f"{where.pointer}/{method}"))
            self._operations = found
        return self._operations

    def base_paths(self) -> list[str]:
        """The base paths of the spec's `servers` ("/v2"; "" for the root), each server variable expanded to
        its `enum` values (else its `default`), longest first. No servers means the root, as OpenAPI says."""
        servers = self.root.get("servers")
        found = set()
        for server in servers if isinstance(servers, list) and servers else [{"url": "/"}]:
            if isinstance(server, dict) and isinstance(server.get("url"), str):
                found.update(_expanded_paths(server["url"], server.get("variables")))
        return sorted(found, key=lambda p: (-len(p), p))

    def find(self, method: str, path: str) -> tuple[Operation | None, str]:
        """The operation a request `method` `path` (the URL's path) matches, else None and why, in words.
        The longest base path that prefixes `path` is removed; a concrete path template wins over one with
        parameters (OpenAPI's rule), then the one with fewer parameters, then spec order."""
        method = method.upper()
        relative, why = self._relative(path)
        if relative is None:
            return None, why
        candidates = self._candidates(relative)
        if not candidates:
            return None, f"no path of the spec matches '{relative}' ({method} {path})"
        # The path decides first: a request to the concrete `/pet/findByStatus` is never `/pet/{petId}`'s.
        best = [template for parameters, template in candidates if parameters == candidates[0][0]]
        for template in best:
            if (method, template) in self._by_key:
                return self._by_key[method, template], ""
        declared = [op.method for op in self.operations() if op.path == best[0]]
        return None, f"method {method} is not declared for path '{best[0]}' (declared: {', '.join(declared)})"

    def exercised_by(self, method: str, path: str) -> list[Operation]:
        """The operations a request `method` `path` exercises, for coverage: the concrete path's when one matches
        (OpenAPI's rule), else every templated path's that matches. GitHub's `/compare/{basehead}` and
        `/compare/{base}...{head}` both match `/compare/main...topic`: the request exercises both, whichever
        `find` gives an `openapi` check."""
        method = method.upper()
        relative, _ = self._relative(path)
        if relative is None:
            return []
        candidates = self._candidates(relative)
        if candidates and candidates[0][0] == 0:
            candidates = candidates[:1]
        return [self._by_key[method, template] for _, template in candidates if (method, template) in self._by_key]

    def _relative(self, path: str) -> tuple[str | None, str]:
        """`path` with the longest server base path that prefixes it removed, else None and why."""
        for base in self.base_paths():
            if path == base or path.startswith(base + "/") or base == "":
                return path[len(base):] or "/", ""
        listed = ", ".join(repr(b or "/") for b in self.base_paths())
        return None, f"path '{path}' is under none of the spec's server base paths ({listed})"

    def _candidates(self, relative: str) -> list[tuple[int, str]]:
        """(number of parameters, template) of each path template `relative` matches, most concrete first."""
        return [(parameters, template) for pattern, parameters, template in self._compiled().get(
            relative.count("/"), ()) if pattern.fullmatch(relative)]

    def _compiled(self) -> dict[int, list[tuple[re.Pattern, int, str]]]:
        """The path templates as patterns, by their number of `/` (a parameter never spans one), most
        concrete first, then in spec order."""
        if self._templates is None:
            compiled = []
            for order, template in enumerate(dict.fromkeys(op.path for op in self.operations())):
                pieces = re.split(r"(\{[^{}/]+\})", template)
                pattern = "".join("[^/]+" if p.startswith("{") and p.endswith("}") else re.escape(p) for p in pieces)
                parameters = sum(1 for p in pieces if p.startswith("{") and p.endswith("}"))
                compiled.append((parameters, order, re.compile(pattern), template))
            templates: dict[int, list[tuple[re.Pattern, int, str]]] = {}
            for parameters, _, pattern, template in sorted(compiled, key=lambda c: c[:2]):
                templates.setdefault(template.count("/"), []).append((pattern, parameters, template))
            # Complete before it is seen: flow runs look operations up from several threads.
            self._by_key = {(op.method, op.path): op for op in self.operations()}
            self._templates = templates
        return self._templates


def load_document(path: str, repository: Path, *, read_references: bool = True,
                  fetch_file: Callable[[Path], None] | None = None) -> OpenAPIDocument:
    """The spec at `path` (repository-relative; JSON or YAML), read through the one resolver. With
    `read_references`, the files its `$ref`s name are read too (so a refused one fails the load), each first
    passed to `fetch_file` when given (`load_suites(fetch_file=)`: a partial copy of the repository).
    SpecError when it cannot be read or is not an OpenAPI 3.0 / 3.1 document."""
    repository = Path(repository).resolve()
    file = _normal(path)
    cached = _LOADED.get((repository, file)) if read_references else None
    # A None fingerprint (a file refused or gone) never matches: the load runs again and says why.
    if cached is not None and cached[0] is not None and _fingerprint(cached[1]) == cached[0]:
        return cached[1]
    root, data = _read(file, repository)
    if not isinstance(root, dict):
        raise SpecError(f"{file}: not an OpenAPI document (a mapping at the top, with an `openapi` field)")
    declared = root.get("openapi")
    version = next((v for v in ("3.0", "3.1") if isinstance(declared, str) and re.fullmatch(rf"{v}\.\d+.*", declared)),
                   None)
    if version is None:
        found = f"'{declared}'" if declared is not None else "no `openapi` field"
        if "swagger" in root:
            found = f"Swagger {root['swagger']}"
        raise SpecError(f"{file}: OpenAPI 3.0 or 3.1 is supported, this is {found}")
    document = OpenAPIDocument(file, version, root, repository, fetch_file)
    if read_references:
        if _OTHER_FILE_REF.search(data):
            document.read_referenced_files()
        if len(_LOADED) >= _LOADED_MAX:
            del _LOADED[next(iter(_LOADED))]
        _LOADED[repository, file] = (_fingerprint(document), document)
    return document


def _fingerprint(document: OpenAPIDocument) -> tuple | None:
    """Each file of `document` as the resolver finds it now (real path, inode, size, modification time); None
    when one is refused or gone (then the spec is loaded again, and says why)."""
    found = []
    for file in document.documents:
        try:
            info = os.stat(real := files.resolve(file, document.repository, document.repository))
        except (files.FileRefused, OSError):
            return None
        found.append((file, str(real), info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(found)


def _read(file: str, repository: Path) -> tuple[Any, bytes]:
    try:
        real = files.resolve(file, repository, repository)
        data = files.read_bytes(real, MAX_SPEC_BYTES, shown=file, what="OpenAPI files")
    except files.FileRefused as exc:
        raise SpecError(str(exc)) from None
    try:
        if file.lower().endswith(".json"):
            return json.loads(data), data
        loaded = yaml.load(data, Loader=_SpecLoader)  # noqa: S506 - a safe loader (libyaml's when present)
        _check_expansion(file, loaded)
        return loaded, data
    except UnicodeDecodeError:
        raise SpecError(f"'{file}' is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise SpecError(f"{file}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else file
        raise SpecError(f"{where}: invalid YAML: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise SpecError(f"'{file}' cannot be read as YAML: {exc}") from None


def _check_expansion(file: str, loaded: Any) -> None:
    """SpecError when the YAML's aliases expand it past MAX_EXPANDED_CONTAINERS mappings and lists, counting each
    use of an alias again (the "billion laughs" file), or when an alias contains itself (no JSON can say that):
    everything that walks a schema would otherwise walk every copy."""
    stack, seen = [loaded], 0
    while stack:
        value = stack.pop()
        seen += 1
        if seen > MAX_EXPANDED_CONTAINERS:
            raise SpecError(f"'{file}': its YAML aliases expand it past {MAX_EXPANDED_CONTAINERS:,} mappings and "
                            "lists (or an alias contains itself)")
        if isinstance(value, dict):
            stack.extend(v for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, (dict, list)))


def _refs(document: Any):
    """Each `$ref` string of `document` that names another document; a container seen twice (YAML aliases
    share them, and may make cycles) is walked once."""
    stack, seen = [document], set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, dict):
            ref = value.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                yield ref
            stack.extend(v for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, (dict, list)))


def _expanded_paths(url: str, variables: Any) -> set[str]:
    names = re.findall(r"\{([^{}]+)\}", url)
    choices = []
    for name in names:
        variable = variables.get(name) if isinstance(variables, dict) else None
        variable = variable if isinstance(variable, dict) else {}
        values = variable.get("enum") if isinstance(variable.get("enum"), list) else [variable.get("default", "")]
        choices.append([str(v) for v in values])
    paths = set()
    for combination in itertools.product(*choices):
        expanded = url
        for name, value in zip(names, combination, strict=True):
            expanded = expanded.replace("{" + name + "}", value)
        paths.add(urlsplit(expanded).path.rstrip("/"))
    return paths


def escape_pointer(token: str) -> str:
    """`token` as one segment of a JSON pointer (`/` and `~` escaped)."""
    return token.replace("~", "~0").replace("/", "~1")


def _normal(file: str) -> str:
    """A repository-relative path with `.` and `..` folded (the resolver still decides where it may lead)."""
    parts: list[str] = []
    for part in PurePosixPath(file).parts:
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            else:
                parts.append(part)
        elif part != ".":
            parts.append(part)
    return "/".join(parts)
