"""The report page: one self-contained HTML file (inline CSS, SVG and a few lines of script; nothing
is fetched), with the best plan, the alternatives, a Gantt chart, cost and memory charts, the Pareto
front when asked, and the assumptions."""

from __future__ import annotations

from plan.models.loading import LoadedScenario
from plan.planner.pareto.front import ParetoFront
from plan.planner.pareto.html import front_svg
from plan.planner.plain_text import html_text
from plan.planner.plan import JobPlan, Plan, SolveResult
from plan.planner.report_html.charts import billing_lines, cost_svgs, memory_svg
from plan.planner.report_html.figures import (
    cost_table,
    figure,
    front_table,
    memory_table,
    money,
    table_box,
)
from plan.planner.report_html.gantt import gantt_chart

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto;
       color: #222; max-width: 1040px; padding: 0 12px; }
h1 { font-size: 24px; margin-bottom: 4px; }
h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ddd; }
.headline { font-size: 17px; background: #f4f8fb; border-left: 4px solid #4e79a7;
            padding: 10px 14px; }
.muted { color: #666; font-size: 13px; }
table { border-collapse: collapse; width: 100%; }
td, th { border-bottom: 1px solid #e3e3e3; padding: 4px 8px; text-align: left; vertical-align: top;
         font-size: 14px; } th { background: #fafafa; }
td.num, th.num { text-align: right; white-space: nowrap; }
svg text { font-size: 12px; fill: #333; } .tick { fill: #666; }
.axis { font-size: 12px; fill: #555; }
.grid { stroke: #eee; } .lane { fill: #fafafa; stroke: #e8e8e8; } .lane-label { font-weight: 600; }
.lane-cap { fill: #555; font-size: 11px; }
.held { fill: #dbe9f6; stroke: #9bbbd9; stroke-dasharray: 4 3; }
.wait { fill: #e8e8e8; stroke: #bbb; stroke-dasharray: 2 2; }
.job-bar { stroke: #333; stroke-width: 0.5; }
.bar-label { font-size: 11px; } .cost-bar { fill: #4e79a7; } .card { fill: #f2f2f2; stroke: #999; }
.headroom { stroke: #d62728; stroke-width: 2; stroke-dasharray: 5 3; }
.dominated { fill: #d9d9d9; opacity: 0.6; } .stairs { fill: none; stroke: #888; }
.budget { stroke: #d62728; stroke-dasharray: 6 4; } .budget-label { fill: #d62728; }
.deadline { stroke: #2ca02c; stroke-dasharray: 6 4; } .deadline-label { fill: #2ca02c; }
.pt circle { fill: #1f77b4; } .pt.beyond circle { fill: #fff; stroke: #d62728; stroke-width: 2; }
ul { margin-top: 4px; } li { margin: 2px 0; font-size: 14px; }
main { overflow-wrap: break-word; }
/* Narrow screens: charts scale to their box, tables scroll inside theirs, never the page */
svg { display: block; width: 100%; height: auto; } figure { margin: 0 0 8px; }
figcaption { color: #555; font-size: 13px; margin-top: 4px; }
summary { font-size: 13px; cursor: pointer; }
.table-box { max-width: 100%; overflow-x: auto; } .table-box table { min-width: 36em; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px;
          border: 1px solid #333; }
.gantt-key { list-style: none; padding-left: 0; }
@media (max-width: 600px) { body { margin: 12px auto; padding: 0 8px; }
                            td, th { font-size: 13px; } }
@media print { body { max-width: none; } }
"""

FRONT_CAPTION = ("Each point is the cheapest plan that finishes by its time; up and right of the "
                 "line is worse on both (shaded). Axes span the points; a budget or deadline "
                 "outside them is marked at the edge.")

SCRIPT = """
// Hovering a Gantt bar highlights the job's rows in the tables (no network, no libraries).
for (const bar of document.querySelectorAll('.job-bar')) {
  bar.addEventListener('mouseenter', () => {
    document.querySelectorAll('tr[data-job="' + bar.dataset.job + '"]')
      .forEach(r => r.style.background = '#fff3e0');
  });
  bar.addEventListener('mouseleave', () => {
    document.querySelectorAll('tr[data-job]').forEach(r => r.style.background = '');
  });
}
"""


def _e(text: object) -> str:
    return html_text(str(text))


def _days(hours: float) -> str:
    return f"{hours / 24:,.1f} days" if hours >= 48 else f"{hours:,.1f} h"


def report_html(result: SolveResult, loaded: LoadedScenario, front: ParetoFront | None = None,
                calibration_line: str | None = None) -> str:
    s = loaded.scenario
    cur = result.currency
    body: list[str] = [f"<h1>{_e(result.scenario)}: training compute plan</h1>",
                       f'<p class="muted">{_e(result.proof())}, {_e(result.objective)} objective, '
                       'solved in '
                       f"{result.solve_time_s:.1f} s by the plan CLI. Every number below is an "
                       "estimate with the assumptions listed at the end.</p>"]
    if not result.plans:
        body.append(f'<p class="headline">No plan: {_e(result.status)}.</p>')
        body += [f"<p>{_e(c.constraint)}: {_e(c.detail)}</p>" for c in result.conflicts]
        body += [f"<p>relax {_e(r.kind)}: {_e(r.detail)}</p>" for r in result.relaxations]
        body += [f"<p>note: {_e(n)}</p>" for n in result.notes]
        return _wrap(result.scenario, body)
    best = result.plans[0]
    budget = f" of the {s.budget:,.0f} {_e(cur)} budget" if s.budget else ""
    deadline = f" (deadline {_days(s.deadline_h)})" if s.deadline_h else ""
    body.append(f'<p class="headline"><b>Best plan:</b> {best.total_cost:,.0f} {_e(cur)}{budget}, '
                'every job done '
                f"in {_days(best.makespan_h)}{deadline}. {_e(best.summary())}.</p>")
    if calibration_line is None:  # a plan that used the team's own runs says so up front
        lines = [a.split(": ", 1)[-1] for a in best.assumptions if "calibrated from" in a]
        calibration_line = "; ".join(dict.fromkeys(lines)) or None
    if calibration_line:
        body.append(f'<p class="muted">{_e(calibration_line)}</p>')
    body += _jobs_section(best, loaded, cur)
    body += _schedule_section(best, loaded, cur)
    body += _cost_and_memory_sections(best, cur, s.policy.memory_headroom)
    body += _alternatives_section(result, cur)
    if front is not None:
        body += ["<h2>Cost / time front</h2>",
                 figure(front_svg(front), FRONT_CAPTION, front_table(front))]
    body += (
        ["<h2>Why this plan</h2><ul>"]
        + [f"<li>{_e(line)}</li>" for line in best.explanation]
        + ["</ul>"]
    )
    body += (
        ["<h2>Assumptions</h2><ul>"]
        + [
            f"<li>{_e(line)}</li>"
            for line in best.assumptions or ["none beyond the catalog's sourced figures"]
        ]
        + ["</ul>"]
    )
    if result.notes:
        body += ["<h2>Notes</h2><ul>"] + [f"<li>{_e(n)}</li>" for n in result.notes] + ["</ul>"]
    return _wrap(result.scenario, body)


def export_stacks_text(job: JobPlan, loaded: LoadedScenario) -> str:
    """Which `plan export --to` stacks write this job, as the layout column says it."""
    from plan.planner.export import ExportError, build_layout
    from plan.planner.export.writer import exporting_stacks

    spec = next(j for j in loaded.scenario.jobs if j.id == job.job)
    try:
        layout = build_layout(job, spec, loaded.models[job.job], loaded.catalog.gpu(job.gpu))
    except ExportError as exc:
        return f"no export: {exc}"
    stacks = exporting_stacks(layout)
    return f"exports: --to {', '.join(stacks)}" if stacks else "no export writes this layout"


def _jobs_section(best: Plan, loaded: LoadedScenario, cur: str) -> list[str]:
    out = ["<h2>Jobs of the best plan</h2>",
           table_box("jobs of the best plan") + "<table><thead><tr><th>job</th><th>where</th>"
           '<th>layout</th><th class="num">start (h)</th><th class="num">end (h)</th><th '
           f'class="num">cost ({_e(cur)})</th><th class="num">tokens/s</th></tr></thead>'
           "<tbody>"]
    for j in best.jobs:
        layout = (f"tp={j.tp} pp={j.pp} cp={j.cp}" + (f" ep={j.ep}" if j.ep > 1 else "")
                  + f" dp={j.dp} ZeRO-{j.zero}, mb={j.micro_batch}, recompute {j.recompute_text}, "
                  f"{j.framework} execution model; {export_stacks_text(j, loaded)}")
        out.append(f'<tr data-job="{_e(j.job)}"><td>{_e(j.job)}</td><td>{j.gpus}x {_e(j.gpu)} on '
                   f"{_e(j.platform)} ({_e(j.billing)})</td><td>{_e(layout)}</td><td "
                   f"class='num'>{j.start_h:,.1f}</td><td class='num'>{j.end_h:,.1f}</td><td "
                   f"class='num'>{money(j.cost, cur)}</td><td "
                   f"class='num'>{j.tokens_per_s:,.0f}</td></tr>")
    out.append("</tbody></table></div>")
    return out


def _schedule_section(best: Plan, loaded: LoadedScenario, cur: str) -> list[str]:
    chart = gantt_chart(best, loaded.scenario, cur)
    key = ""
    if chart.unlabelled:
        items = "".join(f'<li><span class="swatch" style="background:{chart.colors[j.job]}"></span>'
                        f"{_e(j.job)} ({j.gpus}x {_e(j.gpu)}), hours {j.start_h:,.1f} to "
                        f"{j.end_h:,.1f}</li>" for j in chart.unlabelled)
        key = ('<p class="muted">Bars too short for their name:</p>'
               f'<ul class="gantt-key">{items}</ul>')
    caption = ("One lane per platform and pool; owned pools and reservations show their capacity "
               "(a reservation's held window is the dashed box). The jobs table above gives the "
               "same start and end hours.")
    return ["<h2>Schedule</h2>", figure(chart.svg, caption) + key]


def _cost_and_memory_sections(best: Plan, cur: str, headroom: float) -> list[str]:
    by_job, by_line = cost_svgs(best, cur)
    return ["<h2>Cost</h2><h3>by job</h3>",
            figure(by_job, f"Cost of each job in {cur}.",
                   cost_table([(j.job, j.cost) for j in best.jobs], "job", cur)),
            "<h3>by billing line</h3>",
            figure(by_line, f"Cost of each billing line in {cur}.",
                   cost_table(billing_lines(best), "billing line", cur)),
            "<h2>Memory per GPU</h2>",
            figure(memory_svg(best, headroom),
                   "Estimated peak per GPU, by part, against the card; the red dashed line is the "
                   f"limit after the {headroom:.0%} headroom the policy keeps free.",
                   memory_table(best))]


def _alternatives_section(result: SolveResult, cur: str) -> list[str]:
    out = ["<h2>Alternatives</h2>", table_box("alternatives") + "<table><thead><tr><th>#</th>"
           f'<th class="num">cost ({_e(cur)})</th><th class="num">done in</th><th>vs plan 1</th>'
           "<th>plan</th></tr></thead><tbody>"]
    for p in result.plans:
        trade = _e(p.trade.summary(cur)) if p.trade else "best"
        changes = "".join(f"<li>{_e(c)}</li>" for c in (p.trade.changes if p.trade else ()))
        out.append(f'<tr><td>{p.rank}</td><td class="num">{money(p.total_cost, cur)}</td>'
                   f'<td class="num">{_days(p.makespan_h)}</td><td>{trade}</td>'
                   f"<td>{_e(p.summary())}"
                   + (f"<ul>{changes}</ul>" if changes else "") + "</td></tr>")
    out.append("</tbody></table></div>")
    return out


def _wrap(title: str, body: list[str]) -> str:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}: '
            'plan report</title><meta name="viewport" content="width=device-width, '
            'initial-scale=1">'
            f"<style>{CSS}</style></head><body><main>\n" + "\n".join(body)
            + f"\n</main><script>{SCRIPT}</script></body></html>\n")
