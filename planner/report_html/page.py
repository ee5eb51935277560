"""The report page: one self-contained HTML file (inline CSS, SVG and a few lines of script; nothing
is fetched), with the best plan, the alternatives, a Gantt chart, cost, cash-flow and memory charts,
the Pareto front when asked, and the assumptions."""

from __future__ import annotations

from plan.models.loading import LoadedScenario
from plan.models.said import Said
from plan.planner.i18n import t, word
from plan.planner.i18n.numbers import currency_unit, days_or_hours
from plan.planner.i18n.numbers import money as money_text
from plan.planner.i18n.plan_words import plan_summary, proof, trade_summary
from plan.planner.i18n.said import local
from plan.planner.pareto.front import ParetoFront
from plan.planner.pareto.html import front_svg
from plan.planner.plain_text import html_text
from plan.planner.plan import JobPlan, Plan, SolveResult
from plan.planner.report_html.cash_chart import cash_section
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
.cash-bar { fill: none; stroke: #333; stroke-width: 0.5; } .cash-axis { stroke: #999; }
.cash-bar.over, .cash-key-over { fill: none; stroke: #d62728; stroke-width: 3; }
.cash-budget-mark { stroke-width: 2; }
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
    return days_or_hours(hours)


def report_html(result: SolveResult, loaded: LoadedScenario, front: ParetoFront | None = None,
                calibration_line: str | None = None) -> str:
    s = loaded.scenario
    cur = result.currency
    body: list[str] = [f"<h1>{_e(t('html.title', scenario=result.scenario))}</h1>",
                       '<p class="muted">' + _e(t("html.lead", proof=proof(result),
                                                  objective=word("objective", result.objective),
                                                  s=f"{result.solve_time_s:.1f}")) + "</p>"]
    if not result.plans:
        body.append(f'<p class="headline">'
                    f'{_e(t("html.no_plan", status=word("status", result.status)))}</p>')
        body += [f"<p>{_e(t('html.conflict', constraint=c.constraint, detail=local(c.detail)))}</p>"
                 for c in result.conflicts]
        body += [f"<p>{_e(t('line.relax', kind=word('relax', r.kind), detail=local(r.detail)))}</p>"
                 for r in result.relaxations]
        body += [f"<p>{_e(t('line.note', note=local(n)))}</p>" for n in result.notes]
        return _wrap(result.scenario, body)
    best = result.plans[0]
    budget = _e(t("html.budget", budget=money_text(s.budget, cur))) if s.budget else ""
    deadline = _e(t("html.deadline", time=_days(s.deadline_h))) if s.deadline_h else ""
    body.append('<p class="headline">' + t(
        "html.best", cost=_e(money_text(best.total_cost, cur)), budget=budget,
        time=_e(_days(best.makespan_h)), deadline=deadline, summary=_e(plan_summary(best)))
                + "</p>")
    if calibration_line is None:  # a plan that used the team's own runs says so up front
        lines = [_calibration_note(a) for a in best.assumptions if "calibrated from" in a]
        calibration_line = t("list_sep").join(dict.fromkeys(lines)) or None
    if calibration_line:
        body.append(f'<p class="muted">{_e(calibration_line)}</p>')
    body += _jobs_section(best, loaded, cur)
    body += _schedule_section(best, loaded, cur)
    body += _cost_and_memory_sections(best, cur, s.policy.memory_headroom)
    body += _alternatives_section(result, cur)
    if front is not None:
        body += [f"<h2>{_e(t('html.front'))}</h2>",
                 figure(front_svg(front), t("html.front_caption"), front_table(front))]
    body += (
        [f"<h2>{_e(t('html.why'))}</h2><ul>"]
        + [f"<li>{_e(local(line))}</li>" for line in best.explanation]
        + ["</ul>"]
    )
    body += (
        [f"<h2>{_e(t('html.assumptions'))}</h2><ul>"]
        + [
            f"<li>{_e(local(line))}</li>"
            for line in best.assumptions or [t("html.no_assumptions")]
        ]
        + ["</ul>"]
    )
    if result.notes:
        body += ([f"<h2>{_e(t('html.notes'))}</h2><ul>"]
                 + [f"<li>{_e(local(n))}</li>" for n in result.notes] + ["</ul>"])
    return _wrap(result.scenario, body)


def export_stacks_text(job: JobPlan, loaded: LoadedScenario) -> str:
    """Which `plan export --to` stacks write this job, as the layout column says it (LLaMA-Factory
    with the backend it writes the job for)."""
    from plan.planner.export import ExportError, build_layout
    from plan.planner.export.writer import exporting_stacks, stack_label

    spec = next(j for j in loaded.scenario.jobs if j.id == job.job)
    try:
        layout = build_layout(job, spec, loaded.models[job.job], loaded.catalog.gpu(job.gpu))
    except ExportError as exc:
        return t("html.no_export", reason=exc)
    stacks = [stack_label(layout, stack) for stack in exporting_stacks(layout)]
    return t("html.exports", stacks=", ".join(stacks)) if stacks else t("html.no_export_writes")


def _jobs_section(best: Plan, loaded: LoadedScenario, cur: str) -> list[str]:
    out = [f"<h2>{_e(t('html.jobs'))}</h2>",
           table_box(t("html.jobs_box")) + f"<table><thead><tr><th>{_e(t('html.col.job'))}</th>"
           f"<th>{_e(t('html.col.where'))}</th><th>{_e(t('html.col.layout'))}</th>"
           f'<th class="num">{_e(t("html.col.start"))}</th>'
           f'<th class="num">{_e(t("html.col.end"))}</th><th '
           f'class="num">{_e(t("table.cost", cur=currency_unit(cur)))}</th>'
           f'<th class="num">{_e(t("html.col.tokens"))}</th></tr></thead><tbody>']
    for j in best.jobs:
        layout = (f"tp={j.tp} pp={j.pp} cp={j.cp}" + (f" ep={j.ep}" if j.ep > 1 else "")
                  + f" dp={j.dp} ZeRO-{j.zero}"
                  + t("html.layout_tail", mb=j.micro_batch,
                      recompute=word("recompute", j.recompute_text),
                      framework=j.framework, exports=export_stacks_text(j, loaded)))
        where = t("html.where", gpus=j.gpus, gpu=j.gpu, platform=j.platform,
                  billing=word("billing", j.billing))
        out.append(f'<tr data-job="{_e(j.job)}"><td>{_e(j.job)}</td><td>{_e(where)}'
                   f"</td><td>{_e(layout)}</td><td "
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
                        + _e(t("html.key_item", job=j.job, gpus=j.gpus, gpu=j.gpu,
                               start=f"{j.start_h:,.1f}", end=f"{j.end_h:,.1f}"))
                        + "</li>" for j in chart.unlabelled)
        key = (f'<p class="muted">{_e(t("html.short_bars"))}</p>'
               f'<ul class="gantt-key">{items}</ul>')
    return [f"<h2>{_e(t('html.schedule'))}</h2>",
            figure(chart.svg, t("html.schedule_caption")) + key]


def _cost_and_memory_sections(best: Plan, cur: str, headroom: float) -> list[str]:
    by_job, by_line = cost_svgs(best, cur)
    unit = currency_unit(cur)
    return [f"<h2>{_e(t('html.cost'))}</h2><h3>{_e(t('html.by_job'))}</h3>",
            figure(by_job, t("html.cost_job_caption", cur=unit),
                   cost_table([(j.job, j.cost) for j in best.jobs], t("html.col.job"), cur)),
            f"<h3>{_e(t('html.by_line'))}</h3>",
            figure(by_line, t("html.cost_line_caption", cur=unit),
                   cost_table(billing_lines(best), t("html.col.billing_line"), cur)),
            *cash_section(best.cash_flow, cur),
            f"<h2>{_e(t('html.memory'))}</h2>",
            figure(memory_svg(best, headroom),
                   t("html.memory_caption", headroom=f"{headroom:.0%}"), memory_table(best))]


def _alternatives_section(result: SolveResult, cur: str) -> list[str]:
    out = [f"<h2>{_e(t('html.alternatives'))}</h2>",
           table_box(t("html.alternatives_box")) + "<table><thead><tr><th>#</th>"
           f'<th class="num">{_e(t("table.cost", cur=currency_unit(cur)))}</th>'
           f'<th class="num">{_e(t("html.col.done_in"))}</th><th>{_e(t("table.vs_best"))}</th>'
           f"<th>{_e(t('table.plan'))}</th></tr></thead><tbody>"]
    for p in result.plans:
        trade = _e(trade_summary(p.trade, cur)) if p.trade else _e(t("html.best_word"))
        changes = "".join(f"<li>{_e(local(c))}</li>"
                          for c in (p.trade.changes if p.trade else ()))
        out.append(f'<tr><td>{p.rank}</td><td class="num">{money(p.total_cost, cur)}</td>'
                   f'<td class="num">{_days(p.makespan_h)}</td><td>{trade}</td>'
                   f"<td>{_e(plan_summary(p))}"
                   + (f"<ul>{changes}</ul>" if changes else "") + "</td></tr>")
    out.append("</tbody></table></div>")
    return out


def _wrap(title: str, body: list[str]) -> str:
    return (f'<!doctype html>\n<html lang="{t("html.lang")}"><head><meta charset="utf-8"><title>'
            f'{_e(t("html.page_title", scenario=title))}</title>'
            '<meta name="viewport" content="width=device-width, '
            'initial-scale=1">'
            f"<style>{CSS}</style></head><body><main>\n" + "\n".join(body)
            + f"\n</main><script>{SCRIPT}</script></body></html>\n")


def _calibration_note(assumption: str) -> str:
    """The calibration note of a plan's assumption ('platform: calibrated from ...'), without the
    platform, in the reader's language."""
    if isinstance(assumption, Said) and assumption.key == "note.of":
        return local(assumption.fields["note"])
    return assumption.split(": ", 1)[-1]
