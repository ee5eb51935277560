"""Shortcuts of an infeasible answer's search give the answer the full search gives: a memory saver
that leaves a job with no option unchanged is not built (`stays_without_options`), a variant takes
the jobs it leaves as they were from the scenario's build and builds first the jobs left with no
option, then the jobs whose every option runs past their deadline, and gives up where one still
does (`Session.variant`, `reuse.jobs_first`)."""

from __future__ import annotations

import pytest

from plan.models.loading import load_scenario
from plan.planner import session as session_module
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.cpsat.model import Bounds
from plan.planner.estimate.advice import LEANER_OPTIMIZERS, STACK_SETTINGS
from plan.planner.explain import relaxations
from plan.planner.session import Session, SolveOptions
from plan.planner.solve import solve_session
from tests.planner.builders import Spec, late_and_short, make_problem, slow_and_short


@pytest.fixture
def late_session(base_scenario, write_scenario) -> Session:
    path = write_scenario(late_and_short(base_scenario))
    return Session.from_loaded(load_scenario(path), SolveOptions(time_limit_s=300))


def test_savers_skipped_only_where_a_job_stays_without_options(late_session, monkeypatch) -> None:
    problem = late_session.problem
    assert not problem.candidates["late-lora"] and problem.candidates["small-ft"]
    pairs = relaxations._savers_for(late_session, LEANER_OPTIMIZERS + STACK_SETTINGS)
    skipped = [p for p in pairs if relaxations.stays_without_options(problem, set(p[1]))]
    assert skipped, "the plant must have a saver that leaves the late job as it is"
    shortcut = [relaxations._saver_relaxation(late_session, [pair]) for pair in pairs]
    # the same savers built and solved from scratch
    monkeypatch.setattr(relaxations, "stays_without_options", lambda *_: False)
    full = [relaxations._saver_relaxation(late_session, [pair]) for pair in pairs]
    assert shortcut == full
    assert all(full[pairs.index(pair)] is None for pair in skipped)


def test_infeasible_answer_same_with_and_without_shortcut(
    base_scenario, write_scenario, monkeypatch
) -> None:
    path = write_scenario(late_and_short(base_scenario))
    fast = solve_session(Session.from_loaded(load_scenario(path), SolveOptions(time_limit_s=300)))
    _assert_same_as_built_whole(fast, path, monkeypatch)


def test_late_job_answer_same_with_and_without_building_it_first(
    base_scenario, write_scenario, monkeypatch
) -> None:
    """A job with options, each running past its deadline: the variants that keep the deadline
    stop at it (built first, or taken as it was), and the answer is the one every variant built
    whole gives."""
    path = write_scenario(slow_and_short(base_scenario))
    session = Session.from_loaded(load_scenario(path), SolveOptions(time_limit_s=300))
    problem = session.problem
    assert problem.candidates["late-lora"], "the plant must leave the late job options"
    limits = relaxations._held_deadlines(session.loaded.scenario, Bounds())
    assert relaxations._first_built(problem, limits, frozenset()) == ["late-lora"]
    given_up = []
    real = session_module.jobs_first

    def counted(*args):
        kept = real(*args)
        given_up.append(kept is None)
        return kept

    monkeypatch.setattr(session_module, "jobs_first", counted)
    fast = solve_session(session)
    assert any(given_up), "the plant must have a variant the late job stops"
    _assert_same_as_built_whole(fast, path, monkeypatch)


def _assert_same_as_built_whole(fast, path, monkeypatch) -> None:
    """`fast` (an infeasible answer) is the answer the scenario at `path` gets with every job of
    every variant built (none taken from the scenario's build, none built first, no shortcut)."""
    monkeypatch.setattr(relaxations, "stays_without_options", lambda *_: False)
    monkeypatch.setattr(session_module, "jobs_first", lambda *_: {})
    slow = solve_session(Session.from_loaded(load_scenario(path), SolveOptions(time_limit_s=300)))
    assert fast.status == slow.status == "infeasible"
    assert fast.conflicts == slow.conflicts and fast.conflicts
    assert fast.relaxations == slow.relaxations and fast.relaxations
    assert fast.notes == slow.notes


def test_series_answer_same_with_and_without_building_its_first_instance_first(
    base_scenario, write_scenario, monkeypatch
) -> None:
    """A monthly series of the late LoRA run at a one-hour deadline: a variant that keeps the
    deadline builds nothing (the later instances are released after the deadline), one without
    deadlines the series' first instance alone (the others are its copies); the answer is the one
    every variant built whole gives."""
    plant = late_and_short(base_scenario)
    plant["start"] = "2027-01-01"
    plant["jobs"][0]["repeat"] = {"every": "1 month", "count": 3}
    path = write_scenario(plant)
    session = Session.from_loaded(load_scenario(path), SolveOptions(time_limit_s=300))
    assert [j for j in session.problem.jobs if j.startswith("late-lora")] == [
        "late-lora-01", "late-lora-02", "late-lora-03"]
    built: list[list[str]] = []
    given_up = []
    real_first = session_module.jobs_first
    real_build = CandidateBuilder.job_build

    def counted(*args):
        built.append([])
        kept = real_first(*args)
        given_up.append(kept is None)
        return kept

    def job_build(self, job, index, shape):
        if built:
            built[-1].append(job.id)
        return real_build(self, job, index, shape)

    monkeypatch.setattr(session_module, "jobs_first", counted)
    monkeypatch.setattr(CandidateBuilder, "job_build", job_build)
    fast = solve_session(session)
    # (jobs_first's own builds, then a whole build's replaying them: the first instance twice)
    assert all(set(jobs) <= {"late-lora-01", "small-ft"} for jobs in built), built
    # a variant that keeps the deadline: late-lora-02 is released after it, so nothing is built
    assert [] in [jobs for jobs, gave_up in zip(built, given_up, strict=True) if gave_up], built
    monkeypatch.setattr(CandidateBuilder, "job_build", real_build)
    _assert_same_as_built_whole(fast, path, monkeypatch)


def test_first_built_the_cheapest_late_job_before_the_jobs_it_follows() -> None:
    """A job left no option comes first; then each late job, the one whose build weighed the
    fewest options first, each before the jobs it follows (built only where it is not late
    alone); without those weights, the scenario's order."""
    problem = make_problem(
        [Spec("a", "cloud", hours=9), Spec("b", "cloud", hours=9), Spec("c", "cloud", hours=1)],
        jobs=["a", "b", "c", "d"], after={"b": ["a"]}, deadlines_h={"a": 1, "b": 1, "c": 1})
    limits = {job: limit for job, limit in problem.deadline_min.items() if limit is not None}
    assert not problem.candidates["d"]
    assert relaxations._first_built(problem, limits, frozenset()) == ["d", "a", "b"]
    work = {"a": 900, "b": 300, "c": 10, "d": 50}
    assert relaxations._first_built(problem, limits, frozenset(), work) == ["d", "b", "a"]
