"""One tiny feasible and one tiny infeasible case per constraint family, with exact expected
values."""

from __future__ import annotations

from plan.models.problem import SCALE, Resource
from tests.planner.builders import Spec, make_problem, solve_problem


def _chosen(result, job):
    return next(j for j in result.plans[0].jobs if j.job == job)


def test_budget_feasible_picks_cheapest_and_infeasible_names_budget():
    specs = [Spec("a", "p1", cost=100, hours=5), Spec("a", "p2", cost=50, hours=20)]
    ok = solve_problem(make_problem(specs, budget=60))
    assert (
        ok.status == "optimal"
        and ok.plans[0].total_cost == 50
        and _chosen(ok, "a").platform == "p2"
    )
    bad = solve_problem(make_problem(specs, budget=40))
    assert bad.status == "infeasible"
    assert [c.constraint for c in bad.conflicts] == ["budget"]
    assert any(r.kind == "budget" and r.to == 50 and r.unit == "CNY" for r in bad.relaxations)


def test_deadline_forces_the_faster_option():
    specs = [Spec("a", "fast", cost=100, hours=5), Spec("a", "slow", cost=50, hours=20)]
    ok = solve_problem(make_problem(specs, deadlines_h={"a": 10}))
    assert _chosen(ok, "a").platform == "fast" and ok.plans[0].total_cost == 100
    bad = solve_problem(make_problem(specs, deadlines_h={"a": 4}))
    assert bad.status == "infeasible" and [c.constraint for c in bad.conflicts] == ["deadline/a"]
    # under 2 days
    assert any(r.kind == "deadline" and r.to == 5 and r.unit == "h" for r in bad.relaxations)


def test_rule_violation_excludes_candidate_and_is_named():
    rule = {"sensitivity/a": "regulated data may not share nodes (cheap-cloud)"}
    specs = [
        Spec("a", "cheap-cloud", cost=10, violations=rule),
        Spec("a", "owned", cost=30, billing="owned"),
    ]
    ok = solve_problem(make_problem(specs))
    assert _chosen(ok, "a").platform == "owned"
    assert any("ruled out by sensitivity/a" in line for line in ok.plans[0].explanation)
    bad = solve_problem(make_problem(specs[:1]))
    assert bad.status == "infeasible" and [c.constraint for c in bad.conflicts] == ["sensitivity/a"]
    assert any(
        r.kind == "sensitivity" and r.field == "jobs[a].data.sensitivity" for r in bad.relaxations
    )


def test_fixed_gpu_type_puts_every_job_on_one_type():
    specs = [Spec("a", "p", gpu="h800", cost=10), Spec("a", "p", gpu="a800-80gb", cost=12),
             Spec("b", "p", gpu="a800-80gb", cost=10), Spec("b", "p", gpu="h800", cost=15)]
    free = solve_problem(make_problem(specs))
    assert free.plans[0].total_cost == 20
    fixed = solve_problem(
        make_problem(specs, groups={"reproducibility.fixed_gpu_type": "one type"})
    )
    assert fixed.plans[0].total_cost == 22  # a800 for both: 12 + 10 beats h800 for both: 10 + 15
    assert {j.gpu for j in fixed.plans[0].jobs} == {"a800-80gb"}


def test_owned_pool_serializes_jobs_and_capacity_conflict_is_named():
    pool = Resource(
        key="lab", kind="owned", platform="lab", gpu="a800-80gb", label="lab pool", capacity=8
    )
    specs = [Spec("a", "lab", billing="owned", gpus=8, hours=10, cost=8, resource="lab"),
             Spec("b", "lab", billing="owned", gpus=8, hours=10, cost=8, resource="lab"),
             Spec("b", "cloud", gpus=8, hours=10, cost=500)]
    ok = solve_problem(make_problem(specs, resources=[pool], deadlines_h={"a": 25, "b": 25}))
    jobs = {j.job: j for j in ok.plans[0].jobs}
    assert ok.plans[0].total_cost == 16 and ok.plans[0].makespan_h == 20
    assert jobs["a"].end_h <= jobs["b"].start_h or jobs["b"].end_h <= jobs["a"].start_h
    tight = solve_problem(make_problem(specs, resources=[pool], deadlines_h={"a": 12, "b": 12}))
    assert tight.plans[0].total_cost == 508  # one job must go to the cloud
    only_pool = solve_problem(
        make_problem(specs[:2], resources=[pool], deadlines_h={"a": 12, "b": 12})
    )
    assert only_pool.status == "infeasible"
    names = {c.constraint for c in only_pool.conflicts}
    # The pool's size is a fact, held; the rules a person can change are the deadlines.
    assert names and names <= {"deadline/a", "deadline/b"}
    assert any("held as given" in note and "sharing" in note for note in only_pool.notes)


