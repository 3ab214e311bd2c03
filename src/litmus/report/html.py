"""The HTML report (`report.html`): one self-contained file a reviewer opens, offline, on a phone,
in print, with or without JavaScript.

Order of the page: the verdict and counts; per suite a pass-rate bar against its threshold;
then the **findings first**, grouped by suite and flow (failing suites first, worst first), each
expandable with its mismatch table, judge tiers and reason; the request, the response (JSON
pretty-printed, the failing paths highlighted, bounded) and the curl are shown once per step, not
once per finding. Then plots per flow (runs x steps status grid, latency strips with the
`response_time` limit, judge scores against the threshold) and every outcome in one table. Step
warnings (which decide nothing) are counted in the header and on their suite's card, listed after the
findings, and shown with the exchange of a step that has findings.

Every finding has an anchor, its results.json `id` (`report.html#<id>`), and a visible link to it;
opening such a URL scrolls to the finding and expands it. Findings past FINDINGS_SHOWN are data for
the script, drawn (summary, location, link) when the search, a filter or a link asks for them: each
is found and linked, and the page is no heavier to open than with FINDINGS_SHOWN findings.

Filters (status chips, suite, flow, text search) are a small inline script; without it every
finding is simply shown. Status is text plus shape as well as colour. Everything from a response
or a judge is escaped by `litmus.report.markup` (nothing is raw HTML); the JSON the script reads is
escaped for `</script>`. No external asset, no network.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from litmus.assertions._jsonpaths import format_path
from litmus.compare import headline
from litmus.report import findings as fd
from litmus.report import plots
from litmus.report.markup import Markup, esc, join, link, script_json, tag, void
from litmus.report.options import Options, probe_url
from litmus.results import RunResult, StepResult, run_label, runs_per_flow
from litmus.text import clip, count
from litmus.usage import run_totals_line
from litmus.verdict import skipped_note

BODY_CHARS = 20_000  # response text shown per step (results hold 4 KiB excerpts; this bounds older ones)
JSON_NODES = 2_000  # nodes of a pretty-printed body; the rest is summarised
# Findings drawn in full: past a few thousand the page gets too heavy to open, and the first ones
# tell the story. The others are listed by their summary and location only (still searched and linked);
# results.json and junit.xml hold all their details.
FINDINGS_SHOWN = 2_000
# Step warnings listed: they decide nothing, so past these the rest are counted (results.json holds them all).
WARNINGS_SHOWN = 2_000
CHIPS = ("failed", "error", "needs_review", "skipped", "passed")
# A finding's kind as the status a filter chip selects: "no response" is an error of the step.
CHIP_OF = {"failed": "failed", "transport_error": "error", "error": "error", "needs_review": "needs_review"}
VERDICT_STATUS = {"passed": "passed", "passed_with_findings": "needs_review", "failed": "failed", "nothing": "error"}

CSS = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #fff; --muted: #59636e; --line: #d1d9e0; --code: #f6f8fa;
  --pass: #1a7f37; --fail: #cf222e; --err: #9a6700; --rev: #8250df; --skip: #59636e; --hl: #fff8c5; --link: #0969da; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --code: #161b22;
    --pass: #3fb950; --fail: #ff7b72; --err: #d29922; --rev: #bc8cff; --skip: #9198a1; --hl: #5a4a00; --link: #4493f8; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem; }
h1, h2, h3, h4 { line-height: 1.25; margin: 1.25rem 0 .5rem; overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
h4 { font-size: 1rem; margin: .5rem 0; }
a { color: var(--link); }
p, li, td, summary, figcaption { overflow-wrap: anywhere; }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code); }
code { padding: .1em .3em; border-radius: 4px; }
pre { padding: .75rem; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere;
  max-height: 32rem; overflow-y: auto; margin: .25rem 0 .75rem; }
.scroll { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--code); white-space: nowrap; }
.ic { width: 1em; height: 1em; vertical-align: -.15em; fill: currentColor; }
.st-passed { color: var(--pass); fill: var(--pass); } .st-failed { color: var(--fail); fill: var(--fail); }
.st-error { color: var(--err); fill: var(--err); } .st-needs_review { color: var(--rev); fill: var(--rev); }
.st-skipped { color: var(--skip); fill: var(--skip); }
.badge { display: inline-block; white-space: nowrap; font-weight: 600; margin-right: .6rem; }
.verdict { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
.facts { color: var(--muted); margin: .25rem 0; }
.suites { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: .75rem; }
.suite-card { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; }
.suite-card h3 { margin: 0 0 .25rem; font-size: 1rem; }
.plot { max-width: 100%; height: auto; display: block; } .plot.bar { width: 100%; }
.plot text { fill: var(--muted); font: 10px ui-monospace, Menlo, Consolas, monospace; }
.plot .track { fill: var(--code); stroke: var(--line); }
.plot .limit { stroke: var(--fg); stroke-width: 2; stroke-dasharray: 3 2; fill: none; }
.plot .grid { stroke: var(--line); }
figure { margin: .5rem 0 1rem; } figcaption { color: var(--muted); font-size: .9rem; }
.filters { position: sticky; top: 0; background: var(--bg); border-bottom: 1px solid var(--line);
  padding: .5rem 0; z-index: 1; display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; }
.filters[hidden] { display: none; }
.chip { border: 1px solid var(--line); border-radius: 1rem; background: var(--bg); color: var(--fg);
  padding: .15rem .6rem; font: inherit; cursor: pointer; }
.chip[aria-pressed="true"] { background: var(--code); border-color: currentColor; font-weight: 600; }
.chip[aria-pressed="false"] { opacity: .75; text-decoration: line-through; }
.filters select, .filters input { font: inherit; max-width: 100%; padding: .15rem .3rem; background: var(--bg);
  color: var(--fg); border: 1px solid var(--line); border-radius: 4px; }
.filters input { flex: 1 1 10rem; min-width: 0; }
.step { border-left: 3px solid var(--line); padding-left: .75rem; margin: .75rem 0; }
details.finding { border: 1px solid var(--line); border-radius: 6px; margin: .4rem 0; padding: .3rem .6rem; }
details.finding > summary { cursor: pointer; font-weight: 600; }
ol.transcript { padding-left: 2.4rem; } ol.transcript li { margin: .3rem 0; }
ol.transcript li.at-fault { border-left: 4px solid var(--fail); background: var(--hl);
  padding-left: .4rem; }
ol.transcript .role { font-weight: 600; min-width: 5.5rem; display: inline-block; }
details.finding[open] > summary { margin-bottom: .4rem; }
a.permalink { font-weight: normal; font-size: .85rem; margin-left: .3rem; }
.finding.listed { border: 1px solid var(--line); border-radius: 6px; margin: .4rem 0; padding: .3rem .6rem; }
.finding:target { outline: 2px solid var(--link); }
.muted { color: var(--muted); }
mark.hl { background: var(--hl); color: inherit; outline: 2px solid var(--fail); border-radius: 2px; }
.hidden { display: none !important; }
.hide-failed [data-status="failed"]:not(.chip), .hide-error [data-status="error"]:not(.chip),
.hide-needs_review [data-status="needs_review"]:not(.chip), .hide-skipped [data-status="skipped"]:not(.chip),
.hide-passed [data-status="passed"]:not(.chip) { display: none; }
tr.run th { background: var(--bg); text-align: left; }
[data-status] .s { white-space: nowrap; font-weight: 600; }
[data-status="passed"] .s { color: var(--pass); } [data-status="failed"] .s { color: var(--fail); }
[data-status="error"] .s { color: var(--err); } [data-status="needs_review"] .s { color: var(--rev); }
[data-status="skipped"] .s { color: var(--skip); }
[data-status="passed"] .s::before { content: "\\2713  "; }
[data-status="failed"] .s::before { content: "\\2715  "; }
[data-status="error"] .s::before { content: "\\25B2  "; }
[data-status="needs_review"] .s::before { content: "\\25C6  "; }
[data-status="skipped"] .s::before { content: "\\2013  "; }
@media (max-width: 600px) { body { font-size: 14px; } main { padding: .5rem; } th, td { padding: .2rem .4rem; } }
@media print {
  :root { --fg: #000; --bg: #fff; --code: #f4f4f4; --muted: #333; }
  main { max-width: none; padding: 0; } .filters { display: none !important; }
  a { color: inherit; text-decoration: underline; }
  pre { white-space: pre-wrap; overflow: visible; max-height: none; }
  h2, h3, h4 { break-after: avoid; } pre, tr, figure, details.finding { break-inside: avoid; }
  .hidden, [data-status]:not(.chip) { display: revert !important; }
}
"""

