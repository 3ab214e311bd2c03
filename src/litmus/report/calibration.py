"""The calibration's reports, from calibration.json (`litmus calibrate`): a Markdown table for the terminal or a
PR, and a self-contained HTML page with each type's threshold sweep drawn as inline SVG (no script, no external
asset: its Content-Security-Policy allows inline styles only)."""

from __future__ import annotations

from typing import Any

from litmus.report import plots
from litmus.report.markdown_text import cell, one_line
from litmus.report.markup import Markup, esc, tag

COLUMNS = ("type", "n", "agreement", "kappa (95% CI)", "false pass", "false fail", "needs review",
           "suggested threshold", "suggested band")
SOURCE_COLUMNS = ("source", "type", "n", "agreement", "kappa (95% CI)", "false pass", "false fail", "needs review")


def percent(figure: dict[str, Any]) -> str:
    """`3/20 = 15.0% (5.2-36.0)`: count, share and 95% Wilson interval; `-` with nothing to count."""
    if not figure["of"]:
        return "-"
    return (f"{figure['count']}/{figure['of']} = {100 * figure['rate']:.1f}% "
            f"({100 * figure['low']:.1f}-{100 * figure['high']:.1f})")


def kappa(figure: dict[str, Any]) -> str:
    if figure["value"] is None:
        return "undefined"
    interval = f" ({figure['low']:.2f} to {figure['high']:.2f})" if figure["low"] is not None else ""
    return f"{figure['value']:.2f}{interval}"


def _row(kind: str, figures: dict[str, Any]) -> list[str]:
    return [str(figures["n"]), percent(figures["agreement"]), kappa(figures["kappa"]), percent(figures["false_pass"]),
            percent(figures["false_fail"]), percent(figures["needs_review"])]


def _suggested(figures: dict[str, Any]) -> list[str]:
    suggestion = figures["suggestion"]
    if suggestion is None:
        return ["none (fewer than 30 labels)", "none"]
    return [f"{suggestion['threshold']} (false pass {100 * suggestion['false_pass']:.1f}%, false fail "
            f"{100 * suggestion['false_fail']:.1f}%)",
            f"{suggestion['band']} (escalates {percent(suggestion['escalated'])})"]


def title(document: dict[str, Any]) -> str:
    judge = document["judge"]
    escalation = judge["escalation"]
    tiers = f"{judge['provider']}:{judge['model']}" + (
        f", escalating to {escalation['provider']}:{escalation['model']} within ±{escalation['band']:g}"
        if escalation else "")
    return f"Judge calibration: {tiers}, threshold {judge['threshold']:g}"


