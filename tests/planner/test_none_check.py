"""The quick check before a GPU-count trade's solve (planner/solve.py NONE_CHECK_WORK,
Session.proves_none): it says "no plan" only where the brute force finds none, and a count trade
it rules out is not shown, while one that exists still is."""

from __future__ import annotations

import itertools

from plan.planner.cpsat.model import Bounds
from plan.planner.session import Session
from tests.planner.builders import (
    Spec,
    feasible_outcomes,
    make_problem,
    session,
    solve_problem,
)

# Two jobs in a row on one platform, each at two GPU counts: the cheap count is slow.
SPECS = [Spec("a", "p1", cost=100, hours=100), Spec("a", "p1", gpus=16, cost=130, hours=55),
         Spec("b", "p1", cost=50, hours=40), Spec("b", "p2", gpus=16, cost=70, hours=22)]


def test_no_plan_is_said_only_where_the_brute_force_finds_none():
    problem = make_problem(SPECS, after={"b": ["a"]})
    outcomes = set(feasible_outcomes(problem))
    costs = sorted({cost for cost, _ in outcomes})
    makespans = sorted({makespan for _, makespan in outcomes})
    s = session(problem)
    said = {True: 0, False: 0}
    for cost, makespan in itertools.product(costs, makespans):
        for max_cost, max_makespan in ((cost, makespan), (cost - 1, makespan),
                                       (cost, makespan - 1)):
            exists = any(c <= max_cost and m <= max_makespan for c, m in outcomes)
            none = s.proves_none(Bounds(max_cost=max_cost, max_makespan=max_makespan), 1.0)
            assert not (none and exists), (max_cost, max_makespan)
            assert none or exists, (max_cost, max_makespan)  # (these are proven at once)
            said[none] += 1
    assert said[True] and said[False]  # both answers were asked for


def test_a_count_trade_the_check_rules_out_is_not_shown_and_one_that_exists_is(monkeypatch):
    answers: list[bool] = []
    check = Session.proves_none

    def recorded(self: Session, bounds: Bounds, max_work: float) -> bool:
        answers.append(check(self, bounds, max_work))
        return answers[-1]

    monkeypatch.setattr(Session, "proves_none", recorded)
    # a's 16 GPUs end 45 h sooner for 30 more: beyond the 10% gap, so no count trade exists (b's
    # 16 GPUs on p2 are another decision)
    ruled_out = solve_problem(make_problem(SPECS, after={"b": ["a"]}), top_k=3, gap=0.1)
    assert answers == [True]
    assert all(p.jobs[0].gpus == 8 for p in ruled_out.plans)
    answers.clear()
    shown = solve_problem(make_problem(
        [Spec("a", "p1", cost=100, hours=100), Spec("a", "p1", gpus=16, cost=104, hours=60),
         Spec("b", "p1", cost=50, hours=40)], after={"b": ["a"]}), top_k=3, gap=0.1)
    assert [(p.total_cost, p.jobs[0].gpus) for p in shown.plans][:2] == [(150, 8), (154, 16)]
    assert shown.plans[1].trade is not None and shown.plans[1].trade.kind == "count"
    assert answers[0] is False  # (then, a second count trade beyond the first: none)
