"""Cash paid per period as inline SVG: one bar per month the plan pays in, then one per budget
period (or per fiscal year where the plan spans more than one), stacked by billing line, with the
period's budget as a dashed mark over its bar and a period over budget outlined in red. The numbers
are `Plan.cash_flow`'s (planner/cash_flow.py); this module only draws them."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from plan.planner.cash_flow import CashFlow, PeriodCash
from plan.planner.i18n import t
from plan.planner.i18n.numbers import amount, currency_unit, money, period
from plan.planner.i18n.plan_words import billing_line
from plan.planner.pareto.html import tick_step
from plan.planner.plain_text import html_text
from plan.planner.report_cash import rule_text
from plan.planner.report_html.bar_labels import text_width_px
from plan.planner.report_html.charts import WIDTH, svg_open
from plan.planner.report_html.figures import figure, scroll_table
from plan.planner.report_html.gantt import COLORS

LEFT, RIGHT, TOP, PLOT_H, AXIS_H = 90, 20, 34, 240, 28
LEGEND_ROW_H = 20
MAX_BAR_W = 64.0
OTHERS_COLOR = "#bab0ac"  # the palette's grey (Tableau 10), for lines beyond the coloured ones


@dataclass(frozen=True)
class Panel:
    """One chart: its rows (one bar each), its CSS class and its name for screen readers."""

    rows: tuple[PeriodCash, ...]
    css: str
    name: str
    caption: str


def panels(flow: CashFlow, currency: str) -> list[Panel]:
    """Months first; then the budget periods where they are not the months, and the fiscal years
    where the plan spans more than one and they are not the budget periods already shown."""
    unit = currency_unit(currency)
    budgets = {b.period: b.budget for b in flow.budgets}
    months = tuple(replace(m, budget=budgets.get(m.period)) for m in flow.months)
    monthly_budget = bool(flow.budgets) and all(m.period in budgets for m in flow.months)
    found = [Panel(months, "cash-month", t("html.chart.cash_month", cur=unit),
                   t("html.cash_month_caption", cur=unit))]
    if flow.budgets and not monthly_budget:
        found.append(Panel(tuple(flow.budgets), "cash-budget",
                           t("html.chart.cash_budget", cur=unit),
                           t("html.cash_budget_caption", cur=unit)))
    same_as_budgets = [y.period for y in flow.years] == [b.period for b in flow.budgets]
    if len(flow.years) > 1 and not same_as_budgets:
        found.append(Panel(tuple(flow.years), "cash-year", t("html.chart.cash_year", cur=unit),
                           t("html.cash_year_caption", cur=unit)))
    return found


def line_colors(flow: CashFlow) -> dict[str, str]:
    """A colour per billing line, the largest first, the same in every panel; lines beyond the
    palette share the grey of "others"."""
    totals: dict[str, float] = defaultdict(float)
    for row in flow.months:
        for line, value in row.by_line.items():
            totals[line] += value
    ranked = sorted(totals, key=lambda line: (-totals[line], line))
    colored = len(COLORS) if len(ranked) <= len(COLORS) else len(COLORS) - 1
    return {line: COLORS[i] if i < colored else OTHERS_COLOR for i, line in enumerate(ranked)}


def axis_top(rows: Sequence[PeriodCash]) -> tuple[float, float]:
    """The value at the top of the plot and the step of its grid: a round number at or above
    every bar and budget mark."""
    high = max([r.amount for r in rows] + [r.budget or 0.0 for r in rows] + [0.0])
    if high <= 0:
        return 1.0, 1.0
    step = tick_step(0.0, high, 5)
    return math.ceil(high / step - 1e-9) * step, step


@dataclass(frozen=True)
class _Scale:
    top: float
    count: int

    @property
    def slot(self) -> float:
        return (WIDTH - LEFT - RIGHT) / max(self.count, 1)

    @property
    def bar_w(self) -> float:
        return min(self.slot * 0.7, MAX_BAR_W)

    def bar_x(self, i: int) -> float:
        return LEFT + i * self.slot + (self.slot - self.bar_w) / 2

    def height(self, value: float) -> float:
        return max(value, 0.0) / self.top * PLOT_H  # a refund would be a negative SVG height

    def y(self, value: float) -> float:
        return TOP + PLOT_H - self.height(value)


def _grid(scale: _Scale, step: float) -> list[str]:
    out = []
    for k in range(round(scale.top / step) + 1):
        y = scale.y(k * step)
        out.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" '
                   f'y2="{y:.1f}"/><text class="tick" x="{LEFT - 8}" y="{y + 4:.1f}" '
                   f'text-anchor="end">{html_text(amount(k * step))}</text>')
    return out


def _bar(row: PeriodCash, i: int, scale: _Scale, colors: dict[str, str], currency: str,
         show_value: bool) -> list[str]:
    """A period's stacked parts, its outline (red when over budget), its budget mark and value."""
    x, w, name = scale.bar_x(i), scale.bar_w, period(row.period)
    out, base = [], 0.0
    parts = sorted(row.by_line.items(), key=lambda kv: (-kv[1], kv[0]))
    for line, value in parts:
        out.append(f'<rect class="cash-part" x="{x:.1f}" y="{scale.y(base + value):.3f}" '
                   f'width="{w:.1f}" height="{scale.height(value):.3f}" '
                   f'fill="{colors.get(line, OTHERS_COLOR)}"><title>'
                   + html_text(t("html.chart.cash_part", period=name, line=billing_line(line),
                                 amount=money(value, currency)))
                   + "</title></rect>")
        base += value
    over = row.over_budget
    # (heights to a thousandth of a pixel: a month's 2.5-pixel bar under a yearly budget's scale
    # is then its amount to 0.02%, as the tables beneath say)
    out.append(f'<rect class="cash-bar{" over" if over else ""}" data-period="'
               f'{html_text(row.period)}" data-amount="{row.amount:.2f}" x="{x:.1f}" '
               f'y="{scale.y(row.amount):.3f}" width="{w:.1f}" '
               f'height="{scale.height(row.amount):.3f}"><title>'
               + html_text(t("html.chart.cash_total", period=name,
                             amount=money(row.amount, currency)))
               + "</title></rect>")
    label_y = scale.y(row.amount) - 5
    if row.budget is not None:
        by = scale.y(row.budget)
        out.append(f'<line class="budget cash-budget-mark" data-period="{html_text(row.period)}" '
                   f'data-budget="{row.budget:.2f}" x1="{x - 4:.1f}" x2="{x + w + 4:.1f}" '
                   f'y1="{by:.2f}" y2="{by:.2f}"><title>'
                   + html_text(t("html.chart.cash_budget_mark", period=name,
                                 amount=money(row.budget, currency)))
                   + "</title></line>")
        if by - 16 < label_y < by + 14:  # the value would cross the mark: write it above both
            label_y = by - 5
        text = t("html.chart.cash_budget_label", amount=amount(row.budget))
        # beside the mark where the gap to the next bar (or the chart's edge) holds the words
        room = scale.slot - w if i + 1 < scale.count else (scale.slot - w) / 2 + RIGHT
        if room >= text_width_px(text, 12.0) + 16:
            out.append(f'<text class="budget-label" x="{x + w + 8:.1f}" y="{by + 4:.2f}">'
                       f"{html_text(text)}</text>")
    centre = x + w / 2
    if over:
        out.append(f'<text class="budget-label cash-over" x="{centre:.1f}" y="{label_y:.1f}" '
                   'text-anchor="middle">'
                   + html_text(t("html.chart.cash_over",
                                 amount=amount(row.amount - (row.budget or 0.0))))
                   + "</text>")
        label_y -= 14
    if show_value:
        out.append(f'<text x="{centre:.1f}" y="{label_y:.1f}" text-anchor="middle">'
                   f"{html_text(amount(row.amount))}</text>")
    return out


