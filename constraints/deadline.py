"""Deadlines: every job ends by its own deadline and the scenario's (hours from the plan's
start)."""

from __future__ import annotations

from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables


def group(job: str) -> str:
    return f"deadline/{job}"


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    for job, limit in variables.problem.deadline_min.items():
        if limit is not None:
            model.add(variables.jobs[job].end <= limit).only_enforce_if(groups.literal(group(job)))
