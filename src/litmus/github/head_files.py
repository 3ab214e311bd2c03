"""A pull request head's probe files, read through the contents API as bytes into a private scratch folder and
loaded there with the normal loader: what `/litmus accept-references` plans on, without checking out, fetching
or running anything of the pull request's (research: github_trust_model.md section 4).

    head = HeadFiles(client, repository, head_sha, folder)
    suites = head.load(probes)            # ProbeError, or HeadFilesError when a limit is reached

The files brought in are the suite files under the action's `probes` paths (input of the base branch's
workflow, never of the pull request) and then exactly the files the loaded suites name: the loader calls
`fetch` with each one before it resolves it (`load_suites(fetch_file=...)`), so its one file rule decides
what may be read, here as in a run. Nothing from results.json is ever a path here. A symbolic link is never
followed (the contents API would answer with the file it leads to): it is refused like a link out of the
repository.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from litmus import files
from litmus.files import VCS_DIRECTORIES
from litmus.github.api import GitHubAPIError, GitHubClient
from litmus.github.gitdb import file_at
from litmus.load import SUFFIXES, load_suites
from litmus.model import Suite

# Bounds on what one command reads (each file is one API call): far more than a repository's probes hold.
MAX_FILES = 500
MAX_DIRECTORIES = 200


class HeadFilesError(Exception):
    """The probe files cannot be brought in (a limit reached, a probe path that is not a repository path)."""


class HeadFiles:
    def __init__(self, client: GitHubClient, repository: str, commit: str, folder: Path) -> None:
        self.client, self.repository, self.commit = client, repository, commit
        self.folder = Path(os.path.realpath(folder))
        self.fetched: set[str] = set()
        self.directories = 0

    def load(self, probes: Sequence[str]) -> list[Suite]:
        """The suites under `probes` at the commit, loaded from the scratch folder (ProbeError as for a run)."""
        paths = [self._repository_path(probe) for probe in probes]
        try:
            for path in paths:
                self._bring_suites(path)
        except files.FileRefused as exc:  # a suite file that is no file of its own (a link)
            raise HeadFilesError(str(exc)) from None
        # No request is made: values from the environment are not needed, so none is read.
        return load_suites([self.folder / path for path in paths], root=self.folder, environ={}, strict_env=False,
                           fetch_file=self.fetch).suites

    def fetch(self, path: Path) -> None:
        """Bring the file at `path` (inside the folder, as a suite names it) from the commit, once; a path out of
        the folder or into version-control metadata is left to the loader's rule, which refuses it."""
        try:
            relative = Path(os.path.normpath(path)).relative_to(self.folder).as_posix()
        except ValueError:
            return
        if relative == "." or relative in self.fetched or VCS_DIRECTORIES.intersection(relative.split("/")):
            return
        self._fetch_file(relative)

    def exists(self, relative: str) -> bool:
        """Whether the commit has anything at `relative` (a file the plan would create must not be there)."""
        return bool(self._contents(relative))

    def _bring_suites(self, relative: str) -> None:
        listing = self._contents(relative)
        if listing is None:
            raise HeadFilesError(f"the probe path {relative} is not in {self.commit[:12]}")
        if isinstance(listing, dict):
            self._fetch_file(relative)
            return
        self.directories += 1
        if self.directories > MAX_DIRECTORIES:
            raise HeadFilesError(f"the probe paths hold more than {MAX_DIRECTORIES} folders")
        for entry in listing:
            name, kind = str(entry.get("name")), entry.get("type")
            # As the loader's discovery: hidden folders skipped, suites by their suffix; links are not followed.
            inside = name if relative == "." else f"{relative}/{name}"
            if kind == "dir" and not name.startswith("."):
                self._bring_suites(inside)
            elif kind == "file" and name.endswith(SUFFIXES):
                self._fetch_file(inside)

    def _fetch_file(self, relative: str) -> None:
        self.fetched.add(relative)
        if len(self.fetched) > MAX_FILES:
            raise HeadFilesError(f"the suites need more than {MAX_FILES} files")
        try:
            data = file_at(self.client, self.repository, relative, self.commit)
        except ValueError as exc:
            raise files.FileRefused(relative, f"cannot be read from {self.commit[:12]}: {exc}") from None
        if data is not None:  # absent: the loader says so where the file is named
            target = self.folder / relative
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            except OSError as exc:  # a file where a folder of the path should be
                raise files.FileRefused(relative, f"cannot be copied: {exc.strerror or exc}") from None

    def _contents(self, relative: str) -> list | dict | None:
        """The contents API's answer for `relative` at the commit: a folder's listing, a file, or None (no such
        path)."""
        where = "" if relative == "." else "/" + quote(relative)
        try:
            return self.client.get(f"/repos/{self.repository}/contents{where}", ref=self.commit)
        except GitHubAPIError as exc:
            if exc.status == 404:
                return None
            raise

    def _repository_path(self, probe: str) -> str:
        path = PurePosixPath(os.path.normpath(probe))
        if path.is_absolute() or ".." in path.parts or VCS_DIRECTORIES.intersection(path.parts):
            raise HeadFilesError(f"the probe path {probe!r} is not a path inside the repository")
        return path.as_posix()
