"""Rendering a SolveResult for people: a rich table view and a markdown view."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

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
    console.print(f"[bold]{shown(result.scenario)}[/bold]: {result.proof()} ({result.objective} "
                  f"objective, {result.solve_time_s:.2f} s)")
    if result.plans:
        table = Table(title="plans", show_lines=False)
        for column in (
            "rank",
            f"cost ({cur})",
            "makespan (days)",
            "exp. interruptions",
            "vs plan 1",
            "plan",
        ):
            table.add_column(column, overflow="fold")
        for plan in result.plans:
            table.add_row(
                str(plan.rank),
                f"{plan.total_cost:,.0f}",
                f"{plan.makespan_h / 24:,.2f}",
                _interruptions(plan),
                shown(plan.trade.summary(cur)) if plan.trade else "",
                shown(plan.summary()),
            )
        console.print(table)
        for plan in result.plans:
            console.print(f"\n[bold]plan {plan.rank}[/bold]")
            for line in plan.explanation:
                console.print(f"  - {shown(line)}")
            if plan.assumptions:
                console.print("  assumptions:")
                for line in plan.assumptions:
                    console.print(f"    * {shown(line)}")
            if plan.rank == 1 and plan.cash_flow is not None:
                for line in cash_flow_lines(plan.cash_flow, cur):
                    console.print(f"  {escape(line)}")
    for conflict in result.conflicts:
        console.print(shown(f"conflict: {conflict.constraint}: {conflict.detail}"))
    for relax in result.relaxations:
        console.print(shown(f"relax {relax.kind}: {relax.detail}"))
    for note in result.notes:
        console.print(shown(f"note: {note}"))


def render_markdown(result: SolveResult) -> str:
    cur = result.currency
    out = [f"# {plain(result.scenario)}", "", f"Status: **{result.proof()}** ({result.objective} "
                                              "objective, "
           f"{result.solve_time_s:.2f} s)", ""]
    if result.plans:
        out += [
            f"| rank | cost ({cur}) | makespan (days) | exp. interruptions | vs plan 1 | plan |",
            "|---|---|---|---|---|---|",
        ]
        out += [
            f"| {p.rank} | {p.total_cost:,.0f} | {p.makespan_h / 24:,.2f} | {_interruptions(p)} | "
            f"{p.trade.summary(cur) if p.trade else ''} | {p.summary()} |"
            for p in result.plans
        ]
        for plan in result.plans:
            out += ["", f"## Plan {plan.rank}", ""] + [f"- {line}" for line in plan.explanation]
            if plan.assumptions:
                out += ["", "Assumptions:", ""] + [f"- {line}" for line in plan.assumptions]
            if plan.rank == 1 and plan.cash_flow is not None:
                out += cash_flow_markdown(plan.cash_flow, cur)
    if result.conflicts:
        out += ["", "## Conflicts", ""] + [
            f"- `{c.constraint}`: {c.detail}" for c in result.conflicts
        ]
    if result.relaxations:
        out += ["", "## Smallest relaxations", ""] + [
            f"- {r.kind}: {r.detail}" for r in result.relaxations
        ]
    if result.notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in result.notes]
    return "\n".join(out) + "\n"
