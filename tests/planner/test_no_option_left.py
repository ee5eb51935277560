"""Shortcuts of an infeasible answer that leave rule-breaking options unsized give the answer a
whole build gives: a plain solve's deferring build stops at the first job left no option
(`NoOptionLeft`) and the answer is explained from a whole build, as when the deferring build ran
to its end; the copy without deadlines that finds the deadline beyond the horizon (every rule
held) builds deferred and finds the same deadline."""

from __future__ import annotations

import dataclasses

import pytest

from plan.models.loading import load_scenario
from plan.planner import solve as solve_module
from plan.planner.candidates.build import CandidateBuilder, NoOptionLeft
from plan.planner.explain import relaxations
from plan.planner.session import Session, SolveOptions
from plan.planner.solve import solve, solve_session
from tests.planner.builders import late_and_short

OPTIONS = SolveOptions(time_limit_s=300)


def test_build_stops_only_at_a_job_left_no_option(base_scenario, write_scenario) -> None:
    late = load_scenario(write_scenario(late_and_short(base_scenario), "late.yaml"))
    with pytest.raises(NoOptionLeft) as stopped:
        CandidateBuilder(late, defer=True, stop_at_empty=True).build()
    assert stopped.value.args == ("late-lora",)
    # (built to its end, the same build leaves that job no option: the stop says only that)
    assert not CandidateBuilder(late, defer=True).build().candidates["late-lora"]
    # where every job has options the build runs to its end, unchanged
    plant = late_and_short(base_scenario)
    plant.pop("deadline")
    ok = load_scenario(write_scenario(plant, "ok.yaml"))
    whole = CandidateBuilder(ok, defer=True).build()
    assert all(whole.candidates.values())
    assert CandidateBuilder(ok, defer=True, stop_at_empty=True).build() == whole


def test_stopped_build_gives_the_whole_builds_answer(base_scenario, write_scenario,
                                                    monkeypatch) -> None:
    loaded = load_scenario(write_scenario(late_and_short(base_scenario)))
    fast = solve(loaded, OPTIONS)
    whole = solve_session(Session.from_loaded(loaded, OPTIONS))
    # the deferring build run to its end first, as before the stop
    built: list[bool] = []
    real = Session.from_loaded.__func__  # type: ignore[attr-defined]

    def to_the_end(cls, loaded, options=None, defer=False, stop_at_empty=False):
        built.append(stop_at_empty)
        return real(cls, loaded, options, defer)

    monkeypatch.setattr(solve_module.Session, "from_loaded", classmethod(to_the_end))
    slow = solve(loaded, OPTIONS)
    assert built == [True, False]  # (the plain solve asks the stop, the whole build does not)
    for other in (whole, slow):
        assert fast.status == other.status == "infeasible"
        assert fast.conflicts == other.conflicts and fast.conflicts
        assert fast.relaxations == other.relaxations and fast.relaxations
        assert fast.notes == other.notes


def test_deadline_beyond_horizon_same_from_a_deferred_copy(base_scenario, write_scenario,
                                                           monkeypatch) -> None:
    session = Session.from_loaded(load_scenario(write_scenario(late_and_short(base_scenario))),
                                  OPTIONS)
    deferred = relaxations.deadline_beyond_horizon(session)
    real = relaxations._solve_variant

    def whole(session, scenario, objective="cost", bounds=None, defer=False):
        assert defer, "the deadline-free copy asks a deferring build"
        return real(session, scenario, objective, bounds, defer=False)

    monkeypatch.setattr(relaxations, "_solve_variant", whole)
    built_whole = relaxations.deadline_beyond_horizon(session)
    assert deferred is not None and built_whole is not None
    assert dataclasses.astuple(deferred) == dataclasses.astuple(built_whole)
