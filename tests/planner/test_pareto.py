"""The cost/time front: exact against brute force, non-dominated, endpoints equal the single
solves."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from plan.models.loading import load_scenario
from plan.models.problem import SCALE
from plan.planner.cli.app import app
from plan.planner.cpsat.model import COST_THEN_TIME, Bounds
from plan.planner.cpsat.run import Outcome
from plan.planner.pareto import front as front_module
from plan.planner.pareto.front import (
    HARD_POINT_PROBING,
    HARD_STEP_WORK,
    QUICK_POINT_WORK,
    QUICK_STEP_WORK,
    pareto_front,
)
from plan.planner.session import Session
from tests.planner.builders import Spec, brute_front, make_problem, session
from tests.planner.test_brute_force import MONTH, POOL, problems

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
runner = CliRunner()


def _pairs(front) -> list[tuple[int, int]]:
    return [(SCALE.money(p.cost), SCALE.minutes(p.makespan_h)) for p in front.points]


def _dominated(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """a is dominated by b."""
    return a != b and all(y <= x for x, y in zip(a, b, strict=True))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_front_equals_brute_force_front(problem):
    front = pareto_front(session(problem))
    expected = brute_front(problem)
    if not expected:
        assert front.points == [] and front.status == "infeasible"
        return
    assert sorted(_pairs(front)) == sorted(expected)
    makespans = [p.makespan_h for p in front.points]
    assert makespans == sorted(makespans)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_a_walk_without_energetic_reasoning_gives_the_same_front(problem):
    """The pools' energetic reasoning (ENERGETIC_MAX_POOL_JOBS) changes the work of a walk, never
    its points: these small problems walk with it, and again with it off."""
    walked = pareto_front(session(problem))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(front_module, "ENERGETIC_MAX_POOL_JOBS", -1)
        without = pareto_front(session(problem))
    assert sorted(_pairs(without)) == sorted(_pairs(walked)) == sorted(brute_front(problem))


def test_the_walk_reasons_energetically_on_small_pools_alone():
    """lab_six_jobs shares its owned pool among 6 jobs: energetic reasoning on; a walk whose
    pools hold more jobs than the line keeps CP-SAT's default propagation."""
    s = Session.from_loaded(load_scenario(SCENARIOS / "lab_six_jobs.yaml"))
    model = s.model_for(Bounds())
    assert model.largest_pool_jobs == 6
    solved: list[bool] = []
    real = Session.run

    def run(self: Session, *args, energetic: bool = False, **options) -> Outcome:
        solved.append(energetic)
        return real(self, *args, energetic=energetic, **options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Session, "run", run)
        patch.setattr(front_module, "QUICK_STEP_WORK", 0.0)  # (a few solves suffice here)
        patch.setattr(front_module, "MAX_EXACT_POINTS", 4)
        pareto_front(s)
        assert solved and all(solved)
        solved.clear()
        patch.setattr(front_module, "ENERGETIC_MAX_POOL_JOBS", 5)
        pareto_front(s)
        assert solved and not any(solved)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_points_solved_again_with_probing_give_the_same_front(problem):
    # Every point's quick solve (the ends' and the walk's one-step points') is made to run out, so
    # each point is the probing re-solve's.
    s = session(problem)
    run, probed = s.run, []

    def quick_runs_out(objective, bounds, hint=None, max_work=None, probing=0, **kw):
        if max_work in (QUICK_POINT_WORK, QUICK_STEP_WORK):
            return Outcome("unknown")
        probed.append(probing)
        return run(objective, bounds, hint, max_work=max_work, probing=probing, **kw)

    s.run = quick_runs_out
    front = pareto_front(s)
    expected = brute_front(problem)
    assert sorted(_pairs(front)) == sorted(expected)
    if expected:
        assert HARD_POINT_PROBING in probed


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_steps_whose_probing_re_solve_runs_out_give_the_same_front(problem):
    # Every step's quick solve stops at a plan it has not proven (or at none) and its capped
    # probing re-solve runs out at the same plan: each step is then the last re-solve's, without
    # probing, from that plan.
    s = session(problem)
    run, last = s.run, []

    def capped_runs_out(objective, bounds, hint=None, max_work=None, probing=0, **kw):
        outcome = run(objective, bounds, hint, max_work=max_work, probing=probing, **kw)
        if objective != COST_THEN_TIME or max_work not in (QUICK_STEP_WORK, HARD_STEP_WORK):
            if objective == COST_THEN_TIME:
                last.append((probing, max_work))
            return outcome
        if max_work == QUICK_STEP_WORK and outcome.solved:
            outcome.status = "feasible"
        elif max_work == HARD_STEP_WORK:
            outcome = dataclasses.replace(hint) if isinstance(hint, Outcome) else Outcome("unknown")
            outcome.status = "feasible" if outcome.chosen else "unknown"
        return outcome

    s.run = capped_runs_out
    front = pareto_front(s)
    expected = brute_front(problem)
    assert sorted(_pairs(front)) == sorted(expected)
    assert front.status in ("optimal", "infeasible") and front.complete
    if len(expected) > 1:  # (the fastest end is a step)
        assert (0, None) in last


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_two_stage_points_give_the_same_front_as_one_step_points(problem):
    # A span whose weighed cost could overflow walks with two solves a point (cost, then time at
    # that cost): the same front.
    one_step = _pairs(pareto_front(session(problem)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(front_module, "_weighs_safely", lambda *_: False)
        two_stage = _pairs(pareto_front(session(problem)))
    assert sorted(one_step) == sorted(two_stage) == sorted(brute_front(problem))


def _tiny_single_job():
    specs = [
        Spec("a", "p1", gpus=g, hours=h, cost=c)
        for g, h, c in [
            (1, 80, 100),
            (2, 41, 104),
            (4, 21, 110),
            (8, 11, 130),
            (16, 6, 170),
            (16, 7, 200),
            (32, 4, 260),
        ]
    ]
    specs.append(
        Spec("a", "p2", gpus=8, hours=9, cost=120, violations={"sensitivity/a": "not allowed"})
    )
    return make_problem(specs, budget=250, deadlines_h={"a": 60})


def test_front_respects_limits_unless_relaxed():
    problem = _tiny_single_job()
    front = pareto_front(session(problem))
    # 80 h misses the deadline, 260 breaks the budget; 7 h at 200 is dominated; p2 breaks a rule.
    assert _pairs(front) == [(SCALE.money(c), SCALE.minutes(h)) for c, h in
                             [(170, 6), (130, 11), (110, 21), (104, 41)]]
    assert all(p.within_budget and p.meets_deadlines for p in front.points)
    relaxed = pareto_front(session(problem), relax_limits=True)
    flags = {(p.cost, p.makespan_h): (p.within_budget, p.meets_deadlines) for p in relaxed.points}
    assert flags[(260.0, 4.0)] == (False, True)
    assert flags[(100.0, 80.0)] == (True, False)
    assert (120.0, 9.0) not in flags  # rules are never relaxed


def test_walk_solves_each_point_after_the_cheapest_once():
    # Each point of the walk is one COST_THEN_TIME solve (cheapest cost and, at that cost, the
    # least makespan), none for the cheapest end (the walk starts below it), one more for the
    # fastest end (the cheapest plan at the least makespan).
    s = session(_tiny_single_job())
    run, objectives = s.run, []

    def counted(objective, *args, **kw):
        objectives.append(objective)
        return run(objective, *args, **kw)

    s.run = counted
    front = pareto_front(s)
    assert len(front.points) == 4 and front.status == "optimal" and front.complete
    assert objectives.count(COST_THEN_TIME) == (len(front.points) - 1) + 1


def test_coarse_prices_weigh_the_cost_by_its_step_and_keep_the_front():
    # Costs in whole thousands: the cost's weight is the span of makespans over the cost's step
    # (its coefficients' gcd), far below the span, and the front is still the brute force's.
    specs = [Spec("a", "p1", gpus=g, hours=h, cost=c * 1000)
             for g, h, c in [(1, 80, 100), (2, 41, 104), (4, 21, 110), (8, 11, 130), (16, 6, 170)]]
    problem = make_problem(specs)
    s = session(problem)
    span = Bounds(min_makespan=SCALE.minutes(6), max_makespan=SCALE.minutes(80))
    model = s.model_for(Bounds())
    assert model.cost_weight(span) < SCALE.minutes(80) - SCALE.minutes(6)
    assert sorted(_pairs(pareto_front(s))) == sorted(brute_front(problem))


def test_thinned_front_is_a_subset_with_both_ends():
    problem = _tiny_single_job()
    exact = _pairs(pareto_front(session(problem)))
    thin = _pairs(pareto_front(session(problem), max_points=3))
    assert len(thin) <= 3 and set(thin) <= set(exact)
    assert thin[0] == exact[0] and thin[-1] == exact[-1]


@pytest.mark.parametrize("z", [None, "risk"])
def test_progress_reports_every_point_and_ends_at_the_whole_span(z):
    heard: list[tuple[int, float]] = []
    front = pareto_front(
        session(_tiny_single_job()), z=z, on_point=lambda n, share: heard.append((n, share))
    )
    counts, shares = [n for n, _ in heard], [share for _, share in heard]
    assert counts == sorted(counts) and shares == sorted(shares), "progress never goes back"
    assert shares[0] >= 0.0 and shares[-1] == 1.0
    assert counts[-1] >= len(front.points) > 1


def test_risk_axis_points_are_non_dominated_in_three_dimensions():
    problem = _tiny_single_job()
    risky = {c.index: (0.5 * c.gpus if c.gpus in (8, 16) else 0.1) for c in problem.candidates["a"]}
    problem.candidates["a"] = [dataclasses.replace(c, expected_interruptions=risky[c.index])
                               for c in problem.candidates["a"]]
    front = pareto_front(session(problem), z="risk")
    triples = [(p.cost, p.makespan_h, p.risk) for p in front.points]
    assert all(t[2] is not None for t in triples)
    for t in triples:
        assert not any(_dominated(t, other) for other in triples)
    # every rule-abiding candidate within the limits is matched or beaten on all three axes
    for c in problem.candidates["a"]:
        if c.violations or c.hours > 60 or c.cost > SCALE.money(250):
            continue
        mine = (SCALE.to_money(c.cost), c.hours, c.expected_interruptions)
        assert any(all(y <= x + 1e-9 for x, y in zip(mine, t, strict=True)) for t in triples)


def test_scenario_front_endpoints_equal_min_time_and_min_cost_solves():
    # (two QLoRA jobs that trade GPU count and platform for time: a front of several points)
    loaded = load_scenario(SCENARIOS / "grant_qlora_compare.yaml")
    sess = Session.from_loaded(loaded)
    front = pareto_front(sess)
    assert len(front.points) >= 2
    for p in front.points:
        assert not any(
            _dominated((p.cost, p.makespan_h), (o.cost, o.makespan_h)) for o in front.points
        )
    fastest = Session(sess.problem, sess.settings, "time").best(Bounds())
    cheapest = Session(sess.problem, sess.settings, "cost").best(Bounds())
    first, last = front.points[0], front.points[-1]
    # (plans carry hours rounded to 0.01, so compare in hours, not by converting back to minutes)
    assert SCALE.money(first.cost) == fastest.total_cost
    assert first.makespan_h == pytest.approx(SCALE.to_hours(fastest.makespan_min), abs=0.005)
    assert SCALE.money(last.cost) == cheapest.total_cost
    # memory, budget and deadline hold for every point, recomputed from the plan
    budget = loaded.scenario.budget
    for p in front.points:
        assert budget is None or p.cost <= budget + 1e-6
        for job in p.plan.jobs:
            assert job.memory_gib_per_gpu <= job.gpu_memory_gib
            limit = loaded.scenario.effective_deadline_h(
                next(j for j in loaded.scenario.jobs if j.id == job.job)
            )
            assert limit is None or job.end_h <= limit + 0.02


def test_cli_exports_json_csv_html(tmp_path):
    scenario = SCENARIOS / "grant_qlora_compare.yaml"
    out_json, out_csv, out_html = (
        tmp_path / "front.json",
        tmp_path / "front.csv",
        tmp_path / "front.html",
    )
    result = runner.invoke(
        app, ["pareto", str(scenario), "-o", str(out_json), "--plot", str(out_html)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out_json.read_text())
    assert data["scenario"] == "grant-qlora-compare" and data["x"] == "cost" and data["y"] == "time"
    spans = [p["makespan_h"] for p in data["points"]]
    assert spans == sorted(spans) and len(spans) >= 2
    for point in data["points"]:
        assert {"cost", "makespan_h", "plan"} <= set(point)
        assert {"rank", "total_cost", "makespan_h", "jobs", "explanation", "assumptions"} <= set(
            point["plan"]
        )
        assert point["plan"]["total_cost"] == point["cost"]
    page = out_html.read_text()
    assert (
        page.count("<circle") == len(data["points"]) and "src=" not in page and "http" not in page
    )
    result = runner.invoke(app, ["pareto", str(scenario), "-o", str(out_csv), "--points", "3"])
    assert result.exit_code == 0, result.output
    rows = out_csv.read_text().splitlines()
    assert rows[0].startswith("point,cost") and 2 <= len(rows) - 1 <= 3


def test_cli_png_plot(tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "front.png"
    result = runner.invoke(
        app, ["pareto", str(SCENARIOS / "student_no_ops.yaml"), "--plot", str(target)]
    )
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_bad_output_and_infeasible(tmp_path):
    scenario = SCENARIOS / "student_no_ops.yaml"
    result = runner.invoke(app, ["pareto", str(scenario), "-o", str(tmp_path / "front.xlsx")])
    assert result.exit_code == 2
    tight = tmp_path / "tight.yaml"
    tight.write_text(scenario.read_text().replace("budget:", "budget: 1 #", 1))
    result = runner.invoke(app, ["pareto", str(tight)])
    assert result.exit_code == 1, result.output
    assert "plan solve" in result.output


def test_pool_and_reservation_problem_front():
    # two jobs on a shared pool or a monthly reservation: the front still matches brute force
    specs = [Spec("a", "lab", gpus=8, billing="owned", hours=30, cost=0, resource="lab"),
             Spec("a", "cloud", gpus=8, hours=10, cost=300),
             Spec("b", "lab", gpus=8, billing="owned", hours=20, cost=0, resource="lab"),
             Spec("b", "p", gpus=4, billing="monthly", hours=40, cost=0, resource=MONTH.key)]
    problem = make_problem(specs, resources=[POOL, MONTH])
    assert sorted(_pairs(pareto_front(session(problem)))) == sorted(brute_front(problem))


@pytest.mark.parametrize("points", [2, 3, 4])
def test_risk_front_honours_points(points):
    problem = _tiny_single_job()
    risky = {
        c.index: (0.5 * c.gpus if c.gpus in (8, 16) else 0.1 * c.gpus / 4)
        for c in problem.candidates["a"]
    }
    problem.candidates["a"] = [dataclasses.replace(c, expected_interruptions=risky[c.index])
                               for c in problem.candidates["a"]]
    full = pareto_front(session(problem), z="risk")
    thin = pareto_front(session(problem), z="risk", max_points=points)
    assert 1 <= len(thin.points) <= points
    triples = {(p.cost, p.makespan_h, p.risk) for p in full.points}
    assert {(p.cost, p.makespan_h, p.risk) for p in thin.points} <= triples
    cheapest = min(full.points, key=lambda p: (p.cost, p.makespan_h))
    assert min(p.cost for p in thin.points) == cheapest.cost
    assert len(full.points) > points or len(thin.points) == len(full.points)


def test_two_jobs_that_overrun_one_reservation_period_together_are_proven_at_once():
    """Found by the property tests: a 4-GPU job (36 h) and an 8-GPU job (65 h) on a reservation of 4
    or 8 GPUs held in 100 h periods cannot share one period (12 GPUs at once, or 101 h in a row), so
    the second job rents (81) beside 4 GPUs for one period (80). CP-SAT took over 5 s to prove it
    through the cumulative alone; the pair cut of constraints/scheduling.py gives it at once."""
    specs = [Spec("a", "p", gpus=4, billing="monthly", hours=36, cost=0, resource=MONTH.key),
             Spec("b", "p", gpus=8, billing="monthly", hours=65, cost=0, resource=MONTH.key),
             Spec("b", "cloud", gpus=4, billing="hourly", hours=1, cost=81)]
    problem = make_problem(specs, jobs=["a", "b"], resources=[POOL, MONTH])
    assert brute_front(problem) == {(SCALE.money(161), SCALE.minutes(36))}
    front = pareto_front(session(problem))
    assert front.status == "optimal" and _pairs(front) == [(SCALE.money(161), SCALE.minutes(36))]