def test_owned_window_is_capacity():
    pool = Resource(
        key="lab",
        kind="owned",
        platform="lab",
        gpu="a800-80gb",
        label="lab",
        capacity=8,
        available_from_min=SCALE.minutes(5),
        available_until_min=SCALE.minutes(12),
    )
    specs = [
        Spec("a", "lab", billing="owned", hours=10, cost=1, resource="lab"),
        Spec("a", "cloud", cost=99),
    ]
    result = solve_problem(make_problem(specs, resources=[pool]))
    assert _chosen(result, "a").platform == "cloud"  # 5 h + 10 h overruns the window ending at 12 h
    pool_only = solve_problem(make_problem(specs[:1], resources=[pool]))
    assert pool_only.status == "infeasible" and [c.constraint for c in pool_only.conflicts] == [
        "capacity/lab"
    ]


def test_monthly_reservation_serves_two_jobs_in_sequence():
    month = Resource(
        key="p:a800:monthly",
        kind="reservation",
        platform="p",
        gpu="a800-80gb",
        label="monthly",
        levels=(8,),
        period_min=SCALE.minutes(720),
        price_per_gpu_period=SCALE.money(100),
        max_periods=3,
    )
    specs = [Spec("a", "p", billing="monthly", hours=300, cost=0, resource=month.key),
             Spec("a", "p", billing="hourly", hours=300, cost=1200),
             Spec("b", "p", billing="monthly", hours=300, cost=0, resource=month.key),
             Spec("b", "p", billing="hourly", hours=300, cost=1200)]
    result = solve_problem(make_problem(specs, resources=[month]))
    plan = result.plans[0]
    assert plan.total_cost == 800  # 8 GPUs x 100 x 1 month, shared in sequence, vs 2 x 1200 hourly
    assert {j.billing for j in plan.jobs} == {"monthly"}
    assert plan.reservations[0].periods == 1 and plan.reservations[0].gpus == 8


def test_precedence_orders_jobs():
    specs = [Spec("a", "p", hours=10, cost=1), Spec("b", "p", hours=5, cost=1)]
    result = solve_problem(make_problem(specs, after={"b": ["a"]}))
    jobs = {j.job: j for j in result.plans[0].jobs}
    assert jobs["b"].start_h >= jobs["a"].end_h and result.plans[0].makespan_h == 15
    tight = solve_problem(make_problem(specs, after={"b": ["a"]}, deadlines_h={"b": 12}))
    assert tight.status == "infeasible"
    # The order of the jobs is a fact, held (and said); the deadline is the rule to change.
    assert [c.constraint for c in tight.conflicts] == ["deadline/b"]
    assert any("held as given" in note and "after" in note for note in tight.notes)


def test_alternatives_differ_and_stay_within_gap():
    specs = [
        Spec("a", "p1", cost=100),
        Spec("a", "p2", cost=105, hours=8),
        Spec("a", "p3", cost=130, hours=4),
        Spec("a", "p4", cost=109, hours=10),
    ]
    result = solve_problem(make_problem(specs), top_k=3, gap=0.1)
    # p4 is dearer and no faster than p1: no trade. Nothing else is within the gap, so the nearest
    # real trade beyond it (p3: dearer, faster) is shown, flagged.
    assert [(p.total_cost, p.within_gap) for p in result.plans] == [
        (100, True),
        (105, True),
        (130, False),
    ]
    assert [p.jobs[0].platform for p in result.plans] == ["p1", "p2", "p3"]


def test_a_count_that_buys_time_within_the_gap_comes_before_a_plan_beyond_it():
    specs = [
        Spec("a", "p1", cost=100),
        Spec("a", "p2", cost=105, hours=8),
        Spec("a", "p3", cost=130, hours=4),
        Spec("a", "p1", gpus=16, cost=108, hours=5),
        Spec("a", "p4", cost=109, hours=10),
    ]
    result = solve_problem(make_problem(specs), top_k=3, gap=0.1)
    # 16x on p1 keeps plan 1's choice and ends 5 h (50%) sooner for 8% more: a time-for-money trade
    # within the gap, so it takes the last place before the nearest change beyond the gap (p3).
    assert [(p.total_cost, p.within_gap) for p in result.plans] == [
        (100, True),
        (105, True),
        (108, True),
    ]
    assert [(p.jobs[0].platform, p.jobs[0].gpus) for p in result.plans] == [
        ("p1", 8), ("p2", 8), ("p1", 16)]
    assert [p.trade.kind for p in result.plans[1:] if p.trade] == ["decision", "count"]


def test_time_objective_breaks_ties_by_cost():
    specs = [
        Spec("a", "p1", cost=100, hours=5),
        Spec("a", "p2", cost=80, hours=5),
        Spec("a", "p3", cost=10, hours=50),
    ]
    result = solve_problem(make_problem(specs), objective="time")
    assert result.plans[0].makespan_h == 5 and result.plans[0].total_cost == 80
