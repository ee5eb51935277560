"""Budget: the plan's total cost stays within the scenario's budget, and each period's cash within
its own (constraints/period_budget.py)."""

from __future__ import annotations

from plan.constraints import period_budget
from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables

GROUP = "budget"


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> int | None:
    """Posts the budget rules; returns the index of the whole-plan budget's constraint (None
    without a budget), whose bound a model built for another budget may set (`set_budget`)."""
    budget = variables.problem.budget
    index = None
    if budget is not None:
        constraint = model.add(variables.total_cost <= budget)
        constraint.only_enforce_if(groups.literal(GROUP))
        index = constraint.index
    period_budget.post(model, variables, groups)
    return index


def set_budget(model: cp_model.CpModel, index: int, budget: int) -> None:
    """The whole-plan budget's bound in a copy of a model posted by `post`: the same model a build
    for `budget` posts (a budget sweep's variants share one build)."""
    domain = model.proto.constraints[index].linear.domain
    domain[len(domain) - 1] = budget
