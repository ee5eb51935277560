"""A main solve not proven in a first short solve starts again from a greedy plan: each job's best
rule-abiding option on its own. A hint only steers the search, so the optimum must be the one found
without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def _meets_every_limit(session: Any, outcome: Any) -> None:
    """The plan holds what the model promises: memory on each card, the budget, each job's
    deadline and order, each owned pool's window and, at every moment, its GPUs."""
    problem = session.problem
    if problem.budget is not None:
        assert outcome.total_cost <= problem.budget
    for job, c in outcome.chosen.items():
        assert c.memory_gib_per_gpu <= c.gpu_memory_gib
        assert outcome.end_min[job] == outcome.start_min[job] + c.duration_min
        assert outcome.start_min[job] >= problem.earliest_start_min(c)
        limit = problem.deadline_min.get(job)
        assert limit is None or outcome.end_min[job] <= limit
        for before in problem.after.get(job, ()):
            assert outcome.start_min[job] >= outcome.end_min[before]
    for key, res in problem.resources.items():
        if res.kind != "owned":
            continue
        runs = [(outcome.start_min[j], outcome.end_min[j], c.gpus)
                for j, c in outcome.chosen.items() if c.resource == key]
        for start, end, _ in runs:
            assert start >= res.available_from_min
            assert res.available_until_min is None or end <= res.available_until_min
        for moment, _, _ in runs:  # (the load is highest at some run's start)
            assert sum(g for s, e, g in runs if s <= moment < e) <= (res.capacity or 0)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_the_scheduled_greedy_plan_is_a_whole_plan_that_meets_every_limit(path: Path):
    session = generous_session(path)
    start = solve._greedy_start(session)
    hint = greedy_hint(session.problem, session.objective)
    if not isinstance(start, run.Outcome):  # no schedule of the greedy options: their hint alone
        assert start == hint
        return
    assert start.solved and start.values is not None
    assert start.values.model is session.model_for(Bounds())
    assert len(start.values.values) == len(start.values.model.model.proto.variables)
    # the greedy options, each job's, scheduled
    assert {c.index for c in start.chosen.values()} == {i for i, on in hint.items() if on}
    _meets_every_limit(session, start)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_starting_from_the_whole_greedy_plan_keeps_the_optimum_and_meets_every_limit(path: Path):
    session = generous_session(path)
    start = solve._greedy_start(session)
    if not isinstance(start, run.Outcome):
        pytest.skip("the greedy options have no schedule here")
    plain = session.best(Bounds())
    hinted = session.best(Bounds(), hint=start)
    assert hinted.status == plain.status == "optimal"
    assert session.objective_value(hinted) == session.objective_value(plain)
    _meets_every_limit(session, hinted)


def test_a_whole_hint_needs_every_variable_of_its_model():
    session = generous_session(next(p for p in SCENARIOS if p.stem == "lab_six_jobs"))
    model = session.model_for(Bounds())
    with pytest.raises(ValueError):
        model.instance("cost", Bounds(), values=(0, 1))