# Filters: status chips, suite, flow, search. Written for the elements render() makes; no library.
SCRIPT = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("litmus-data").textContent);
  var bar = document.getElementById("filters");
  var root = document.body;
  // Status chips switch a class on <body> (CSS hides those statuses): O(1), even for 30,000 rows.
  // Suite, flow and search mark the elements they exclude, only when one of them is set.
  var findings = Array.prototype.slice.call(document.querySelectorAll("details.finding"));
  var rows = null;
  var groups = Array.prototype.slice.call(document.querySelectorAll("[data-group]"));
  var on = {}, suite = "", flow = "", words = [], narrowed = false;
  var chips = Array.prototype.slice.call(bar.querySelectorAll(".chip"));
  chips.forEach(function (chip) { on[chip.dataset.status] = chip.getAttribute("aria-pressed") === "true"; });
  function fill(select, names) {
    names.forEach(function (name) { select.appendChild(new Option(name, name)); });
  }
  var suiteSelect = document.getElementById("f-suite"), flowSelect = document.getElementById("f-flow");
  fill(suiteSelect, data.suites);
  fill(flowSelect, data.flows);
  var texts = new Map();
  function text(el) {
    if (!texts.has(el)) { texts.set(el, el.textContent.toLowerCase()); }
    return texts.get(el);
  }
  function kept(el) {
    var where = el.dataset.suite === undefined ? el.parentNode.dataset : el.dataset;
    return (!suite || where.suite === suite) && (!flow || where.flow === flow)
      && words.every(function (w) { return text(el).indexOf(w) !== -1; });
  }
  // Findings past those drawn in full are data ([anchor, status, suite, flow, summary, location, rule]):
  // #f-listed draws those the search, the suite and flow filters or a link (`linked`) ask for.
  var listedBox = document.getElementById("f-listed"), listedTexts = null, linked = "";
  function listedElement(entry) {
    var el = document.createElement("div"), status = document.createElement("span");
    var link = document.createElement("a"), where = document.createElement("span");
    el.className = "finding listed";
    el.id = entry[0];
    el.dataset.status = entry[1];
    el.dataset.suite = entry[2];
    el.dataset.flow = entry[3];
    status.className = "s";
    status.textContent = data.words[entry[1]];
    link.className = "permalink";
    link.href = "#" + entry[0];
    link.textContent = "link";
    where.className = "muted";
    where.textContent = " " + entry[5] + " · rule " + entry[6];
    el.append(status, " " + entry[4] + " ", link, where);
    return el;
  }
  function drawListed() {
    if (!listedBox) { return; }
    var active = Boolean(suite || flow || words.length), drawn = document.createDocumentFragment();
    listedTexts = listedTexts || data.listed.map(function (e) {
      return (e[4] + " " + e[5] + " rule " + e[6]).toLowerCase();
    });
    data.listed.forEach(function (entry, i) {
      var match = active && (!suite || entry[2] === suite) && (!flow || entry[3] === flow)
        && words.every(function (w) { return listedTexts[i].indexOf(w) !== -1; });
      if (match || entry[0] === linked) { drawn.appendChild(listedElement(entry)); }
    });
    listedBox.replaceChildren(drawn);
  }
  function narrow() {
    var active = Boolean(suite || flow || words.length);
    if (!active && !narrowed) { return; }
    rows = rows || Array.prototype.slice.call(document.querySelectorAll("tr[data-status]"));
    findings.concat(rows).forEach(function (el) { el.classList.toggle("hidden", active && !kept(el)); });
    narrowed = active;
    drawListed();
  }
  function apply() {
    chips.forEach(function (chip) { root.classList.toggle("hide-" + chip.dataset.status, !on[chip.dataset.status]); });
    var shown = 0;
    findings.concat(listedBox ? Array.prototype.slice.call(listedBox.children) : []).forEach(function (el) {
      shown += on[el.dataset.status] && !el.classList.contains("hidden") ? 1 : 0;
    });
    groups.forEach(function (group) {
      var any = Array.prototype.some.call(group.querySelectorAll(".finding"), function (el) {
        return on[el.dataset.status] && !el.classList.contains("hidden");
      });
      group.classList.toggle("hidden", !any);
    });
    document.getElementById("f-count").textContent = shown + " of " + data.findings + " findings shown";
  }
  chips.forEach(function (chip) {
    chip.addEventListener("click", function () {
      on[chip.dataset.status] = !on[chip.dataset.status];
      chip.setAttribute("aria-pressed", String(on[chip.dataset.status]));
      apply();
    });
  });
  suiteSelect.addEventListener("change", function () { suite = suiteSelect.value; narrow(); apply(); });
  flowSelect.addEventListener("change", function () { flow = flowSelect.value; narrow(); apply(); });
  document.getElementById("f-search").addEventListener("input", function (event) {
    words = event.target.value.toLowerCase().split(/\s+/).filter(Boolean);
    narrow();
    apply();
  });
  // A link to a finding (report.html#<id>) opens it, past any filter that hid it, and scrolls to it.
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (id && !document.getElementById(id) && data.listed.some(function (entry) { return entry[0] === id; })) {
      linked = id;
      drawListed();
    }
    var target = document.getElementById(id);
    if (!target || !target.classList.contains("finding")) { return; }
    if (target.classList.contains("hidden")) {
      suite = flow = suiteSelect.value = flowSelect.value = document.getElementById("f-search").value = "";
      words = [];
      narrow();
    }
    on[target.dataset.status] = true;
    bar.querySelector('.chip[data-status="' + target.dataset.status + '"]').setAttribute("aria-pressed", "true");
    apply();
    if (target.tagName === "DETAILS") { target.open = true; }
    target.scrollIntoView();
  }
  window.addEventListener("hashchange", reveal);
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
  bar.hidden = false;
  apply();
  reveal();
})();
"""


def render(result: RunResult, **options) -> str:
    opts = Options(**options)
    findings = fd.reading_order(fd.collect(result))
    warnings = fd.step_warnings(result.suites)
    verdict = fd.run_verdict(result, findings)
    data = {"findings": len(findings), "listed": [_listed(f) for f in findings[FINDINGS_SHOWN:]],
            "words": plots.WORDS, "suites": [s.name for s in result.suites],
            "flows": sorted({run.flow for s in result.suites for run in s.flow_runs})}
    # The page is joined once from its sections: a body joined first and then copied into the page held
    # two more copies of the whole report (at two bytes a character once any character is past U+00FF).
    return "".join((
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{esc(f'Litmus: {verdict.text}')}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        "<main>\n",
        *map(esc, (
            plots.symbols(),
            _header(result, opts, findings, warnings, verdict),
            _suites(result, opts, findings, warnings),
            _baseline(result, findings),
            _human_decisions(result),
            _findings(result, opts, findings),
            _warnings(result, opts, warnings),
            _flows(result),
            _outcomes(result),
        )),
        "\n</main>\n"
        f"<script type=\"application/json\" id=\"litmus-data\">{script_json(data)}</script>\n"
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n",
    ))


# ---- header and suites ----

def _header(result: RunResult, options: Options, findings: list[fd.Finding], warnings: list[fd.StepWarning],
            verdict: fd.Verdict) -> Markup:
    counts = [count(len(findings), "finding")]
    counts += [f"{n} {word}" for kind, word in (("failed", "failed"), ("transport_error", "no response"),
                                                ("error", "could not be evaluated"),
                                                ("needs_review", "need human review"))
               if (n := sum(f.kind == kind for f in findings))]
    counts.append(count(sum(len(s.flow_runs) for s in result.suites), "flow run"))
    if skipped := skipped_note(result.suites):
        counts.append(skipped)
    if warnings:
        counts.append(link(count(len(warnings), "warning"), "#warnings"))
    facts = []
    sha = options.sha or result.run.git_sha
    if sha:
        facts.append(join(["commit ", tag("code", sha[:12])]))
    if result.run.base_url:
        facts.append(join(["target ", tag("code", result.run.base_url)]))
    if result.run.shard:
        facts.append(f"shard {result.run.shard}")
    facts.append(f"started {result.run.started_at}")
    parts = [tag("h1", plots.badge(VERDICT_STATUS[verdict.status], "Litmus:"), verdict.text, class_="verdict"),
             tag("p", join(counts, " · "), class_="facts"), tag("p", join(facts, " · "), class_="facts")]
    if result.run.interrupted:
        parts.append(tag("p", plots.badge("error", "The run was interrupted:"), " results are incomplete."))
    if fd.judge_ran(result):
        totals = result.judge
        parts.append(tag("p", f"Judge, whole run: {totals.calls} calls · {totals.cached} cached · {totals.escalated} "
                              f"escalated · {totals.needs_review} need review · {totals.input_tokens:,} input + "
                              f"{totals.output_tokens:,} output tokens", class_="facts"))
    if spent := run_totals_line(result):
        parts.append(tag("p", spent, class_="facts"))
    return tag("header", *parts)


def _suites(result: RunResult, options: Options, findings: list[fd.Finding], warnings: list[fd.StepWarning]) -> Markup:
    if not result.suites:
        return tag("p", "No suites ran.")
    cards = []
    for suite in sorted(result.suites, key=lambda s: s.verdict != "failed"):
        stats = fd.suite_stats(suite)
        words = fd.suite_verdict(suite, findings)
        status = "needs_review" if words.startswith("passed with") else suite.verdict
        name = link(suite.name, probe_url(result, options, suite.file, suite.line))
        warned = sum(warning.suite is suite for warning in warnings)
        cards.append(tag(
            "div", tag("h3", name), plots.badge(status, words), plots.pass_rate_bar(suite),
            tag("p", f"{stats.runs_passed} of {count(stats.runs_total, 'flow run')} passed = {suite.pass_rate:g}% "
                     f"(needs {suite.pass_threshold:g}%)", class_="muted"),
            tag("p", tag("code", suite.file), class_="muted"),
            *([tag("p", plots.icon("error"), " ", link(count(warned, "warning"), "#warnings"),
                   " (they do not change the verdict)", class_="muted")] if warned else []),
            *([_coverage(suite.openapi)] if suite.openapi is not None else []),
            class_="suite-card",
        ))
    return tag("section", tag("h2", "Suites"), tag("div", *cards, class_="suites"), id="suites")


def _coverage(coverage) -> Markup:
    counts, missing, more = fd.coverage_parts(coverage)
    parts = ["OpenAPI coverage of ", tag("code", coverage.spec), f": {counts}"]
    if missing:
        parts += ["; not exercised: ", join([tag("code", key) for key in missing], ", "),
                  f" and {more} more" if more else ""]
    return tag("p", *parts, class_="muted")


# ---- what this PR changed (a baseline comparison) ----

def _baseline(result: RunResult, findings: list[fd.Finding]) -> Markup:
    """"New in this PR" (findings and regressed flows), "Fixed", then "Already failing on the base
    branch", folded; each finding links to its full entry below."""
    summary = result.baseline
    if summary is None:
        return Markup("")

    def entry(finding: fd.Finding) -> Markup:
        return tag("li", link(finding.where, f"#{anchor(finding)}"), ": ",
                   clip(fd.summary_sentence(finding), 200))

    new = [f for f in findings if f.baseline != "unchanged"]
    unchanged = [f for f in findings if f.baseline == "unchanged"]
    regressed = [flow for flow in summary.flows if flow.verdict == "regressed"]
    parts = [tag("h2", "What this PR changed"), tag("p", f"Compared with {summary.source}: {headline(summary)}.")]
    parts.append(tag("h3", f"New in this PR ({len(new)})"))
    if regressed:
        parts.append(_table(["Flow", "Pass rate here", "On the base branch", ""],
                            [[f"{flow.suite} › {flow.flow}", fd.rate_text(flow.here), fd.rate_text(flow.baseline),
                              fd.regression_reason(flow, summary.max_cost_increase)] for flow in regressed]))
    usage, more = fd.usage_rows(summary)
    if usage:
        parts.append(tag("h3", "Tokens and cost per flow"))
        parts.append(_table(["Flow", "Here", "On the base branch", "Change per flow run"], usage))
        if more:
            parts.append(tag("p", f"… and {count(more, 'more flow')}.", class_="muted"))
    parts.append(tag("ul", *map(entry, new)) if new else tag("p", "No new findings.", class_="muted"))
    if summary.fixed_findings:
        parts.append(tag("h3", f"Fixed ({len(summary.fixed_findings)})"))
        parts.append(tag("ul", *(tag("li", " › ".join(p for p in (item.suite, item.flow, item.step) if p),
                                     f" [{item.scenario}]" if item.scenario else "", ": ", tag("code", item.label),
                                     f" (was: {clip(item.reason, 200)})")
                                 for item in summary.fixed_findings)))
    if unchanged:
        parts.append(tag("details", tag("summary", f"Already failing on the base branch ({len(unchanged)})"),
                         tag("ul", *map(entry, unchanged))))
    return tag("section", *parts, id="baseline")


