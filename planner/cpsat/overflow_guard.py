"""Refuse, before the model is built, money and time figures the CP-SAT 64-bit integers cannot hold.

The schema bounds (plan.models.limits) keep each number sane, but products can still grow large: a
price near its bound in a currency whose exchange rate is near its own bound, times thousands of
GPUs and hundreds of billing periods. CP-SAT then refuses the model (or Python refuses a
coefficient), which would surface as an internal error. This check adds up the largest value every
money term of the model can take and refuses the scenario in one line when the sum nears int64.
"""

from __future__ import annotations

from plan.models.errors import InputError
from plan.models.problem import Problem
from plan.models.said import say_as

# CP-SAT checks that every linear expression's largest value fits in int64 (9.2e18); keep a wide
# margin.
MAX_MODEL_MAGNITUDE = 2**60


def largest_money_units(problem: Problem) -> int:
    """An upper bound on any money expression the model forms (cost, balanced objective, budget
    rows)."""
    total = sum(max((c.cost for c in cands), default=0) for cands in problem.candidates.values())
    for res in problem.resources.values():
        gpus = max(res.levels, default=res.capacity or 0)
        periods = problem.horizon_min // res.period_min + 1 if res.period_min else 1
        total += (
            res.price_per_gpu_period * gpus + res.fixed_price_per_period
        ) * periods + res.upfront_per_gpu * gpus
    total += problem.value_of_time_per_min * problem.horizon_min
    return max(total, problem.budget or 0)


def check_magnitudes(problem: Problem, label: str) -> None:
    """Raise InputError (one line, starting with `label`, the scenario file) when the model's money
    figures could overflow the solver."""
    largest = largest_money_units(problem)
    if largest > MAX_MODEL_MAGNITUDE:
        raise InputError([say_as(
            "cli.money_overflow", "{label}: the money figures are too large for the solver's "
            "64-bit integers (the costs could reach {cost:.3g} {currency}): lower the prices, "
            "exchange rates or value_of_time_per_day (see docs/limits.md)", label=label,
            cost=problem.scale.to_money(largest), currency=problem.currency)])
