"""Charts as figures with a caption and their figures as a table (the text alternative a screen
reader or a phone reads), and tables that scroll inside their own box on a narrow screen."""

from __future__ import annotations

from collections.abc import Sequence

from plan.planner.i18n import t
from plan.planner.i18n.numbers import currency_unit
from plan.planner.i18n.numbers import money as money_text
from plan.planner.pareto.front import ParetoFront, time_unit
from plan.planner.plain_text import html_text
from plan.planner.plan import Plan


def table_box(name: str) -> str:
    """The start of a box that scrolls sideways on a narrow screen; a keyboard can focus it to
    scroll it, and a screen reader hears its name (axe: scrollable-region-focusable)."""
    return f'<div class="table-box" tabindex="0" role="region" aria-label="{html_text(name)}">'


def scroll_table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric: frozenset[int],
                 name: str) -> str:
    """A table in its own scrolling box; cells are already-escaped HTML, `numeric` columns are
    right-aligned."""
    def cells(tag: str, values: Sequence[str]) -> str:
        return "".join(f'<{tag} class="num">{v}</{tag}>' if i in numeric else f"<{tag}>{v}</{tag}>"
                       for i, v in enumerate(values))

    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    return (f'{table_box(name)}<table><thead><tr>{cells("th", head)}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def figure(svg: str, caption: str, table: str = "") -> str:
    """The chart, its caption, and (folded) the same figures as a table."""
    alt = (f"<details><summary>{t('html.table_summary')}</summary>{table}</details>"
           if table else "")
    return f"<figure>{svg}<figcaption>{html_text(caption)}</figcaption>{alt}</figure>"


def money(amount: float, currency: str) -> str:
    return html_text(money_text(amount, currency))


def cost_table(rows: Sequence[tuple[str, float]], what: str, currency: str) -> str:
    return scroll_table([html_text(what), html_text(t("table.cost", cur=currency_unit(currency)))],
                        [[html_text(name), money(cost, currency)] for name, cost in rows],
                        frozenset({1}), t("html.cost_by", what=what))


MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations", "other")


def memory_table(plan: Plan) -> str:
    rows = []
    for job in plan.jobs:
        parts = job.figures.estimate.memory_gib if job.figures else {}
        rows.append([html_text(job.job), html_text(job.gpu),
                     *(f"{float(parts.get(p, 0.0) or 0.0):,.1f}" for p in MEMORY_PARTS),
                     f"{job.memory_gib_per_gpu:,.1f}", f"{job.gpu_memory_gib:g}"])
    head = [html_text(t("html.col.job")), "GPU",
            *(html_text(t("html.col.part", part=t(f"html.part.{p}"))) for p in MEMORY_PARTS),
            html_text(t("html.col.peak")), html_text(t("html.col.card"))]
    return scroll_table(head, rows, frozenset(range(2, 2 + len(MEMORY_PARTS) + 2)),
                        t("html.memory_box"))


def front_table(front: ParetoFront) -> str:
    unit_en, per = time_unit(front)
    unit = html_text(t(f"html.unit.{unit_en}"))
    rows = [[str(n), money(p.cost, front.currency), f"{p.makespan_h / per:,.2f} {unit}",
             html_text(p.label()),
             html_text(t("html.yes") if p.within_budget and p.meets_deadlines else t("html.no"))]
            for n, p in enumerate(front.points, start=1)]
    return scroll_table(["#", html_text(t("table.cost", cur=currency_unit(front.currency))),
                         html_text(t("html.col.time", unit=unit)), html_text(t("table.plan")),
                         html_text(t("html.col.within"))], rows, frozenset({0, 1, 2}),
                        t("html.front_box"))
