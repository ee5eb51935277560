"""A plan's cash flow in words: the lines `plan solve` prints under its top plan (table and
markdown views); the numbers are `plan.planner.cash_flow`'s."""

from __future__ import annotations

from plan.planner.cash_flow import CashFlow, PeriodCash
from plan.planner.plain_text import plain

MAX_LINES_SHOWN = 3  # billing lines named per period; the rest are summed as "others"


def _lines(row: PeriodCash, currency: str) -> str:
    ranked = sorted(row.by_line.items(), key=lambda item: (-item[1], item[0]))
    named = [f"{plain(line)} {amount:,.0f}" for line, amount in ranked[:MAX_LINES_SHOWN]]
    rest = sum(amount for _, amount in ranked[MAX_LINES_SHOWN:])
    if rest:
        named.append(f"others {rest:,.0f}")
    return "; ".join(named)


def _budget(row: PeriodCash, currency: str) -> str:
    if row.budget is None:
        return ""
    left = row.budget - row.amount
    state = f"{left:,.0f} left" if left >= -0.01 else f"{-left:,.0f} OVER"
    return f" of {row.budget:,.0f} {currency} ({state})"


def cash_flow_lines(flow: CashFlow, currency: str) -> list[str]:
    """One line per month that pays something, then one per fiscal year and budget period."""
    out = [f"cash flow ({flow.rule}):"]
    out += [f"  {m.period}: {m.amount:,.0f} {currency} - {_lines(m, currency)}"
            for m in flow.months]
    if flow.budgets:
        out += [f"  budget {b.period}: {b.amount:,.0f}{_budget(b, currency)}"
                for b in flow.budgets]
    else:
        out += [f"  year {y.period}: {y.amount:,.0f} {currency}" for y in flow.years]
    return out


def cash_flow_markdown(flow: CashFlow, currency: str) -> list[str]:
    out = ["", "### Cash flow", "", f"When money leaves: {flow.rule}.", "",
           f"| month | cash out ({currency}) | billing lines |", "|---|---|---|"]
    out += [f"| {m.period} | {m.amount:,.0f} | {_lines(m, currency)} |" for m in flow.months]
    rows = flow.budgets or flow.years
    if rows:
        out += ["", f"| period | cash out ({currency}) | budget ({currency}) | left |",
                "|---|---|---|---|"]
        out += [f"| {r.period} | {r.amount:,.0f} | "
                f"{'' if r.budget is None else f'{r.budget:,.0f}'} | "
                f"{'' if r.budget is None else f'{r.budget - r.amount:,.0f}'} |" for r in rows]
    return out
