#!/usr/bin/env python3
"""Litmus against Step CI and Newman: the same HTTP checks, side by side, in one invocation.

Starts nginx on 127.0.0.1 (generated config in a temp dir) serving N static JSON documents,
writes one list of cases as a Litmus suite, a Step CI workflow and a Newman collection (five
checks per probe: status, JSON-path equality, body substring, JSON Schema, response time), runs
each tool as a separate process several times and prints, per tool and N: median whole-process
wall time, steps/s, peak RSS (os.wait4 rusage) and CPU time, and checks that every tool found
exactly the expected failures (every tenth probe expects a wrong id by default).

    python3 bench/run_bench.py                      # N = 200 and 1000, 5 repetitions
    python3 bench/run_bench.py --sizes 50 --repeat 1 # a quick smoke run
    python3 bench/run_bench.py --setup              # first install nginx (apt) and bench/node_modules (npm ci)
    python3 bench/run_bench.py --tools litmus --compare-to main --sizes 200,1000,10000 --repeat 3
                                                    # this tree against main's, interleaved: per-probe ratios

This prints figures; it is not a timed test. It checks one thing: the failure counts. It exits 1
when Litmus reports other than the expected failures; another tool's miscount is printed as a finding.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import cases as bench_cases

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
NODE_BIN = BENCH_DIR / "node_modules" / ".bin"
RUN_TIMEOUT_S = 600
SUITE_PROBES = 1000  # probes per Litmus suite file

NGINX_CONF = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    types {{ application/json json; }}
    default_type application/octet-stream;
    keepalive_requests 100000;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {www};
        location / {{ try_files $uri =404; }}
    }}
}}
"""


# ---------------------------------------------------------------------------------------------
# Measuring one process


@dataclass
class Measurement:
    wall_s: float
    cpu_s: float  # user + system
    peak_rss_mb: float
    exit_code: int
    output: str


# Runs in a small helper process started before the benchmark allocates anything. A child's
# ru_maxrss counts the memory of the process that spawned it (Linux records the spawner's peak when
# the child execs), so measuring from this tiny process instead of the benchmark itself keeps that
# floor at the helper's ~10 MB; `rss_floor_mb` in the report shows it.
LAUNCHER = """
import json, os, subprocess, sys, threading, time
for line in sys.stdin:
    job = json.loads(line)
    with open(job["out"], "wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(job["argv"], cwd=job["cwd"], env=job["env"], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        killer = threading.Timer(job["timeout"], proc.kill)
        killer.daemon = True
        killer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        killer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kib": usage.ru_maxrss,
                      "exit": proc.returncode}), flush=True)
"""


