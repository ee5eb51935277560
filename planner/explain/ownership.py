"""Ownership economics in the answer: what bought hardware delivers (utilisation, cost per delivered
GPU-hour, residual value), its payback against the best plan that rents instead (the same jobs,
solved once more with every purchase left out), and the one line that says buying was not weighed
where it plausibly should have been (issue 47, items 6 and 7)."""

from __future__ import annotations

import dataclasses

from plan.constraints.groups import family
from plan.models.problem import HOURS_PER_MONTH, SCALE, Problem, PurchaseEconomics
from plan.planner.cpsat.model import Bounds
from plan.planner.cpsat.run import Outcome, to_plan
from plan.planner.explain import plan_exists
from plan.planner.explain.conflicts import group_words
from plan.planner.i18n.said import Joined, say
from plan.planner.i18n.said import money as money_words
from plan.planner.plan import Plan, ReservationPlan
from plan.planner.session import Session

LONG_WORK_MONTHS = 6.0  # work spanning this long is where buying is worth weighing (issue 47)


def money(amount: float, currency: str) -> str:
    return f"{amount:,.0f} {currency}"


@dataclasses.dataclass(frozen=True)
class Held:
    """One purchase in a plan, with what it delivered."""

    r: ReservationPlan
    econ: PurchaseEconomics
    used_gpu_h: float  # GPU-hours the plan's jobs ran on it
    active_cost: float  # power above idle draw those jobs added

    @property
    def held_gpu_h(self) -> float:
        return self.r.gpus * self.r.periods * self.r.period_h

    @property
    def utilisation(self) -> float:
        return self.used_gpu_h / self.held_gpu_h if self.held_gpu_h else 0.0

    @property
    def total_cost(self) -> float:
        return self.r.cost + self.active_cost

    @property
    def price(self) -> float:
        """The full price of what was bought, whatever the budget basis."""
        return self.econ.capex_per_gpu * self.r.gpus


def purchases(problem: Problem, plan: Plan) -> list[Held]:
    held = []
    for r in plan.reservations:
        econ = problem.resources[r.key].economics if r.key in problem.resources else None
        if r.kind != "purchase" or econ is None:
            continue
        users = [j for j in plan.jobs if j.reservation == r.key]
        held.append(Held(r, econ, sum(j.gpus * (j.end_h - j.start_h) for j in users),
                         sum(j.cost for j in users)))
    return held


def held_lines(problem: Problem, plan: Plan, currency: str) -> list[str]:
    """Per purchase: units bought, utilisation, cost per delivered GPU-hour, residual value."""
    lines: list[str] = []
    for h in purchases(problem, plan):
        units = h.r.gpus // max(1, h.econ.unit_gpus)
        unit = (say("own.units" if units != 1 else "own.unit", n=units, per=h.econ.unit_gpus)
                if h.econ.unit_gpus > 1 else "")
        per_h = (say("own.per_hour", cost=money_words(h.total_cost / h.used_gpu_h, currency))
                 if h.used_gpu_h else say("own.no_hours"))
        lines.append(say(
            "own.held", gpus=h.r.gpus, what=h.r.key.removeprefix('buy:'), unit=unit,
            share=h.utilisation, held=h.held_gpu_h, used=h.used_gpu_h,
            cost=money_words(h.total_cost, currency), per_h=per_h,
            worth=money_words(h.price * h.econ.residual_share, currency),
            rule=h.econ.residual_rule))
    return lines


def rent_instead(session: Session) -> tuple[Outcome | None, list[str]]:
    """The best plan for the same jobs with every purchase left out, or None and the jobs no rental
    may run (under their rules) or for which no plan exists without buying."""
    problem = session.problem
    forced, only_bought = [], []
    for job in problem.jobs:
        rentable = tuple(c.index for c in problem.candidates[job]
                         if c.billing != "purchase" and not c.violations)
        if not rentable:
            only_bought.append(job)
        forced.append(rentable)
    if only_bought:
        return None, only_bought
    outcome = session.best(Bounds(forced=tuple(forced)))
    return (outcome, []) if outcome.solved else (None, [])


