"""`plan compare`: a recurring job under each billing mode, checked by hand on two instances and
two billing modes, and every row against the independent brute force on the problem cut down to
that row's options (so each row is a plan the scenario's rules allow, at the model's optimum)."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings

from plan.models.problem import SCALE, Problem
from plan.planner.compare import compare_job
from tests.planner.builders import Spec, brute_force, make_problem, session
from tests.planner.test_recurring import recurring_cases, recurring_problem


def _rows(problem: Problem):
    return {(r.platform, r.billing): r for r in compare_job(session(problem), "a").rows}


def test_hand_check_two_instances_two_billing_modes():
    """Two 60-h runs on 8 GPUs released 150 h apart (tests/planner/test_recurring.py). Hourly:
    1,000 each = 2,000. Monthly at 20 per GPU-period of 100 h: each run in its own one-period
    window, 8 x 20 = 160 each, 320. One window over both ties at 320 (2 periods) only if the first
    run waits 90 h; jobs end as early as a tie allows, so the two windows are the answer."""
    rows = _rows(recurring_problem([60, 60], [1000, 1000], [8, 8], release_every_h=150))
    hourly, monthly = rows[("cloud", "hourly")], rows[("p", "monthly")]
    assert (hourly.job_cost, hourly.plan_cost, hourly.delta_cost) == (2000, 2000, 1680)
    assert (monthly.job_cost, monthly.plan_cost, monthly.delta_cost) == (320, 320, 0)
    assert monthly.cheapest and monthly.in_best and not hourly.cheapest and not hourly.in_best
    assert monthly.held == "2 windows: 1 x 100 h each"
    assert hourly.held == "" and hourly.run_h == 120 and monthly.run_h == 120
    # Released 50 h apart, 60 h on 8 GPUs then 50 h on 4: one shared window (2 periods at the
    # 8-GPU level, 320) is dearer than each alone (160 + 80 = 240); hourly is 2,000.
    close = _rows(recurring_problem([60, 50], [1000, 1000], [8, 4], release_every_h=50))
    assert close[("p", "monthly")].plan_cost == 240
    assert close[("cloud", "hourly")].plan_cost == 2000


def test_a_mode_that_cannot_run_says_why():
    """Due 100 h after release, a 120-h run fits no mode: each row says why in one line."""
    rows = _rows(recurring_problem([120, 120], [1000, 1000], [8, 8], release_every_h=150,
                                   deadline_h=100))
    for row in rows.values():
        assert row.status == "infeasible" and row.plan_cost is None
        assert row.reason and "\n" not in row.reason
        assert "a-01" in row.reason or "deadline" in row.reason


def _only(problem: Problem, platform: str, billing: str) -> Problem:
    """The problem with every instance's options cut to one (platform, billing)."""
    candidates = {job: [c for c in cs if (c.platform, c.billing) == (platform, billing)]
                  for job, cs in problem.candidates.items()}
    return dataclasses.replace(problem, candidates=candidates)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recurring_cases())
def test_every_row_is_the_brute_force_optimum_of_its_mode(case):
    problem = recurring_problem(**case)
    result = compare_job(session(problem), "a")
    assert result.instances == ["a-01", "a-02", "a-03"][: len(case["durations"])]
    for row in result.rows:
        expected = brute_force(_only(problem, row.platform, row.billing), "cost")
        if row.status != "feasible":
            assert expected is None, row
            assert row.reason
            continue
        if row.note:  # instances due before the mode can start were left free
            continue
        assert expected is not None and SCALE.money(row.plan_cost) == expected[0]
        assert row.plan_cost >= result.best_cost - 1e-6
    costs = [r.plan_cost for r in result.rows if r.plan_cost is not None]
    assert [r.cheapest for r in result.rows] == [
        r.plan_cost is not None and r.plan_cost <= min(costs) + 0.005 for r in result.rows]


def test_rows_keep_to_the_rules():
    """A pair whose options all break a rule has no plan and names the rule; on a pair with one
    option that breaks a rule and one that does not, the row takes the rule-abiding one even though
    the other is cheaper."""
    residency = {"residency/a": "data must stay in us; p2 is in cn"}
    specs = [Spec("a", "p1", gpus=8, cost=100, hours=10),
             Spec("a", "p1", gpus=16, cost=50, hours=5, violations=residency),
             Spec("a", "p1", gpus=4, cost=120, hours=20),
             Spec("a", "p2", gpus=8, cost=10, hours=10, violations=residency)]
    result = compare_job(session(make_problem(specs)), "a")
    rows = {r.platform: r for r in result.rows}
    assert rows["p2"].status == "unavailable" and "residency/a: data must stay in us" in \
        rows["p2"].reason
    assert rows["p1"].status == "feasible" and rows["p1"].plan_cost == 100
    assert rows["p1"].choice == "8x a800-80gb" and rows["p1"].cheapest and rows["p1"].in_best
