"""`Session.narrowed` (plan compare's forced rows): with each job of `keep` forced onto one of its
options there, the session on the narrowed problem (rule-abiding candidates, those jobs cut to
their sets) finds the optimum the whole session finds, or none where it finds none."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.models.problem import Problem
from plan.planner.cpsat.model import Bounds
from tests.planner.builders import Spec, make_problem, session
from tests.planner.test_soonest_end import POOL


@st.composite
def problems(draw) -> Problem:
    """Two or three jobs of two to four options each (on a cloud, or on an owned pool of 8 GPUs
    the jobs share), one breaking a rule now and then, a deadline and a budget now and then."""
    jobs = ["a", "b", "c"][: draw(st.integers(2, 3))]
    specs = []
    for job in jobs:
        for n in range(draw(st.integers(2, 4))):
            on_pool = draw(st.booleans())
            specs.append(Spec(job, "lab" if on_pool else f"cloud{n}",
                              gpus=draw(st.sampled_from([4, 8])),
                              billing="owned" if on_pool else "hourly",
                              hours=draw(st.integers(1, 40)), cost=draw(st.integers(1, 300)),
                              resource="lab" if on_pool else None,
                              violations={"policy.gpus": "x"} if draw(st.integers(0, 5)) == 0
                              else {}))
    deadlines = {job: draw(st.integers(20, 90)) for job in jobs if draw(st.booleans())}
    budget = draw(st.sampled_from([None, 300, 600]))
    return make_problem(specs, jobs=jobs, deadlines_h=deadlines, resources=[POOL], budget=budget)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.data())
def test_the_narrowed_session_finds_the_whole_one_s_optimum(problem, data) -> None:
    keep: dict[str, set[int]] = {}
    for job in problem.jobs:
        abiding = [c.index for c in problem.candidates[job] if not c.violations]
        if abiding and data.draw(st.booleans()):
            keep[job] = data.draw(st.sets(st.sampled_from(abiding), min_size=1))
    bounds = Bounds(forced=tuple(tuple(sorted(ids)) for ids in keep.values()))
    whole = session(problem)
    narrow = whole.narrowed(keep)
    assert all(c.index in keep.get(job, {c.index}) and not c.violations
               for job, cs in narrow.problem.candidates.items() for c in cs)
    expected, found = whole.best(bounds), narrow.best(bounds)
    assert found.solved == expected.solved
    if expected.solved:
        assert (found.status, found.total_cost) == (expected.status, expected.total_cost)
        assert all(found.chosen[job].index in ids for job, ids in keep.items())
