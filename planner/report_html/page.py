"""The report page: one self-contained HTML file (inline CSS, SVG and a few lines of script; nothing is
fetched), with the best plan, the alternatives, a Gantt chart, cost and memory charts, the Pareto front
when asked, and the assumptions."""

from __future__ import annotations

import html

from plan.models.loading import LoadedScenario
from plan.planner.pareto.front import ParetoFront
from plan.planner.plan import SolveResult
from plan.planner.report_html.charts import cost_svgs, memory_svg
from plan.planner.report_html.gantt import gantt_svg

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; color: #222;
       max-width: 1040px; padding: 0 12px; }
h1 { font-size: 24px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ddd; }
.headline { font-size: 17px; background: #f4f8fb; border-left: 4px solid #4e79a7; padding: 10px 14px; }
.muted { color: #666; font-size: 13px; }
table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #e3e3e3; padding: 4px 8px;
        text-align: left; vertical-align: top; font-size: 14px; } th { background: #fafafa; }
td.num, th.num { text-align: right; white-space: nowrap; }
svg text { font-size: 12px; fill: #333; } .tick { fill: #777; } .axis { font-size: 12px; fill: #555; }
.grid { stroke: #eee; } .lane { fill: #fafafa; stroke: #e8e8e8; } .lane-label { font-weight: 600; }
.lane-cap { fill: #777; font-size: 11px; } .held { fill: #dbe9f6; stroke: #9bbbd9; stroke-dasharray: 4 3; }
.wait { fill: #e8e8e8; stroke: #bbb; stroke-dasharray: 2 2; } .job-bar { stroke: #333; stroke-width: 0.5; }
.bar-label { font-size: 11px; } .cost-bar { fill: #4e79a7; } .card { fill: #f2f2f2; stroke: #999; }
.headroom { stroke: #d62728; stroke-width: 2; stroke-dasharray: 5 3; }
.dominated { fill: #d9d9d9; opacity: 0.6; } .stairs { fill: none; stroke: #888; }
.budget { stroke: #d62728; stroke-dasharray: 6 4; } .budget-label { fill: #d62728; }
.deadline { stroke: #2ca02c; stroke-dasharray: 6 4; } .deadline-label { fill: #2ca02c; }
.pt circle { fill: #1f77b4; } .pt.beyond circle { fill: #fff; stroke: #d62728; stroke-width: 2; }
ul { margin-top: 4px; } li { margin: 2px 0; font-size: 14px; }
@media print { body { max-width: none; } }
"""

SCRIPT = """
// Hovering a Gantt bar highlights the job's rows in the tables (no network, no libraries).
for (const bar of document.querySelectorAll('.job-bar')) {
  bar.addEventListener('mouseenter', () => {
    document.querySelectorAll('tr[data-job="' + bar.dataset.job + '"]').forEach(r => r.style.background = '#fff3e0');
  });
  bar.addEventListener('mouseleave', () => {
    document.querySelectorAll('tr[data-job]').forEach(r => r.style.background = '');
  });
}
"""


def _e(text: object) -> str:
    return html.escape(str(text))


def _days(hours: float) -> str:
    return f"{hours / 24:,.1f} days" if hours >= 48 else f"{hours:,.1f} h"


def report_html(result: SolveResult, loaded: LoadedScenario, front: ParetoFront | None = None,
                calibration_line: str | None = None) -> str:
    s = loaded.scenario
    cur = result.currency
    body: list[str] = [f"<h1>{_e(result.scenario)}: training compute plan</h1>",
                       f'<p class="muted">{_e(result.proof())}, {_e(result.objective)} objective, solved in '
                       f"{result.solve_time_s:.1f} s by the plan CLI. Every number below is an estimate with "
                       "the assumptions listed at the end.</p>"]
    if not result.plans:
        body.append(f'<p class="headline">No plan: {_e(result.status)}.</p>')
        body += [f"<p>{_e(c.constraint)}: {_e(c.detail)}</p>" for c in result.conflicts]
        body += [f"<p>relax {_e(r.kind)}: {_e(r.detail)}</p>" for r in result.relaxations]
        body += [f"<p>note: {_e(n)}</p>" for n in result.notes]
        return _wrap(result.scenario, body)
    best = result.plans[0]
    budget = f" of the {s.budget:,.0f} {_e(cur)} budget" if s.budget else ""
    deadline = f" (deadline {_days(s.deadline_h)})" if s.deadline_h else ""
    body.append(f'<p class="headline"><b>Best plan:</b> {best.total_cost:,.0f} {_e(cur)}{budget}, every job done '
                f"in {_days(best.makespan_h)}{deadline}. {_e(best.summary())}.</p>")
    if calibration_line is None:  # a plan that used the team's own runs says so up front
        lines = [a.split(": ", 1)[-1] for a in best.assumptions if "calibrated from" in a]
        calibration_line = "; ".join(dict.fromkeys(lines)) or None
    if calibration_line:
        body.append(f'<p class="muted">{_e(calibration_line)}</p>')
    body.append("<h2>Jobs of the best plan</h2><table><thead><tr><th>job</th><th>where</th><th>layout</th>"
                f'<th class="num">start (h)</th><th class="num">end (h)</th><th class="num">cost ({_e(cur)})</th>'
                '<th class="num">tokens/s</th></tr></thead><tbody>')
    for j in best.jobs:
        layout = (f"tp={j.tp} pp={j.pp} cp={j.cp}" + (f" ep={j.ep}" if j.ep > 1 else "")
                  + f" dp={j.dp} ZeRO-{j.zero}, mb={j.micro_batch}, "
                  f"recompute {j.recompute_text}, {j.framework}")
        body.append(f'<tr data-job="{_e(j.job)}"><td>{_e(j.job)}</td><td>{j.gpus}x {_e(j.gpu)} on '
                    f"{_e(j.platform)} ({_e(j.billing)})</td><td>{_e(layout)}</td><td class='num'>{j.start_h:,.1f}"
                    f"</td><td class='num'>{j.end_h:,.1f}</td><td class='num'>{j.cost:,.0f}</td>"
                    f"<td class='num'>{j.tokens_per_s:,.0f}</td></tr>")
    body.append("</tbody></table>")
    body += ["<h2>Schedule</h2>",
             '<p class="muted">One lane per platform and pool; owned pools and reservations show their '
             "capacity (a reservation's held window is the dashed box).</p>", gantt_svg(best, s)]
    by_job, by_line = cost_svgs(best, cur)
    body += ["<h2>Cost</h2><h3>by job</h3>", by_job, "<h3>by billing line</h3>", by_line]
    body += ["<h2>Memory per GPU</h2>",
             f'<p class="muted">Estimated peak per GPU, by part, against the card; the red dashed line is the '
             f"limit after the {s.policy.memory_headroom:.0%} headroom the policy keeps free.</p>",
             memory_svg(best, s.policy.memory_headroom)]
    body.append(f'<h2>Alternatives</h2><table><thead><tr><th>#</th><th class="num">cost ({_e(cur)})</th>'
                '<th class="num">done in</th><th>vs plan 1</th><th>plan</th></tr></thead><tbody>')
    for p in result.plans:
        trade = _e(p.trade.summary(cur)) if p.trade else "best"
        changes = "".join(f"<li>{_e(c)}</li>" for c in (p.trade.changes if p.trade else ()))
        body.append(f'<tr><td>{p.rank}</td><td class="num">{p.total_cost:,.0f}</td><td class="num">'
                    f"{_days(p.makespan_h)}</td><td>{trade}</td><td>{_e(p.summary())}"
                    + (f"<ul>{changes}</ul>" if changes else "") + "</td></tr>")
    body.append("</tbody></table>")
    if front is not None:
        svg = front_svg(front)
        body += ["<h2>Cost / time front</h2>",
                 '<p class="muted">Each point is the cheapest plan that finishes by its time; up and right of '
                 "the line is worse on both (shaded).</p>", svg]
    body += ["<h2>Why this plan</h2><ul>"] + [f"<li>{_e(line)}</li>" for line in best.explanation] + ["</ul>"]
    body += ["<h2>Assumptions</h2><ul>"] + [f"<li>{_e(line)}</li>" for line in best.assumptions or
                                             ["none beyond the catalog's sourced figures"]] + ["</ul>"]
    if result.notes:
        body += ["<h2>Notes</h2><ul>"] + [f"<li>{_e(n)}</li>" for n in result.notes] + ["</ul>"]
    return _wrap(result.scenario, body)


def front_svg(front: ParetoFront) -> str:
    """The front's chart from the Pareto page (its SVG only)."""
    from plan.planner.pareto.html import front_html

    page = front_html(front)
    start, end = page.find("<svg"), page.find("</svg>")
    return page[start:end + len("</svg>")] if start >= 0 and end > start else ""


def _wrap(title: str, body: list[str]) -> str:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}: plan report</title>'
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + f"\n<script>{SCRIPT}</script></body></html>\n")
