"""Write a starter probe suite from an OpenAPI description: one flow per operation, ready to validate and run.

  litmus init --from-openapi openapi.yaml                  # writes probes/openapi.yaml
  litmus init --from-openapi api/spec.json -o probes/api.yaml --include-unsafe

Each flow sends one request to its operation and checks the answer with `status_code` (the lowest 2XX
status the operation declares) and `openapi` (status, content type, body and required headers against
the spec; see docs/openapi.md). The suite names the spec with `openapi:` and takes `base_url` from the
spec's first server (override it with `litmus run --base-url URL`).

Values come from the spec: path, query, header and cookie parameters (the required ones) and request
bodies are filled from `example` / `examples` / `default` (following $refs); where the spec gives none,
a typed placeholder stands in, `{{ vars.NAME | default(1) }}`, so the file validates and runs as written:
give real values with `litmus run --var NAME=VALUE` (or --vars-file). Credentials that the operation's
`security` asks for are `{{ secrets.OPENAPI_<SCHEME> }}` (the scheme's name, upper case), read from the
environment at run time: `OPENAPI_API_KEY=... litmus run ...`.

Operations with unsafe methods (POST, PUT, PATCH, DELETE) are written with
`skip: "unsafe method: review before enabling"`: they change data, so a person decides. Remove the
`skip:` line of a flow once it is safe to run, or pass --include-unsafe to write none.

The spec is read through the same file rules as probes (inside the repository, its $refs too; no URL
is fetched). No spec text becomes a template: an example holding `{{` is replaced by a placeholder.

Exit status: 0 written, 2 the spec cannot be read, the output exists (use --force), or bad usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from litmus import files
from litmus.load import repo_root
from litmus.openapi.document import SpecError, load_document
from litmus.openapi.starter import starter_suite
from litmus.results import write_bytes_atomic
from litmus.text import count


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from-openapi", required=True, metavar="SPEC",
                        help="the OpenAPI 3.0 or 3.1 description (JSON or YAML) inside the repository")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="the suite file to write, inside the repository (default: probes/<SPEC's name>.yaml)")
    parser.add_argument("--include-unsafe", action="store_true",
                        help="write POST, PUT, PATCH and DELETE operations without skip: (they will run)")
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists")


def run(args: argparse.Namespace) -> int:
    root = repo_root()
    spec = Path(os.path.abspath(args.from_openapi))
    output = Path(os.path.abspath(args.output or Path("probes") / f"{spec.stem}.yaml"))
    shown = args.output or os.path.relpath(output)
    try:
        # Repository-relative, so the one resolver refuses a spec outside the repository like any probe's file.
        document = load_document(Path(os.path.relpath(spec, root)).as_posix(), root)
    except SpecError as exc:
        return _error(str(exc))
    try:
        target = files.writable(output, root, shown=shown, new=not (args.force and os.path.lexists(output)))
    except files.FileRefused as exc:
        hint = " (use --force to replace it)" if exc.reason == "already exists" else ""
        return _error(f"{exc}{hint}")
    starter = starter_suite(document, os.path.relpath(spec, output.parent).replace(os.sep, "/"),
                            include_unsafe=args.include_unsafe)
    for reason in starter.left_out:
        print(f"litmus init: warning: left out {reason}", file=sys.stderr)
    if not starter.flows:
        # A suite needs a flow: an empty one would not validate, and would check nothing.
        return _error(f"{document.path} has no operation to write a flow for: nothing written")
    write_bytes_atomic(target, starter.text.encode())
    skipped = f", {starter.skipped} with skip: (unsafe methods, --include-unsafe writes them enabled)" \
        if starter.skipped else ""
    print(f"wrote {shown}: {count(starter.flows, 'flow')}{skipped}. Next: litmus validate {shown}")
    return 0


def _error(message: str) -> int:
    print(f"litmus init: error: {message}", file=sys.stderr)
    return 2
