"""Dominated candidates where capacity is limited or jobs are tied to one another: the option that
dominates another may sit on an owned pool, a reservation shared with other jobs, or under the
paper's one-GPU-type rule, and then the dominated one can be the only way to a plan. Dominance
(planner/cpsat/dominated.py) compares only options billed alone and, under the one-GPU-type rule,
of the same GPU type: each planted case here and the drawn ones have the same optimum with and
without the pruning, and the brute force's."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.constraints.reproducibility import FIXED_GPU_TYPE
from plan.models.problem import SCALE, BudgetPeriod, Problem, Resource
from plan.planner.cpsat import model as cpsat_model
from plan.planner.cpsat.dominated import dominated_candidates
from tests.planner.builders import Spec, brute_force, make_problem, solve_problem

POOL = Resource(key="lab", kind="owned", platform="lab", gpu="a800-80gb", label="lab", capacity=8)
MONTH = Resource(key="p:h800:monthly", kind="reservation", platform="p", gpu="h800",
                 label="monthly", levels=(8,), period_min=SCALE.minutes(100),
                 price_per_gpu_period=SCALE.money(1), max_periods=20)
ONE_GPU_TYPE = {FIXED_GPU_TYPE: "one GPU type"}


@contextmanager
def no_pruning() -> Iterator[None]:
    """Solves that keep every option, dominated or not."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cpsat_model, "PRUNED_OBJECTIVES", frozenset())
        yield


def _best(problem: Problem, objective: str) -> tuple[str, int | None]:
    """The solve's status and objective value (money or minutes, in model units)."""
    result = solve_problem(problem, objective=objective)
    if not result.plans:
        return result.status, None
    plan = result.plans[0]
    return result.status, (SCALE.money(plan.total_cost) if objective == "cost"
                           else SCALE.minutes(plan.makespan_h))


def assert_same_optimum(problem: Problem, objective: str) -> None:
    """Pruned, unpruned and brute force agree on the optimum (or on infeasible)."""
    pruned = _best(problem, objective)
    with no_pruning():
        whole = _best(problem, objective)
    expected = brute_force(problem, objective)
    assert pruned == whole
    assert pruned[1] == (expected[0] if expected else None)


def _names(problem: Problem, indices: tuple[int, ...]) -> set[tuple[str, str, str]]:
    return {(c.job, c.platform, c.gpu) for c in problem.all_candidates() if c.index in indices}


def test_a_rental_beaten_by_a_full_owned_pool_is_kept():
    """The pool is cheaper and faster than renting, but holds one job at a time and both must
    end by 15 h: one job must rent, the option the pool 'beats'."""
    problem = make_problem(
        [spec for job in "ab" for spec in (
            Spec(job, "lab", billing="owned", hours=10, cost=0, resource=POOL.key),
            Spec(job, "cloud", hours=12, cost=100))],
        resources=[POOL], deadlines_h={"a": 15, "b": 15})
    assert dominated_candidates(problem) == ()
    for objective in ("cost", "time"):
        assert_same_optimum(problem, objective)
    assert _best(problem, "cost")[1] == SCALE.money(100)


def test_a_rental_beaten_by_a_shared_reservation_is_kept():
    """Both jobs' 8 GPUs fit the one 8-GPU reservation only one after another; by 15 h one job
    rents."""
    problem = make_problem(
        [spec for job in "ab" for spec in (
            Spec(job, "p", gpu="h800", billing="monthly", hours=10, cost=0, resource=MONTH.key),
            Spec(job, "cloud", gpu="h800", hours=12, cost=500))],
        resources=[MONTH], deadlines_h={"a": 15, "b": 15})
    assert dominated_candidates(problem) == ()
    for objective in ("cost", "time"):
        assert_same_optimum(problem, objective)


def _one_gpu_type(fixed: bool) -> Problem:
    """Job a's H800 offer beats its A800 one (cheaper, faster); job b runs on A800 alone."""
    return make_problem([
        Spec("a", "fast", gpu="h800", hours=5, cost=50),
        Spec("a", "slow", gpu="a800-80gb", hours=8, cost=60),
        Spec("b", "slow", gpu="a800-80gb", hours=8, cost=60),
    ], groups=ONE_GPU_TYPE if fixed else None)


def test_under_one_gpu_type_only_the_same_type_dominates():
    assert _names(_one_gpu_type(False), dominated_candidates(_one_gpu_type(False))) == {
        ("a", "slow", "a800-80gb")}
    assert dominated_candidates(_one_gpu_type(True)) == ()
    for objective in ("cost", "time"):
        assert_same_optimum(_one_gpu_type(True), objective)
    assert _best(_one_gpu_type(True), "cost")[1] == SCALE.money(120)


def test_budgets_per_period_keep_every_option():
    problem = dataclasses.replace(
        _one_gpu_type(False),
        budget_periods=(BudgetPeriod("2027-Q1", 0, SCALE.minutes(500), SCALE.money(1000)),))
    assert dominated_candidates(problem) == ()


@st.composite
def tight_problems(draw):
    """Two or three jobs that all want the one 8-GPU pool or the one 8-GPU reservation (cheapest)
    under a common deadline, with rentals of two GPU types, some beaten by others, and the
    one-GPU-type rule drawn: where capacity or the rule binds, a beaten option can be needed."""
    jobs = ["a", "b", "c"][: draw(st.integers(2, 3))]
    specs = []
    for job in jobs:
        specs.append(draw(st.sampled_from([
            Spec(job, "lab", billing="owned", hours=draw(st.sampled_from([5, 10])), cost=0,
                 resource=POOL.key),
            Spec(job, "p", gpu="h800", billing="monthly", hours=draw(st.sampled_from([5, 10])),
                 cost=0, resource=MONTH.key)])))
        for _ in range(draw(st.integers(1, 3))):
            specs.append(Spec(job, draw(st.sampled_from(["x", "y"])),
                              gpu=draw(st.sampled_from(["h800", "a800-80gb"])),
                              hours=draw(st.sampled_from([4, 8])),
                              cost=draw(st.sampled_from([50, 100]))))
    deadline = draw(st.sampled_from([10, 15, 100]))
    return make_problem(specs, jobs=jobs, resources=[POOL, MONTH],
                        deadlines_h={j: deadline for j in jobs},
                        groups=ONE_GPU_TYPE if draw(st.sampled_from([True, True, False])) else None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tight_problems(), st.sampled_from(["cost", "time"]))
def test_capacity_and_one_gpu_type_keep_the_optimum(problem, objective):
    assert_same_optimum(problem, objective)