def _axis_labels(rows: Sequence[PeriodCash], scale: _Scale) -> list[str]:
    """Each period's name under its bar; every n-th one when the names would touch."""
    widest = max((text_width_px(period(r.period), 12.0) for r in rows), default=0.0)
    every = max(1, math.ceil((widest + 6) / scale.slot))
    y = TOP + PLOT_H + 18
    return [f'<text class="axis" x="{scale.bar_x(i) + scale.bar_w / 2:.1f}" y="{y}" '
            f'text-anchor="middle">{html_text(period(r.period))}</text>'
            for i, r in enumerate(rows) if i % every == 0]


def _legend(lines: list[tuple[str, str]], y0: float,
            marks: Sequence[str]) -> tuple[list[str], float]:
    """Swatches for the billing lines and for the marks drawn (`budget`, `over`), wrapped to the
    chart's width; returns the SVG and the height it takes."""
    items = [(f'<rect x="{{x}}" y="{{y}}" width="12" height="12" fill="{color}"/>', text, 12)
             for text, color in lines]
    if "budget" in marks:  # a dashed line needs more than a swatch's width to read as one
        items.append(('<line class="budget cash-budget-key" x1="{x}" x2="{x2}" y1="{ym}" '
                      'y2="{ym}"/>', t("html.chart.cash_key_budget"), 24))
    if "over" in marks:
        items.append(('<rect class="cash-key-over" x="{x}" y="{y}" width="12" height="12"/>',
                      t("html.chart.cash_key_over"), 12))
    out, x, y = [], float(LEFT), y0
    for shape, text, swatch_w in items:
        short = text if len(text) <= 40 else text[:38] + "…"
        need = swatch_w + 6 + text_width_px(short, 12.0) + 16
        if x + need > WIDTH - RIGHT and x > LEFT:
            x, y = float(LEFT), y + LEGEND_ROW_H
        out.append(shape.format(x=f"{x:.1f}", x2=f"{x + swatch_w:.1f}", y=f"{y:.1f}",
                                ym=f"{y + 6:.1f}")
                   + f'<text x="{x + swatch_w + 6:.1f}" y="{y + 11:.1f}">{html_text(short)}'
                   f"<title>{html_text(text)}</title></text>")
        x += need
    return out, y - y0 + LEGEND_ROW_H


