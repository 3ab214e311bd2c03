#!/usr/bin/env python3
"""Peak memory of `litmus run` over a `context.scenarios_file` of N rows, against a local server.

Writes a CSV of N rows (an id, a question, a JSON column of three items: about 150 bytes a row)
and a suite with one flow of one step per row, starts a tiny HTTP server on 127.0.0.1, runs
`litmus run` as a child process and prints, per N: wall time, flow runs and the child's peak RSS
(VmHWM, sampled by tests/reliability/pipeline.py as bench/reliability.py does), against the same
rows written inline as `scenarios:` in the suite, to show what reading the rows as the run goes saves.

    python3 bench/scenario_rows.py                 # N = 100, 1000, 10000
    python3 bench/scenario_rows.py --sizes 10000   # one size

This prints figures; it is not a timed test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "reliability"))
from pipeline import run_litmus  # noqa: E402

SUITE = """\
version: 1
suite: Rows
context:
{context}
flows:
  - name: ask
    steps:
      - name: ask
        request:
          method: POST
          url: "/ask/{{{{ scenario.id | urlencode }}}}"
          json: {{question: "{{{{ scenario.data.question }}}}", first: "{{{{ scenario.data.items.0.sku }}}}"}}
        assertions: [{{type: status_code, expected: 200}}]
"""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):  # noqa: N802 - the http.server naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


def write_project(directory: Path, rows: int, inline: bool) -> None:
    (directory / "probes").mkdir(parents=True)
    records = [{"id": f"row-{i}", "question": f"Where is order {1000 + i}?",
                "items": [{"sku": f"sku-{i}-{k}", "qty": k} for k in range(3)]} for i in range(rows)]
    if inline:
        lines = ["  scenarios:"]
        lines += [f"    - {{id: {r['id']}, data: {json.dumps({k: r[k] for k in ('question', 'items')})}}}"
                  for r in records]
        context = "\n".join(lines)
    else:
        with (directory / "probes" / "rows.csv").open("w", encoding="utf-8") as handle:
            handle.write("id,question,items:json\n")
            for r in records:
                handle.write(f'{r["id"]},{r["question"]},"{json.dumps(r["items"]).replace(chr(34), chr(34) * 2)}"\n')
        context = "  scenarios_file: rows.csv"
    (directory / "probes" / "rows.yaml").write_text(SUITE.format(context=context), encoding="utf-8")


def measure(rows: int, inline: bool, base_url: str) -> tuple[float, int, float]:
    with tempfile.TemporaryDirectory(prefix="litmus-rows-") as tmp:
        directory = Path(tmp)
        write_project(directory, rows, inline)
        ran = run_litmus(["run", "--base-url", base_url, "--concurrency", "8", "--format", "summary", "-q"],
                         cwd=directory, timeout=1800)
        if ran.code != 0:
            raise SystemExit(f"litmus run failed for {rows} rows: {ran.output[-2000:]}")
        result = json.loads((directory / "litmus-report" / "results.json").read_text())
        flow_runs = sum(len(s["flow_runs"]) for s in result["suites"])
        return ran.wall_s, flow_runs, ran.max_rss_mib


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    print(f"{'rows':>6}  {'source':<15} {'wall s':>7}  {'flow runs':>9}  {'peak RSS MiB':>12}")
    for rows in args.sizes:
        for inline in (False, True):
            wall, flow_runs, rss_mib = measure(rows, inline, base_url)
            source = "inline" if inline else "scenarios_file"
            print(f"{rows:>6}  {source:<15} {wall:>7.1f}  {flow_runs:>9}  {rss_mib:>12.1f}", flush=True)
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
