"""Cost by job and by billing line, and memory per GPU as stacked bars against the card, as
inline SVG."""

from __future__ import annotations

from collections import defaultdict

from plan.planner.i18n import t
from plan.planner.i18n.numbers import currency_unit, money
from plan.planner.i18n.plan_words import billing_line
from plan.planner.i18n.said import local
from plan.planner.plain_text import html_text
from plan.planner.plan import Plan

WIDTH = 1000
LABEL_W = 230
PARTS = (("weights", "#4e79a7"), ("gradients", "#f28e2b"), ("optimizer", "#59a14f"),
         ("activations", "#e15759"), ("other", "#b07aa1"))


def billing_lines(plan: Plan) -> list[tuple[str, float]]:
    """(line, cost): each job's own compute by billing kind and platform, then each
    reservation/purchase."""
    lines: dict[str, float] = defaultdict(float)
    for job in plan.jobs:
        if job.cost:
            lines[billing_line(f"{job.billing} on {job.platform}")] += job.cost
    for res in plan.reservations:
        lines[billing_line(f"{res.kind}: {local(res.label)}")] += res.cost
    return sorted(lines.items(), key=lambda kv: -kv[1])


def svg_open(css: str, height: int, name: str) -> str:
    """An SVG chart's start: scales to its box (viewBox, width 100%), named for screen readers by
    its <title> (role img hides the shapes inside, so the page gives each chart a table too)."""
    return (f'<svg class="{css}" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
            f'aria-labelledby="{css}-title"><title id="{css}-title">{html_text(name)}</title>')


def _bars(rows: list[tuple[str, float]], unit: str, css: str, name: str) -> str:
    top = max((v for _, v in rows), default=0.0) or 1.0
    height = 26 * len(rows) + 10
    out = [svg_open(css, height, name)]
    for i, (label, value) in enumerate(rows):
        y = 6 + i * 26
        w = max(1.0, value / top * (WIDTH - LABEL_W - 180))
        short = label if len(label) <= 34 else label[:32] + "…"
        out.append(f'<text x="{LABEL_W - 8}" y="{y + 14}" text-anchor="end">{html_text(short)}'
                   f"<title>{html_text(label)}</title></text>"
                   f'<rect class="cost-bar" x="{LABEL_W}" y="{y}" width="{w:.1f}" '
                   f'height="18"/><text x="{LABEL_W + w + 6:.1f}" y="{y + 14}">'
                   f"{html_text(money(value, unit))}</text>")
    out.append("</svg>")
    return "".join(out)


def cost_svgs(plan: Plan, currency: str) -> tuple[str, str]:
    by_job = [(j.job, j.cost) for j in plan.jobs]
    unit = currency_unit(currency)
    return (_bars(by_job, currency, "cost-by-job", t("html.chart.cost_job", cur=unit)),
            _bars(billing_lines(plan), currency, "cost-by-line",
                  t("html.chart.cost_line", cur=unit)))


def memory_svg(plan: Plan, headroom: float) -> str:
    card = max((j.gpu_memory_gib for j in plan.jobs), default=80.0) or 80.0
    scale = (WIDTH - LABEL_W - 200) / card
    height = 34 * len(plan.jobs) + 40
    out = [svg_open("memory", height, t("html.chart.memory"))]
    for i, job in enumerate(plan.jobs):
        y = 8 + i * 34
        parts = job.figures.estimate.memory_gib if job.figures else {}
        out.append(f'<text x="{LABEL_W - 8}" y="{y + 16}" text-anchor="end">{html_text(job.job)} '
                   f'({html_text(job.gpu)})</text><rect class="card" x="{LABEL_W}" y="{y}" '
                   f'width="{job.gpu_memory_gib * scale:.1f}" '
                   f'height="22"><title>{t("html.chart.card", gib=f"{job.gpu_memory_gib:g}")}'
                   "</title></rect>")
        x = float(LABEL_W)
        for name, color in PARTS:
            gib = float(parts.get(name, 0.0) or 0.0)
            if gib <= 0:
                continue
            out.append(f'<rect class="mem-part" x="{x:.1f}" y="{y + 3}" width="{gib * scale:.1f}" '
                       f'height="16" fill="{color}"><title>'
                       f'{t("html.chart.part", part=t(f"html.part.{name}"), gib=f"{gib:,.1f}")}'
                       "</title></rect>")
            x += gib * scale
        limit = job.gpu_memory_gib * (1 - headroom)
        lx = LABEL_W + limit * scale
        out.append(f'<line class="headroom" x1="{lx:.1f}" x2="{lx:.1f}" y1="{y - 3}" y2="{y + 25}">'
                   "<title>"
                   + html_text(t("html.chart.headroom", headroom=f"{headroom:.0%}",
                                 limit=f"{limit:,.1f}"))
                   + f'</title></line><text x="{LABEL_W + job.gpu_memory_gib * scale + 8:.1f}" '
                   f'y="{y + 16}">'
                   + t("html.chart.used", used=f"{job.memory_gib_per_gpu:,.1f}",
                       card=f"{job.gpu_memory_gib:g}",
                       free=f"{job.gpu_memory_gib - job.memory_gib_per_gpu:,.1f}")
                   + "</text>")
    legend_y = height - 14
    x = LABEL_W
    for name, color in PARTS:
        out.append(f'<rect x="{x}" y="{legend_y - 10}" width="12" height="12" fill="{color}"/>'
                   f'<text x="{x + 16}" y="{legend_y}">{t(f"html.part.{name}")}</text>')
        x += 110
    out.append(f'<line class="headroom" x1="{x}" x2="{x}" y1="{legend_y - 12}" '
               f'y2="{legend_y + 2}"/><text x="{x + 6}" y="{legend_y}">'
               f'{t("html.chart.headroom_key")}</text></svg>')
    return "".join(out)
