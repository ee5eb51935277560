"""Rendering a SolveResult for people: a rich table view and a markdown view."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from plan.planner.i18n import t, word
from plan.planner.i18n.numbers import amount, currency_unit
from plan.planner.i18n.plan_words import headline, plan_summary, proof, trade_summary
from plan.planner.i18n.said import local
from plan.planner.plain_text import plain
from plan.planner.plan import Plan, SolveResult
from plan.planner.report_cash import cash_flow_lines, cash_flow_markdown


def shown(text: str) -> str:
    """Input text for the rich console: escapes, newlines and bidi marks written escaped, markup
    escaped."""
    return escape(plain(text))


def _interruptions(plan: Plan) -> str:
    """Failures plus spot preemptions expected during the plan; each job's own figure is on its
    line."""
    return f"{plan.expected_interruptions:,.1f}"


def render_table(result: SolveResult, console: Console) -> None:
    cur = result.currency
    console.print(f"[bold]{shown(result.scenario)}[/bold]{t('sep')}{shown(headline(result))}")
    if result.plans:
        table = Table(title=t("table.title"), show_lines=False)
        for column in _columns(cur):
            table.add_column(column, overflow="fold")
        for plan in result.plans:
            table.add_row(
                str(plan.rank),
                amount(plan.total_cost),
                f"{plan.makespan_h / 24:,.2f}",
                _interruptions(plan),
                shown(trade_summary(plan.trade, cur)) if plan.trade else "",
                shown(plan_summary(plan)),
            )
        console.print(table)
        for plan in result.plans:
            console.print(f"\n[bold]{t('plan.heading', rank=plan.rank)}[/bold]")
            for line in plan.explanation:
                console.print(f"  - {shown(local(line))}")
            if plan.assumptions:
                console.print(f"  {t('plan.assumptions')}")
                for line in plan.assumptions:
                    console.print(f"    * {shown(local(line))}")
            if plan.rank == 1 and plan.cash_flow is not None:
                for line in cash_flow_lines(plan.cash_flow, cur):
                    console.print(f"  {escape(line)}")
    for conflict in result.conflicts:
        console.print(shown(t("line.conflict", constraint=conflict.constraint,
                              detail=local(conflict.detail))))
    for relax in result.relaxations:
        console.print(shown(t("line.relax", kind=word("relax", relax.kind),
                              detail=local(relax.detail))))
    for note in result.notes:
        console.print(shown(t("line.note", note=local(note))))


def _columns(cur: str) -> list[str]:
    """The plans table's headers, the currency's unit in the cost's."""
    return [t("table.rank"), t("table.cost", cur=currency_unit(cur)), t("table.makespan"),
            t("table.interruptions"), t("table.vs_best"), t("table.plan")]


def render_markdown(result: SolveResult) -> str:
    cur = result.currency
    out = [f"# {plain(result.scenario)}", "", _status_md(result), ""]
    if result.plans:
        out += [
            f"| {' | '.join(_columns(cur))} |",
            "|---|---|---|---|---|---|",
        ]
        out += [
            f"| {p.rank} | {amount(p.total_cost)} | {p.makespan_h / 24:,.2f} | "
            f"{_interruptions(p)} | "
            f"{trade_summary(p.trade, cur) if p.trade else ''} | {plan_summary(p)} |"
            for p in result.plans
        ]
        for plan in result.plans:
            out += ["", f"## {t('plan.heading_md', rank=plan.rank)}", ""] + [
                f"- {local(line)}" for line in plan.explanation]
            if plan.assumptions:
                out += ["", t("plan.assumptions_md"), ""] + [
                    f"- {local(line)}" for line in plan.assumptions]
            if plan.rank == 1 and plan.cash_flow is not None:
                out += cash_flow_markdown(plan.cash_flow, cur)
    if result.conflicts:
        out += ["", f"## {t('md.conflicts')}", ""] + [
            f"- `{c.constraint}`{t('sep')}{local(c.detail)}" for c in result.conflicts
        ]
    if result.relaxations:
        out += ["", f"## {t('md.relaxations')}", ""] + [
            f"- {word('relax', r.kind)}{t('sep')}{local(r.detail)}" for r in result.relaxations
        ]
    if result.notes:
        out += ["", f"## {t('md.notes')}", ""] + [f"- {local(n)}" for n in result.notes]
    return "\n".join(out) + "\n"


def _status_md(result: SolveResult) -> str:
    return t("md.status", proof=proof(result), objective=word("objective", result.objective),
             s=f"{result.solve_time_s:.2f}")
