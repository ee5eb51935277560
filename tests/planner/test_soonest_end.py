"""The soonest-end bound (planner/candidates/soonest_end.py) against CP-SAT on small random
problems: where it says a job cannot end by a deadline held, the solve finds no plan; and where
nothing but options, start-ups, releases, precedences and deadlines bind (no budget, no shared
resource), it is exact: the solve finds a plan exactly where the bound says every job may be in
time."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.models.problem import SCALE, Problem, Resource
from plan.planner.candidates.soonest_end import UNREACHABLE, late_job, soonest_ends, usable
from plan.planner.cpsat.model import Bounds
from tests.planner.builders import Spec, make_problem, session

JOBS = ("a", "b", "c")
RULES = ("sensitivity/a", "policy.gpus", "ops_skill/b")
POOL = Resource(key="lab", kind="owned", platform="lab", gpu="a800-80gb", label="lab", capacity=8)


@st.composite
def problems(draw, shared: bool) -> Problem:
    """Up to three jobs, each with one to three options (some breaking a rule, some with a
    start-up), a release, precedences on earlier jobs, deadlines; `shared`: some options on an
    owned pool of 8 GPUs and a budget, which the bound leaves out."""
    jobs = list(JOBS[: draw(st.integers(1, 3))])
    specs = []
    for job in jobs:
        for _ in range(draw(st.integers(1, 3))):
            on_pool = shared and draw(st.booleans())
            specs.append(Spec(
                job, "lab" if on_pool else "cloud", gpus=8,
                billing="owned" if on_pool else "hourly",
                hours=draw(st.integers(1, 40)), cost=draw(st.integers(1, 300)),
                resource="lab" if on_pool else None,
                violations={rule: "rule" for rule in draw(st.sets(st.sampled_from(RULES),
                                                                  max_size=2))}))
    after = {job: draw(st.lists(st.sampled_from(jobs[:i]), unique=True)) if i else []
             for i, job in enumerate(jobs)}
    deadlines = {job: draw(st.integers(1, 90)) for job in jobs if draw(st.booleans())}
    problem = make_problem(specs, jobs=jobs, after=after, deadlines_h=deadlines,
                           resources=[POOL] if shared else [],
                           budget=draw(st.integers(100, 900)) if shared else None)
    startups = iter(draw(st.lists(st.sampled_from([0, 0, 600, 3000]),
                                  min_size=len(specs), max_size=len(specs))))
    candidates = {job: [dataclasses.replace(c, startup_min=next(startups)) for c in cands]
                  for job, cands in problem.candidates.items()}
    release = {job: SCALE.minutes(h) for job in jobs if (h := draw(st.sampled_from([0, 0, 5, 30])))}
    return dataclasses.replace(problem, candidates=candidates, release_min=release)


def _lifted(problem: Problem, data: st.DataObject) -> frozenset[str]:
    """Some of the problem's groups, lifted."""
    if not problem.groups:
        return frozenset()
    return frozenset(data.draw(st.sets(st.sampled_from(sorted(problem.groups)))))


def _late(problem: Problem, lifted: frozenset[str]) -> str | None:
    limits = {job: limit for job, limit in problem.deadline_min.items()
              if limit is not None and f"deadline/{job}" not in lifted}
    return late_job(problem.candidates, limits, problem.after, problem.release_min, lifted)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(shared=False), st.data())
def test_exact_where_only_times_bind(problem, data) -> None:
    for lifted in (frozenset(), _lifted(problem, data)):  # (every rule held, then some lifted)
        outcome = session(problem).run(None, Bounds(lifted=lifted))
        assert outcome.status in ("optimal", "feasible", "infeasible")
        assert outcome.solved == (_late(problem, lifted) is None)
        if outcome.solved:  # no plan ends a job sooner than the bound says
            ends = soonest_ends(problem.candidates, problem.after, problem.release_min, lifted)
            assert all(outcome.end_min[job] >= ends[job] for job in problem.jobs)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(shared=True), st.data())
def test_never_says_late_where_a_plan_exists(problem, data) -> None:
    lifted = _lifted(problem, data)
    if _late(problem, lifted) is not None:
        assert session(problem).run(None, Bounds(lifted=lifted)).status == "infeasible"


def test_chain_and_rules() -> None:
    """b (3 h at best) follows a (2 h at best, 1 h on an option that breaks a rule): b ends at 5 h
    at the soonest, 4 h with the rule lifted; without precedences, at 3 h."""
    problem = make_problem(
        [Spec("a", "cloud", hours=2), Spec("a", "fast", hours=1, violations={"policy.gpus": "x"}),
         Spec("b", "cloud", hours=3)],
        after={"b": ["a"]}, deadlines_h={"b": 4.5})
    hours = {job: end / SCALE.minutes(1) for job, end in
             soonest_ends(problem.candidates, problem.after, {}, frozenset()).items()}
    assert hours == {"a": 2, "b": 5}
    assert _late(problem, frozenset()) == "b"
    assert _late(problem, frozenset({"policy.gpus"})) is None
    assert _late(problem, frozenset({"scheduling.after"})) is None
    assert _late(problem, frozenset({"deadline/b"})) is None
    # a job whose every option breaks a rule held has no plan, deadline or not
    assert usable(problem.candidates["a"], frozenset()) == problem.candidates["a"][:1]
    ends = soonest_ends({"a": problem.candidates["a"][1:]}, {}, {}, frozenset())
    assert ends == {"a": UNREACHABLE}


def test_unbuilt_jobs_count_from_their_release() -> None:
    """A job followed but not built yet (a variant's first builds) bounds nothing but by its
    release."""
    problem = make_problem([Spec("b", "cloud", hours=3)], jobs=["b"], after={"b": ["a"]})
    ends = soonest_ends(problem.candidates, problem.after, {"a": SCALE.minutes(2)}, frozenset())
    assert ends == {"b": SCALE.minutes(5)}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(shared=True), st.data())
def test_never_says_late_where_a_plan_exists_with_jobs_not_built(problem, data) -> None:
    """Some jobs not built yet (a copy's `jobs_first` builds them one at a time): what the bound
    says of the built ones and of those released after their deadline, the solve of them all
    confirms."""
    lifted = _lifted(problem, data)
    built = data.draw(st.sets(st.sampled_from(problem.jobs)))
    limits = {job: limit for job, limit in problem.deadline_min.items()
              if limit is not None and f"deadline/{job}" not in lifted}
    partial = {job: problem.candidates[job] for job in built}
    if late_job(partial, limits, problem.after, problem.release_min, lifted) is not None:
        assert session(problem).run(None, Bounds(lifted=lifted)).status == "infeasible"


def test_a_job_not_built_is_late_only_where_released_after_its_deadline() -> None:
    """b, not built, has a 5 h deadline: released at 30 h it cannot be in time; released at 5 h
    (a run of no time would be) or with its deadline lifted (no limit), nothing is said of it."""
    problem = make_problem([Spec("a", "cloud", hours=1), Spec("b", "cloud", hours=1)],
                           deadlines_h={"b": 5})
    built = {"a": problem.candidates["a"]}
    limits = {"b": SCALE.minutes(5)}
    assert late_job(built, limits, {}, {"b": SCALE.minutes(30)}, frozenset()) == "b"
    assert late_job(built, limits, {}, {"b": SCALE.minutes(5)}, frozenset()) is None
    assert late_job(built, {}, {}, {"b": SCALE.minutes(30)}, frozenset()) is None
    problem = dataclasses.replace(problem, release_min={"b": SCALE.minutes(30)})
    assert session(problem).run(None, Bounds()).status == "infeasible"
