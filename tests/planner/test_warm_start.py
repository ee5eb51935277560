"""A main solve not proven in a first short solve starts again from a greedy plan: each job's best
rule-abiding option on its own. A hint only steers the search, so the optimum must be the one found
without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from plan.planner import solve
from plan.planner.cpsat import run
from plan.planner.cpsat.model import Bounds
from plan.planner.cpsat.run import solve_model
from plan.planner.cpsat.warm_start import WARM_START_NOTE, greedy_hint
from plan.planner.solve import solve_session
from tests.conftest import SCENARIOS, generous_session


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_the_greedy_plan_picks_each_jobs_best_rule_abiding_option_in_time(path: Path):
    session = generous_session(path)
    problem = session.problem
    for objective in ("cost", "time"):
        hint = greedy_hint(problem, objective)
        for job in problem.jobs:
            options = problem.candidates[job]
            picked = [c for c in options if hint[c.index] == 1]
            assert all(c.index in hint for c in options)
            abiding = [c for c in options if not c.violations]
            if not abiding:
                assert picked == []
                continue
            (pick,) = picked
            assert not pick.violations
            limit = problem.deadline_min[job]
            in_time = [
                c for c in abiding if limit is None or c.startup_min + c.duration_min <= limit
            ]
            pool = in_time or abiding
            assert pick in pool
            if objective == "cost":
                assert problem.standalone_cost(pick) == min(
                    problem.standalone_cost(c) for c in pool
                )
            else:
                assert pick.duration_min == min(c.duration_min for c in pool)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_starting_from_the_greedy_plan_keeps_the_optimum(path: Path):
    session = generous_session(path)
    model = session.model_for(Bounds())
    for objective in ("cost", "time"):
        plain = solve_model(model, model.instance(objective, Bounds()), session.settings, 600, 1000)
        hinted = solve_model(
            model,
            model.instance(objective, Bounds(), hint=greedy_hint(session.problem, objective)),
            session.settings,
            600,
            1000,
        )
        assert plain.status == hinted.status
        assert plain.objective == hinted.objective


def test_a_solve_not_proven_quickly_starts_again_from_the_greedy_plan_and_says_so(monkeypatch):
    lab = next(p for p in SCENARIOS if p.stem == "lab_six_jobs")
    proven = solve_session(generous_session(lab))  # proven within the first short solve: no restart
    assert proven.status == "optimal" and WARM_START_NOTE not in proven.notes
    # a first solve too short to prove anything: the answer comes from the greedy start, same
    # optimum
    # (and below the floor every solve gets: lab_six_jobs proves within that floor now)
    monkeypatch.setattr(solve, "QUICK_BEST_WORK", 0.0)
    monkeypatch.setattr(run, "MIN_WORK", 0.0001)
    restarted = solve_session(generous_session(lab))
    assert WARM_START_NOTE in restarted.notes
    assert restarted.status == "optimal"
    assert restarted.plans[0].total_cost == proven.plans[0].total_cost
