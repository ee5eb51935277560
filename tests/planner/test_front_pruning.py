"""The walk's narrowed model: what it leaves out never changes a front point inside its ceilings."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.constraints.reproducibility import FIXED_GPU_TYPE
from plan.models.problem import SCALE, Problem, Resource
from plan.planner.pareto import front as pareto
from plan.planner.pareto.pruning import front_problem
from tests.planner.builders import Spec, brute_front, make_problem, session
from tests.planner.test_brute_force import MONTH, POOL, problems

WIDE = 10**12  # a ceiling nothing reaches


def _in_box(points: set[tuple[int, int]], max_cost: int, max_makespan: int) -> set[tuple[int, int]]:
    return {p for p in points if p[0] <= max_cost and p[1] <= max_makespan}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.integers(0, 3), st.integers(0, 3))
def test_narrowed_problem_has_the_same_front_inside_its_ceilings(problem, cost_step, time_step):
    # Independent of CP-SAT: brute force over every combination, schedule and reservation size.
    front = brute_front(problem)
    if not front:
        return
    costs = sorted({c for c, _ in front})
    makespans = sorted({m for _, m in front})
    max_cost = costs[-1 - min(cost_step, len(costs) - 1)]
    max_makespan = makespans[-1 - min(time_step, len(makespans) - 1)] - (1 if time_step else 0)
    narrowed = front_problem(problem, max_cost=max_cost, max_makespan=max_makespan, with_risk=False)
    assert _in_box(brute_front(narrowed), max_cost, max_makespan) == _in_box(
        front, max_cost, max_makespan
    )


def _whole(problem: Problem, **_: object) -> Problem:
    return problem.rule_abiding()


@st.composite
def rental_problems(draw):
    """Rentals with start-up delays, several GPU types and interruption risks, beside a pool and a
    reservation, some with one GPU type fixed for every job: what the brute force does not model."""
    problem = draw(problems())
    candidates = {}
    for job, cs in problem.candidates.items():
        candidates[job] = [
            dataclasses.replace(
                c,
                gpu=draw(st.sampled_from(["h800", "a800-80gb"])) if c.resource is None else c.gpu,
                startup_min=SCALE.minutes(draw(st.sampled_from([0, 0, 2, 24])))
                if c.resource is None
                else 0,
                expected_interruptions=draw(st.sampled_from([0.0, 0.2, 0.5])),
            )
            for c in cs
        ]
    groups = dict(problem.groups)
    if draw(st.booleans()):
        groups[FIXED_GPU_TYPE] = "one GPU type"
    return dataclasses.replace(problem, candidates=candidates, groups=groups)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rental_problems(), st.sampled_from([None, "risk"]))
def test_walk_on_the_narrowed_model_finds_the_same_front(problem, z):
    narrowed_front = pareto.pareto_front(session(problem), z=z)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pareto, "front_problem", _whole)
        whole_front = pareto.pareto_front(session(problem), z=z)

    def values(front: pareto.ParetoFront) -> list[tuple[float, ...]]:
        return sorted((p.cost, p.makespan_h, p.risk or 0.0) for p in front.points)

    assert narrowed_front.status == whole_front.status
    assert values(narrowed_front) == values(whole_front)


def _kept(narrowed: Problem) -> set[tuple[str, str, str]]:
    return {(c.job, c.platform, c.billing) for cs in narrowed.candidates.values() for c in cs}


def test_a_reservation_renting_beats_is_left_out_and_one_sharing_pays_for_is_kept():
    month = dataclasses.replace(
        MONTH, levels=(8,), period_min=SCALE.minutes(720), price_per_gpu_period=SCALE.money(5)
    )
    specs = [Spec("a", "p", billing="monthly", hours=10, cost=0, resource=month.key),
             Spec("b", "p", billing="monthly", hours=10, cost=0, resource=month.key),
             Spec("a", "cloud", hours=10, cost=30), Spec("b", "cloud", hours=10, cost=30)]
    # Held for a month, 8 GPUs cost 40; renting both jobs by the hour costs 60: sharing can pay.
    shared = front_problem(
        make_problem(specs, resources=[month]), max_cost=WIDE, max_makespan=WIDE, with_risk=False
    )
    assert ("a", "p", "monthly") in _kept(shared)
    # At 10 an hour-rental, renting both (20) beats holding the month (40): the reservation goes.
    cheap = [dataclasses.replace(s, cost=10) if s.platform == "cloud" else s for s in specs]
    left = front_problem(
        make_problem(cheap, resources=[month]), max_cost=WIDE, max_makespan=WIDE, with_risk=False
    )
    assert _kept(left) == {("a", "cloud", "hourly"), ("b", "cloud", "hourly")}
    # A rental slower than the reservation's option cannot stand in for it.
    slow = [dataclasses.replace(s, hours=11) if s.platform == "cloud" else s for s in cheap]
    kept = front_problem(
        make_problem(slow, resources=[month]), max_cost=WIDE, max_makespan=WIDE, with_risk=False
    )
    assert ("a", "p", "monthly") in _kept(kept)


def test_a_beaten_rental_is_left_out_unless_the_gpu_type_or_risk_tells_them_apart():
    specs = [
        Spec("a", "fast", gpu="h800", hours=5, cost=50),
        Spec("a", "slow", gpu="a800-80gb", hours=8, cost=60),
        Spec("a", "lab", billing="owned", hours=30, cost=0, resource=POOL.key),
    ]
    problem = make_problem(specs, resources=[POOL])
    assert ("a", "slow", "hourly") not in _kept(
        front_problem(problem, max_cost=WIDE, max_makespan=WIDE, with_risk=False)
    )
    fixed = dataclasses.replace(problem, groups={**problem.groups, FIXED_GPU_TYPE: "one GPU type"})
    assert ("a", "slow", "hourly") in _kept(
        front_problem(fixed, max_cost=WIDE, max_makespan=WIDE, with_risk=False)
    )
    risky = dataclasses.replace(problem, candidates={"a": [
        dataclasses.replace(c, expected_interruptions=0.5 if c.platform == "fast" else 0.0)
        for c in problem.candidates["a"]]})
    assert ("a", "slow", "hourly") in _kept(
        front_problem(risky, max_cost=WIDE, max_makespan=WIDE, with_risk=True)
    )
    # The owned pool is shared capacity: never dropped by dominance, only by the ceilings.
    assert ("a", "lab", "owned") in _kept(
        front_problem(problem, max_cost=WIDE, max_makespan=WIDE, with_risk=False)
    )
    assert ("a", "lab", "owned") not in _kept(
        front_problem(problem, max_cost=WIDE, max_makespan=SCALE.minutes(29), with_risk=False)
    )


def test_ceilings_count_what_the_other_jobs_must_cost():
    specs = [Spec("a", "x", hours=5, cost=70), Spec("a", "y", hours=9, cost=40),
             Spec("b", "x", hours=5, cost=30), Spec("b", "y", hours=9, cost=20)]
    problem = make_problem(specs)
    narrowed = front_problem(problem, max_cost=SCALE.money(85), max_makespan=WIDE, with_risk=False)
    # a on x (70) plus the least b can cost (20) is 90: above the ceiling of 85.
    assert _kept(narrowed) == {("a", "y", "hourly"), ("b", "x", "hourly"), ("b", "y", "hourly")}
    assert len(problem.all_candidates()) - len(narrowed.all_candidates()) == 1


def test_a_reservation_held_alone_counts_its_least_holding_in_the_ceiling():
    month = Resource(
        key="q:monthly",
        kind="reservation",
        platform="q",
        gpu="h800",
        label="monthly",
        levels=(4, 8),
        period_min=SCALE.minutes(100),
        price_per_gpu_period=SCALE.money(20),
        max_periods=20,
    )
    specs = [
        Spec("a", "q", gpus=4, billing="monthly", hours=150, cost=0, resource=month.key),
        Spec("a", "cloud", hours=10, cost=500),
        Spec("b", "q", gpus=4, billing="monthly", hours=50, cost=0, resource=month.key),
    ]
    problem = make_problem(specs, resources=[month])
    # a alone holds 4 GPUs for 2 periods: 160, at least, on top of what b must cost (0 on the
    # reservation)
    assert ("a", "q", "monthly") in _kept(
        front_problem(problem, max_cost=SCALE.money(160), max_makespan=WIDE, with_risk=False)
    )
    assert ("a", "q", "monthly") not in _kept(
        front_problem(problem, max_cost=SCALE.money(159), max_makespan=WIDE, with_risk=False)
    )


def test_a_solve_presolve_wrongly_finds_infeasible_is_run_again_without_it(monkeypatch):
    from plan.planner import session as session_module
    from plan.planner.cpsat.run import Outcome

    problem = make_problem([Spec("a", "x", hours=5, cost=70), Spec("a", "y", hours=9, cost=40)])
    s = session(problem)
    witness = s.run("cost", pareto.Bounds())
    real, presolves = session_module.solve_model, []

    def first_says_infeasible(*args, presolve=True, **kwargs):
        presolves.append(presolve)
        return Outcome("infeasible") if presolve else real(*args, presolve=presolve, **kwargs)

    monkeypatch.setattr(session_module, "solve_model", first_says_infeasible)
    again = s.run("cost", pareto.Bounds(), witness=witness)
    assert (
        presolves == [True, False]
        and again.status == "optimal"
        and again.total_cost == witness.total_cost
    )
    assert s.presolve_retries == 1
    presolves.clear()
    # no witness: believed
    assert s.run("cost", pareto.Bounds()).status == "infeasible" and presolves == [True]


def test_frontier_front_is_whole_although_presolve_errs_on_its_narrowed_model():
    # CP-SAT 9.15's presolve empties an exactly-one on this front's narrowed model (found infeasible
    # with a plan in hand); the walk re-solves those without presolve and finds every point the
    # whole model has.
    from pathlib import Path

    from plan.models.loading import load_scenario
    from plan.planner.session import Session

    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "frontier_private_vs_hybrid.yaml"
    front = pareto.pareto_front(Session.from_loaded(load_scenario(scenario)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pareto, "front_problem", _whole)
        whole = pareto.pareto_front(Session.from_loaded(load_scenario(scenario)))
    assert front.status == whole.status == "optimal"
    assert [(p.cost, p.makespan_h) for p in front.points] == [
        (p.cost, p.makespan_h) for p in whole.points
    ]
    assert len(front.points) == 12
