"""Capacity and quotas: platform and offer limits per job; owned pools' availability windows; the
start-up delay (queue, provisioning, reservation lead time) of the option a job runs on."""

from __future__ import annotations

from plan.constraints.common import forbid_violations
from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables
from plan.models.problem import Placement
from plan.models.said import say_as
from plan.models.scenario import Job, Scenario


def check(
    scenario: Scenario, job: Job, place: Placement, pool_count: int | None = None
) -> dict[str, str]:
    group = f"quota/{place.platform}"
    if not place.multi_node_allowed and place.nodes > 1:
        return {group: say_as("rule.quota_single_node", "{platform} runs single-node jobs only "
                              "(at most {gpus} GPUs)", platform=place.platform,
                              gpus=place.gpus_per_node)}
    if place.max_gpus_per_job is not None and place.gpus > place.max_gpus_per_job:
        return {group: say_as("rule.quota_max_gpus", "{platform} allows at most {gpus} GPUs per "
                              "job", platform=place.platform, gpus=place.max_gpus_per_job)}
    if pool_count is not None and place.gpus > pool_count:
        return {f"capacity/{place.platform}": say_as(
            "rule.capacity_pool", "{platform} has only {gpus} GPUs", platform=place.platform,
            gpus=pool_count)}
    return {}


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    forbid_violations(model, variables, groups, "quota")
    forbid_violations(model, variables, groups, "capacity")
    problem = variables.problem
    for job_id, job_vars in variables.jobs.items():
        # A physical delay, not a rule a person can waive: posted without an assumption literal.
        delays = [
            (c.startup_min, variables.chosen(c))
            for c in problem.candidates[job_id]
            if c.startup_min
        ]
        if delays:
            model.add(job_vars.start >= sum(minutes * x for minutes, x in delays))
    for key, rv in variables.resources.items():
        res = rv.resource
        if res.kind != "owned":
            continue
        literal = groups.literal(f"capacity/{res.platform}")
        for candidate in problem.all_candidates():
            if candidate.resource != key:
                continue
            job = variables.jobs[candidate.job]
            chosen = variables.chosen(candidate)
            model.add(job.start >= res.available_from_min).only_enforce_if([chosen, literal])
            if res.available_until_min is not None:
                model.add(job.end <= res.available_until_min).only_enforce_if([chosen, literal])