# ---- findings ----

def _human_decisions(result: RunResult) -> Markup:
    """The outcomes a human decided (who, when, why), and the decisions that took no effect."""
    decided = fd.human_decided(result)
    summary = result.decisions
    notes = [*(summary.ignored if summary else []), *(summary.stale if summary else [])]
    if not decided and not notes:
        return Markup("")
    parts = []
    if decided:
        parts.append(tag("h2", f"Decided by a human ({len(decided)})"))
        parts.append(tag("ul", *(tag("li", plots.badge("passed" if d.record.status == "passed" else "failed",
                                                       d.where + ":"), " ", tag("code", d.label), ": ", d.text(),
                                     class_="human-decision") for d in decided)))
    if notes:
        parts.append(tag("h2", f"Decisions not applied ({len(notes)})"))
        parts.append(tag("ul", *(tag("li", tag("code", note.where), f" by {note.by} on ", tag("code", note.finding),
                                     f": {note.why}") for note in notes)))
    return tag("section", *parts, class_="decisions")


def _filters(findings: list[fd.Finding], result: RunResult) -> Markup:
    counts = {status: sum(CHIP_OF[f.kind] == status for f in findings) for status in CHIPS}
    outcomes = [o.status for *_, o in result.iter_outcomes()]
    counts["skipped"], counts["passed"] = outcomes.count("skipped"), outcomes.count("passed")
    chips = [tag("button", plots.icon(status), f" {plots.WORDS[status]} ({counts[status]})", type="button",
                 class_=f"chip st-{status}", data_status=status,
                 aria_pressed="true" if status not in ("passed", "skipped") else "false")
             for status in CHIPS]
    return tag(
        "div", *chips,
        tag("label", "Suite ", tag("select", tag("option", "all suites", value=""), id="f-suite")),
        tag("label", "Flow ", tag("select", tag("option", "all flows", value=""), id="f-flow")),
        void("input", type="search", id="f-search", placeholder="Search findings", aria_label="Search findings"),
        tag("span", id="f-count", class_="muted", aria_live="polite"),
        id="filters", class_="filters", hidden=True,
    )