class Launcher:
    """Runs each measured process from the small helper above: wall time, CPU and peak RSS via os.wait4."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def measure(self, argv: list[str], cwd: Path, env: dict[str, str], output_file: Path) -> Measurement:
        job = {"argv": argv, "cwd": str(cwd), "env": env, "out": str(output_file), "timeout": RUN_TIMEOUT_S}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the measuring helper process died")
        figures = json.loads(line)
        return Measurement(
            wall_s=figures["wall"], cpu_s=figures["cpu"], peak_rss_mb=figures["maxrss_kib"] / 1024,  # Linux: KiB
            exit_code=figures["exit"], output=output_file.read_text(errors="replace"),
        )

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


# ---------------------------------------------------------------------------------------------
# The three tools: how to run each on a generated suite and how to count the probes it failed


@dataclass
class Tool:
    name: str
    concurrency: str  # as printed in the report

    def prepare(self, cases: list[bench_cases.Case], work: Path, base_url: str, shared_schema: bool) -> None:
        raise NotImplementedError

    def command(self, work: Path, base_url: str) -> list[str]:
        raise NotImplementedError

    def failures(self, result: Measurement, work: Path) -> int:
        raise NotImplementedError

    def env(self, env: dict[str, str]) -> dict[str, str]:
        return env


class Litmus(Tool):
    """Litmus from a source tree (`src/` first on PYTHONPATH), by default this one; `name` labels it."""

    def __init__(self, concurrency: int, tree: Path = REPO_DIR, name: str = "litmus"):
        super().__init__(name, f"--concurrency {concurrency} (one flow per probe)")
        self.jobs = concurrency
        self.tree = tree

    def prepare(self, cases, work, base_url, shared_schema):
        # Probe files are limited to 2 MiB (litmus.files.MAX_FILE_BYTES), about 2,000 of these probes:
        # larger N are several suites of SUITE_PROBES probes each, in one folder.
        probes = work / "litmus-probes"
        probes.mkdir(exist_ok=True)
        for start in range(0, len(cases), SUITE_PROBES):
            bench_cases.write_litmus_suite(cases[start:start + SUITE_PROBES],
                                           probes / f"suite-{start // SUITE_PROBES:03d}.yaml", shared_schema)

    def command(self, work, base_url):
        return [sys.executable, "-m", "litmus", "run", "litmus-probes", "--base-url", base_url,
                "--out", f"{self.name}-out", "--concurrency", str(self.jobs)]

    def env(self, env: dict[str, str]) -> dict[str, str]:
        return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(self.tree / "src"), env.get("PYTHONPATH")]))}

    def failures(self, result, work):
        results_file = work / f"{self.name}-out" / "results.json"
        if not results_file.exists():
            raise RuntimeError(f"litmus wrote no {results_file} (exit {result.exit_code}):\n{result.output[-2000:]}")
        document = json.loads(results_file.read_text())
        shutil.rmtree(work / f"{self.name}-out")
        return sum(
            step["status"] != "passed"
            for suite in document["suites"]
            for flow_run in suite["flow_runs"]
            for step in flow_run["steps"]
        )


class StepCI(Tool):
    def __init__(self, concurrency: int):
        super().__init__("stepci", f"--concurrency {concurrency} (one test per probe)")
        self.jobs = concurrency

    def prepare(self, cases, work, base_url, shared_schema):
        bench_cases.write_stepci_workflow(cases, work / "workflow.yaml", base_url, shared_schema)

    def command(self, work, base_url):
        return [str(NODE_BIN / "stepci"), "run", "workflow.yaml", "--concurrency", str(self.jobs)]

    def failures(self, result, work):
        summary = re.search(r"^Tests: (\d+) failed, (\d+) passed, (\d+) total", result.output, re.M)
        if not summary:
            raise RuntimeError(f"no Step CI summary (exit {result.exit_code}):\n{result.output[-2000:]}")
        return int(summary.group(1))


class Newman(Tool):
    def __init__(self):
        super().__init__("newman", "sequential (Newman has no concurrency option)")

    def prepare(self, cases, work, base_url, shared_schema):
        bench_cases.write_newman_collection(cases, work / "collection.json", base_url, shared_schema)

    def command(self, work, base_url):
        return [str(NODE_BIN / "newman"), "run", "collection.json", "--color", "off", "--disable-unicode"]

    def failures(self, result, work):
        # The failure detail lists each failed assertion or request error with `inside "<item>"`.
        if not re.search(r"\|\s+assertions\s+\|", result.output):
            raise RuntimeError(f"no Newman summary (exit {result.exit_code}):\n{result.output[-2000:]}")
        return len(set(re.findall(r'inside "(probe-\d+)"', result.output)))


# ---------------------------------------------------------------------------------------------
# Same outputs: this tree against --compare-to's


# What differs between two runs of the same probes by timing alone: masked before comparing results.json.
TIMING_KEYS = {"started_at", "finished_at", "duration_ms", "elapsed_ms", "first_byte_ms"}
TOOK = re.compile(r"^took [0-9.]+ ms")  # a response_time reason


def _without_timings(value):
    if isinstance(value, dict):
        return {key: "<timing>" if key in TIMING_KEYS or key == "Date" else
                TOOK.sub("took <timing> ms", item) if key == "reason" and isinstance(item, str) else
                _without_timings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_timings(item) for item in value]
    return value


def compare_outputs(trees: list[Litmus], work: Path, base_url: str, env: dict[str, str]) -> list[str]:
    """Runs each tree once more on `work`'s suites and says whether their results.json are the same apart
    from timings, and whether each tree renders byte-identical reports from the first tree's results.json."""
    documents, lines = [], []
    for tree in trees:
        subprocess.run(tree.command(work, base_url), cwd=work, env=tree.env(env), capture_output=True)
        documents.append(_without_timings(json.loads((work / f"{tree.name}-out" / "results.json").read_text())))
    same = all(document == documents[0] for document in documents)
    lines.append(f"results.json apart from timings: {'the same' if same else 'DIFFERENT'} "
                 f"({', '.join(tree.name for tree in trees)})")
    results = work / f"{trees[0].name}-out" / "results.json"
    rendered = []
    for tree in trees:
        out = work / f"{tree.name}-reports"
        subprocess.run([sys.executable, "-m", "litmus", "report", str(results), "--out", str(out)], cwd=work,
                       env=tree.env(env), capture_output=True, check=True)
        rendered.append({path.name: path.read_bytes() for path in sorted(out.iterdir())})
    for name in sorted(rendered[0]):
        same = all(files.get(name) == rendered[0][name] for files in rendered)
        lines.append(f"{name} rendered from one results.json: {'byte-identical' if same else 'DIFFERENT'}")
    for tree in trees:
        shutil.rmtree(work / f"{tree.name}-out")
        shutil.rmtree(work / f"{tree.name}-reports")
    return lines