def payback_lines(session: Session, plan: Plan, rent: Outcome | None,
                  only_bought: list[str]) -> list[str]:
    """Payback of the plan's purchases against `rent` (the best plan that rents instead); sets each
    purchase's `payback_months` and `ownership` figures on the plan."""
    problem = session.problem
    cur = problem.currency
    held = purchases(problem, plan)
    if not held:
        return []
    price = sum(h.price for h in held)
    charged = sum(h.r.upfront_cost for h in held)
    span_h = max(h.r.periods * h.r.period_h for h in held)
    figures: dict[str, object] = {"price": round(price, 2)}
    if rent is None:
        why = (say("own.only_bought", jobs=Joined(only_bought, "list_comma")) if only_bought
               else say("own.only_way"))
        lines = [say("own.buying_only", price=money_words(price, cur), why=why)]
        _set(plan, held, None, figures)
        return lines
    rent_cost = SCALE.to_money(rent.total_cost)
    figures["rent_instead_cost"] = round(rent_cost, 2)
    running = plan.total_cost - charged  # the plan without the price it charges for the hardware
    saving = rent_cost - running
    months = None
    if saving > 0 and span_h > 0:
        months = price / (saving / (span_h / HOURS_PER_MONTH))
    delta = plan.total_cost - rent_cost
    against = say("own.against", cost=money_words(rent_cost, cur),
                  day=SCALE.to_hours(rent.makespan_min) / 24)
    life = min(h.econ.life_years for h in held) * 12
    if months is None:
        verdict = say("own.never", price=money_words(price, cur), against=against,
                      running=money_words(running, cur))
    else:
        within = say("own.within" if months <= life else "own.beyond", life=life)
        if months > span_h / HOURS_PER_MONTH:
            within = say("own.after_held", months=span_h / HOURS_PER_MONTH, within=within)
        verdict = say("own.pays_back", price=money_words(price, cur), months=months,
                      within=within, against=against,
                      saving=money_words(saving / (span_h / HOURS_PER_MONTH), cur))
    lines = [verdict, say("own.horizon_saves" if delta < 0 else "own.horizon_costs",
                          amount=money_words(abs(delta), cur), basis=_basis(held))]
    _set(plan, held, months, figures)
    return lines


def _basis(held: list[Held]) -> str:
    charged = sum(h.r.upfront_cost for h in held)
    price = sum(h.price for h in held)
    if charged >= price - 0.01:
        return "the full price counted"
    return say("own.basis", share=charged / price)


def _set(plan: Plan, held: list[Held], months: float | None, figures: dict[str, object]) -> None:
    by_key = {h.r.key: h for h in held}
    updated = []
    for r in plan.reservations:
        h = by_key.get(r.key)
        if h is None:
            updated.append(r)
            continue
        own = {**figures, "utilisation": round(h.utilisation, 4),
               "delivered_gpu_hours": round(h.used_gpu_h, 2),
               "cost_per_delivered_gpu_hour": round(h.total_cost / h.used_gpu_h, 2)
               if h.used_gpu_h else None,
               "residual_value": round(h.price * h.econ.residual_share, 2),
               "residual_rule": h.econ.residual_rule}
        updated.append(dataclasses.replace(
            r, payback_months=round(months, 1) if months is not None else None, ownership=own))
    plan.reservations = updated


def not_weighed_line(session: Session, plan: Plan) -> str | None:
    """One line where buying was not weighed and plausibly should be: the work spans six months
    or more, or a GPU's rentals cost more than buying the GPUs they use (catalog price)."""
    loaded = session.loaded
    if loaded is None or loaded.scenario.considers_purchase:
        return None
    months = plan.makespan_h / HOURS_PER_MONTH
    reasons = [say("own.spans", months=months)] if months >= LONG_WORK_MONTHS else []
    cur = session.problem.currency
    catalog = loaded.catalog
    for gpu in sorted({j.gpu for j in plan.jobs if j.billing not in ("owned", "purchase")}):
        prices = [catalog.to_currency(e.capex_per_gpu, e.currency, cur)
                  for p in catalog.platforms.values() for e in p.purchase if e.gpu == gpu]
        rented = [j for j in plan.jobs if j.gpu == gpu and j.billing not in ("owned", "purchase")]
        spent = sum(j.cost for j in rented) + sum(  # reservation keys: platform:gpu:billing
            r.cost for r in plan.reservations
            if r.kind == "reservation" and r.key.split(":")[1:2] == [gpu])
        most = max(j.gpus for j in rented)
        if prices and spent > min(prices) * most:
            reasons.append(say("own.renting_dearer", gpu=gpu, spent=money_words(spent, cur),
                               buy=money_words(min(prices) * most, cur), most=most))
    if not reasons:
        return None
    return say("own.not_weighed", reasons=Joined(reasons))