def _findings(result: RunResult, options: Options, findings: list[fd.Finding]) -> Markup:
    title = tag("h2", f"Findings ({len(findings)})")
    if not findings:
        return tag("section", title, tag("p", "No findings: every evaluated assertion passed."), id="findings")
    blocks = []
    if len(findings) > FINDINGS_SHOWN:
        blocks.append(tag("p", tag("strong", f"The first {FINDINGS_SHOWN:,} findings are shown in full"),
                          f"; the other {len(findings) - FINDINGS_SHOWN:,} are listed at the end by their summary and "
                          "location when the search, the suite or flow filter or a link to one asks for them (the "
                          "page stays light): results.json and junit.xml hold every detail."))
    for suite_findings in _grouped(findings[:FINDINGS_SHOWN], lambda f: id(f.suite)):
        flows = []
        runs = runs_per_flow(suite_findings[0].suite)  # once per suite, not per step block
        for flow_findings in _grouped(suite_findings, lambda f: f.flow_run.flow):
            first = flow_findings[0]
            steps = [_step_block(result, options, group, runs) for group in _grouped(flow_findings, _step_key)]
            flows.append(tag("div", tag("h3", f"{first.suite.name} › {first.flow_run.flow}"), *steps,
                             data_group="flow"))
        blocks.append(tag("section", *flows, data_group="suite"))
    if len(findings) > FINDINGS_SHOWN:
        blocks.append(tag("section", tag("h3", f"The other {len(findings) - FINDINGS_SHOWN:,} findings"),
                          tag("div", id="f-listed"), data_group="suite"))
    return tag("section", title, _filters(findings, result), *blocks, id="findings")


