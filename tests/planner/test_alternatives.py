"""Alternatives differ in a decision that matters (platform, GPU type or billing of a job carrying a
real share of the cost or time) and say what they trade against the best plan."""

from __future__ import annotations

import pytest

from plan.models.loading import load_scenario
from plan.planner.cpsat.run import Outcome
from plan.planner.plan import Plan
from plan.planner.session import SolveOptions
from plan.planner.solve import solve, solve_session
from tests.conftest import SCENARIOS
from tests.planner.builders import WALL_NET_S, Spec, make_problem, session, solve_problem

SHARE = 0.2


def _decision(plan: Plan, job: str) -> tuple[str, str, str]:
    j = next(j for j in plan.jobs if j.job == job)
    return (j.platform, j.gpu, j.billing)


def _material(plan: Plan) -> set[str]:
    """Jobs of plan 1 with SHARE or more of its time (or of its own job costs): read off the
    plan."""
    total = sum(j.cost for j in plan.jobs)
    return {
        j.job
        for j in plan.jobs
        if j.end_h - j.start_h >= SHARE * plan.makespan_h or (total > 0 and j.cost >= SHARE * total)
    }


def test_a_small_jobs_count_is_not_an_alternative():
    specs = [
        Spec("big", "p1", cost=1000, hours=10),
        Spec("big", "p2", cost=1050, hours=8),
        Spec("small", "p1", gpus=1, cost=10, hours=1),
        Spec("small", "p1", gpus=2, cost=11, hours=0.5),
    ]
    result = solve_problem(make_problem(specs), top_k=3, gap=0.1)
    assert [p.total_cost for p in result.plans] == [1010, 1060]  # no third real change exists
    second = result.plans[1]
    assert _decision(second, "big") == ("p2", "a800-80gb", "hourly")
    assert (
        second.trade is not None
        and second.trade.delta_cost == 50
        and second.trade.delta_makespan_h == -2
    )
    assert len(second.trade.changes) == 1 and second.trade.changes[0].startswith("big: 8x "
                                                                                 "a800-80gb on p1")
    assert any("alternatives: 1 within 10%" in note for note in result.notes)


def test_a_big_jobs_count_that_buys_time_is_an_alternative():
    specs = [
        Spec("big", "p1", cost=1000, hours=10),
        Spec("big", "p1", gpus=16, cost=1010, hours=5),
        Spec("big", "p2", cost=1050, hours=8),
        Spec("small", "p1", gpus=1, cost=10, hours=1),
        Spec("small", "p1", gpus=2, cost=11, hours=0.5),
    ]
    result = solve_problem(make_problem(specs), top_k=3, gap=0.1)
    # 16x for big: 5 h sooner for +10. It beats p2 (dearer and slower), which is then no trade;
    # small's count moves nothing and is never one.
    assert [p.total_cost for p in result.plans] == [1010, 1020]
    second = result.plans[1]
    assert second.trade is not None and second.trade.kind == "count"
    assert (second.trade.delta_cost, second.trade.delta_makespan_h) == (10, -5)
    assert second.trade.changes == ("big: 8x a800-80gb on p1 (hourly) -> 16x a800-80gb on p1 "
                                    "(hourly), +10 CNY and -5.0 h for this job alone",)
    assert [j.gpus for j in second.jobs if j.job == "small"] == [1]


def test_every_alternative_is_a_trade():
    specs = [Spec("a", "p1", cost=100, hours=10), Spec("a", "p2", cost=104, hours=10),
             Spec("a", "p3", cost=106, hours=6), Spec("a", "p4", cost=107, hours=7)]
    result = solve_problem(make_problem(specs), top_k=4, gap=0.1)
    plans = result.plans
    # p2 costs more for the same time, p4 more than p3 for more time: neither trades anything.
    assert [p.jobs[0].platform for p in plans] == ["p1", "p3"]
    for i, later in enumerate(plans):
        for earlier in plans[:i]:
            assert later.total_cost < earlier.total_cost or later.makespan_h < earlier.makespan_h


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_every_alternative_changes_a_material_decision_and_trades(path):
    loaded = load_scenario(path)
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    best = result.plans[0]
    material = _material(best)
    gap = loaded.scenario.solver.gap
    for rank, plan in enumerate(result.plans[1:], start=1):
        assert plan.trade is not None and plan.trade.changes
        if plan.trade.kind == "count":  # plan 1's choices, other counts, 10% (or a day) sooner
            _assert_count_trade(best, plan, gap)
        elif plan.trade.kind == "decision":
            for earlier in result.plans[:rank]:
                assert any(_decision(plan, job) != _decision(earlier, job) for job in material), (
                    plan.rank,
                    earlier.rank,
                )
        else:
            assert plan.trade.kind in ("class", "p90"), plan.trade.kind
        assert plan.trade.delta_cost == pytest.approx(plan.total_cost - best.total_cost, abs=0.02)
        assert plan.trade.delta_makespan_h == pytest.approx(
            plan.makespan_h - best.makespan_h, abs=0.02
        )
        assert any(line.startswith("trades against plan 1") for line in plan.explanation)
        if plan.trade.kind == "p90":  # held at p90 time: its trade is safety, not cost or time
            continue
        for earlier in result.plans[:rank]:  # cheaper or faster than every plan above it
            assert plan.total_cost < earlier.total_cost or plan.makespan_h < earlier.makespan_h


def _assert_count_trade(best: Plan, plan: Plan, gap: float) -> None:
    assert all(_decision(plan, j.job) == _decision(best, j.job) for j in best.jobs)
    assert any(j.gpus != b.gpus for j, b in zip(plan.jobs, best.jobs, strict=True))
    moved_h = best.makespan_h - plan.makespan_h
    assert moved_h >= min(0.1 * best.makespan_h, 24) - 0.02
    assert plan.total_cost <= best.total_cost * (1 + gap) + 0.01


@pytest.mark.parametrize("wall_stopped, said", [(True, "within the time limit"), (False, "within 3 "
                                                                                         "work "
                                                                                         "units")])
def test_an_alternative_search_that_runs_out_says_what_stopped_it(wall_stopped, said):
    specs = [Spec("big", "p1", cost=1000, hours=10), Spec("big", "p2", cost=1050, hours=8)]
    s = session(make_problem(specs), "cost", 3, 0.1)
    best = s.best

    def alternatives_run_out(bounds, hint=None, max_work=None):
        if bounds.nogoods:  # an alternative's search
            return Outcome("unknown", wall_stopped=wall_stopped)
        return best(bounds, hint, max_work)

    s.best = alternatives_run_out
    result = solve_session(s)
    assert len(result.plans) == 1
    assert any(f"alternatives: none found {said}" in note for note in result.notes)
