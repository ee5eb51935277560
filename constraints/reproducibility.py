"""Reproducibility for a paper: one GPU type for every job, exclusive hardware, environment
snapshots."""

from __future__ import annotations

from plan.constraints.common import forbid_violations
from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables
from plan.models.problem import Placement
from plan.models.said import say_as
from plan.models.scenario import Job, Scenario

FIXED_GPU_TYPE = "reproducibility.fixed_gpu_type"


def check(scenario: Scenario, job: Job, place: Placement) -> dict[str, str]:
    rules = scenario.policy.reproducibility
    broken: dict[str, str] = {}
    if rules.exclusive_hardware and ({"shared_nodes", "community_marketplace"} & place.features):
        broken["reproducibility.exclusive_hardware"] = say_as(
            "rule.repro_exclusive", "{platform} shares nodes; exclusive hardware required",
            platform=place.platform)
    if rules.env_snapshot and "env_snapshot" not in place.features:
        broken["reproducibility.env_snapshot"] = say_as(
            "rule.repro_snapshot", "{platform} offers no environment snapshots",
            platform=place.platform)
    return broken


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    forbid_violations(model, variables, groups, "reproducibility.exclusive_hardware")
    forbid_violations(model, variables, groups, "reproducibility.env_snapshot")
    if not variables.problem.groups.get(FIXED_GPU_TYPE):
        return
    # One Boolean per GPU type; every chosen candidate turns its type on; at most one type is on.
    types: dict[str, cp_model.IntVar] = {}
    for candidate in variables.problem.all_candidates():
        if candidate.gpu not in types:
            types[candidate.gpu] = model.new_bool_var(f"gpu_type_used[{candidate.gpu}]")
        model.add_implication(variables.chosen(candidate), types[candidate.gpu])
    model.add(sum(types.values()) <= 1).only_enforce_if(groups.literal(FIXED_GPU_TYPE))
