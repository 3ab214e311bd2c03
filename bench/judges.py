"""Judge benchmark: wall time and judge calls of LLM-based assertions, cold and warm, and beside promptfoo.

    python bench/judges.py                 # all parts
    python bench/judges.py --no-promptfoo  # litmus only

Everything runs on 127.0.0.1: a tiny target API and the fake judge of the test suite
(`tests/support/fake_judge.py`), which answers every judge call after a fixed latency.

Part 1: 100 LLM-based assertions (20 flow runs x 5 `llm_rubric`), judge latency 200 ms, judge
concurrency 8. Cold wall time against the ideal 100 x 0.2 / 8 = 2.5 s (target: within 1.3x); a warm
rerun (same cache) must make 0 judge calls and take < 1 s beyond the HTTP work alone (the same
suite run without a judge).

Part 2: the same 50 rubric checks through litmus and through promptfoo's `llm-rubric` (promptfoo
from npm in bench/node_modules/.litmus-promptfoo; the outputs come from promptfoo's `echo`
provider, so only grading calls reach the judge), both at concurrency 8 against the same fake
judge: wall time and judge calls, cold (no cache) and warm (second run with the cache).
Target: litmus at most half of promptfoo's wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from litmus.config import JudgeConfig  # noqa: E402
from litmus.judges import JudgeService  # noqa: E402
from litmus.load import load_suites  # noqa: E402
from litmus.run.runner import RunOptions, run_suites  # noqa: E402
from support.fake_judge import API_KEY, FakeJudge  # noqa: E402

LATENCY_S = 0.2
CONCURRENCY = 8
PROMPTFOO_DIR = HERE / "node_modules" / ".litmus-promptfoo"
PROMPTFOO_BIN = PROMPTFOO_DIR / "node_modules" / ".bin" / "promptfoo"
PROMPTFOO_VERDICT = json.dumps({"pass": True, "score": 1, "reason": "meets the rubric"})


class _Target(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # see tests/support/fake_judge.py

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = json.dumps({"reply": f"Answer to question {body['n']}: order 1042 ships on Monday."}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _serve(handler) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _suite(runs: int, per_run: int) -> str:
    checks = "".join(
        f"          - type: llm_rubric\n            select: $.reply\n"
        f"            rubric: \"Check {k} of run {{{{ run.index }}}}: states when the order ships\"\n"
        for k in range(per_run)
    )
    return (
        "version: 1\nsuite: Judge bench\nflows:\n  - name: ask\n"
        f"    runs: {runs}\n    steps:\n      - name: ask\n        request:\n          method: POST\n"
        "          url: /chat\n          json: {n: \"{{ run.index }}\"}\n        assertions:\n" + checks
    )


def _litmus_run(root: Path, target: str, judge_url: str | None, cache: Path, use_cache: bool = True) -> tuple:
    suites = load_suites([root / "probes"], root=root, environ={}).suites
    service = None
    if judge_url:
        config = JudgeConfig(provider="openai", model="judge-small", base_url=judge_url, api_key_env="JUDGE_KEY",
                             concurrency=CONCURRENCY, cache=cache, use_cache=use_cache)
        service = JudgeService.from_config(config, environ={"JUDGE_KEY": API_KEY})
    started = time.perf_counter()
    try:
        result = run_suites(suites, RunOptions(base_url=target, concurrency=CONCURRENCY), judge=service, environ={})
    finally:
        if service:
            service.close()
    wall = time.perf_counter() - started
    outcomes = [o.status for *_, o in result.iter_outcomes()]
    return wall, result.judge, outcomes


def part1(target: str) -> None:
    print(f"## Part 1: 100 LLM-based assertions, judge latency {LATENCY_S * 1000:.0f} ms, concurrency {CONCURRENCY}")
    with tempfile.TemporaryDirectory() as tmp, FakeJudge() as judge:
        root = Path(tmp)
        (root / "probes").mkdir()
        (root / "probes" / "bench.yaml").write_text(_suite(runs=20, per_run=5))
        judge.default.delay = LATENCY_S
        ideal = 100 * LATENCY_S / CONCURRENCY
        cold, totals, outcomes = _litmus_run(root, target, judge.openai_base_url, root / "cache")
        assert outcomes.count("passed") == 100, outcomes
        print(f"cold:  {cold:.2f} s for {len(judge.calls())} judge calls; ideal {ideal:.2f} s; "
              f"ratio {cold / ideal:.2f}x (target <= 1.30x)")
        before = len(judge.calls())
        warm, totals, outcomes = _litmus_run(root, target, judge.openai_base_url, root / "cache")
        assert outcomes.count("passed") == 100
        http_only, _, _ = _litmus_run(root, target, None, root / "cache")
        print(f"warm:  {warm:.2f} s, {len(judge.calls()) - before} judge calls ({totals.cached} cached); "
              f"HTTP work alone {http_only:.2f} s; judging added {warm - http_only:+.2f} s (target < 1 s)")


def part2(target: str, cases: int = 50) -> None:
    print(f"\n## Part 2: {cases} rubric checks, litmus vs promptfoo llm-rubric, concurrency {CONCURRENCY}, "
          f"judge latency {LATENCY_S * 1000:.0f} ms")
    with tempfile.TemporaryDirectory() as tmp, FakeJudge() as judge:
        root = Path(tmp)
        judge.default.delay = LATENCY_S
        judge.when("<Rubric>", text=PROMPTFOO_VERDICT, delay=LATENCY_S)
        (root / "probes").mkdir()
        (root / "probes" / "bench.yaml").write_text(_suite(runs=cases // 5, per_run=5))
        rows = []
        for label, use_cache in (("cold", False), ("warm", True), ("warm", True)):
            before = len(judge.calls())
            wall, _, outcomes = _litmus_run(root, target, judge.openai_base_url, root / "cache", use_cache)
            assert outcomes.count("passed") == cases
            rows.append(("litmus", label, wall, len(judge.calls()) - before))
        rows.pop(1)  # the first cached run only filled the cache (the cold row ran with the cache off)
        if not PROMPTFOO_BIN.exists():
            print(f"promptfoo not installed at {PROMPTFOO_BIN}: run `npm install promptfoo` in {PROMPTFOO_DIR}")
        else:
            rows += _promptfoo_rows(root, judge, cases)
        print(f"{'tool':<10}{'run':<6}{'wall s':>8}{'judge calls':>13}")
        for tool, label, wall, calls in rows:
            print(f"{tool:<10}{label:<6}{wall:>8.2f}{calls:>13}")
        by = {(t, r): w for t, r, w, _ in rows}
        if ("promptfoo", "cold") in by:
            # Both as a CI user sees them (litmus plus its interpreter start-up, promptfoo's process as a whole),
            # and the evaluation alone (promptfoo minus node's start-up, litmus in process).
            litmus_start = _litmus_startup()
            for label in ("cold", "warm"):
                whole = (by["litmus", label] + litmus_start) / by["promptfoo", label]
                alone = by["litmus", label] / max(by["promptfoo", label] - _promptfoo_startup, 1e-3)
                print(f"{label}: litmus / promptfoo wall time = {whole:.2f} with start-up "
                      f"(litmus {litmus_start:.2f} s, promptfoo {_promptfoo_startup:.2f} s), "
                      f"{alone:.2f} evaluation alone (target <= 0.50)")


def _promptfoo_rows(root: Path, judge: FakeJudge, cases: int) -> list[tuple]:
    tests = "".join(
        f"  - vars: {{n: {i}}}\n    assert:\n      - type: llm-rubric\n"
        f"        value: \"Check {i % 5} of run {i // 5}: states when the order ships\"\n"
        for i in range(cases)
    )
    config = root / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['Answer to question {{n}}: order 1042 ships on Monday.']\n"
        "providers: [echo]\n"
        "defaultTest:\n  options:\n    provider:\n      id: openai:chat:judge-small\n      config:\n"
        f"        apiBaseUrl: {judge.openai_base_url}\n        apiKey: {API_KEY}\n"
        "tests:\n" + tests
    )
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(root / ".promptfoo"), "PROMPTFOO_CACHE_PATH": str(root / ".promptfoo-cache"),
           "PROMPTFOO_DISABLE_SHARING": "1", "OPENAI_API_KEY": API_KEY, "NO_COLOR": "1"}
    global _promptfoo_startup
    startup = time.perf_counter()
    subprocess.run([str(PROMPTFOO_BIN), "--version"], env=env, capture_output=True, check=False, timeout=120)
    startup = _promptfoo_startup = time.perf_counter() - startup
    rows = []
    for label, extra in (("cold", ["--no-cache"]), ("fill", []), ("warm", [])):
        before = len(judge.calls())
        started = time.perf_counter()
        done = subprocess.run(
            [str(PROMPTFOO_BIN), "eval", "-c", str(config), "-j", str(CONCURRENCY), "--no-table",
             "--no-progress-bar", "--no-write", "-o", str(root / f"pf-{label}.json"), *extra],
            env=env, capture_output=True, text=True, check=False, timeout=600, cwd=root,
        )
        wall = time.perf_counter() - started
        if not (root / f"pf-{label}.json").exists():
            print(f"promptfoo eval failed (exit {done.returncode}): {done.stderr[-800:] or done.stdout[-800:]}")
            return []
        stats = json.loads((root / f"pf-{label}.json").read_text()).get("results", {}).get("stats", {})
        if label != "fill":
            rows.append(("promptfoo", label, wall, len(judge.calls()) - before))
            print(f"(promptfoo {label}: {stats.get('successes')} passed, {stats.get('failures')} failed, "
                  f"{stats.get('errors')} errors; node start-up alone {startup:.2f} s)")
    return rows


_promptfoo_startup = 0.0


def _litmus_startup() -> float:
    """Interpreter start plus the imports a `litmus run` needs, in a fresh process."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import litmus.load, litmus.run.runner, litmus.judges"], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-promptfoo", action="store_true", help="skip the promptfoo comparison")
    args = parser.parse_args()
    server, target = _serve(_Target)
    try:
        part1(target)
        if not args.no_promptfoo:
            if shutil.which("node") is None:
                print("\nnode is not installed: promptfoo comparison skipped")
            else:
                part2(target)
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
