"""Budget: the plan's total cost stays within the scenario's budget, and each period's cash within
its own (constraints/period_budget.py)."""

from __future__ import annotations

from plan.constraints import period_budget
from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables

GROUP = "budget"


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    budget = variables.problem.budget
    if budget is not None:
        model.add(variables.total_cost <= budget).only_enforce_if(groups.literal(GROUP))
    period_budget.post(model, variables, groups)
