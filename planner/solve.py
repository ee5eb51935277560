"""Solve a scenario: optimal plan, near-optimal alternatives, explanations; one time budget for
all."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace

from plan.models.loading import LoadedScenario
from plan.models.problem import SCALE
from plan.planner.build_deadline import BuildTimeout
from plan.planner.candidates.build import NoOptionLeft
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
from plan.planner.i18n.said import Joined, said_of, say
from plan.planner.plan import Plan, SolveResult
from plan.planner.session import Session, SolveOptions
from plan.planner.trades import (
    COUNT_TRADE_SHARE,
    MATERIAL_SHARE,
    TradeSearch,
    cheapest_holding_p90,
    meets,
    p90_lines,
    p90_misses,
    trade_searches,
)

ALTERNATIVE_WORK = 3.0
"""Deterministic time for each alternative's solve: an alternative is shown once found and checked
to be a real trade; proving it the nearest one must not take the whole budget on a large scenario
(the shipped scenarios prove each in under a quarter of a unit)."""
NONE_CHECK_WORK = 0.05
"""Deterministic time for the question, before a GPU-count trade's solve, whether any plan meets
its limits at all. That search keeps the best plan's decisions and asks for an end sooner within the
gap, which often no plan does; the optimising solve (the presolve's inclusion search off,
planner/cpsat/run.py) took 2.95 of its 3 units to prove none on lab_six_jobs, a solve without an
objective proves it in its presolve (under 0.001 units). Where the question finds a plan, or runs
out, the trade is solved as before: its answer never depends on the check."""
QUICK_BEST_WORK = 1.0
"""Deterministic time the main solve first gets. Every shipped scenario proves its optimum within
it (finance_year's twelve monthly runs need 0.36: with a quarter unit they were solved again from a
greedy plan, 1.4 units more); where it does not, it is solved again from a greedy plan. It starts
from the greedy plan where that plan could be scheduled (_greedy_start): 64 generated jobs found no
plan at all in the unit from nothing (9 s of CPU), and prove the greedy plan optimal in 0.02 units
from it; the shipped scenarios' answers are the same either way (the snapshot bench), while the
greedy options alone, hinted, slowed the small ones (lab_six_jobs: 0.04 -> 0.07 units)."""

SCHEDULE_WORK = 0.5
"""Deterministic time to schedule the greedy plan's options before the main solve starts from them
(_greedy_start): 64 generated jobs on three shared pools need 0.001 units."""


def solve(loaded: LoadedScenario, options: SolveOptions | None = None) -> SolveResult:
    """Best plan and up to top_k - 1 alternatives that trade against it (planner/trades.py).

    When the time limit runs out while candidates are still being built, the result is "unknown"
    (exit 3) with a note saying how far building got."""
    started = time.perf_counter()
    explained = options is None or options.explained
    try:
        # Options that break a rule are sized only where the answer reads them
        # (candidates/ruled_out.py); an answer with no plan explains itself with all of them, so
        # a job left no option ends this build at once where the answer is explained.
        session: Session | None = Session.from_loaded(loaded, options, defer=True,
                                                      stop_at_empty=explained)
    except BuildTimeout as exc:
        return _cut(loaded, options, started, exc)
    except NoOptionLeft:
        session = None
    if session is not None:
        result = solve_session(session, explained=explained)
        if result.status != "infeasible" or not explained:
            return result
    try:
        whole = Session.from_loaded(loaded, options)
    except BuildTimeout as exc:
        return _cut(loaded, options, started, exc)
    # (one command: the whole build's solves share what is left of the first's limits)
    if session is None:
        whole.started, whole.deadline = started, whole.deadline - (whole.started - started)
    else:
        whole.started, whole.deadline = session.started, session.deadline
        whole.work_left, whole.wall_stopped = session.work_left, session.wall_stopped
    return solve_session(whole, explained=True)


def _cut(loaded: LoadedScenario, options: SolveOptions | None, started: float,
         exc: BuildTimeout) -> SolveResult:
    """The answer when the time limit ran out while candidates were being built."""
    s = loaded.scenario
    return SolveResult(
        scenario=s.name,
        status="cut",
        objective=(options and options.objective) or s.objective,
        currency=s.currency,
        solve_time_s=time.perf_counter() - started,
        notes=[said_of(exc)],
    )


def solve_session(session: Session, explained: bool = True) -> SolveResult:
    """The best plan and its alternatives; with `explained`, what each says and, when there is no
    plan, why (SolveOptions.explained)."""
    problem = session.problem
    result = SolveResult(
        scenario=problem.scenario_name,
        status="unknown",
        objective=session.objective,
        currency=problem.currency,
        solve_time_s=0.0,
    )
    empty = [job for job in problem.jobs if not problem.candidates[job]]
    # (a deferring build's session leaves the why to a whole build's: `solve`)
    explained_infeasible = explained and not session.deferred
    if empty:
        if explained_infeasible:
            explain_infeasible(session, result, empty_jobs=empty)
        result.status = "infeasible"
        result.solve_time_s = time.perf_counter() - session.started
        return result
    best = _best(session, result)
    result.status = best.status
    if best.status == "infeasible":
        if explained_infeasible:
            explain_infeasible(session, result)
    elif best.solved:
        alternatives, inside = _alternatives(session, best, result)
        outcomes = [best, *(outcome for outcome, _ in alternatives)]
        kinds = ["best", *(kind for _, kind in alternatives)]
        misses = p90_misses(problem, best)
        # (the p90 search serves plan 1's explanation, and a plan of its own where several show)
        searched = misses and (explained or session.settings.top_k > 1)
        holding = cheapest_holding_p90(session, ALTERNATIVE_WORK) if searched else None
        holding_rank = _rank_of(outcomes, holding)
        if holding is not None and holding_rank is None and session.settings.top_k > 1:
            outcomes.append(holding)
            kinds.append("p90")
            holding_rank = len(outcomes)
        plans = [to_plan(problem, outcome, rank) for rank, outcome in enumerate(outcomes, start=1)]
        cap = session.objective_value(best) * (1 + session.settings.gap)
        for rank, plan in enumerate(plans, start=1):
            plan.within_gap = rank <= inside + 1 or (
                kinds[rank - 1] == "p90" and session.objective_value(outcomes[rank - 1]) <= cap)
        if explained:
            for plan, outcome, kind in zip(plans, outcomes, kinds, strict=True):
                explain_plan(session, plan, outcome, best, kind)
            if misses:
                plans[0].explanation += p90_lines(problem, best, misses, holding, holding_rank)
            # (one more search per job: the top plan only)
            plans[0].explanation += offload_lines(session, best)
            plans[0].explanation += hybrid_shard_lines(session, best)  # (and per hybrid job)
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


def _rank_of(outcomes: list[Outcome], outcome: Outcome | None) -> int | None:
    """The rank of the shown plan that makes the same choices as `outcome`, if one does."""
    if outcome is None:
        return None
    choice = {job: c.index for job, c in outcome.chosen.items()}
    return next((rank for rank, o in enumerate(outcomes, start=1)
                 if {job: c.index for job, c in o.chosen.items()} == choice), None)


def _best(session: Session, result: SolveResult) -> Outcome:
    """The main solve: first for QUICK_BEST_WORK, which proves most scenarios, from the greedy plan
    (planner/cpsat/warm_start.py) where that could be scheduled; then, if that did not, again from
    the greedy plan with the rest of the work, and the answer says so. The plan kept then has its
    jobs end as early as its cost and makespan allow (Session.earliest)."""
    start = _greedy_start(session)
    quick = session.best(Bounds(), hint=start if isinstance(start, Outcome) else None,
                         max_work=QUICK_BEST_WORK)
    if quick.status not in ("feasible", "unknown") or session.work_left <= 0:
        return session.earliest(quick)
    warm = session.best(Bounds(), hint=start)
    better = warm.status in ("optimal", "infeasible") or not quick.solved or (
        warm.solved and session.objective_value(warm) <= session.objective_value(quick))
    if not better:
        return session.earliest(quick)
    if warm.solved:
        result.notes.append(WARM_START_NOTE)
    return session.earliest(warm)


def _greedy_start(session: Session) -> Outcome | dict[int, int]:
    """The greedy plan (planner/cpsat/warm_start.py) the main solve starts from: its options
    scheduled by a solve that forces them (SCHEDULE_WORK), every variable kept, so that CP-SAT
    starts from a whole plan; where that finds no schedule, the options alone, which CP-SAT repairs
    (64 generated jobs: from the options alone CP-SAT searched 8.8 units for a schedule of the
    greedy options, which were the optimum; from the whole plan it proves it in 0.02)."""
    hint = greedy_hint(session.problem, session.objective)
    picks = tuple((index,) for index, on in hint.items() if on)
    if len(picks) < len(session.problem.jobs):  # (a job with no rule-abiding option)
        return hint
    scheduled = session.run(session.cap_objective(), Bounds(forced=picks),
                            max_work=SCHEDULE_WORK, keep_values=True)
    return scheduled if scheduled.values is not None else hint


def _alternatives(
    session: Session, best: Outcome, result: SolveResult
) -> tuple[list[tuple[Outcome, str]], int]:
    """Up to top_k - 1 plans within the gap, each cheaper or faster than every plan before it (a
    real trade, not the same plan on another vendor at a higher price), each the best of what the
    searches (planner/trades.py) propose: another platform, GPU type or billing for a material job
    against every plan before it; every job of a material class of equal jobs moved; or the best
    plan's choices with other GPU counts, ending sooner. When fewer exist within the gap, the
    nearest plan beyond it that changes a decision is shown, and said to be. Returns the plans with
    their kind, and how many are within the gap."""
    problem, settings = session.problem, session.settings
    cap = math.floor(session.objective_value(best) * (1 + settings.gap))
    searches, singles = trade_searches(session, best)
    found: list[tuple[Outcome, str]] = []
    within_gap, beyond = True, False
    unproven = 0
    while len(found) < settings.top_k - 1 and searches:
        shown = [best, *(o for o, _ in found)]
        last = shown[-1]
        proposed: list[tuple[Outcome, str]] = []
        solved_under: dict[int, Bounds] = {}  # id(proposal) -> the bounds it was found under
        for search in searches:
            if search.closed or (search.within_gap_only and not within_gap):
                continue
            bounds = search.bounds(problem, best, shown)
            if within_gap:
                bounds = replace(bounds, max_objective=(session.cap_objective(), cap))
            if search.cached is not None and meets(search.cached, bounds):
                proposed.append((search.cached, search.kind))
                solved_under[id(search.cached)] = bounds
                continue
            alt = _proposal(session, search, bounds, search.hint(best, last))
            search.cached = alt if alt.solved else None
            if alt.status == "unknown":  # ran out of its slice: nothing is known beyond it either
                search.closed = search.ran_out = True
                within = (say("alt.time_limit") if alt.wall_stopped
                          else say("alt.work_units", work=ALTERNATIVE_WORK))
                what = (say("alt.alternatives") if search.kind == "decision"
                        else say("alt.trades", kind=search.kind))
                result.notes.append(say("alt.ran_out", what=what, within=within,
                                        found=say("alt.no_further" if found else "alt.none")))
            elif not alt.solved:
                search.closed = True
            else:
                proposed.append((alt, search.kind))
                solved_under[id(alt)] = bounds
        if not proposed:
            if not within_gap:
                break
            within_gap = False
            for search in searches:  # beyond the gap, what was closed within it may exist
                search.closed = search.ran_out or search.within_gap_only
            continue
        pick = min(proposed, key=lambda item: (session.objective_value(item[0]),
                                               item[0].makespan_min))
        if pick[0].status == "feasible":
            unproven += 1
        for search in searches:
            if search.cached is pick[0]:
                search.cached = None
        # (its jobs as early as its cost and makespan allow: which of equal plans a search found
        # is the solver's chance, and a job left late for nothing reads as a worse plan)
        found.append((session.earliest(pick[0], solved_under[id(pick[0])]), pick[1]))
        if not within_gap:
            beyond = True
            # one plan beyond the gap, the nearest, is enough to show what a real change costs
            break
    inside = len(found) - beyond
    if unproven:
        result.notes.append(say("alt.unproven", n=unproven, work=ALTERNATIVE_WORK))
    if len(found) < settings.top_k - 1 or beyond:
        result.notes.append(_alternatives_note(searches, singles, inside, beyond, settings.gap))
    return found, inside


def _proposal(session: Session, search: TradeSearch, bounds: Bounds,
              hint: dict[int, int]) -> Outcome:
    """The best plan `search` proposes under `bounds`; for a GPU-count trade, "infeasible" without
    the optimising solve where a quick check (NONE_CHECK_WORK) proves no plan meets them."""
    if search.kind == "count" and session.proves_none(bounds, NONE_CHECK_WORK):
        return Outcome("infeasible")
    return session.best(bounds, hint=hint, max_work=ALTERNATIVE_WORK)


def _alternatives_note(searches: list[TradeSearch], singles: list[str], inside: int,
                       beyond: bool, gap: float) -> str:
    """What the alternatives shown are, when fewer than asked for were found."""
    what = [say("alt.singles", jobs=", ".join(singles), share=MATERIAL_SHARE)] if singles else []
    classes = [s.label for s in searches if s.kind == "class"]
    if classes:
        what.append(say("alt.classes", series=", ".join(classes), share=MATERIAL_SHARE))
    counts = [s for s in searches if s.kind == "count"]
    if counts:
        what.append(say("alt.counts", span=_span(counts[0].extra["move_min"]),
                        share=COUNT_TRADE_SHARE))
    return say("alt.shown", inside=inside, gap=gap, what=Joined(what, "alt.or"),
               beyond=say("alt.beyond") if beyond else "")


def _span(minutes: int) -> str:
    hours = SCALE.to_hours(minutes)
    return say("alt.span_h", h=hours) if hours < 48 else say("alt.span_days", days=hours / 24)


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
        result.notes.append(say("alt.not_proven", work=settings.work_limit, bound=result.bound,
                                unit=result.bound_unit, gap=result.gap))
