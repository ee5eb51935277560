"""Budgets per period (a month, quarter or fiscal year): the cash that leaves in each period stays
within its money.

When cash leaves, as the model counts it (and `plan.planner.cash_flow` reports it):
- a job's own bill (hourly, daily or spot rental, an owned pool's running cost, a reservation's
  whole term or a purchase held for it alone) in the period the job starts;
- a shared reservation at the start of each period it is billed for (a month's fee when each
  month begins);
- a shared purchase, its price and its running costs over the time held, in the period it is
  first held (a commitment that period's budget carries).
"""

from __future__ import annotations

from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import ResourceVars, Variables
from plan.models.problem import BudgetPeriod


def group(period: BudgetPeriod) -> str:
    return f"budget/{period.label}"


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    problem = variables.problem
    if not problem.budget_periods:
        return
    spend: dict[str, list[cp_model.LinearExprT]] = {p.label: [] for p in problem.budget_periods}
    most = _bound(variables)
    for job, jv in variables.jobs.items():
        _in_period_of(model, variables, f"job[{job}]", jv.start, jv.cost, spend, most)
    for key, rv in variables.resources.items():
        if rv.periods is None:
            continue
        if rv.resource.kind == "purchase":
            _in_period_of(model, variables, f"buy[{key}]", rv.start, variables.resource_cost(rv),
                          spend, most)
        else:
            _each_billed_period(model, variables, key, rv, spend)
    for period in problem.budget_periods:
        terms = spend[period.label]
        if terms:
            model.add(cp_model.LinearExpr.sum(terms) <= period.amount).only_enforce_if(
                groups.literal(group(period)))


def _bound(variables: Variables) -> int:
    """An upper bound of any cost a plan has: the sum of the dearest option of every job and the
    dearest holding of every shared resource (costs are non-negative)."""
    problem = variables.problem
    most = sum(max((variables.own_cost(c) for c in problem.candidates[j]), default=0)
               for j in problem.jobs)
    for rv in variables.resources.values():
        res = rv.resource
        if rv.periods is not None:
            top = max(res.levels, default=0)
            most += ((res.price_per_gpu_period * top + res.fixed_price_per_period)
                     * res.max_periods + res.upfront_per_gpu * top)
    return max(1, most)


def _in_period_of(model: cp_model.CpModel, variables: Variables, name: str,
                  start: cp_model.IntVar, cost: cp_model.LinearExprT,
                  spend: dict[str, list[cp_model.LinearExprT]], most: int) -> None:
    """`cost` counts in the period holding `start`: one Boolean per period it may fall in."""
    problem = variables.problem
    # (the proto's repeated field takes no negative index)
    domain = list(start.proto.domain)
    lo, hi = domain[0], domain[-1]
    near = [p for p in problem.budget_periods if p.from_min <= hi and p.to_min > lo]
    if len(near) == 1:
        spend[near[0].label].append(cost)
        return
    inside = _counted_in(model, near, ("in", "spend", name), start, cost, most, spend)
    model.add_exactly_one(inside)


def _counted_in(model: cp_model.CpModel, near: list[BudgetPeriod], names: tuple[str, str, str],
                moment: cp_model.LinearExprT, amount: cp_model.LinearExprT, most: int,
                spend: dict[str, list[cp_model.LinearExprT]]) -> list[cp_model.IntVar]:
    """`amount` counted in whichever of the `near` periods holds `moment`: per period, a Boolean
    (the moment falls in it) and the share it adds to that period's spend (`amount` or 0). The
    caller says how many of the Booleans hold."""
    bool_tag, share_tag, name = names
    inside = []
    for period in near:
        b = model.new_bool_var(f"{bool_tag}[{name}@{period.label}]")
        model.add(moment >= period.from_min).only_enforce_if(b)
        model.add(moment < period.to_min).only_enforce_if(b)
        share = model.new_int_var(0, most, f"{share_tag}[{name}@{period.label}]")
        model.add(share == amount).only_enforce_if(b)
        model.add(share == 0).only_enforce_if(~b)
        spend[period.label].append(share)
        inside.append(b)
    return inside


def _each_billed_period(model: cp_model.CpModel, variables: Variables, key: str,
                        rv: ResourceVars, spend: dict[str, list[cp_model.LinearExprT]]) -> None:
    """A shared reservation pays each billed period's fee when that period begins: fee k (of
    `periods`) falls at start + k x period, in whichever budget period holds that moment."""
    res = rv.resource
    assert rv.periods is not None
    fee = cp_model.LinearExpr.sum(
        [(res.price_per_gpu_period * level + res.fixed_price_per_period) * chosen
         for level, chosen in rv.level.items()])
    most_fee = max(((res.price_per_gpu_period * level + res.fixed_price_per_period)
                    for level in rv.level), default=0)
    horizon = variables.problem.horizon_min
    earlier: cp_model.IntVar | None = None
    for k in range(res.max_periods):
        paid = model.new_bool_var(f"paid[{key}#{k}]")
        model.add(rv.periods >= k + 1).only_enforce_if(paid)
        model.add(rv.periods <= k).only_enforce_if(~paid)
        if earlier is not None:
            model.add_implication(paid, earlier)  # (redundant: fees are paid in order)
        earlier = paid
        lo = rv.start.proto.domain[0] + k * res.period_min
        hi = horizon + k * res.period_min
        near = [p for p in variables.problem.budget_periods if p.from_min <= hi and p.to_min > lo]
        inside = _counted_in(model, near, ("fee", "fee_spend", f"{key}#{k}"),
                             rv.start + k * res.period_min, fee, most_fee, spend)
        # Each paid fee falls in one period (the periods run to the horizon, which every job, and
        # so every fee a plan needs, starts before).
        model.add(sum(inside) == paid)
