"""A budget sweep's variants share one CP-SAT model (PlanModel.for_budget, Session._plan_model):
each instance is, constraint for constraint, the model a build for its own budget makes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from plan.models.loading import load_scenario
from plan.planner import candidates
from plan.planner.cpsat.model import Bounds, PlanModel
from plan.planner.session import Session, SolveOptions
from tests.conftest import REPO


def _loaded(tmp_path: Path, budget: str | None, deadline: str = "7d"):
    data = yaml.safe_load((REPO / "scenarios" / "student_no_ops.yaml").read_text("utf-8"))
    data["deadline"] = deadline
    if budget is None:
        data.pop("budget", None)
    else:
        data["budget"] = budget
    path = tmp_path / f"s-{budget}-{deadline}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return load_scenario(path)


def _proto(model: PlanModel, objective: str = "cost") -> str:
    return str(model.instance(objective, Bounds(max_makespan=10_000)).proto)


@pytest.mark.parametrize("abiding", [False, True])
def test_a_shared_model_is_the_model_of_each_budget(tmp_path, abiding):
    candidates._BUILT.clear()
    first = Session.from_loaded(_loaded(tmp_path, "300"), SolveOptions())
    pick = (lambda s: s.model_for(Bounds())) if abiding else (lambda s: s.model)
    base = pick(first)
    for budget in ("150", "300", "5000"):
        session = Session.from_loaded(_loaded(tmp_path, budget), SolveOptions())
        assert session.builder is first.builder  # the candidates were reused
        shared = pick(session)
        assert shared.model is base.model  # and so is the model
        fresh = PlanModel(session.problem.rule_abiding() if abiding else session.problem)
        assert _proto(shared) == _proto(fresh), budget
        assert _proto(shared, "time") == _proto(fresh, "time"), budget


def test_a_model_built_with_a_budget_serves_no_problem_without_one(tmp_path):
    candidates._BUILT.clear()
    first = Session.from_loaded(_loaded(tmp_path, "300"), SolveOptions())
    with pytest.raises(ValueError):
        first.model.for_budget(dataclasses.replace(first.problem, budget=None))
    unbudgeted = Session.from_loaded(_loaded(tmp_path, None), SolveOptions())
    assert unbudgeted.builder is not first.builder  # (which figures exist is in the reuse key)


def test_a_problem_made_another_way_builds_its_own_model(tmp_path):
    """The p90 search's problem (planner/trades.py) has longer candidates on the same builder: it
    must not get the scenario's model (it did, and rubin_buy_or_rent lost its p90 plan)."""
    from plan.planner.trades import p90_problem

    candidates._BUILT.clear()
    session = Session.from_loaded(_loaded(tmp_path, "300"), SolveOptions())
    base = session.model
    longer = p90_problem(session.problem)
    other = Session(longer, session.settings, "cost", session.started, session.loaded,
                    session.builder)
    assert other.model.model is not base.model
    assert _proto(other.model) == _proto(PlanModel(longer))
