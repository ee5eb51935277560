"""`plan_exists.answer` (planner/explain/plan_exists.py), which the conflict searches of `plan
explain`, `plan compare` and the "not bought" line ask, against a plain solve on small random
problems: with jobs forced onto sets of their options (as `plan compare` and `--why-not` force
them), its quick solve on one option per job must never say "plan" where the solve finds none,
and with the full solve behind it the answer is the solve's."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.models.problem import Problem
from plan.planner.cpsat.model import Bounds
from plan.planner.explain import plan_exists
from tests.planner.builders import Spec, make_problem, session
from tests.planner.test_soonest_end import _lifted, problems


def _forced(problem: Problem, data: st.DataObject) -> tuple[tuple[int, ...], ...]:
    """Some jobs, each forced onto a non-empty set of its options: often all but its fastest, the
    one a quick solve would otherwise take."""
    sets = []
    for job in problem.jobs:
        if not data.draw(st.booleans()):
            continue
        options = sorted(problem.candidates[job], key=lambda c: (c.duration_min, c.index))
        if len(options) > 1 and data.draw(st.booleans()):
            options = options[1:]
        indices = [c.index for c in options]
        sets.append(tuple(sorted(data.draw(st.sets(st.sampled_from(indices), min_size=1)))))
    return tuple(sets)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.booleans().flatmap(problems), st.data())
def test_the_answer_is_the_solve_s_with_jobs_forced(problem, data) -> None:
    """(Problems with and without a shared pool and a budget.)"""
    bounds = Bounds(lifted=_lifted(problem, data), forced=_forced(problem, data))
    solved = session(problem).run(None, bounds)
    assert solved.status in ("optimal", "feasible", "infeasible")
    expected = plan_exists.NONE if solved.status == "infeasible" else plan_exists.PLAN
    assert plan_exists.answer(session(problem), bounds) == expected


def test_a_job_forced_onto_a_slow_option_is_tried_there() -> None:
    """a is forced onto its 50-h option, b onto neither of a's: the quick solve takes the forced
    option (not a's fastest, which the forcing leaves out) and finds the plan with b on its
    fastest; a set that spans two jobs leaves the quick solve out."""
    problem = make_problem([Spec("a", "cloud", hours=10), Spec("a", "slow", hours=50),
                            Spec("b", "cloud", hours=5), Spec("b", "slow", hours=20)],
                           deadlines_h={"a": 60})
    slow_a = next(c.index for c in problem.candidates["a"] if c.platform == "slow")
    fast_b = next(c.index for c in problem.candidates["b"] if c.platform == "cloud")
    assert plan_exists._one_each(problem, Bounds(forced=((slow_a,),))) == ((slow_a,), (fast_b,))
    assert plan_exists._one_each(problem, Bounds(forced=((slow_a, fast_b),))) is None
    assert plan_exists.answer(session(problem), Bounds(forced=((slow_a,),))) == plan_exists.PLAN