def not_bought_lines(session: Session, best: Outcome) -> list[str]:
    """Where the scenario weighs buying and the best plan buys nothing: the best plan that does
    buy (one more solve, some job forced onto bought hardware), what it would deliver and whether
    it would pay back against the best plan, which rents."""
    problem = session.problem
    if any(c.billing == "purchase" for c in best.chosen.values()):
        return []
    # A plan that buys has some job on bought hardware: one solve with at least one job on it
    # (`some_of`; the optimum of forcing each job onto it in turn, in one model).
    bought = tuple(c.index for job in problem.jobs for c in problem.candidates[job]
                   if c.billing == "purchase" and not c.violations)
    if not bought:
        return []
    outcome = session.best(Bounds(some_of=bought))
    cur = problem.currency
    if not outcome.solved:
        return [_no_buying_plan(session, bought, outcome.status)]
    plan = to_plan(problem, outcome, 0)
    extra = SCALE.to_money(outcome.total_cost - best.total_cost)
    what = ", ".join(f"{r.gpus} {r.key.removeprefix('buy:')}" for r in plan.reservations
                     if r.kind == "purchase")
    lines = [say("own.buying_dearer", what=what, extra=money_words(extra, cur))]
    lines += [say("own.not_bought", line=line) for line in held_lines(problem, plan, cur)]
    lines += [say("own.not_bought", line=line) for line in payback_lines(session, plan, best, [])
              if not line.startswith("over the plan's horizon")]
    return lines


def _no_buying_plan(session: Session, bought: tuple[int, ...], status: str) -> str:
    """Why no plan buys, where the budgets or the deadlines are why (neither is a rule an option
    breaks, so the deferring build's rule-abiding options answer exactly): each budget (the whole
    one, a period's), else each deadline, that alone, lifted, lets a plan buy (a server's price
    above a quarter's budget, a delivery after a deadline), with the price of the cheapest
    purchase. The rules in general where no one of them is why, or where a solve ran out of
    work."""
    problem = session.problem
    if status != "infeasible":
        return say("own.no_buying_plan")

    def buys(lifted: set[str]) -> bool:
        found = plan_exists.answer(session, Bounds(some_of=bought, lifted=frozenset(lifted)))
        return found == plan_exists.PLAN

    budgets = [g for g in problem.groups if family(g) == "budget"]  # (the total, each period's)
    deadlines = [g for g in problem.groups if family(g) == "deadline"]
    alone: list[str] = []  # (any one of them lifted lets a plan buy)
    for rules in (budgets, deadlines):
        if rules and buys(set(rules)):
            alone = [group for group in rules if buys({group})]
            if alone:
                break
    if not alone:
        return say("own.no_buying_plan")
    purchases = set(bought)
    cheapest = min((c for c in problem.all_candidates() if c.index in purchases),
                   key=problem.standalone_cost)
    assert cheapest.resource is not None  # (a purchase is held)
    held = problem.resources[cheapest.resource]
    return say("own.no_buying_plan_because", said=Joined(_rules_words(problem, alone), "list_or"),
               what=f"{held.bought(cheapest.gpus)} {held.key.removeprefix('buy:')}",
               cost=money_words(SCALE.to_money(problem.standalone_cost(cheapest)),
                                problem.currency))


def _rules_words(problem: Problem, groups: list[str]) -> list[str]:
    """The rules in words, periods' budgets of one amount said once ("the 2027-Q2 or 2027-Q3
    budget of 40,000 USD": alternatives, as `_no_buying_plan` names them where any one lifted
    lets a plan buy)."""
    periods = {f"budget/{p.label}": p for p in problem.budget_periods}
    by_amount: dict[int, list[str]] = {}
    for group in groups:
        if group in periods:
            by_amount.setdefault(periods[group].amount, []).append(periods[group].label)
    said = [say("compare.period_budget", label=Joined(labels, "list_or"),
                budget=money_words(SCALE.to_money(amount), problem.currency))
            for amount, labels in by_amount.items()]
    return said + [group_words(problem, group) for group in groups if group not in periods]
