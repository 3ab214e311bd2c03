"""The cost of masking secrets: the runner's one pass over a finished results document.

    python3 bench/redact_bench.py                 # 1000 steps, 3 secrets
    python3 bench/redact_bench.py --steps 5000 --secrets 10

Builds a results document of N steps, each with a 4 KiB request and response excerpt, a URL, five
headers and three failed assertions with reasons and mismatch values (an ellipsis in every tenth
body, so cut fragments are looked for too), registers K random secrets of 32 characters drawn from
printable ASCII (the awkward kind: hundreds of encoded forms each) and prints the time to register
them and to mask the document, and the time per step. This prints figures; it is not a timed test.
"""

from __future__ import annotations

import argparse
import random
import time

from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    Mismatch,
    RequestExcerpt,
    ResponseExcerpt,
    RunInfo,
    RunResult,
    StepResult,
    SuiteResult,
)
from litmus.run.redact import Redactor

ALPHABET = "".join(chr(c) for c in range(32, 127))


def document(steps: int, rng: random.Random) -> RunResult:
    words = "order shipped delayed refund the a of customer status reply token session".split()

    def text(size: int) -> str:
        out = " ".join(rng.choice(words) for _ in range(size // 6))[:size]
        return out[:-1] + "…" if rng.random() < 0.1 else out

    def step(i: int) -> StepResult:
        outcomes = [AssertionOutcome(type="json_path", status="failed", reason=text(120), line=10, column=5,
                                     mismatches=[Mismatch(path="$.a.b", expected=text(40), actual=text(200),
                                                          reason=text(80))]) for _ in range(3)]
        return StepResult(
            name=f"step {i}", line=5, status="failed",
            request=RequestExcerpt(method="POST", url=f"https://api.example.com/v1/orders/{i}?q={text(20)}",
                                   headers={f"X-H{k}": text(30) for k in range(5)}, body=text(4096)),
            response=ResponseExcerpt(status=200, elapsed_ms=12.5, headers={f"X-R{k}": text(30) for k in range(5)},
                                     body=text(4096), size=4096),
            extracted={"id": text(30)}, assertions=outcomes)

    flow_runs = [FlowRunResult(flow="f", line=1, run_index=i, steps=[step(i)],
                               intent_evaluation=IntentEvaluation(status="failed", method="deterministic",
                                                                  reason=text(200)))
                 for i in range(steps)]
    suite = SuiteResult(name="S", file="probes/s.yaml", line=1, pass_threshold=100, pass_rate=0.0,
                        verdict="failed", flow_runs=flow_runs)
    return RunResult(run=RunInfo(base_url=None, started_at="", finished_at=""), verdict="failed", suites=[suite])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=1000, help="steps in the document (default 1000)")
    parser.add_argument("--secrets", type=int, default=3, help="secrets registered (default 3)")
    args = parser.parse_args()
    rng = random.Random(7)
    result = document(args.steps, rng)
    redactor = Redactor()
    started = time.perf_counter()
    for _ in range(args.secrets):
        redactor.register("".join(rng.choice(ALPHABET) for _c in range(32)))
    registered = time.perf_counter()
    redactor.redact_in_place(result)
    masked = time.perf_counter()
    print(f"steps {args.steps}, secrets {args.secrets}")
    print(f"register: {(registered - started) * 1000:.1f} ms")
    print(f"mask the document: {(masked - registered) * 1000:.1f} ms "
          f"({(masked - registered) * 1e6 / args.steps:.0f} µs per step)")


if __name__ == "__main__":
    main()
