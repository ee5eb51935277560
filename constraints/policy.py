"""The scenario's own allow/forbid lists for platforms and GPUs, spot use (opt-in), job size, the
risk a job may carry (expected interruptions) and, with `only_available`, hardware the catalog says
cannot be had in the site's jurisdiction (export rules) or rented by the scenario's renter."""

from __future__ import annotations

from plan.constraints.common import forbid_violations
from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables
from plan.models.problem import Placement
from plan.models.said import say_as
from plan.models.scenario import Job, Scenario


def check(
    scenario: Scenario,
    job: Job,
    place: Placement,
    allowed_platforms: set[str] | None,
    forbidden_platforms: set[str],
    allowed_gpus: set[str] | None,
    forbidden_gpus: set[str],
) -> dict[str, str]:
    """Allow-lists are resolved catalog ids (None = all); owned pools are never subject to them.

    Every list the placement breaks is named (not only the first), so that lifting one list in an
    explanation does not also let through what another list forbids."""
    policy = scenario.policy
    broken: dict[str, str] = {}
    if place.kind == "cloud":
        if allowed_platforms is not None and place.platform not in allowed_platforms:
            broken["policy.platforms"] = say_as("rule.policy_not_allowed",
                                                "{platform} is not in allow_platforms",
                                                platform=place.platform)
        elif place.platform in forbidden_platforms:
            broken["policy.platforms"] = say_as("rule.policy_forbidden",
                                                "{platform} is in forbid_platforms",
                                                platform=place.platform)
    if (allowed_gpus is not None and place.gpu not in allowed_gpus) or place.gpu in forbidden_gpus:
        broken["policy.gpus"] = say_as("rule.policy_gpus",
                                       "{gpu} is not allowed by the scenario's GPU policy",
                                       gpu=place.gpu)
    if place.billing == "spot" and not policy.allow_spot:
        broken["policy.spot"] = say_as(
            "rule.policy_spot",
            "spot is opt-in and the scenario does not allow it (policy.allow_spot)")
    if place.unavailable and policy.only_available:
        broken["policy.only_available"] = unavailable_text(place)
    limit = min(x for x in (policy.max_gpus_per_job, job.max_gpus, 10**9) if x is not None)
    if place.gpus > limit:
        broken["policy.max_gpus"] = say_as(
            "rule.policy_max_gpus", "{gpus} GPUs exceed the scenario's limit of {limit} per job",
            gpus=place.gpus, limit=limit)
    return broken


def unavailable_text(place: Placement) -> str:
    """Why the catalog says the placement cannot be had where it would run (or by its renter)."""
    if place.flagged_renter is not None:
        return say_as("rule.policy_renter", "renting {gpu} ({billing}) on {platform} from "
                      "{renter}: {rule}", gpu=place.gpu, billing=place.billing,
                      platform=place.platform, renter=place.flagged_renter,
                      rule=place.available_rule)
    return say_as("rule.policy_sold_for", "{gpu} ({billing}) is sold for {where} only, not {at}: "
                  "{rule}", gpu=place.gpu, billing=place.billing,
                  where=", ".join(place.available_in or ()), at=place.jurisdiction,
                  rule=place.available_rule)


def check_interruptions(scenario: Scenario, expected: float) -> dict[str, str]:
    """The scenario's cap on a job's expected interruptions (failures plus spot preemptions)."""
    cap = scenario.policy.max_expected_interruptions
    if cap is not None and expected > cap:
        return {"policy.interruptions": say_as(
            "rule.policy_interruptions", "{expected:,.1f} expected interruptions exceed the "
            "scenario's cap of {cap:g} per job", expected=expected, cap=cap)}
    return {}


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    for name in (
        "policy.platforms",
        "policy.gpus",
        "policy.spot",
        "policy.max_gpus",
        "policy.interruptions",
        "policy.only_available",
    ):
        forbid_violations(model, variables, groups, name)