# ---- step warnings: worth a look, decide nothing ----

def _warnings(result: RunResult, options: Options, warnings: list[fd.StepWarning]) -> Markup:
    if not warnings:
        return Markup("")
    items = []
    for warning in warnings[:WARNINGS_SHOWN]:
        where = link(tag("code", warning.location), probe_url(result, options, warning.suite.file, warning.step.line))
        runs = f", {warning.runs_text()}" if warning.runs_text() else ""
        items.append(tag("li", where, f" {warning.where}{runs}: ", warning.text, id=f"warning-{warning.fingerprint}"))
    parts = [tag("h2", f"Warnings ({len(warnings)})"),
             tag("p", "Worth a look; they do not change the verdict.", class_="muted"), tag("ul", *items)]
    if len(warnings) > WARNINGS_SHOWN:
        parts.append(tag("p", f"The other {len(warnings) - WARNINGS_SHOWN:,} warnings are in results.json."))
    return tag("section", *parts, id="warnings")


def anchor(finding: fd.Finding) -> str:
    """The finding's id in the page: its results.json `id`, so `report.html#<id>` opens it. An assertion
    undecided in one run and failed in another is two findings of one `id`: the undecided one's ends
    with `-needs-review`."""
    return f"{finding.id}-needs-review" if finding.rule == fd.NEEDS_REVIEW else finding.id