# ---------------------------------------------------------------------------------------------
# nginx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Nginx:
    """nginx in the foreground, as our child, with its config, pid and logs in `tmp`."""

    def __init__(self, binary: str, tmp: Path, www: Path):
        self.port = free_port()
        self.tmp = tmp
        conf = tmp / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=tmp, www=www, port=self.port))
        self.proc = subprocess.Popen(
            [binary, "-p", str(tmp), "-c", str(conf), "-e", str(tmp / "nginx-error.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        )
        self.base_url = f"http://127.0.0.1:{self.port}"

    def wait_ready(self, probe_path: str) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.proc.returncode}: {self.proc.stderr.read().decode()}")
            try:
                with urllib.request.urlopen(self.base_url + probe_path, timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not answer within 10 s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful shutdown
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---------------------------------------------------------------------------------------------
# Prerequisites


def find_nginx() -> str | None:
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


def check_prerequisites(setup: bool, node_tools: bool = True) -> str:
    """The nginx binary; installs nginx and the npm tools first with --setup, else says how. Without
    `node_tools` (only Litmus runs) Step CI and Newman are neither needed nor installed."""
    if setup:
        if not find_nginx():
            subprocess.run(["apt-get", "update"], check=True)
            subprocess.run(["apt-get", "install", "-y", "nginx-light"], check=True)
        if node_tools:
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=BENCH_DIR, check=True)
    missing = []
    if not find_nginx():
        missing.append("nginx:   apt-get update && apt-get install -y nginx-light   (or nginx)")
    if node_tools and (not (NODE_BIN / "stepci").exists() or not (NODE_BIN / "newman").exists()):
        missing.append(f"node tools:   npm ci --prefix {BENCH_DIR}   (needs node >= 18)")
    if missing:
        sys.exit("missing prerequisites; install them, or rerun with --setup:\n  " + "\n  ".join(missing))
    return find_nginx()


# ---------------------------------------------------------------------------------------------
# Running and reporting


@dataclass
class Series:
    """All repetitions of one tool at one size."""

    tool: str
    size: int
    expected_failures: int
    runs: list[Measurement] = field(default_factory=list)
    found: list[int] = field(default_factory=list)

    def median(self, attribute: str) -> float:
        return statistics.median(getattr(run, attribute) for run in self.runs)

    @property
    def failures_exact(self) -> bool:
        return all(found == self.expected_failures for found in self.found)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(STEPCI_DISABLE_ANALYTICS="1", NO_COLOR="1", FORCE_COLOR="0")
    # Installed packages come with their bytecode compiled; with this set (some sandboxes do), every run
    # would compile Litmus's sources again (~0.15 s). The warm-up run writes the caches.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_once(launcher: Launcher, tool: Tool, work: Path, base_url: str, env: dict[str, str]) -> tuple[Measurement, int]:
    result = launcher.measure(tool.command(work, base_url), work, tool.env(env), work / f"{tool.name}.log")
    return result, tool.failures(result, work)


def measure_startup(launcher: Launcher, repeat: int, env: dict[str, str], tmp: Path) -> dict[str, float | str]:
    """Median wall time of `litmus --version` and `litmus validate probes/` (in the repo)."""
    litmus = [sys.executable, "-m", "litmus"]
    env = Litmus(1).env(env)
    figures: dict[str, float | str] = {}
    for label, argv in (("python3 -c pass (the interpreter alone, for scale)", [sys.executable, "-c", "pass"]),
                        ("litmus --version", [*litmus, "--version"]),
                        ("litmus validate probes/", [*litmus, "validate", "probes/"])):
        runs = [launcher.measure(argv, REPO_DIR, env, tmp / "startup.log") for _ in range(repeat)]
        if runs[0].exit_code != 0:
            figures[label] = f"exit {runs[0].exit_code}: {runs[0].output.strip().splitlines()[-1:]}"
        else:
            figures[label] = statistics.median(run.wall_s for run in runs)
    return figures


def print_report(series: list[Series], tools: list[Tool], sizes: list[int], startup: dict, loads: list,
                 settings: str) -> None:
    print()
    print(f"machine: {os.cpu_count()} CPUs; load average before {loads[0]:.2f}, after {loads[1]:.2f} "
          "(other processes share these cores: compare ratios within this run)")
    print("concurrency: " + "; ".join(f"{tool.name} {tool.concurrency}" for tool in tools))
    print(settings)
    print()
    width = max(7, *(len(tool.name) for tool in tools))
    header = (f"{'N':>6}  {'tool':<{width}} {'median wall s':>13} {'min s':>6} {'steps/s':>8} {'peak RSS MB':>11} "
              f"{'CPU s':>6} {'failures found/expected':>24}")
    print(header)
    print("-" * len(header))
    for item in series:
        wall = item.median("wall_s")
        found = ",".join(str(count) for count in sorted(set(item.found)))
        verdict = "ok" if item.failures_exact else "WRONG"
        print(f"{item.size:>6}  {item.tool:<{width}} {wall:>13.3f} {min(r.wall_s for r in item.runs):>6.2f} "
              f"{item.size / wall:>8.0f} {item.median('peak_rss_mb'):>11.1f} {item.median('cpu_s'):>6.2f} "
              f"{found + '/' + str(item.expected_failures) + ' ' + verdict:>24}")
    for item in series:
        if not item.failures_exact:
            print(f"note: {item.tool} at N={item.size} reported {sorted(set(item.found))} failures where "
                  f"{item.expected_failures} were expected (rerun with --keep to read its log)")
    print()
    by_key = {(item.tool, item.size): item for item in series}
    names = [tool.name for tool in tools]
    if "litmus" in names and "stepci" in names:
        for size in sizes:
            ratio = by_key["litmus", size].median("wall_s") / by_key["stepci", size].median("wall_s")
            print(f"N={size}: litmus wall / Step CI wall = {ratio:.2f} (target <= 0.50)")
    if len(sizes) >= 2:
        small, large = min(sizes), max(sizes)
        for name in names:
            lo, hi = by_key[name, small], by_key[name, large]
            wall_ratio = hi.median("wall_s") / lo.median("wall_s")
            rss_per_step = (hi.median("peak_rss_mb") - lo.median("peak_rss_mb")) * 1024 / (large - small)
            print(f"{name}: wall N={large}/N={small} = {wall_ratio:.2f} (linear = {large / small:.2f}); "
                  f"peak RSS grows {rss_per_step:.1f} KiB per extra step")
    print()
    litmus_trees = [tool for tool in tools if isinstance(tool, Litmus)]
    for size in sizes:
        for tool in litmus_trees:
            item = by_key[tool.name, size]
            print(f"N={size}: {tool.name}: CPU {item.median('cpu_s') * 1000 / size:.3f} ms per probe, "
                  f"peak RSS {item.median('peak_rss_mb') * 1024 / size:.1f} KiB per probe "
                  f"({item.median('cpu_s'):.2f} s, {item.median('peak_rss_mb'):.1f} MiB)")
        if len(litmus_trees) == 2:  # this tree against --compare-to's
            this, ref = (by_key[tool.name, size] for tool in litmus_trees)
            print(f"N={size}: {litmus_trees[0].name} / {litmus_trees[1].name}: CPU "
                  f"{this.median('cpu_s') / ref.median('cpu_s'):.2f}x, peak RSS "
                  f"{this.median('peak_rss_mb') / ref.median('peak_rss_mb'):.2f}x")
    for label, value in startup.items():
        shown = f"{value:.3f} s" if isinstance(value, float) else value
        print(f"startup, median: {label}: {shown}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="200,1000", help="comma-separated probe counts N (default 200,1000)")
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions per tool and size (default 5)")
    parser.add_argument("--concurrency", type=int, default=16,
                        help="requests in flight for Litmus and Step CI (default 16; Newman is sequential)")
    parser.add_argument("--fail-every", type=int, default=10,
                        help="every k-th probe expects a wrong id, so N/k failures are expected (0: none; default 10)")
    parser.add_argument("--schema", choices=("inline", "shared"), default="inline",
                        help="the JSON Schema inline in every probe (default), or written once and referenced: "
                             "Litmus schema_file, Step CI components.schemas + $ref, Newman a collection variable")
    parser.add_argument("--tools", default="litmus,stepci,newman", help="which tools to run (default all three)")
    parser.add_argument("--compare-to", metavar="REF",
                        help="also run Litmus as of this git commit (a temporary worktree of it), interleaved with "
                             "this tree's, and print the ratios: before/after figures from one invocation")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (generated files, logs) and print it")
    parser.add_argument("--setup", action="store_true", help="install nginx (apt-get) and the npm tools (npm ci) first")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    every_tool = {"litmus": Litmus(args.concurrency), "stepci": StepCI(args.concurrency), "newman": Newman()}
    tools = [every_tool[name] for name in args.tools.split(",")]
    nginx_binary = check_prerequisites(args.setup, node_tools=any(not isinstance(t, Litmus) for t in tools))
    tmp = Path(tempfile.mkdtemp(prefix="litmus-bench-"))
    if args.compare_to:
        commit = subprocess.run(["git", "-C", str(REPO_DIR), "rev-parse", "--short=10", args.compare_to],
                                capture_output=True, text=True, check=True).stdout.strip()
        subprocess.run(["git", "-C", str(REPO_DIR), "worktree", "add", "--detach", str(tmp / "ref-tree"), commit],
                       check=True, capture_output=True)
        tools.insert(tools.index(every_tool["litmus"]) + 1 if "litmus" in args.tools.split(",") else 0,
                     Litmus(args.concurrency, tmp / "ref-tree", name=f"litmus@{commit}"))

    launcher = Launcher()  # first, while this process is still small
    failing = f"every {args.fail_every}th probe fails" if args.fail_every else "no probe fails"
    settings = f"checks per probe: 5; schema {args.schema}; {failing}; {args.repeat} repetitions, medians"
    tmp.chmod(0o755)  # nginx workers drop root privileges and must still read the documents
    env = child_env()
    nginx = None
    try:
        www = tmp / "www"
        all_cases = {size: bench_cases.make_cases(size, args.fail_every) for size in sizes}
        bench_cases.write_documents(all_cases[max(sizes)], www)
        nginx = Nginx(nginx_binary, tmp, www)
        nginx.wait_ready(all_cases[max(sizes)][0].path)
        print(f"nginx 1 worker on {nginx.base_url}; temp dir {tmp}")

        series = []
        for size in sizes:
            work = tmp / f"n{size}"
            work.mkdir()
            for tool in tools:
                tool.prepare(all_cases[size], work, nginx.base_url, args.schema == "shared")
                series.append(Series(tool.name, size, bench_cases.expected_failures(all_cases[size])))

        loads = [os.getloadavg()[0]]
        for tool in tools:  # warm-up (page cache, node module loading), not counted
            run_once(launcher, tool, tmp / f"n{min(sizes)}", nginx.base_url, env)
        for repetition in range(args.repeat):
            # Rotate the order each repetition so slow drifts in machine load spread over all tools.
            shift = repetition % len(tools)
            for size in sizes:
                for tool in tools[shift:] + tools[:shift]:
                    result, found = run_once(launcher, tool, tmp / f"n{size}", nginx.base_url, env)
                    item = next(s for s in series if s.tool == tool.name and s.size == size)
                    item.runs.append(result)
                    item.found.append(found)
                    print(f"  rep {repetition + 1}/{args.repeat} N={size} {tool.name:<7} {result.wall_s:6.2f} s "
                          f"{result.peak_rss_mb:6.1f} MB  failures {found}", flush=True)
        if args.compare_to:
            trees = [tool for tool in tools if isinstance(tool, Litmus)]
            for line in compare_outputs(trees, tmp / f"n{min(sizes)}", nginx.base_url, env):
                print(f"N={min(sizes)}: {line}")
        startup = measure_startup(launcher, 10, env, tmp)
        floor = launcher.measure([shutil.which("true") or "/bin/true"], tmp, env, tmp / "true.log").peak_rss_mb
        settings += f"; peak RSS floor (what a do-nothing child reports): {floor:.1f} MB"
        loads.append(os.getloadavg()[0])
        print_report(series, tools, sizes, startup, loads, settings)
        # Only Litmus' own miscount fails the script; the others' are findings, printed above.
        return 0 if all(item.failures_exact for item in series if item.tool == "litmus") else 1
    finally:
        launcher.close()
        if nginx:
            nginx.stop()
        if args.compare_to:
            subprocess.run(["git", "-C", str(REPO_DIR), "worktree", "remove", "--force", str(tmp / "ref-tree")],
                           capture_output=True)
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
