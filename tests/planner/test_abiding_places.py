"""A job built on the places where some option abides by the held rules (`AbidingPlaces`) has, on
those places, the candidates a whole build gives it, and among them every candidate a solve holding
those rules may choose; an infeasible answer that proves its copies late from such builds is the
answer every copy built whole gives."""

from __future__ import annotations

from typing import Any

import pytest

from plan.models.loading import load_scenario
from plan.planner.candidates import reuse
from plan.planner.candidates.abiding_places import AbidingPlaces
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.candidates.soonest_end import usable
from plan.planner.session import Session, SolveOptions
from plan.planner.solve import solve_session
from tests.planner.builders import slow_and_short
from tests.planner.test_infeasible_shortcuts import _assert_same_as_built_whole


def _kept_home(base_scenario: dict[str, Any]) -> dict[str, Any]:
    """`slow_and_short` with the late LoRA run's data confidential and kept in the lab, which owns
    an 8x A800 node: of its 974 options, the 4 on the lab's pool abide by the rules (and run past
    the horizon: the scenario's build leaves the job only rented options, each breaking them)."""
    plant = slow_and_short(base_scenario)
    plant["sites"] = [{"id": "lab", "jurisdiction": "cn"}]
    plant["owned"] = [{"id": "lab-a800", "site": "lab", "gpu": "a800-80gb", "count": 8,
                       "gpus_per_node": 8, "cost_per_gpu_hour": 1.0}]
    plant["jobs"][0]["data"] = {"sensitivity": "confidential", "residency": "cn", "at": "lab"}
    return plant


def _key(c: Any) -> tuple[object, ...]:
    return (c.platform, c.gpu, c.gpus, c.billing, c.duration_min, c.startup_min, c.cost,
            tuple(sorted(c.violations)))


@pytest.mark.parametrize("deadline", ["1h", None])
def test_bound_is_the_whole_build_on_the_abiding_places(base_scenario, write_scenario,
                                                        deadline) -> None:
    plant = _kept_home(base_scenario)
    if deadline is None:  # (every option within the horizon: candidates to compare)
        plant.pop("deadline")
    loaded = load_scenario(write_scenario(plant))
    job = loaded.scenario.job("late-lora")
    whole = CandidateBuilder(loaded).job_build(job, 0, "")[0]
    for lifted in (frozenset(), frozenset({"sensitivity/late-lora", "residency/late-lora"})):
        places = AbidingPlaces(loaded, {}, lifted)
        abiding, every = places.share(job)
        bound = places.candidates(job)
        here = {(c.platform, c.gpu, c.billing) for c in bound}
        # the whole build's candidates on those places, in its order, and no other
        assert [_key(c) for c in bound] == [
            _key(c) for c in whole if (c.platform, c.gpu, c.billing) in here]
        # every candidate a solve with `lifted` groups may choose is among them
        assert {_key(c) for c in usable(whole, lifted)} <= {_key(c) for c in bound}
        if not lifted:
            assert abiding * reuse.PROOF_SHARE <= every, "the plant must leave the job few places"
            if deadline is None:
                assert bound and {c.platform for c in bound} == {"lab-a800"}
                assert len(usable(whole, lifted)) < len(whole)


def test_infeasible_answer_same_with_and_without_the_bound(base_scenario, write_scenario,
                                                           monkeypatch) -> None:
    """Some copies are proven without a plan from the confidential run built on its lab pool alone,
    others are not (and build it whole); the answer is the one every copy built whole gives."""
    path = write_scenario(_kept_home(base_scenario))
    session = Session.from_loaded(load_scenario(path), SolveOptions(time_limit_s=300))
    proved = []
    real = reuse._bounded_late

    def counted(*args):
        found = real(*args)
        proved.append(found)
        return found

    monkeypatch.setattr(reuse, "_bounded_late", counted)
    fast = solve_session(session)
    assert True in proved and False in proved, proved
    _assert_same_as_built_whole(fast, path, monkeypatch)
