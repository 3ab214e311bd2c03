"""Inline SVG plots for the HTML report, drawn in Python from the results (no charting library, no
network): pass-rate bars, a runs x steps status grid, latency strip plots and judge-score strips.

Status is never colour alone: each status has its own shape (the `#s-<status>` symbols of
`SYMBOLS`), every mark has a `<title>` a screen reader or a hover reads, and every plot has a text
caption. Plots scale with the page (viewBox, width 100%), so they fit a 375 px screen.
"""

from __future__ import annotations

import re

from litmus.report.markup import Markup, esc, join, tag
from litmus.results import FlowRunResult, SuiteResult, run_label, runs_per_flow
from litmus.text import clip, count

# Shapes on a 16 x 16 grid: passed a tick in a circle, failed a cross in a square, error a triangle
# with a bar, needs_review a diamond with an equals sign (undecided), skipped a dash in a circle.
# The same shapes head every finding and chip; plot marks use their outlines (see `mark`).
_INK = 'fill="none" stroke="#fff" stroke-width="1.8" stroke-linecap="round"'  # the mark inside a shape
SHAPES = {
    "passed": f'<circle cx="8" cy="8" r="7"/><path d="M4.5 8.2l2.3 2.3 4.7-4.9" {_INK}/>',
    "failed": f'<rect x="1" y="1" width="14" height="14" rx="2"/><path d="M5 5l6 6M11 5l-6 6" {_INK}/>',
    "error": f'<path d="M8 1l7 13H1z"/><path d="M8 5.5v4M8 11.5v.8" {_INK}/>',
    "needs_review": f'<path d="M8 .8l7.2 7.2L8 15.2.8 8z"/><path d="M5.2 6.8h5.6M5.2 9.2h5.6" {_INK}/>',
    "skipped": f'<circle cx="8" cy="8" r="7"/><path d="M4.5 8h7" {_INK}/>',
}
WORDS = {"passed": "passed", "failed": "failed", "error": "error", "needs_review": "needs review",
         "skipped": "skipped"}
RUN_ROWS = 100  # grid rows drawn per flow; the rest are counted in the caption
STRIP_POINTS = 1000  # points per strip row


def symbols() -> Markup:
    """The shape definitions, once per page (every icon refers to them with `<use>`)."""
    defs = "".join(f'<symbol id="s-{name}" viewBox="0 0 16 16">{shape}</symbol>' for name, shape in SHAPES.items())
    return Markup(f'<svg width="0" height="0" style="position:absolute" aria-hidden="true">{defs}</svg>')


def icon(status: str) -> Markup:
    return Markup(f'<svg class="ic st-{status}" viewBox="0 0 16 16" aria-hidden="true">'
                  f'<use href="#s-{status}"/></svg>')


def badge(status: str, text: str | None = None) -> Markup:
    """Shape plus words: readable in greyscale and without an emoji font."""
    return tag("span", icon(status), " ", text or WORDS[status], class_=f"badge st-{status}")


def mark(status: str, x: float, y: float, size: float, title: str) -> str:
    """One plot mark centred on (x, y): a single element shaped by status (circle passed, square
    failed, triangle error, diamond needs review, bar skipped), with its title. Plain shapes, not
    `<use>`: thousands of marks must stay cheap for the browser."""
    h = size / 2
    shapes = {
        "passed": f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{h:g}"',
        "failed": f'<rect x="{x - h * .9:.1f}" y="{y - h * .9:.1f}" width="{size * .9:g}" height="{size * .9:g}"',
        "error": f'<path d="M{x:.1f} {y - h:.1f}l{h:g} {size:g}h-{size:g}z"',
        "needs_review": f'<path d="M{x:.1f} {y - h:.1f}l{h:g} {h:g}-{h:g} {h:g}-{h:g}-{h:g}z"',
        "skipped": f'<rect x="{x - h:.1f}" y="{y - h / 4:.1f}" width="{size:g}" height="{h / 2:g}"',
    }
    element = shapes[status][1:].split(" ", 1)[0]
    return f'{shapes[status]} class="st-{status}"><title>{esc(title)}</title></{element}>'


def _svg(width: float, height: float, label: str, *content: str, css: str = "plot") -> Markup:
    """An SVG drawn at its natural size, narrower when the page is (never wider than the screen)."""
    return Markup(f'<svg class="{css}" viewBox="0 0 {width:g} {height:g}" width="{width:g}" height="{height:g}" '
                  f'role="img" aria-label="{esc(label)}">' + "".join(content) + "</svg>")


def pass_rate_bar(suite: SuiteResult) -> Markup:
    """The suite's pass rate as a bar, its pass_threshold as a marked line across it."""
    rate, threshold = max(0.0, min(suite.pass_rate, 100.0)), max(0.0, min(suite.pass_threshold, 100.0))
    status = "passed" if suite.verdict == "passed" else "failed"
    label = f"{suite.pass_rate:g}% of flow runs passed; the suite needs {suite.pass_threshold:g}%"
    return _svg(
        200, 18, label,
        '<rect class="track" x="0" y="3" width="200" height="12" rx="2"/>',
        f'<rect class="fill st-{status}" x="0" y="3" width="{rate * 2:.1f}" height="12" rx="2"/>',
        f'<path class="limit" d="M{threshold * 2:.1f} 0v18"/>',
        f"<title>{esc(label)}</title>", css="plot bar",
    )


