"""While every rule holds, solves run on the rule-abiding candidates alone; the answer must be the
one the whole model gives, and the whole model must still serve what needs the rule-breakers."""

from __future__ import annotations

from pathlib import Path

import pytest

from plan.planner.cpsat.model import Bounds
from plan.planner.cpsat.run import solve_model
from tests.conftest import SCENARIOS, generous_session


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_rule_a_candidate_breaks_forbids_it_in_the_whole_model(path: Path):
    # Dropping rule-breakers is exact only if each broken group, while it holds, forbids them.
    session = generous_session(path)
    assert session.problem.rule_groups() <= set(session.model.groups.literals)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_the_rule_abiding_model_has_the_whole_models_optimum(path: Path):
    session = generous_session(path)
    abiding = session.model_for(Bounds())
    assert abiding is not session.model
    assert all(not c.violations for c in abiding.problem.all_candidates())
    for objective in ("cost", "time"):
        small = solve_model(
            abiding, abiding.instance(objective, Bounds()), session.settings, 600, 1000
        )
        whole = solve_model(
            session.model, session.model.instance(objective, Bounds()), session.settings, 600, 1000
        )
        assert small.status == whole.status == "optimal"
        assert small.objective == whole.objective
        # the chosen candidates are the problem's own (same indices), valid in the whole model
        assert all(c in session.problem.candidates[job] for job, c in small.chosen.items())


def test_solves_that_lift_a_rule_force_an_option_or_ask_for_a_core_use_the_whole_model():
    session = generous_session(SCENARIOS[0])
    rule = sorted(session.problem.rule_groups())[0]
    breaker = next(c for c in session.problem.all_candidates() if rule in c.violations)
    assert session.model_for(Bounds(lifted=frozenset({rule}))) is session.model
    assert session.model_for(Bounds(forced=((breaker.index,),))) is session.model
    assert session.model_for(Bounds(), with_assumptions=True) is session.model
    # lifting only the budget or the deadlines (Pareto beyond the limits) keeps the small model
    limits = frozenset(
        g for g in session.problem.groups if g == "budget" or g.startswith("deadline/")
    )
    assert session.model_for(Bounds(lifted=limits)) is not session.model


def test_a_hint_naming_a_rule_breaker_is_ignored_by_the_rule_abiding_model():
    session = generous_session(SCENARIOS[0])
    breaker = next(c for c in session.problem.all_candidates() if c.violations)
    abiding = session.model_for(Bounds())
    instance = abiding.instance("cost", Bounds(), hint={breaker.index: 1})
    outcome = solve_model(abiding, instance, session.settings, 600, 1000)
    assert outcome.status == "optimal" and all(not c.violations for c in outcome.chosen.values())