def _grouped(items: list, key) -> Iterator[list]:
    """Consecutive items with the same key (the reading order already keeps groups together)."""
    group: list = []
    current = object()
    for item in items:
        k = key(item)
        if group and k != current:
            yield group
            group = []
        current = k
        group.append(item)
    if group:
        yield group


def _step_key(finding: fd.Finding):
    if finding.step is not None:
        return id(finding.step)
    return ("conversation" if finding.outcome is not None else "intent", id(finding.flow_run))


def _step_block(result: RunResult, options: Options, members: list[fd.Finding],
                runs_of: Counter[tuple[str, str | None]]) -> Markup:
    """The findings of one step (of one flow run), then that step's exchange, shown once; `runs_of` is
    `runs_per_flow` of their suite."""
    first = members[0]
    step = first.step
    heading = f"step {step.name}" if step else "conversation" if first.outcome else "Intent Evaluation"
    where = [heading]
    if first.scenario:
        where.append(f"scenario {first.scenario}")
    runs = runs_of[first.flow_run.flow, first.scenario]
    if runs > 1:
        where.append(f"shown: {run_label(first.flow_run.run_index, runs)}")
    parts = [tag("h4", " · ".join(where))]
    parts += [_finding(result, options, f) for f in members]
    if step is not None:
        paths = {m.path for f in members if f.outcome for m in f.outcome.mismatches}
        parts.append(_exchange(first, step, paths))
    return tag("div", *parts, class_="step", data_group="step")


def _finding(result: RunResult, options: Options, finding: fd.Finding) -> Markup:
    """A finding as a `<details>`: its summary and a link to it; opened, where it is and why (the
    mismatches, the judge's tiers and reason)."""
    chip = CHIP_OF[finding.kind]
    badge_status = "error" if finding.kind == "transport_error" else finding.kind
    location = f"{finding.suite.file}:{finding.line}:{finding.column}"
    facts = [link(tag("code", location), probe_url(result, options, finding.suite.file, finding.line)),
             join(["rule ", tag("code", finding.rule)])]
    if finding.runs_text():
        facts.append(finding.runs_text())
    target = anchor(finding)
    summary = tag("summary", plots.badge(badge_status, plots.WORDS[badge_status]),
                  clip(fd.summary_sentence(finding), 300), " ",
                  tag("a", "link", href=f"#{target}", class_="permalink", title="Link to this finding"))
    body = [tag("p", join(facts, " · "), class_="muted")]
    if finding.baseline in ("new", "unchanged"):
        body.insert(0, tag("p", "New in this PR" if finding.baseline == "new" else "Already failing on the base branch",
                           class_=f"baseline-{finding.baseline}"))
    body += _details(finding)
    return tag("details", summary, *body, class_="finding", data_status=chip, data_suite=finding.suite.name,
               data_flow=finding.flow_run.flow, data_fingerprint=finding.fingerprint, id=target)


