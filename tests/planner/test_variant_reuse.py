"""An infeasible answer's variants (Session.variant) reuse what their change does not touch: a
budget or a deadline within the horizon reuses the candidates; a variant that moves the horizon or
changes one job asks again only the layout searches it touches (candidates/shared_estimates.py).
The explanation is the one a from-scratch build of every variant gives."""

from __future__ import annotations

from typing import Any

import pytest

from plan.models.loading import load_scenario
from plan.models.problem import SCALE
from plan.planner import session as session_module
from plan.planner.candidates import reuse, shared_estimates
from plan.planner.explain.relaxations import _without_deadlines
from plan.planner.session import Session, SolveOptions
from plan.planner.solve import solve_session
from tests.planner.builders import late_and_short


def _too_poor(base_scenario: dict[str, Any]) -> dict[str, Any]:
    """A budget no plan meets (the conflict is the budget; the deadline relaxation is a bound); the
    second job's own deadline is the scenario's, so a sooner scenario deadline keeps the horizon."""
    base_scenario.update(budget="0.01", deadline="2d")
    base_scenario["jobs"][1]["deadline"] = "2d"
    return base_scenario


def _explained(path: Any) -> tuple[object, ...]:
    result = solve_session(Session.from_loaded(load_scenario(path),
                                               SolveOptions(time_limit_s=600)))
    assert result.status == "infeasible"
    return result.conflicts, result.relaxations, result.notes


def _from_scratch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every build from here on builds every candidate and asks every search of its own."""
    monkeypatch.setattr(reuse, "reuse_key", lambda loaded, defer=False: (object(),))
    monkeypatch.setattr(reuse, "shared_estimates", lambda loaded: {})
    monkeypatch.setattr(session_module, "jobs_first", lambda *_: {})  # no job taken as it was


@pytest.mark.parametrize("plant", [late_and_short, _too_poor])
def test_explanation_same_as_from_scratch(plant, base_scenario, write_scenario,
                                          monkeypatch) -> None:
    path = write_scenario(plant(base_scenario))
    reuse._BUILT.clear()
    shared_estimates.forget()
    reused = _explained(path)
    _from_scratch(monkeypatch)
    fresh = _explained(path)
    assert reused == fresh
    conflicts, relaxations, _ = reused
    assert conflicts and relaxations


def test_budget_and_deadline_variants_reuse_the_candidates(base_scenario, write_scenario) -> None:
    """Another budget, or a sooner scenario deadline that keeps the horizon (a job's own deadline
    is the latest): the variant's problem holds the very candidates of the session's, and its
    builder."""
    loaded = load_scenario(write_scenario(_too_poor(base_scenario)))
    session = Session.from_loaded(loaded, SolveOptions(time_limit_s=600))
    scenario = loaded.scenario
    for change in ({"budget": 2.0}, {"budget": 500.0}, {"deadline_h": 45.0}):
        other = session.variant(scenario.model_copy(update=change))
        assert other is not None
        for job in session.problem.jobs:
            mine, theirs = session.problem.candidates[job], other.problem.candidates[job]
            assert mine and len(mine) == len(theirs)
            assert all(a is b for a, b in zip(mine, theirs, strict=True)), change
        assert other.builder is session.builder
    assert other.problem.deadline_min[scenario.jobs[0].id] == SCALE.minutes(45.0)


def test_a_horizon_variant_asks_no_search_again(base_scenario, write_scenario) -> None:
    """Without deadlines the horizon moves, so candidates are built again, but every layout search
    the base build asked is answered from the shared cache."""
    loaded = load_scenario(write_scenario(late_and_short(base_scenario)))
    session = Session.from_loaded(loaded, SolveOptions(time_limit_s=600))
    assert session.builder is not None
    asked = dict(session.builder._estimates)
    other = session.variant(_without_deadlines(loaded.scenario))
    assert other is not None and other.builder is not session.builder
    assert other.builder._estimates is session.builder._estimates
    assert all(session.builder._estimates[key] is value for key, value in asked.items())
    assert other.problem.candidates["late-lora"], "the longer horizon holds the late job"