# A flow's runs, each with the name people read ("delayed-order, run 2 of 3"): see `runs_by_flow`.
NamedRuns = list[tuple[FlowRunResult, str]]


def status_grid(runs: NamedRuns, flow: str) -> Markup:
    """Rows are flow runs, columns the flow's steps; each cell the step's status as a shape."""
    steps: list[str] = []
    for run, _ in runs:
        steps += [step.name for step in run.steps if step.name not in steps]
    shown = runs[:RUN_ROWS]
    cell, label_width, head = 18, 200, 16
    width = label_width + cell * max(len(steps), 1)
    parts = []
    for column, name in enumerate(steps):
        parts.append(f'<text class="axis" x="{label_width + column * cell + 9}" y="11" text-anchor="middle">'
                     f"{column + 1}<title>step {column + 1}: {esc(name)}</title></text>")
    for row, (run, run_name) in enumerate(shown):
        y = head + row * cell
        parts.append(f'<text class="axis" x="{label_width - 6}" y="{y + 13}" text-anchor="end">'
                     f"{esc(clip(run_name, 32))}</text>")
        by_name = {step.name: step.status for step in run.steps}
        for column, name in enumerate(steps):
            status = by_name.get(name, "skipped")
            title = f"{run_name}, {name}: {WORDS[status]}"
            parts.append(mark(status, label_width + column * cell + 9, y + 9, 14, title))
    label = f"Status of each step in each of {count(len(runs), 'flow run')} of {flow}"
    svg = _svg(width, head + cell * len(shown) + 2, label, *parts)
    caption = f"{count(len(runs), 'flow run')} × {count(len(steps), 'step')}"
    if len(shown) < len(runs):
        caption += f" (the first {len(shown)} drawn)"
    legend = join(badge(status) for status in ("passed", "failed", "error", "skipped"))
    steps_text = join((f"{i + 1} = {name}" for i, name in enumerate(steps)), " · ")
    return tag("figure", svg, tag("figcaption", caption, ". Steps: ", steps_text, ". ", legend))


def runs_by_flow(suite: SuiteResult) -> dict[str, NamedRuns]:
    """Each flow's named runs, in one pass over the suite (a suite of a thousand flows is drawn a
    thousand times: looking its runs up per flow made the report quadratic)."""
    totals = runs_per_flow(suite)
    flows: dict[str, NamedRuns] = {}
    for run in suite.flow_runs:
        flows.setdefault(run.flow, []).append((run, _run_name(run, totals[run.flow, run.scenario])))
    return flows


def _run_name(run: FlowRunResult, runs: int) -> str:
    name = run_label(run.run_index, runs)
    return f"{run.scenario}, {name}" if run.scenario else name


_WITHIN = re.compile(r"within ([0-9.]+) ms$")


def response_time_limit(outcome) -> float | None:
    """The `max_ms` a response_time outcome checked against (the mismatch's expected value when it
    failed; its reason, "12.5 ms within 500 ms", when it passed)."""
    if outcome.mismatches and isinstance(outcome.mismatches[0].expected, (int, float)):
        return float(outcome.mismatches[0].expected)
    match = _WITHIN.search(outcome.reason or "")
    return float(match.group(1)) if match else None


def _strips(rows: list[tuple[str, list[tuple[float, str, str]], float | None]], unit: str, top: float,
            label: str) -> Markup:
    """One row per label: a dot per value (shape by status), and the limit as a dashed line."""
    row_h, label_width, plot_width = 22, 200, 360
    parts = []
    for index, (name, points, limit) in enumerate(rows):
        y = index * row_h + 4
        parts.append(f'<text class="axis" x="{label_width - 6}" y="{y + 12}" text-anchor="end">{esc(clip(name, 32))}'
                     f"<title>{esc(name)}</title></text>")
        parts.append(f'<path class="grid" d="M{label_width} {y + 8}h{plot_width}"/>')
        for value, status, title in points[:STRIP_POINTS]:
            x = label_width + plot_width * min(value, top) / top
            parts.append(mark(status, x, y + 8, 8, title))
        if limit is not None:
            x = label_width + plot_width * min(limit, top) / top
            parts.append(f'<path class="limit" d="M{x:.1f} {y}v{row_h - 4}"><title>limit {limit:g} {unit}</title>'
                         "</path>")
    axis_y = len(rows) * row_h + 14
    parts.append(f'<text class="axis" x="{label_width}" y="{axis_y}">0</text>'
                 f'<text class="axis" x="{label_width + plot_width}" y="{axis_y}" text-anchor="end">'
                 f"{top:g} {unit}</text>")
    return _svg(label_width + plot_width + 10, axis_y + 4, label, *parts)


