"""Solve a scenario: optimal plan, near-optimal alternatives, explanations; one time budget for
all."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from plan.models.loading import LoadedScenario
from plan.models.problem import Problem
from plan.planner.build_deadline import BuildTimeout
from plan.planner.cpsat.model import Bounds
from plan.planner.cpsat.run import Outcome, to_plan
from plan.planner.cpsat.warm_start import WARM_START_NOTE, greedy_hint
from plan.planner.explain.infeasible import explain_infeasible, pools_without_network
from plan.planner.explain.narrate import explain_plan, hybrid_shard_lines, offload_lines
from plan.planner.explain.ownership import (
    not_bought_lines,
    not_weighed_line,
    payback_lines,
    rent_instead,
)
from plan.planner.plan import Plan, SolveResult
from plan.planner.session import Session, SolveOptions

MATERIAL_SHARE = 0.2  # a job with this share of the cost or the time is one whose choice matters
ALTERNATIVE_WORK = 3.0
"""Deterministic time for each alternative's solve: an alternative is shown once found and checked
to be a real trade; proving it the nearest one must not take the whole budget on a large scenario
(the shipped scenarios prove each in under a quarter of a unit)."""
QUICK_BEST_WORK = 0.25
"""Deterministic time the main solve first gets on its own. Every shipped scenario proves its
optimum in a sixth of it; many jobs on one shared pool do not, and are solved again from a greedy
plan, which they need (64 generated jobs: 19.7 work units from nothing, 0.25 + 5.3 this way), while
a greedy start slows the small ones (lab_six_jobs: 0.04 -> 0.07 units)."""


def solve(loaded: LoadedScenario, options: SolveOptions | None = None) -> SolveResult:
    """Best plan and up to top_k - 1 alternatives that differ in platform, GPU type or count per
    job.

    When the time limit runs out while candidates are still being built, the result is "unknown"
    (exit 3) with a note saying how far building got."""
    started = time.perf_counter()
    try:
        session = Session.from_loaded(loaded, options)
    except BuildTimeout as exc:
        s = loaded.scenario
        return SolveResult(
            scenario=s.name,
            status="cut",
            objective=(options and options.objective) or s.objective,
            currency=s.currency,
            solve_time_s=time.perf_counter() - started,
            notes=[str(exc)],
        )
    return solve_session(session)


def solve_session(session: Session) -> SolveResult:
    problem = session.problem
    result = SolveResult(
        scenario=problem.scenario_name,
        status="unknown",
        objective=session.objective,
        currency=problem.currency,
        solve_time_s=0.0,
    )
    empty = [job for job in problem.jobs if not problem.candidates[job]]
    if empty:
        explain_infeasible(session, result, empty_jobs=empty)
        result.status = "infeasible"
        result.solve_time_s = time.perf_counter() - session.started
        return result
    best = _best(session, result)
    result.status = best.status
    if best.status == "infeasible":
        explain_infeasible(session, result)
    elif best.solved:
        plans: list[Plan] = [to_plan(problem, best, 1)]
        outcomes = [best]
        alternatives, inside = _alternatives(session, best, result)
        outcomes += alternatives
        plans += [to_plan(problem, alt, rank) for rank, alt in enumerate(alternatives, start=2)]
        for plan in plans[inside + 1:]:
            plan.within_gap = False
        for plan, outcome in zip(plans, outcomes, strict=True):
            explain_plan(session, plan, outcome, best)
        # (one more search per job: the top plan only)
        plans[0].explanation += offload_lines(session, best)
        plans[0].explanation += hybrid_shard_lines(session, best)  # (and per hybrid-sharded job)
        result.notes += pools_without_network(session)
        _ownership(session, plans)
        plans[0].explanation += not_bought_lines(session, best)
        result.plans = plans
        _record_proof(session, result, best)
    if session.wall_stopped:  # load decided part of this answer: it is never labelled optimal
        result.status = "cut"
        if not result.plans:
            result.notes.append(session.cut_note("answer", "solver.time_limit_s"))
    result.solve_time_s = time.perf_counter() - session.started
    return result

def _ownership(session: Session, plans: list[Plan]) -> None:
    """Payback of each plan's purchases against the best plan that rents instead (one more solve,
    shared by every plan that buys), and the line saying buying was not weighed where it should."""
    buying = [p for p in plans if any(r.kind == "purchase" for r in p.reservations)]
    if buying:
        rent, only_bought = rent_instead(session)
        for plan in buying:
            plan.explanation += payback_lines(session, plan, rent, only_bought)
    line = not_weighed_line(session, plans[0])
    if line:
        plans[0].explanation.append(line)


def _best(session: Session, result: SolveResult) -> Outcome:
    """The main solve: first on its own for QUICK_BEST_WORK, which proves most scenarios; then, if
    that did not, again from a greedy plan (planner/cpsat/warm_start.py), and the answer says so.
    The plan kept then has its jobs end as early as its cost and makespan allow
    (Session.earliest)."""
    quick = session.best(Bounds(), max_work=QUICK_BEST_WORK)
    if quick.status not in ("feasible", "unknown") or session.work_left <= 0:
        return session.earliest(quick)
    warm = session.best(Bounds(), hint=greedy_hint(session.problem, session.objective))
    better = warm.status in ("optimal", "infeasible") or not quick.solved or (
        warm.solved and session.objective_value(warm) <= session.objective_value(quick))
    if not better:
        return session.earliest(quick)
    if warm.solved:
        result.notes.append(WARM_START_NOTE)
    return session.earliest(warm)


def _alternatives(
    session: Session, best: Outcome, result: SolveResult
) -> tuple[list[Outcome], int]:
    """Up to top_k - 1 plans within the gap, each changing the platform, GPU type or billing of a
    material job against every plan before it, and each cheaper or faster than every plan before it:
    a real trade, not the same plan on another vendor at a higher price. When fewer exist within the
    gap, the nearest such plan beyond it is shown, and said to be."""
    problem, settings = session.problem, session.settings
    cap = math.floor(session.objective_value(best) * (1 + settings.gap))
    material = material_jobs(problem, best)
    found: list[Outcome] = []
    nogoods: list[tuple[tuple[str, tuple[str, str, str]], ...]] = []
    within_gap, beyond = True, False
    unproven = 0
    while len(found) < settings.top_k - 1:
        last = found[-1] if found else best
        nogoods.append(tuple((job, last.chosen[job].decision) for job in material))
        bounds = Bounds(
            nogoods=tuple(nogoods),
            max_objective=(session.cap_objective(), cap) if within_gap else None,
            undominated=tuple((o.total_cost, o.makespan_min) for o in [best, *found]),
        )
        alt = session.best(bounds, hint=last, max_work=ALTERNATIVE_WORK)
        if alt.status == "feasible":
            unproven += 1
        # ran out of its slice: nothing is known about plans beyond it either
        if alt.status == "unknown":
            within = "the time limit" if alt.wall_stopped else f"{ALTERNATIVE_WORK:g} work units"
            result.notes.append(f"alternatives: {'no further one' if found else 'none'} found "
                                f"within {within} (not proven that none exists)")
            break
        if not alt.solved:
            if not within_gap:
                break
            within_gap = False
            nogoods.pop()
            continue
        found.append(alt)
        if not within_gap:
            beyond = True
            # one plan beyond the gap, the nearest, is enough to show what a real change costs
            break
    inside = len(found) - beyond
    if unproven:
        result.notes.append(f"alternatives: {unproven} shown as found within {ALTERNATIVE_WORK:g} "
                            f"work units each, real trades but not proven the nearest ones")
    if len(found) < settings.top_k - 1 or beyond:
        result.notes.append(
            f"alternatives: {inside} within {settings.gap:.0%} of the best are cheaper or faster "
            "than the plans above them and change the platform, GPU type or billing of "
            f"{', '.join(material)} (the jobs carrying {MATERIAL_SHARE:.0%} or more of the cost or "
            "time)"
            + ("; the last plan shown is the nearest such change beyond the gap" if beyond else ""))
    return found, inside


def material_jobs(problem: Problem, best: Outcome) -> list[str]:
    """Jobs that carry a real share of the best plan's cost or time (MATERIAL_SHARE or more): an
    alternative must change one of their decisions, not just retune a small job."""
    costs = {job: problem.standalone_cost(c) for job, c in best.chosen.items()}
    total = sum(costs.values())
    makespan = max(best.makespan_min, 1)
    found = [job for job in problem.jobs
             if (total > 0 and costs[job] >= MATERIAL_SHARE * total)
             or best.chosen[job].duration_min >= MATERIAL_SHARE * makespan]
    return found or list(problem.jobs)


def _record_proof(session: Session, result: SolveResult, best: Outcome) -> None:
    """The best plan's objective bound and gap, in the objective's unit, and what stopped the
    search."""
    scale = session.problem.scale
    to_unit: Callable[[float], float]
    if session.objective == "time":
        result.bound_unit, to_unit = "h", scale.to_hours
    else:  # cost, balanced and lexicographic's first stage are all money
        result.bound_unit, to_unit = session.problem.currency, scale.to_money
    value = best.objective if best.objective is not None else 0.0
    bound = best.bound if best.bound is not None else value
    result.bound = round(to_unit(bound), 2)
    result.gap = (
        0.0
        if best.status == "optimal"
        else round(max(0.0, value - bound) / max(abs(value), 1e-9), 4)
    )
    settings = session.settings
    if session.wall_stopped:
        result.notes.append(session.cut_note("answer", "solver.time_limit_s"))
    elif best.status == "feasible":
        result.notes.append(f"not proven optimal within the work limit ({settings.work_limit:g} "
                            f"units): the best possible is {result.bound:,.2f} "
                            f"{result.bound_unit}, gap {result.gap:.1%}; raise solver.work_limit "
                            "(or --work-limit) to close it")