def _listed(finding: fd.Finding) -> list[str]:
    """A finding past those drawn in full, as the script's data: [anchor, status, suite, flow, summary,
    location, rule]. The script draws it when a search, a filter or a link asks for it."""
    return [anchor(finding), CHIP_OF[finding.kind], finding.suite.name, finding.flow_run.flow,
            clip(fd.summary_sentence(finding), 300), f"{finding.suite.file}:{finding.line}:{finding.column}",
            finding.rule]


def _details(finding: fd.Finding) -> list[Markup]:
    """Why a finding is one: the reason, the mismatch table, the judge's tiers, the Intent Evaluation."""
    parts = []
    reason = fd.extra_reason(finding)
    if reason:
        parts.append(tag("p", reason))
    if finding.outcome is not None and finding.outcome.mismatches:
        parts.append(_table(["path", "expected", "actual", "reason"],
                            [[tag("code", m.path), tag("code", fd.show(m.expected, 2_000)),
                              tag("code", fd.show(m.actual, 2_000)), m.reason] for m in finding.outcome.mismatches]))
    judge = fd.judge_text(finding)
    if judge:
        judge_reason = fd.judge_reason(finding)
        parts.append(tag("p", tag("strong", "Judge: "), judge, f". {judge_reason}" if judge_reason else ""))
        parts.append(_table(
            ["Tier", "Judge", "Score", "Cached", "Latency", "Tokens in / out", "Reason"],
            [[str(i + 1), f"{t.provider}/{t.model}", "unparseable" if t.score is None else f"{t.score:g}",
              "yes" if t.cached else "no", f"{t.latency_ms:g} ms", f"{t.input_tokens} / {t.output_tokens}", t.reason]
             for i, t in enumerate(finding.judge.tiers)]))
    if finding.step is None and finding.outcome is None:
        parts.append(tag("p", tag("strong", "Intent Evaluation: "), finding.intent.reason))
    if finding.flow_run.transcript:
        parts.append(_transcript(finding.flow_run.transcript, fd.turns_at_fault(finding)))
    if finding.decided_by is not None:
        decided = fd.HumanDecided(finding.suite, finding.flow_run, finding.step, finding.outcome or finding.intent)
        parts.append(tag("p", tag("strong", "Decided by a human: "), decided.text()))
    if finding.decidable_id:
        accept, reject = fd.decide_commands(finding.decidable_id)
        review = f"litmus review --accept {finding.decidable_id}"
        parts.append(tag("p", tag("strong", "Decide it: "), "comment ", tag("code", accept), " or ",
                         tag("code", reject), " on the pull request, or run ", tag("code", review)))
    return parts


def _transcript(transcript: list[dict[str, str]], at_fault: set[int]) -> Markup:
    """The conversation as a numbered list of turns, the turns at fault marked."""
    system, turns = fd.transcript_turns(transcript)
    items = [tag("li", *(tag("div", tag("span", message.get("role", ""), class_="role"), " ",
                              clip(message.get("content", ""), 2_000)) for message in turn.messages),
                 value=str(turn.number), class_="turn at-fault" if turn.number in at_fault else "turn",
                 title=f"turn {turn.number} at fault" if turn.number in at_fault else None)
             for turn in turns]
    blamed = f" (turn {', '.join(map(str, sorted(at_fault)))} at fault)" if at_fault else ""
    head = [tag("h4", f"Conversation{blamed}")]
    if system:
        head.append(tag("p", tag("span", "system", class_="role"), " ", clip(system, 2_000), class_="muted"))
    return tag("div", *head, tag("ol", *items, class_="transcript"))


def _table(header: list[str], rows: list[list[Any]]) -> Markup:
    head = tag("tr", *(tag("th", name, scope="col") for name in header))
    return tag("div", tag("table", tag("thead", head), tag("tbody", *(tag("tr", *(tag("td", c) for c in row))
                                                                        for row in rows))), class_="scroll")


def _exchange(finding: fd.Finding, step: StepResult, paths: set[str]) -> Markup:
    parts = []
    request = step.request
    if request is None:
        parts.append(tag("p", f"No request was sent: {step.error or 'skipped'}."))
    else:
        head = "\n".join([f"{request.method} {request.url}", *(f"{k}: {v}" for k, v in request.headers.items())])
        note = " (body shortened)" if request.body_truncated else ""
        parts += [tag("h4", f"Request{note}"), tag("pre", head + (f"\n\n{request.body}" if request.body else ""))]
    response = step.response
    if response is not None:
        head = "\n".join([f"HTTP {response.status} ({response.elapsed_ms:g} ms, {response.size} bytes)",
                          *(f"{k}: {v}" for k, v in response.headers.items())])
        note = " (body shortened)" if response.truncated or response.body_excerpt_truncated else ""
        parts += [tag("h4", f"Response{note}"), tag("pre", head + "\n\n", _body(response.body or "", paths))]
        if step.stream is not None:
            # Time to first event and the assembled text the checks and judges saw.
            parts.append(tag("p", fd.response_text(step)))
    elif step.error:
        parts.append(tag("p", f"No response: {step.error}"))
    if step.rate_limited:
        parts.append(tag("p", fd.rate_limited_text(step).capitalize() + "."))
    if step.warnings:
        parts += [tag("h4", "Warnings (they do not change the verdict)"),
                  tag("ul", *(tag("li", warning) for warning in step.warnings))]
    if step.extracted:
        parts.append(tag("h4", "Extracted"))
        parts.append(tag("ul", *(tag("li", tag("code", name), " = ", tag("code", fd.show(value, 2_000)))
                                 for name, value in step.extracted.items())))
    curl = fd.step_curl(finding.flow_run, step)
    if curl:
        parts += [tag("h4", "Reproduce with curl"), tag("pre", curl)]
    return tag("details", tag("summary", "Request, response and curl"), *parts, class_="exchange")


