"""The cost of OpenAPI contracts: loading GitHub's REST description, and one `openapi` check.

    python3 bench/openapi_bench.py              # 5 loads, 2000 checks each
    python3 bench/openapi_bench.py --loads 3 --checks 500

Loads tests/fixtures/openapi/api.github.com.json.xz (npm @octokit/openapi 23.0.2: 13 MB, 1,223
operations), decompressed into a temporary repository, through `load_document` (the one resolver, JSON
parsing, the checks a load makes; the file's modification time changed before each load, so that the
process's cache of loaded specs does not answer) and prints the median. Then checks responses: GitHub's own example
bodies for GET /repos/{owner}/{repo} (24 KB) and GET /users/{username} (1.3 KB), and a Petstore 3.0 Pet
(169 bytes), each against its operation (lookup, status, content type, body schema), and prints the
time of the first check (it compiles that operation's validator) and the median per check after it,
without and with parsing the body (a run parses it once for every assertion of the step). This prints
figures; it is not a timed test. Where GitHub's example breaks GitHub's spec, the mismatches are printed:
they are findings about the spec, counted, not hidden.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import statistics
import tempfile
import time
from pathlib import Path

from litmus.assertions._openapi import check_response
from litmus.openapi.document import load_document

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "openapi"
PET = {"id": 7, "name": "rex", "photoUrls": ["https://example.com/rex.png"], "status": "available",
       "category": {"id": 1, "name": "dogs"}, "tags": [{"id": 2, "name": "good"}]}


def example(document, operation) -> object:
    media = document.resolve(operation.operation["responses"]["200"], operation.file)["content"]["application/json"]
    return document.resolve(next(iter(media["examples"].values())), operation.file)["value"]


def measure_check(label: str, document, method: str, path: str, body: object, checks: int) -> None:
    operation, _ = document.find(method, path)
    raw = json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}

    def once(read) -> list:
        return check_response(document, operation, 200, headers, "application/json", raw, read, strict=False)

    started = time.perf_counter()
    problems = once(lambda: body)
    first_ms = (time.perf_counter() - started) * 1000
    timings = {}
    for name, read in (("parsed", lambda: body), ("with json.loads", lambda: json.loads(raw))):
        started = time.perf_counter()
        for _ in range(checks):
            once(read)
        timings[name] = (time.perf_counter() - started) * 1000 / checks
    print(f"{label}: {operation.key}, body {len(raw):,} bytes, {len(problems)} mismatches; first check "
          f"{first_ms:.1f} ms (compiles); then {timings['parsed']:.3f} ms per check "
          f"({timings['with json.loads']:.3f} ms with json.loads)")
    for problem in problems:  # the spec's own example breaking the spec: a finding about the spec, shown as found
        print(f"    {problem.path}: {problem.reason[:140]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--checks", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "api.github.com.json").write_bytes(lzma.decompress((FIXTURES / "api.github.com.json.xz").read_bytes()))
        (root / "petstore.json").write_bytes((FIXTURES / "petstore-3.0.json").read_bytes())
        loads = []
        for index in range(args.loads):
            # A new modification time: the process keeps a loaded spec while its files are unchanged.
            os.utime(root / "api.github.com.json", ns=(index * 10**9, index * 10**9))
            started = time.perf_counter()
            github = load_document("api.github.com.json", root)
            loads.append(time.perf_counter() - started)
        size = (root / "api.github.com.json").stat().st_size
        print(f"GitHub's REST description ({size / 1e6:.1f} MB, {len(github.operations()):,} operations): load "
              f"median {statistics.median(loads):.3f} s of {args.loads} (min {min(loads):.3f} s, "
              f"max {max(loads):.3f} s)")
        for label, path in (("GitHub", "/repos/octo/hello"), ("GitHub", "/users/octocat")):
            operation, _ = github.find("GET", path)
            measure_check(label, github, "GET", path, example(github, operation), args.checks)
        measure_check("Petstore 3.0", load_document("petstore.json", root), "GET", "/v2/pet/7", PET, args.checks)


if __name__ == "__main__":
    main()
