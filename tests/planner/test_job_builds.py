"""A changed copy of a scenario takes the jobs it leaves as they were from the build it is a copy of
(candidates/job_builds.py), and an infeasible answer builds first the jobs left with no option
(`reuse.jobs_first`): the copy's problem is the one a fresh build gives, field for field, and
`jobs_first` gives up exactly where a fresh build leaves one of those jobs no option."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from plan.models.loading import LoadedScenario, load_scenario
from plan.models.scenario import Scenario
from plan.planner.candidates import reuse, shared_estimates
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.candidates.reuse import jobs_first, kept_jobs
from plan.planner.cpsat.model import Bounds
from plan.planner.explain.relaxations import _held_deadlines, _with_level, _without_deadlines
from plan.planner.session import Session, SolveOptions
from tests.planner.builders import late_and_short, slow_and_short


def _fresh(loaded: Any) -> Any:
    """The problem of `loaded` built from nothing: no kept job, no shared search."""
    return CandidateBuilder(loaded, {}).build()


def _two_jobs_sharing(base: dict[str, Any]) -> dict[str, Any]:
    """Two jobs on any platform, so that monthly and yearly offers are reservations both jobs' may
    draw on (a shared resource whose GPU counts each job adds to)."""
    base.update(owned=[], sites=[], budget="1M", deadline="30d")
    for job in base["jobs"]:
        job.pop("data", None)
        job.pop("after", None)
    return base


def _changes(scenario: Scenario) -> list[Scenario]:
    """Copies of `scenario` as relaxations make them: one job's optimizer, one job's data level,
    another budget, both jobs changed, and a horizon moved (which keeps no job)."""
    first, second = scenario.jobs[0], scenario.jobs[1]
    leaner = [j.model_copy(update={"optimizer": "paged-adamw-8bit"}) if j.id == second.id else j
              for j in scenario.jobs]
    both = [j.model_copy(update={"optimizer": "paged-adamw-8bit"}) for j in scenario.jobs]
    return [
        scenario.model_copy(update={"jobs": leaner}),
        _with_level(scenario, "sensitivity", first.id, "public"),
        scenario.model_copy(update={"budget": 123.0}),
        scenario.model_copy(update={"jobs": both}),
        _without_deadlines(scenario),
    ]


@pytest.mark.parametrize("plant", [late_and_short, _two_jobs_sharing])
def test_a_copy_with_kept_jobs_is_a_fresh_build(plant, base_scenario, write_scenario) -> None:
    loaded = load_scenario(write_scenario(plant(base_scenario)))
    parent = CandidateBuilder(loaded, {})
    parent.build()
    taken = []
    for scenario in _changes(loaded.scenario):
        variant = _replace(loaded, scenario)
        kept = kept_jobs(parent, variant)
        taken.append(sorted(kept))
        built = CandidateBuilder(variant, {}, kept).build()
        assert built == _fresh(variant), scenario
    assert taken[0] == [loaded.scenario.jobs[0].id]  # the other job's optimizer changed
    assert taken[2] == sorted(j.id for j in loaded.scenario.jobs)  # a budget changes no job
    assert taken[3] == [] and taken[4] == []


def test_shared_resources_counts_merged(base_scenario, write_scenario) -> None:
    """The plant has a reservation both jobs ask counts of: a kept job's counts and a rebuilt
    job's are merged as a fresh build merges them (the equality above covers it only where the
    plant has one)."""
    loaded = load_scenario(write_scenario(_two_jobs_sharing(base_scenario)))
    problem = _fresh(loaded)
    users: dict[str, set[str]] = {}
    for c in problem.all_candidates():
        if c.resource and problem.resources[c.resource].kind == "reservation":
            users.setdefault(c.resource, set()).add(c.job)
    assert any(len(jobs) > 1 for jobs in users.values())


def _replace(loaded: LoadedScenario, scenario: Scenario) -> LoadedScenario:
    return dataclasses.replace(loaded, scenario=scenario)


def test_jobs_first_gives_up_only_where_a_fresh_build_leaves_the_job_none(
    base_scenario, write_scenario
) -> None:
    """late-lora has no option at a one-hour deadline: a copy that keeps the deadline (a smaller
    headroom, a leaner optimizer for it) still leaves it none, and `jobs_first` says so without
    building the other job; the copy without deadlines gives it options, and the copy's build takes
    the job as `jobs_first` built it."""
    loaded = load_scenario(write_scenario(late_and_short(base_scenario)))
    reuse._BUILT.clear()
    shared_estimates.forget()
    session = Session.from_loaded(loaded, SolveOptions(time_limit_s=600))
    assert not session.problem.candidates["late-lora"]
    scenario = loaded.scenario
    policy = scenario.policy.model_copy(update={"memory_headroom": 0.0})
    leaner = [j.model_copy(update={"optimizer": "paged-adamw-8bit"}) for j in scenario.jobs]
    for copy in (scenario.model_copy(update={"policy": policy}),
                 scenario.model_copy(update={"jobs": leaner}),
                 _without_deadlines(scenario)):
        variant = _replace(loaded, copy)
        fresh = _fresh(variant)
        first = jobs_first(variant, session.builder, ["late-lora"])
        if not fresh.candidates["late-lora"]:
            assert first is None
            continue
        assert first is not None and "late-lora" in first
        assert "small-ft" not in first or first["small-ft"].job == scenario.jobs[1]
        other = session.variant(copy, ["late-lora"])
        assert other is not None and other.problem.candidates == fresh.candidates


def test_jobs_first_gives_up_on_a_late_job_only_where_a_fresh_build_runs_it_past_its_deadline(
    base_scenario, write_scenario
) -> None:
    """late-lora's options all run past its one-hour deadline: a copy that keeps the deadline
    (a smaller headroom, a leaner optimizer for every job) gives up where a fresh build of the copy
    leaves the job no option within it that the copy's solve may choose; the copy without
    deadlines, or with the job's deadline lifted, builds on."""
    loaded = load_scenario(write_scenario(slow_and_short(base_scenario)))
    reuse._BUILT.clear()
    shared_estimates.forget()
    session = Session.from_loaded(loaded, SolveOptions(time_limit_s=600))
    scenario = loaded.scenario
    policy = scenario.policy.model_copy(update={"memory_headroom": 0.0})
    leaner = [j.model_copy(update={"optimizer": "paged-adamw-8bit"}) for j in scenario.jobs]
    lifted = Bounds(lifted=frozenset({"deadline/late-lora"}))
    gave_up = 0
    for copy, bounds in ((scenario.model_copy(update={"policy": policy}), Bounds()),
                         (scenario.model_copy(update={"jobs": leaner}), Bounds()),
                         (scenario, lifted), (_without_deadlines(scenario), Bounds())):
        variant = _replace(loaded, copy)
        limits = _held_deadlines(copy, bounds)
        fresh = _fresh(variant)
        first = jobs_first(variant, session.builder, ["late-lora"], limits, bounds.lifted)
        limit = fresh.deadline_min["late-lora"] if "late-lora" in limits else None
        # (the options a solve under `bounds` may choose: those whose broken rules it lifts)
        late = limit is not None and all(
            c.duration_min > limit for c in fresh.candidates["late-lora"]
            if set(c.violations) <= bounds.lifted)
        assert (first is None) == late
        gave_up += late
    assert gave_up == 2
