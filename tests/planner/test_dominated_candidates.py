"""Dominated candidates (planner/cpsat/dominated.py): exactly those another option of the same job,
billed alone and breaking the same rules, beats (strictly cheaper, no later, no longer, no
riskier); solves that leave them out keep the brute force's optimum; solves that force, forbid or
weigh risk keep them all."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.models.problem import Candidate, Problem
from plan.planner.cpsat.dominated import dominated_candidates
from plan.planner.cpsat.model import Bounds, PlanModel
from tests.planner.builders import Spec, make_problem, solved_as_brute_force
from tests.planner.test_brute_force import MONTH, POOL


def _beats(o: Candidate, c: Candidate) -> bool:
    return (o is not c and o.job == c.job and o.resource is None and c.resource is None
            and set(o.violations) == set(c.violations) and o.cost < c.cost
            and o.startup_min <= c.startup_min and o.duration_min <= c.duration_min
            and o.expected_interruptions <= c.expected_interruptions)


def _by_definition(problem: Problem) -> set[int]:
    """The dominated candidates by pairwise comparison (no sorting, no frontier)."""
    every = problem.all_candidates()
    return {c.index for c in every if any(_beats(o, c) for o in every)}


@st.composite
def problems(draw, startups: bool = True):
    """Up to three jobs with up to five options each, most billed alone (hourly), some on a shared
    pool or reservation, some breaking a rule; startups (where `startups`: the brute force knows
    none) and risks drawn so that ties occur."""
    jobs = ["a", "b", "c"][: draw(st.integers(1, 3))]
    specs = []
    for job in jobs:
        for _ in range(draw(st.integers(1, 5))):
            kind = draw(st.sampled_from(["hourly", "hourly", "hourly", "owned", "monthly"]))
            specs.append(Spec(
                job, {"hourly": "cloud", "owned": "lab", "monthly": "p"}[kind],
                gpus=draw(st.sampled_from([4, 8])), billing=kind,
                hours=draw(st.sampled_from([5, 10, 20, 40, 80])),
                cost=0 if kind == "monthly" else draw(st.sampled_from([50, 100, 150, 300])),
                resource={"owned": "lab", "monthly": MONTH.key}.get(kind),
                violations={f"sensitivity/{job}": "rule"} if draw(st.integers(0, 4)) == 0 else {}))
    after = {"b": ["a"]} if "b" in jobs and draw(st.booleans()) else {}
    deadline = draw(st.one_of(st.none(), st.integers(20, 200)))
    budget = draw(st.one_of(st.none(), st.integers(50, 1500)))
    problem = make_problem(specs, jobs=jobs, after=after, resources=[POOL, MONTH], budget=budget,
                           deadlines_h={j: deadline for j in jobs} if deadline else None)
    # startups and risks of a few minutes or interruptions, so that dominance needs all four
    candidates = {job: [dataclasses.replace(
        c, startup_min=draw(st.sampled_from([0, 0, 60] if startups else [0])),
        expected_interruptions=draw(st.sampled_from([0.0, 0.0, 0.5])))
        for c in cs] for job, cs in problem.candidates.items()}
    return dataclasses.replace(problem, candidates=candidates)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_dominated_are_exactly_those_beaten(problem):
    assert set(dominated_candidates(problem)) == _by_definition(problem)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(startups=False), st.sampled_from(["cost", "time"]))
def test_leaving_them_out_keeps_the_brute_force_optimum(problem, objective):
    solved_as_brute_force(problem, objective)


def _two_offers() -> Problem:
    """One job: a cheap fast offer and a dearer slower one (dominated), a dearer faster one (not),
    and a dearer slower one that breaks a rule the others keep (not: other rules)."""
    return make_problem([
        Spec("a", "cheap", hours=10, cost=100),
        Spec("a", "dear", hours=12, cost=150),
        Spec("a", "fast", hours=5, cost=200),
        Spec("a", "foreign", hours=12, cost=150, violations={"sensitivity/a": "rule"}),
    ])


def test_the_dearer_slower_offer_alone_is_dominated():
    problem = _two_offers()
    names = {c.index: c.platform for c in problem.all_candidates()}
    assert [names[i] for i in dominated_candidates(problem)] == ["dear"]


def test_equal_cost_is_never_dominance():
    problem = make_problem([Spec("a", "one", hours=10, cost=100),
                            Spec("a", "two", hours=12, cost=100)])
    assert dominated_candidates(problem) == ()


def test_solves_that_force_forbid_or_weigh_risk_keep_every_option():
    problem = _two_offers()
    model = PlanModel(problem)
    dear = next(c.index for c in problem.all_candidates() if c.platform == "dear")
    assert model.dominated("cost", Bounds(), with_assumptions=False) == (dear,)
    assert model.dominated("time", Bounds(max_cost=10**9), with_assumptions=False) == (dear,)
    for objective, bounds, assumed in [
        ("risk", Bounds(), False),
        ("cost", Bounds(forced=((dear,),)), False),
        ("cost", Bounds(nogoods=((("a", ("cheap", "a800-80gb", "hourly")),),)), False),
        ("cost", Bounds(same_decision=(("a",),)), False),
        ("cost", Bounds(some_of=(dear,)), False),
        ("cost", Bounds(), True),
    ]:
        assert model.dominated(objective, bounds, with_assumptions=assumed) == ()


def test_each_objective_still_reaches_its_own_best_offer():
    problem = _two_offers()
    assert solved_as_brute_force(problem, "cost").jobs[0].platform == "cheap"
    assert solved_as_brute_force(problem, "time").jobs[0].platform == "fast"