def cash_svg(panel: Panel, colors: dict[str, str], currency: str) -> str:
    rows = panel.rows
    top, step = axis_top(rows)
    scale = _Scale(top, len(rows))
    widest_value = max((text_width_px(amount(r.amount), 12.0) for r in rows), default=0.0)
    show_values = widest_value + 4 <= scale.slot
    shown = [line for line in colors if any(line in r.by_line for r in rows)]
    named = [(billing_line(line), colors[line]) for line in shown if colors[line] != OTHERS_COLOR]
    if len(named) < len(shown):
        named.append((t("html.chart.cash_others"), OTHERS_COLOR))
    marks = (["budget"] if any(r.budget is not None for r in rows) else []) + (
        ["over"] if any(r.over_budget for r in rows) else [])
    legend, legend_h = _legend(named, TOP + PLOT_H + AXIS_H + 6, marks)
    height = int(TOP + PLOT_H + AXIS_H + 6 + legend_h + 4)
    out = [svg_open(panel.css, height, panel.name), *_grid(scale, step)]
    for i, row in enumerate(rows):
        out += _bar(row, i, scale, colors, currency, show_values)
    out.append(f'<line class="cash-axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + PLOT_H}" '
               f'y2="{TOP + PLOT_H}"/>')
    out += _axis_labels(rows, scale)
    out += legend
    out.append("</svg>")
    return "".join(out)


def cash_table(rows: Sequence[PeriodCash], currency: str) -> str:
    """The chart's figures: each period's cash out, its budget and what is left, its lines."""
    unit = currency_unit(currency)
    head = [html_text(t("html.col.period")), html_text(t("html.col.cash_out", cur=unit)),
            html_text(t("html.col.budget", cur=unit)), html_text(t("html.col.left", cur=unit)),
            html_text(t("html.col.billing_line"))]
    body = []
    for r in rows:
        lines = t("list_sep").join(f"{billing_line(line)} {amount(value)}" for line, value in
                                   sorted(r.by_line.items(), key=lambda kv: (-kv[1], kv[0])))
        body.append([html_text(period(r.period)), html_text(amount(r.amount)),
                     "" if r.budget is None else html_text(amount(r.budget)),
                     "" if r.budget is None else html_text(amount(r.budget - r.amount)),
                     html_text(lines)])
    return scroll_table(head, body, frozenset({1, 2, 3}), t("html.cash_box"))


def cash_section(flow: CashFlow | None, currency: str) -> list[str]:
    """The page's cash-flow section: a heading, when money leaves, and one figure per panel."""
    if flow is None or not flow.months:
        return []
    colors = line_colors(flow)
    out = [f"<h2>{html_text(t('html.cash'))}</h2>",
           f'<p class="muted">{html_text(t("cash.md_when", rule=rule_text(flow.rule)))}</p>']
    for panel in panels(flow, currency):
        marks = any(r.budget is not None for r in panel.rows)
        caption = panel.caption + (" " + t("html.cash_budget_note") if marks else "")
        out.append(figure(cash_svg(panel, colors, currency), caption,
                          cash_table(panel.rows, currency)))
    return out
