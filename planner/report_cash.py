"""A plan's cash flow in words: the lines `plan solve` prints under its top plan (table and
markdown views); the numbers are `plan.planner.cash_flow`'s, the words the reader's language's
(`plan.planner.i18n`)."""

from __future__ import annotations

from plan.planner.cash_flow import RULE, CashFlow, PeriodCash
from plan.planner.i18n import speaks_chinese, t
from plan.planner.i18n.numbers import amount, currency_unit, money, period
from plan.planner.i18n.plan_words import billing_line
from plan.planner.plain_text import plain

MAX_LINES_SHOWN = 3  # billing lines named per period; the rest are summed as "others"


def _figure(value: float, currency: str) -> str:
    """A period's amount inside a sentence: bare in English (the line names the currency once),
    with its unit in Chinese (1.51万元)."""
    return money(value, currency) if speaks_chinese() else f"{value:,.0f}"


def _lines(row: PeriodCash, currency: str) -> str:
    ranked = sorted(row.by_line.items(), key=lambda item: (-item[1], item[0]))
    named = [f"{plain(billing_line(line))} {_figure(value, currency)}"
             for line, value in ranked[:MAX_LINES_SHOWN]]
    rest = sum(value for _, value in ranked[MAX_LINES_SHOWN:])
    if rest:
        named.append(t("cash.others", amount=_figure(rest, currency)))
    return t("list_sep").join(named)


def _budget(row: PeriodCash, currency: str) -> str:
    if row.budget is None:
        return ""
    left = row.budget - row.amount
    state = (t("cash.left", amount=_figure(left, currency)) if left >= -0.01
             else t("cash.over", amount=_figure(-left, currency)))
    return t("cash.budget_of", budget=money(row.budget, currency), state=state)


def rule_text(rule: str) -> str:
    """When money leaves, in the reader's words (the cash-flow module's own rule translated)."""
    return t("cash.rule") if rule == RULE else rule


def cash_flow_lines(flow: CashFlow, currency: str) -> list[str]:
    """One line per month that pays something, then one per fiscal year and budget period."""
    out = [t("cash.heading", rule=rule_text(flow.rule))]
    out += [t("cash.month", period=period(m.period), amount=money(m.amount, currency),
              lines=_lines(m, currency)) for m in flow.months]
    if flow.budgets:
        out += [t("cash.budget_row", period=period(b.period), amount=_figure(b.amount, currency),
                  budget=_budget(b, currency)) for b in flow.budgets]
    else:
        out += [t("cash.year", period=period(y.period), amount=money(y.amount, currency))
                for y in flow.years]
    return out


def cash_flow_markdown(flow: CashFlow, currency: str) -> list[str]:
    unit = currency_unit(currency)
    out = ["", f"### {t('cash.md_heading')}", "", t("cash.md_when", rule=rule_text(flow.rule)),
           "", t("cash.md_month_head", cur=unit), "|---|---|---|"]
    out += [f"| {period(m.period)} | {amount(m.amount)} | {_lines(m, currency)} |"
            for m in flow.months]
    rows = flow.budgets or flow.years
    if rows:
        out += ["", t("cash.md_period_head", cur=unit), "|---|---|---|---|"]
        out += [f"| {period(r.period)} | {amount(r.amount)} | "
                f"{'' if r.budget is None else amount(r.budget)} | "
                f"{'' if r.budget is None else amount(r.budget - r.amount)} |" for r in rows]
    return out