def _body(text: str, paths: set[str]) -> Markup:
    """The body, JSON pretty-printed with each mismatch path's node marked; other text as it is."""
    text = clip(text, BODY_CHARS)
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):  # a hostile body may nest past the interpreter's limit
        return esc(text)
    if not isinstance(document, (dict, list)):
        return esc(text)
    budget = [JSON_NODES]
    return join(_json(document, "$", paths, 0, budget))


def _json(value: Any, path: str, paths: set[str], depth: int, budget: list[int]) -> Iterator[Any]:
    """Pretty-printed JSON (2-space indent) as escaped pieces; `budget` bounds the nodes written."""
    budget[0] -= 1
    if budget[0] < 0:
        yield "…"
        return
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, dict) and value:
        pieces: list[Any] = ["{\n"]
        for index, (key, item) in enumerate(value.items()):
            pieces += [inner, json.dumps(key, ensure_ascii=False), ": ",
                       *_json(item, format_path_after(path, key), paths, depth + 1, budget),
                       ",\n" if index < len(value) - 1 else "\n"]
        pieces += [pad, "}"]
    elif isinstance(value, list) and value:
        pieces = ["[\n"]
        for index, item in enumerate(value):
            pieces += [inner, *_json(item, f"{path}[{index}]", paths, depth + 1, budget),
                       ",\n" if index < len(value) - 1 else "\n"]
        pieces += [pad, "]"]
    else:
        pieces = [json.dumps(value, ensure_ascii=False)]
    if path in paths:
        yield tag("mark", join(pieces), class_="hl", data_path=path, title=f"mismatch at {path}")
    else:
        yield from pieces


def format_path_after(path: str, key: str) -> str:
    """`$.a` + key -> `$.a.key` (or `$.a['odd key']`), the normalized form mismatch paths use."""
    return path + format_path([key])[1:]


# ---- per-flow plots and every outcome ----

def _flows(result: RunResult) -> Markup:
    sections = []
    for suite in result.suites:
        for flow, runs in plots.runs_by_flow(suite).items():
            figures = [plots.status_grid(runs, flow), plots.latency_plot(runs, flow), plots.judge_plot(runs, flow)]
            sections.append(tag("div", tag("h3", f"{suite.name} › {flow}"), *(f for f in figures if f)))
    if not sections:
        return Markup("")
    return tag("section", tag("h2", "Flows"), *sections, id="flows")


def _outcomes(result: RunResult) -> Markup:
    """Every assertion outcome, one lean row each (30,000 of them must stay a few MB): a `<tbody>`
    per flow run carries the suite and flow the filters read; the status shape comes from CSS."""
    total = sum(1 for _ in result.iter_outcomes())
    blocks = []
    for suite in result.suites:
        runs = runs_per_flow(suite)
        bodies = []
        for flow_run in suite.flow_runs:
            where = flow_run.flow + (f" · {flow_run.scenario}" if flow_run.scenario else "")
            label = run_label(flow_run.run_index, runs[flow_run.flow, flow_run.scenario])
            rows = [f'<tr data-status="{o.status}"><td>{esc(step.name)}</td><td>{esc(o.name or o.type)}</td>'
                    f'<td class="s">{plots.WORDS[o.status]}</td><td>{esc(o.reason)}</td></tr>'
                    for step in flow_run.steps for o in step.assertions]
            if rows:
                bodies.append(f'<tbody data-suite="{esc(suite.name)}" data-flow="{esc(flow_run.flow)}">'
                              f'<tr class="run"><th colspan="4" scope="rowgroup">{esc(where)}, {label}</th></tr>'
                              + "".join(rows) + "</tbody>")
        if bodies:
            head = tag("tr", *(tag("th", name, scope="col") for name in ("Step", "Assertion", "Status", "Reason")))
            table = Markup(f"<table>{tag('thead', head)}{''.join(bodies)}</table>")
            blocks.append(tag("div", tag("h3", suite.name), tag("div", table, class_="scroll")))
    return tag("section", tag("details", tag("summary", tag("strong", f"Every outcome ({total})")), *blocks),
               id="outcomes")
