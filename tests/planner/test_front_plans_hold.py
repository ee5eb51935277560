"""Every plan a front shows is re-checked against the scenario, without the solver: a point may show
any of several plans of its cost and makespan (the walk's hints pick among them), but each must be
a plan that holds the scenario's limits. The walk is also the same twice, bytes and all."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable

import pytest

from plan.models.loading import load_scenario
from plan.models.scenario import Scenario
from plan.planner.pareto.front import ParetoFront, pareto_front
from plan.planner.plan import JobPlan, Plan
from tests.conftest import REPO, generous_session

LAB = REPO / "scenarios" / "lab_six_jobs.yaml"
ROUNDING_H = 0.011  # plans carry hours to 0.01
ROUNDING_MONEY = 0.011  # and money to 0.01, per figure


@pytest.fixture(scope="module")
def lab() -> tuple[Scenario, ParetoFront, ParetoFront]:
    """lab_six_jobs' front (whose walk hints its hard rungs), made twice."""
    fronts = []
    for _ in range(2):
        session = generous_session(LAB)
        fronts.append(pareto_front(session))
        assert not session.wall_stopped  # (no wall clock decided any of it)
    return load_scenario(LAB).scenario, fronts[0], fronts[1]


def _most_at_once(runs: Iterable[JobPlan]) -> int:
    """The most GPUs the runs hold at one time (a run holds its GPUs from start to end)."""
    runs = list(runs)
    return max((sum(o.gpus for o in runs if o.start_h <= r.start_h < o.end_h) for r in runs),
               default=0)


def _check_plan(scenario: Scenario, plan: Plan) -> None:
    jobs = {j.job: j for j in plan.jobs}
    assert set(jobs) == {j.id for j in scenario.jobs}  # every job, once
    for j in plan.jobs:
        job = scenario.job(j.job)
        assert j.memory_gib_per_gpu <= j.gpu_memory_gib  # its memory fits the card
        assert j.tp * j.pp * j.dp == j.gpus
        assert j.end_h > j.start_h >= 0
        deadline = scenario.effective_deadline_h(job)
        assert deadline is None or j.end_h <= deadline + ROUNDING_H
        for before in job.after:  # precedence
            assert j.start_h >= jobs[before].end_h - ROUNDING_H
    assert scenario.budget is None or plan.total_cost <= scenario.budget
    paid = sum(j.cost for j in plan.jobs) + sum(r.cost for r in plan.reservations)
    figures = len(plan.jobs) + len(plan.reservations)
    assert plan.total_cost == pytest.approx(paid, abs=ROUNDING_MONEY * figures)
    assert plan.makespan_h == pytest.approx(max(j.end_h for j in plan.jobs), abs=ROUNDING_H)
    for pool in scenario.owned:  # an owned pool never runs more GPUs than it has
        assert _most_at_once(j for j in plan.jobs if j.platform == pool.id) <= pool.count
    for held in plan.reservations:  # nor a reservation, and only while it is held
        on_it = [j for j in plan.jobs if j.reservation == held.key]
        assert _most_at_once(on_it) <= held.gpus
        until_h = held.start_h + held.periods * held.period_h
        assert all(held.start_h - ROUNDING_H <= j.start_h and j.end_h <= until_h + ROUNDING_H
                   for j in on_it)


def test_every_plan_of_lab_six_jobs_front_holds_the_scenario(lab):
    scenario, front, _ = lab
    assert front.complete and front.status == "optimal"
    assert len(front.points) == 80
    for point in front.points:
        assert (point.cost, point.makespan_h) == (point.plan.total_cost, point.plan.makespan_h)
        assert point.within_budget and point.meets_deadlines
        _check_plan(scenario, point.plan)
    # sooner is dearer, point by point: none dominates another
    pairs = [(p.makespan_h, p.cost) for p in front.points]
    assert all(a[0] < b[0] and a[1] > b[1] for a, b in itertools.pairwise(pairs))


def test_lab_six_jobs_front_is_the_same_twice(lab):
    _, first, second = lab

    def without_clock(front: ParetoFront) -> dict[str, object]:
        data = front.to_dict()
        del data["solve_time_s"]
        return data

    assert without_clock(first) == without_clock(second)


def test_the_check_catches_a_broken_plan(lab):
    # (a check that cannot fail proves nothing: the same plan, broken one rule at a time, fails it)
    scenario, front, _ = lab
    plan = front.points[-1].plan
    sft = next(j for j in plan.jobs if j.job == "sft-qwen14b")
    cpt = next(j for j in plan.jobs if j.job == "cpt-qwen14b")
    _check_plan(scenario, plan)
    early = dataclasses.replace(sft, start_h=cpt.start_h)  # before the job it follows ends
    late = dataclasses.replace(cpt, end_h=10_000.0)  # past the deadline
    for jobs in ([early if j is sft else j for j in plan.jobs],
                 [late if j is cpt else j for j in plan.jobs]):
        with pytest.raises(AssertionError):
            _check_plan(scenario, dataclasses.replace(plan, jobs=jobs))
    # every job on the 8-GPU owned node in the same hour (the SFT in the next, after its CPT)
    crowded = [dataclasses.replace(j, platform="lab-a800", reservation=None,
                                   start_h=float(j is sft), end_h=1.0 + (j is sft))
               for j in plan.jobs]
    assert sum(j.gpus for j in crowded if j is not sft) > 8
    with pytest.raises(AssertionError):
        _check_plan(scenario, dataclasses.replace(plan, jobs=crowded, makespan_h=2.0))
