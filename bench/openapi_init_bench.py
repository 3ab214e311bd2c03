"""The cost of a starter suite and of whole-spec validation, on GitHub's REST description and Petstore 3.0.

    python3 bench/openapi_init_bench.py            # 3 rounds each
    python3 bench/openapi_init_bench.py --rounds 1

For each spec (the test fixtures: npm @octokit/openapi 23.0.2, @readme/oas-examples 8.2.2), decompressed into a
temporary repository: the time `starter_suite` takes to write the suite (`litmus init --from-openapi` without
the process start and the file write) and its size, then the time `spec_problems` takes to validate the spec
whole (what `litmus validate` adds for a suite naming it), with the number of problems found. Medians are
printed; this prints figures, it is not a timed test.
"""

from __future__ import annotations

import argparse
import lzma
import statistics
import tempfile
import time
from pathlib import Path

from litmus.load.openapi_spec import spec_problems
from litmus.openapi.document import load_document
from litmus.openapi.starter import starter_suite

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "openapi"
SPECS = ("api.github.com.json", "petstore-3.0.json")


def spec_into(repo: Path, name: str) -> None:
    plain = FIXTURES / name
    data = plain.read_bytes() if plain.is_file() else lzma.decompress((FIXTURES / f"{name}.xz").read_bytes())
    (repo / name).write_bytes(data)


def median_s(rounds: int, action, *args, **kwargs) -> tuple[float, object]:
    times, result = [], None
    for _ in range(rounds):
        started = time.perf_counter()
        result = action(*args, **kwargs)
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        repo = Path(folder)
        for name in SPECS:
            spec_into(repo, name)
            document = load_document(name, repo)
            seconds, starter = median_s(args.rounds, starter_suite, document, f"../{name}", include_unsafe=True)
            print(f"{name}: starter suite of {starter.flows:,} flows ({len(starter.text.encode()):,} bytes) "
                  f"in {seconds:.3f} s (median of {args.rounds})")
            seconds, problems = median_s(args.rounds, lambda spec: spec_problems(load_document(spec, repo)), name)
            print(f"{name}: whole-spec validation in {seconds:.2f} s (median of {args.rounds}), "
                  f"{len(problems)} problems")


if __name__ == "__main__":
    main()
