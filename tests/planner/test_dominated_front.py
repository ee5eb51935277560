"""Fronts and dominated candidates (planner/cpsat/dominated.py): a dominated option is never
strictly better on cost, time or risk, so leaving it out of a front's solves keeps every point.
Fronts keep them all the same (`KEEP_DOMINATED`: the plan shown at a point may change among ties);
these tests show the points would not."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.planner.pareto import front as pareto
from tests.conftest import REPO, generous_session
from tests.planner.builders import Spec, make_problem, session
from tests.planner.test_front_pruning import rental_problems

LAB = REPO / "scenarios" / "lab_six_jobs.yaml"


def _points(front: pareto.ParetoFront) -> list[tuple[float, ...]]:
    return [(p.cost, p.makespan_h, p.risk or 0.0) for p in front.points]


def _front(make, z: str | None, *, keep: bool, narrowed: bool = True) -> pareto.ParetoFront:
    """The front with dominated options kept or left out; `narrowed`: the walk on its narrowed
    model (pruning.py), else on the whole rule-abiding one (every point's solves see them)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pareto, "KEEP_DOMINATED", keep)
        if not narrowed:
            patch.setattr(pareto, "front_problem", lambda problem, **_: problem.rule_abiding())
        return pareto.pareto_front(make(), z=z)


def test_fronts_keep_dominated_options():
    assert pareto.KEEP_DOMINATED is True


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rental_problems(), st.sampled_from([None, "risk"]))
def test_leaving_dominated_options_out_keeps_every_point(problem, z):
    """Rentals with ties in cost, start-up and risk, several GPU types (one fixed for every job
    in some), beside a pool and a reservation; with and without a risk axis."""
    kept = _front(lambda: session(problem), z, keep=True, narrowed=False)
    left_out = _front(lambda: session(problem), z, keep=False, narrowed=False)
    assert left_out.status == kept.status
    assert sorted(_points(left_out)) == sorted(_points(kept))


def test_a_dearer_slower_but_safer_option_stays_a_point_of_the_risk_front():
    """Not dominated: the spot-like offer is cheaper and faster but riskier, so the safe one is
    the front's least risky point (a dominance that ignored risk would drop it)."""
    problem = make_problem([Spec("a", "risky", hours=5, cost=50), Spec("a", "safe", hours=8,
                                                                         cost=80)])
    problem = dataclasses.replace(problem, candidates={"a": [
        dataclasses.replace(c, expected_interruptions=0.5 if c.platform == "risky" else 0.0)
        for c in problem.candidates["a"]]})
    left_out = _front(lambda: session(problem), "risk", keep=False, narrowed=False)
    assert sorted(_points(left_out)) == [(50.0, 5.0, 0.5), (80.0, 8.0, 0.0)]


def test_lab_six_jobs_front_has_the_same_points_without_dominated_options():
    kept = _front(lambda: generous_session(LAB), None, keep=True)
    left_out = _front(lambda: generous_session(LAB), None, keep=False)
    assert kept.complete and left_out.complete
    assert len(kept.points) == 80  # (81 before the whole-run overhead went 1.27 -> 1.19)
    assert _points(left_out) == _points(kept)