def latency_plot(runs: NamedRuns, flow: str) -> Markup | None:
    """Response time of each step across the flow's runs, with the `response_time` limit drawn."""
    rows: dict[str, tuple[list, list]] = {}
    for run, run_name in runs:
        for step in run.steps:
            if step.response is None:
                continue
            points, limits = rows.setdefault(step.name, ([], []))
            # The step's own status: one that errored after its response (a stream cut, a check that
            # could not be evaluated) is an error mark, never a pass.
            points.append((step.response.elapsed_ms, step.status,
                           f"{run_name}: {step.response.elapsed_ms:g} ms ({WORDS[step.status]})"))
            limits += [limit for o in step.assertions if o.type == "response_time"
                       if (limit := response_time_limit(o)) is not None]
    if not rows:
        return None
    strips = [(name, points, min(limits) if limits else None) for name, (points, limits) in rows.items()]
    top = max([v for _, points, _ in strips for v, _, _ in points] + [lim for *_, lim in strips if lim])
    top = _nice(top * 1.05)
    figure = _strips(strips, "ms", top, f"Response time per step of {flow}, every run")
    return tag("figure", figure, tag("figcaption", "Response time per step, one mark per run; the line is the "
                                                   "step's response_time limit."))


def judge_plot(runs: NamedRuns, flow: str) -> Markup | None:
    """Judge scores per judged assertion (and the Intent Evaluation) across runs, against thresholds."""
    rows: dict[str, tuple[list, list]] = {}
    for run, where in runs:
        scored = [("Intent Evaluation", run.intent_evaluation)] if run.intent_evaluation.method == "judge" else []
        scored += [(f"{step.name} › {o.name or o.type}", o) for step in run.steps for o in step.assertions
                   if o.judge is not None]
        for name, judged in scored:
            if judged.score is None:
                continue
            points, thresholds = rows.setdefault(name, ([], []))
            status = judged.status if judged.status in WORDS else "failed"
            points.append((judged.score, status, f"{where}: score {judged.score:g} ({WORDS[status]})"))
            if judged.threshold is not None:
                thresholds.append(judged.threshold)
    if not rows:
        return None
    strips = [(name, points, max(ts) if ts else None) for name, (points, ts) in rows.items()]
    figure = _strips(strips, "", 100, f"Judge scores of {flow} across runs")
    return tag("figure", figure, tag("figcaption", "Judge score (0-100) per judged check, one mark per run; the "
                                                   "line is the threshold."))


def _nice(value: float) -> float:
    """A round axis end at or above value (1, 2 or 5 times a power of ten)."""
    if value <= 0:
        return 1.0
    scale = 10 ** (len(str(int(value))) - 1)
    for step in (1, 2, 5, 10):
        if value <= step * scale:
            return float(step * scale)
    return float(10 * scale)



def sweep_plot(kind: str, rows: list[dict], configured: float, suggested: float | None,
               max_false_fail: float) -> Markup:
    """A calibration's threshold sweep: the false-pass and false-fail rates (0-1) at each threshold 0-100,
    told apart by dash pattern as well as colour; the --max-false-fail limit, the configured threshold and
    the suggested one as marked lines, each with its title."""
    left, top, width, height = 40, 10, 400, 180
    x = lambda threshold: left + width * threshold / 100  # noqa: E731 - the two axes' scales, side by side
    y = lambda value: top + height * (1 - value)  # noqa: E731
    parts = [f'<rect class="track" x="{left}" y="{top}" width="{width}" height="{height}"/>']
    for tick in (0, 25, 50, 75, 100):
        parts.append(f'<text class="axis" x="{x(tick):.1f}" y="{top + height + 14}" text-anchor="middle">{tick}</text>')
    for tick in (0, 0.5, 1):
        parts.append(f'<text class="axis" x="{left - 4}" y="{y(tick) + 3:.1f}" text-anchor="end">{tick:g}</text>'
                     f'<path class="grid" d="M{left} {y(tick):.1f}h{width}"/>')
    for key, css, word in (("false_pass", "false-pass", "false-pass rate"),
                           ("false_fail", "false-fail", "false-fail rate")):
        points = " ".join(f"{x(row['threshold']):.1f},{y(row[key]):.1f}" for row in rows)
        parts.append(f'<polyline class="{css}" points="{points}"><title>{word} by threshold</title></polyline>')
    parts.append(f'<path class="limit" d="M{left} {y(max_false_fail):.1f}h{width}">'
                 f"<title>--max-false-fail {max_false_fail:g}</title></path>")
    parts.append(f'<path class="configured" d="M{x(configured):.1f} {top}v{height}">'
                 f"<title>configured threshold {configured:g}</title></path>")
    if suggested is not None:
        parts.append(f'<path class="suggested" d="M{x(suggested):.1f} {top}v{height}">'
                     f"<title>suggested threshold {suggested:g}</title></path>")
    parts.append(f'<text class="axis" x="{left + width / 2}" y="{top + height + 28}" text-anchor="middle">'
                 "threshold</text>")
    label = (f"{kind}: false-pass and false-fail rates by threshold; configured {configured:g}"
             + (f", suggested {suggested:g}" if suggested is not None else ", no suggestion"))
    return _svg(left + width + 10, top + height + 34, label, *parts)
