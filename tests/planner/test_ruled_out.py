"""A plain solve's build defers the options that break a rule (candidates/ruled_out.py): its plans
and the lines that name rule-breaking options must be a whole build's, and the floor that decides
which places to size must never exceed what an option costs."""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from plan.models.loading import load_scenario
from plan.models.methods import METHODS
from plan.models.scenario import Job, Scenario
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.candidates.cost_floor import cost_floor, least_scheduled_share
from plan.planner.estimate.band import (
    STACK_MATURITIES,
    THROUGHPUT_BAND,
    quantile_factor,
    run_band,
    whole_run_overhead,
    widened,
)
from plan.planner.session import Session
from plan.planner.solve import solve, solve_session

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
# shipped scenarios with rule-breaking options that are cheaper than the plan's (medical: the
# "ruled out" line; xinchuang: the policy line) and with none (paper)
CASES = ["medical_hybrid", "xinchuang_ascend", "paper_reproducibility"]


class _Floors(CandidateBuilder):
    """A whole build that keeps each sized option's floor beside its candidate."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.pairs: list[tuple[int, object]] = []

    def _candidate(self, index, job, card, option, shape):  # type: ignore[no-untyped-def]
        c = super()._candidate(index, job, card, option, shape)
        if c is not None:
            gpu = self.catalog.gpus[option.place.gpu]
            self.pairs.append((cost_floor(job, card, option, gpu, self._money, self.scenario,
                                          self.planning_horizon_h, self.calibration is not None),
                               c))
        return c


@pytest.mark.parametrize("name", ["medical_hybrid", "finance_year", "rubin_buy_or_rent",
                                  "frontier_private_vs_hybrid"])
def test_floor_never_above_the_cost(name: str) -> None:
    loaded = load_scenario(SCENARIOS / f"{name}.yaml")
    builder = _Floors(loaded)
    problem = builder.build()
    priced = replace(problem, resources=dict(builder.resources))
    ratios, reserved = [], []
    for floor, c in builder.pairs:
        cost = priced.standalone_cost(c)  # type: ignore[arg-type]
        assert floor <= cost, (name, c, floor, cost)
        if cost > 0:
            ratios.append(floor / cost)
            if c.billing in ("monthly", "yearly"):  # type: ignore[attr-defined]
                reserved.append(floor / cost)
    # (a floor of 0 everywhere would hold and prune nothing: it must bound most options usefully)
    assert statistics.median(ratios) > 0.2, statistics.median(ratios)
    # a reservation held longer than its minimum periods is priced for its run too (its minimum
    # periods alone bounded rubin's at 1/60 of their cost, and its lines sized 133 places, not 46)
    assert not reserved or min(reserved) > 0.25, min(reserved)


@pytest.mark.parametrize("method", METHODS)
def test_a_reservation_is_held_at_least_the_least_scheduled_share(method: str) -> None:
    """A reservation is held for its run's hours at the scenario's confidence (0.5 to 0.95): as a
    share of the expected hours, never under `least_scheduled_share`, whatever the stack's band
    (widened for any number of uncalibrated mechanisms) or maturity."""
    for maturity in (None, *STACK_MATURITIES):
        job = Job.model_validate({"id": "j", "model": "m", "method": method, "tokens": 1e9,
                                  "stack_maturity": maturity})
        share = least_scheduled_share(job, Scenario.model_validate({"name": "s", "jobs": [job]}))
        assert 0 < share <= 1
        point, band = whole_run_overhead(method, maturity)
        for throughput in THROUGHPUT_BAND.values():
            for mechanisms in range(4):
                hours_band = run_band(widened(throughput, mechanisms), point, band)
                for q in (0.5, 0.6, 0.8, 0.95):
                    assert quantile_factor(hours_band, q) >= share * (1 - 1e-12), (
                        method, maturity, throughput, mechanisms, q)


def _lines(result) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [[line for line in plan.explanation if not line.startswith("options removed")]
            for plan in result.plans]


@pytest.mark.parametrize("name", CASES)
def test_deferred_solve_says_what_a_whole_build_says(name: str) -> None:
    """The same plans, and every line but the removal counts the same, as a solve whose build
    sized every option."""
    loaded = load_scenario(SCENARIOS / f"{name}.yaml")
    deferred = solve(loaded)
    whole = solve_session(Session.from_loaded(loaded))
    assert deferred.status == whole.status
    assert [p.to_dict()["jobs"] for p in deferred.plans] == [
        p.to_dict()["jobs"] for p in whole.plans]
    assert _lines(deferred) == _lines(whole)


def test_deferred_options_counted_by_rule() -> None:
    """Each option a deferring build leaves unsized is counted once per rule it breaks."""
    loaded = load_scenario(SCENARIOS / "medical_hybrid.yaml")
    session = Session.from_loaded(loaded, defer=True)
    problem = session.problem
    deferred = [r for r in problem.removed if r.floor_cost is not None]
    assert deferred and not any(c.violations for c in problem.all_candidates())
    line = next(line for line in solve_session(session).plans[0].explanation
                if line.startswith("options removed"))
    residency = sum(1 for r in deferred if r.rule.split("/")[0] == "residency")
    assert f"residency {residency:,}" in line


def test_infeasible_answer_builds_every_option() -> None:
    """A scenario with no plan is explained from a whole build (its conflicts lift rules)."""
    loaded = load_scenario(SCENARIOS / "medical_hybrid.yaml")
    tight = loaded.scenario.model_copy(update={"deadline_h": 1.0})
    result = solve(replace(loaded, scenario=tight))
    assert result.status == "infeasible"
    assert result.conflicts or result.relaxations
