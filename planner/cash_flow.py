"""When a plan's money leaves: by month and by fiscal year, by job and by billing line, against
the budget of each period.

The rules (constraints/period_budget.py holds the model's side, which never counts a period's cash
lower than this does):
- a rental (hourly, daily, spot) or an owned pool's running cost: when the run starts;
- a reservation several jobs may share: each billed period's fee when that period begins;
- a reservation held for one job alone: its whole term, prepaid when the job starts;
- a purchase: its price, and its power and staff over the time it is held, when it is first held
  (a commitment the budget of that period carries).
Without a start date, months are 30-day blocks from the plan's start ("month 1", ...).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from plan.models.calendar import date_at, periods
from plan.models.problem import SCALE, Problem

RULE = ("rentals when a run starts; a shared reservation's fee at the start of each billed "
        "period; a reservation held for one job, its whole term when the job starts; a purchase, "
        "its price and running costs when first held")
BLOCK_H = 30 * 24.0  # a "month" without a start date


@dataclass(frozen=True)
class Payment:
    at_h: float
    amount: float
    job: str  # the job, or "shared" for a reservation or purchase several jobs may use
    line: str  # the billing line: "hourly on autodl", a reservation's or purchase's label


@dataclass
class PeriodCash:
    period: str
    amount: float = 0.0
    budget: float | None = None
    by_job: dict[str, float] = field(default_factory=dict)
    by_line: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"period": self.period, "amount": round(self.amount, 2),
                "budget": None if self.budget is None else round(self.budget, 2),
                "by_job": {k: round(v, 2) for k, v in self.by_job.items()},
                "by_line": {k: round(v, 2) for k, v in self.by_line.items()}}

    @property
    def over_budget(self) -> bool:
        """Paid more than the period's budget (a cent's rounding is not over)."""
        return self.budget is not None and self.amount > self.budget + 0.01


@dataclass
class CashFlow:
    months: list[PeriodCash]
    years: list[PeriodCash]
    budgets: list[PeriodCash]  # the scenario's budget periods (when it has them)
    rule: str = RULE

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "months": [m.to_dict() for m in self.months],
                "years": [y.to_dict() for y in self.years],
                "budget_periods": [b.to_dict() for b in self.budgets]}

    def over_budget(self) -> list[PeriodCash]:
        return [b for b in self.budgets if b.over_budget]


def payments(problem: Problem, plan_jobs: list[Any], reservations: list[Any]) -> list[Payment]:
    """Every payment of a plan (its JobPlans and ReservationPlans), as the module's rules say."""
    found: list[Payment] = []
    users: dict[str, list[str]] = defaultdict(list)
    for j in plan_jobs:
        if j.reservation:
            users[j.reservation].append(j.job)
        if j.cost:
            found.append(Payment(j.start_h, j.cost, j.job, f"{j.billing} on {j.platform}"))
    # (a scan of every candidate: only where the plan holds something; a front asks per point)
    private = problem.private_resources() if reservations else set()
    for r in reservations:
        who = users.get(r.key, [])
        job = who[0] if len(who) == 1 else "shared"
        if r.kind == "purchase" or r.key in private or not r.periods:
            found.append(Payment(r.start_h, r.cost, job, r.label))
            continue
        for k in range(r.periods):
            found.append(Payment(r.start_h + k * r.period_h, r.cost / r.periods, job, r.label))
    return found


def cash_flow(problem: Problem, plan_jobs: list[Any], reservations: list[Any]) -> CashFlow:
    paid = payments(problem, plan_jobs, reservations)
    until_h = max([p.at_h for p in paid] + [SCALE.to_hours(problem.horizon_min), 0.0])
    start, fiscal = problem.start_date, problem.fiscal_year_start
    if start is not None:
        months = [(p.label, p.from_h, p.to_h) for p in periods(start, until_h, "month", fiscal)]
        years = [(p.label, p.from_h, p.to_h) for p in periods(start, until_h, "year", fiscal)]
    else:
        count = int(until_h // BLOCK_H) + 1
        months = [(f"month {i + 1}", i * BLOCK_H, (i + 1) * BLOCK_H) for i in range(count)]
        years = [(f"year {i + 1}", i * 12 * BLOCK_H, (i + 1) * 12 * BLOCK_H)
                 for i in range(count // 12 + 1)]
    budgets = [(b.label, SCALE.to_hours(b.from_min), SCALE.to_hours(b.to_min),
                SCALE.to_money(b.amount)) for b in problem.budget_periods]
    return CashFlow(
        months=_sum(paid, [(label, lo, hi, None) for label, lo, hi in months], keep_empty=False),
        years=_sum(paid, [(label, lo, hi, None) for label, lo, hi in years], keep_empty=False),
        budgets=_sum(paid, budgets, keep_empty=True))


def _sum(paid: list[Payment], spans: Sequence[tuple[str, float, float, float | None]],
         keep_empty: bool) -> list[PeriodCash]:
    rows = []
    for label, lo, hi, budget in spans:
        row = PeriodCash(label, budget=budget)
        for p in paid:
            if lo <= p.at_h < hi:
                row.amount += p.amount
                row.by_job[p.job] = row.by_job.get(p.job, 0.0) + p.amount
                row.by_line[p.line] = row.by_line.get(p.line, 0.0) + p.amount
        if keep_empty or row.amount:
            rows.append(row)
    return rows


def when(start: dt.date | None, hours: float) -> str:
    """`2027-02-01` beside hours, where the plan has a start date."""
    return date_at(start, hours).isoformat() if start is not None else ""