def markdown(document: dict[str, Any]) -> str:
    lines = [f"## {one_line(title(document))}", "", "| " + " | ".join(COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    for kind, figures in document["types"].items():
        lines.append("| " + " | ".join([kind, *_row(kind, figures), *_suggested(figures)]) + " |")
    settings = document["settings"]
    lines += ["", f"Rates over the replies the judge decided, at the configured threshold, with 95% Wilson intervals; "
                  f"kappa with a 95% bootstrap interval ({settings['bootstrap']['rounds']} resamples, seed "
                  f"{settings['bootstrap']['seed']}). Suggested threshold: the fewest false passes with a false-fail "
                  f"rate at most {settings['max_false_fail']:g}, ties to the lowest."]
    if len(document["by_source"]) > 1:
        lines += ["", "### By label source", "", "| " + " | ".join(SOURCE_COLUMNS) + " |",
                  "|" + "---|" * len(SOURCE_COLUMNS)]
        for source, types in document["by_source"].items():
            for kind, figures in types.items():
                lines.append("| " + " | ".join([cell(source), kind, *_row(kind, figures)]) + " |")
    if document["warnings"]:
        lines += ["", "### Warnings", ""] + [f"- {one_line(warning)}" for warning in document["warnings"]]
    if document["unmatched"]:
        lines += ["", f"### Decisions not used ({len(document['unmatched'])})", ""]
        lines += [f"- {cell(note['where'])} finding {cell(note['finding'])}: {one_line(note['why'])}"
                  for note in document["unmatched"]]
    return "\n".join(lines)


CSS = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --code: #f6f8fa; --pass: #1a7f37; --fail: #cf222e;
  color-scheme: light dark; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --code: #151b23;
  --pass: #3fb950; --fail: #f85149; } body { background: #0d1117; } }
body { color: var(--fg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 16px; }
table { border-collapse: collapse; display: block; overflow-x: auto; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
.plot { max-width: 100%; height: auto; display: block; }
.plot text { fill: var(--muted); font: 10px ui-monospace, Menlo, Consolas, monospace; }
.plot .track { fill: var(--code); stroke: var(--line); }
.plot .grid { stroke: var(--line); }
.plot polyline { fill: none; stroke-width: 2; }
.plot .false-pass { stroke: var(--fail); }
.plot .false-fail { stroke: var(--pass); stroke-dasharray: 6 3; }
.plot .limit { stroke: var(--muted); stroke-dasharray: 2 2; }
.plot .configured { stroke: var(--fg); stroke-width: 1.5; }
.plot .suggested { stroke: var(--fg); stroke-width: 1.5; stroke-dasharray: 8 3 2 3; }
figcaption { color: var(--muted); font-size: 13px; }
"""


def html_page(document: dict[str, Any]) -> str:
    settings = document["settings"]
    head = tag("tr", *(tag("th", name, scope="col") for name in COLUMNS))
    rows = [tag("tr", tag("th", kind, scope="row"), *(tag("td", value) for value in
                                                        [*_row(kind, figures), *_suggested(figures)]))
            for kind, figures in document["types"].items()]
    figures = []
    for kind, figures_of in document["types"].items():
        suggestion = figures_of["suggestion"]
        plot = plots.sweep_plot(kind, figures_of["sweep"], document["judge"]["threshold"],
                                suggestion["threshold"] if suggestion else None, settings["max_false_fail"])
        figures.append(tag("figure", tag("h3", kind), plot, tag(
            "figcaption", f"{kind}: false-pass rate (solid) and false-fail rate (dashed) by threshold; dotted: "
                          f"--max-false-fail {settings['max_false_fail']:g}; solid vertical: the configured "
                          f"threshold {document['judge']['threshold']:g}"
                          + (f"; dash-dot vertical: the suggested threshold {suggestion['threshold']}"
                             if suggestion else f"; no suggestion ({figures_of['no_suggestion']})")),
            class_="sweep", data_type=kind))
    if len(document["by_source"]) > 1:
        source_head = tag("tr", *(tag("th", name, scope="col") for name in SOURCE_COLUMNS))
        source_rows = [tag("tr", tag("td", source), tag("td", kind), *(tag("td", value) for value in _row(kind, figs)))
                       for source, types in document["by_source"].items() for kind, figs in types.items()]
        figures += [tag("h2", "By label source"),
                    tag("table", tag("thead", source_head), tag("tbody", *source_rows), class_="sources")]
    notes = [tag("li", warning) for warning in document["warnings"]]
    notes += [tag("li", f"{note['where']} finding {note['finding']}: {note['why']}") for note in document["unmatched"]]
    body = [tag("h1", title(document)), tag("table", tag("thead", head), tag("tbody", *rows), class_="figures"),
            tag("p", "Rates over the replies the judge decided, at the configured threshold, with 95% Wilson "
                     f"intervals; kappa with a 95% bootstrap interval ({settings['bootstrap']['rounds']} resamples, "
                     f"seed {settings['bootstrap']['seed']})."),
            *figures]
    if notes:
        body += [tag("h2", "Warnings and decisions not used"), tag("ul", *notes)]
    return ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title(document))}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            + Markup("\n".join(body)) + "\n</main>\n</body>\n</html>\n")
