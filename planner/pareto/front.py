"""The cost/makespan Pareto front of the discrete problem, by the epsilon-constraint method.

Minimize cost subject to makespan <= T (then, at that cost, minimize makespan, so each point is
non-dominated); tighten T to one minute below the point found; repeat until T drops below the
fastest plan's makespan. Between the two ends each point is one solve: cost weighed by the span of
makespans left (T down to the fastest plan's) plus the makespan (COST_THEN_TIME), whose optimum is
both stages' at once; the two stages stay where the weighed cost could overflow the solver's
integers, and for a risk axis. Every solve works on a clone of the one base model. With a risk
axis (expected interruptions) the same is done under a grid of risk caps and the union is filtered
to its non-dominated points.

`max_points` thins the front: instead of walking every point, T takes evenly spaced values between
the fastest and the cheapest plans' makespans; each point found is still exactly optimal for its T.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from plan.models.problem import SCALE, Problem
from plan.planner.cpsat.model import COST_THEN_TIME, RISK_SCALE, Bounds, PlanModel
from plan.planner.cpsat.overflow_guard import MAX_MODEL_MAGNITUDE, largest_money_units
from plan.planner.cpsat.run import Outcome, to_plan
from plan.planner.explain.narrate import explain_plan
from plan.planner.i18n.said import say
from plan.planner.pareto.pruning import front_problem
from plan.planner.plan import Plan
from plan.planner.session import Session

MAX_EXACT_POINTS = 200  # a walk longer than this is cut (and says so); use max_points to thin it
QUICK_POINT_WORK = 0.25
"""Deterministic time for a point's cheapest-plan solve as the single solves are tuned (no probing).
Most points of a front prove in far less; the few that do not (a time cap that makes the jobs'
packing on shared GPUs tight) are solved again with CP-SAT's probing, which proves them in a quarter
to a fifth of the work (lab_six_jobs: the hardest point 21 -> 5 units). Level 2, since two of
lab_six_jobs' points take seconds to prove at level 1 and well under a second at level 2, while the
other shipped scenarios' walks are the same at either (bench/pareto_speed.py)."""
HARD_POINT_PROBING = 2
QUICK_STEP_WORK = 0.1
"""The same for a point of the walk solved in one step (COST_THEN_TIME): lab_six_jobs' 80 steps
prove in at most 0.071 units but five, which take 0.06-1.1 units more with probing, hinted with
the quick plan (bench/pareto_speed.py: the walk's work 2.6 units at 0.1, 3.6 at 0.25)."""
HARD_STEP_WORK = 1.5
"""Deterministic time for a step's probing re-solve, whose work has a heavy tail. At the 1.19
whole-run overhead (2026-12-07) one of lab_six_jobs' steps (cap 93.5 h: its owned node packed
end to end, every job on it at 8 GPUs, and the packings that would cost less, by cents, to be ruled
out) took 8.4 units with probing from the quick plan; a solve without probing from the best plan
found in the first 1.5 proves it in 1.7 (the two other hard steps, 1.15 and 0.55 units with
probing, take 1.8 and 0.1 that way). So a re-solve that runs out at this cap goes on without
probing from its plan: every re-solve that proves within the cap is as it was, and so are its
plans; the walk's work 12.2 -> 7.0 units, the same 80 points, one plan's start times changed.
(Capped at 0.25: 6.4 units, three plans' start times changed. A cost solve then a time solve in
place of the last re-solve: 6.3 units, but 13 for a step where the cap cuts the 1.15 one.)"""
# Tried on lab_six_jobs' walk (2026-12-07), and not kept: probing on every step (8.9 units of work
# against 2.1, and a front JSON not the same); and, where the quick plan was optimal, proving it by
# a solve that asks for a plan below its objective instead of the hinted run, whose plan (the hint
# completed by CP-SAT) then needs only its first solution: at best (no objective, no probing) those
# proofs took 3.6 units against the hinted runs' 1.0 for the same five points (0.05 to 1.3 each).
# The quick plan itself is not the answer: the hinted run keeps its options, not its start times.
# A front's solves keep dominated options (planner/cpsat/dominated.py). Leaving them out keeps
# every point (lab_six_jobs: the same 81 points, with and without a risk axis; test_dominated_front)
# but not always the plan shown at a point: its cheapest point's lora-glm9b-conf took 1 owned A800
# (ending at 102.3 h) instead of 2 (91.1 h), same cost and makespan, since a front breaks no ties
# by end times. For 8% of its CPU (16.5 against 17.9 s) a front keeps its plans as they were.
KEEP_DOMINATED = True
ENERGETIC_MAX_POOL_JOBS = 8
"""A walk whose model shares no pool among more jobs than this solves with CP-SAT's energetic
reasoning on the pools (overload checking and time-table edge finding: cpsat/run.py). A walk's hard
points are proofs that no cheaper packing on a shared pool meets the time cap, which that reasoning
finds directly: lab_six_jobs' walk (6 jobs on its owned pool, 2026-12-08) took 2.0 units of work
against 4.3 and 2.8 s of CPU in CP-SAT against 4.2, the same 80 points (16 of them shown with
another plan of their cost and makespan: other start times). Its cost per propagation grows with
the jobs on a pool faster than CP-SAT's deterministic time counts it: a generated 32-job quarter's
front (28 jobs on each pool) took the same work and 2.2x the CPU; 8 jobs: 7 a pool, no change."""
# A rung whose quick solve did not prove its point hints the next rung with its plan's options (the
# next point's plan breaks the tightened cap, but its options often fit a nearby packing). On
# lab_six_jobs' walk (2026-12-07) the hard rungs come in runs near its cheapest end, and the hint
# cuts the walk's work 6.95 -> 4.27 units: the same 80 points, 11 of them shown with another plan of
# their cost and makespan (10 other start times, 1 other options). The other shipped fronts are
# as they were (no hard rung). Not on every rung: finance_year's rungs, each proven by its quick
# solve, then take twice the work (0.50 -> 1.15 units; lab_six_jobs 3.51). Nor, after a hard rung,
# a probing solve at once in place of the quick one from the hint: 7.3 units, since the probing
# re-solve's start is the quick plan, which meets the cap.

Progress = Callable[[int, float], None]
"""Called after each point: (points found so far, share of the cheapest-to-fastest span walked,
0-1)."""


@dataclass
class FrontPoint:
    cost: float
    makespan_h: float
    plan: Plan
    risk: float | None = None  # expected interruptions, when the front has a risk axis
    within_budget: bool = True
    meets_deadlines: bool = True

    def label(self) -> str:
        """The plan in words, e.g. "8x a800-80gb, zhixingyun-pro, monthly" (per job when
        several)."""
        jobs = self.plan.jobs
        if len(jobs) == 1:
            j = jobs[0]
            return f"{j.gpus}x {j.gpu}, {j.platform}, {j.billing}"
        return "; ".join(f"{j.job}: {j.gpus}x {j.gpu} {j.platform} {j.billing}" for j in jobs)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "cost": round(self.cost, 2),
            "makespan_h": round(self.makespan_h, 2),
        }
        if self.risk is not None:
            data["risk"] = round(self.risk, 4)
        data.update(
            label=self.label(),
            within_budget=self.within_budget,
            meets_deadlines=self.meets_deadlines,
            plan=self.plan.to_dict(),
        )
        return data


@dataclass
class ParetoFront:
    scenario: str
    currency: str
    x: str
    y: str
    z: str | None
    status: str  # optimal (every point proven) | feasible | infeasible | unknown | cut (wall clock)
    points: list[FrontPoint] = field(default_factory=list)
    complete: bool = True  # every point the walk looked for was found (no limit cut it short)
    budget: float | None = None
    deadline_h: float | None = None  # the latest job deadline, for the plot's line
    relaxed_limits: bool = False
    notes: list[str] = field(default_factory=list)
    solve_time_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"scenario": self.scenario, "x": self.x, "y": self.y}
        if self.z:
            data["z"] = self.z
        data.update(
            status=self.status,
            complete=self.complete,
            currency=self.currency,
            budget=self.budget,
            deadline_h=self.deadline_h,
            relaxed_limits=self.relaxed_limits,
            solve_time_s=round(self.solve_time_s, 3),
            points=[p.to_dict() for p in self.points],
            notes=self.notes,
        )
        return data


def risk_of(outcome: Outcome) -> float:
    return sum(c.expected_interruptions for c in outcome.chosen.values())


class _Walker:
    """Lexicographic solves under caps, counting what it could not prove."""

    def __init__(
        self,
        session: Session,
        base: Bounds,
        with_risk: bool,
        on_point: Progress | None = None,
        walks: int = 1,
    ) -> None:
        self.session = session
        self.base = base
        self.with_risk = with_risk
        self.unproven = 0
        self.missed = 0  # points looked for and not found within the limits
        self.on_point = on_point
        self.walks = walks  # walks to make in all (one per risk cap): the progress shares them out
        self.walked = 0
        self.found = 0
        # the last rung's quick solve did not prove its point: the next rung starts from its plan
        self.hard_before = False
        self.energetic = session.model_for(base).largest_pool_jobs <= ENERGETIC_MAX_POOL_JOBS
        self.proven = False  # the last point's cost and time stages were both proven optimal

    def _run(self, objective: str | None, bounds: Bounds, hint: Outcome | None = None,
             **options: Any) -> Outcome:
        """The session's solve, with energetic reasoning where the walk asks it."""
        return self.session.run(objective, bounds, hint, energetic=self.energetic, **options)

    def _report(self, share: float) -> None:
        if self.on_point is not None:
            self.on_point(self.found, min(1.0, (self.walked + share) / self.walks))

    def point(self, bounds: Bounds, hint: Outcome | None = None, model: PlanModel | None = None,
              witness: Outcome | None = None) -> Outcome:
        """Min cost, then min makespan at that cost (then min risk at both, with a risk axis).
        `hint` starts the cost stage: only a plan that meets `bounds`. The walk passes none, since
        the previous point breaks the tightened time cap, and repairing it cost CP-SAT three times
        the work of a fresh search (lab_six_jobs' exact front: 56 -> 19 units). `model`: the walk's
        narrowed model; `witness`: a plan known to meet `bounds` (each stage's plan is the next
        stage's)."""
        s = self.session
        first = self._run("cost", bounds, hint, max_work=QUICK_POINT_WORK, model=model,
                          witness=witness)
        if first.status in ("feasible", "unknown") and s.work_left > 0:
            again = self._run(
                "cost", bounds, hint, probing=HARD_POINT_PROBING, model=model, witness=witness
            )
            if again.solved or not first.solved:  # (a spent budget keeps the quick plan)
                first = again
        self.proven = first.status == "optimal"
        if not first.solved:
            return first
        best = first
        second = self._run(
            "time",
            replace(bounds, max_cost=first.total_cost, min_cost=None),
            first,
            model=model,
            witness=first,
        )
        if second.solved:
            best = second
        if self.with_risk:
            third = self._run(
                "risk",
                replace(
                    bounds, max_cost=best.total_cost, max_makespan=best.makespan_min, min_cost=None
                ),
                best,
                model=model,
                witness=best,
            )
            if third.solved:
                best = third
        if any(o.status != "optimal" for o in (first, second)):
            self.unproven += 1
        self.proven = first.status == second.status == "optimal"
        return best

    def step(self, bounds: Bounds, model: PlanModel | None = None, witness: Outcome | None = None,
             hint: Outcome | None = None) -> Outcome:
        """`point` in one solve (COST_THEN_TIME; `bounds` hold both makespan bounds): quick, then
        with probing from the quick plan (it meets `bounds`) when that did not prove it, then
        without probing from the best plan yet when that ran out (HARD_STEP_WORK)."""
        s = self.session
        first = quick = self._run(COST_THEN_TIME, bounds, hint, max_work=QUICK_STEP_WORK,
                                  model=model, witness=witness)
        # (then without probing, from the best plan yet, when the probing re-solve runs out)
        for probing, max_work in ((HARD_POINT_PROBING, HARD_STEP_WORK), (0, None)):
            if first.status not in ("feasible", "unknown") or s.work_left <= 0:
                break
            again = self._run(COST_THEN_TIME, bounds, first if first.solved else None,
                              max_work=max_work, probing=probing, model=model, witness=witness)
            if again.solved or not first.solved:  # (a spent budget keeps the quick plan)
                first = again
        self.hard_before = quick.status in ("feasible", "unknown")
        self.proven = first.status == "optimal"
        self.unproven += first.status == "feasible"
        return first

    def fastest(self, bounds: Bounds) -> Outcome:
        first = self._run("time", bounds)
        if not first.solved:
            return first
        capped = replace(bounds, max_makespan=first.makespan_min)  # (it meets the cap)
        if first.status == "optimal" and not self.with_risk:
            # no plan ends sooner: the cheapest at this makespan, in one step
            return self.step(replace(capped, min_makespan=first.makespan_min), witness=first,
                             hint=first)
        return self.point(capped, first, witness=first)

    def _next(self, capped: Bounds, model: PlanModel | None, fastest: Outcome,
              one_step: bool, last: Outcome) -> Outcome:
        """The walk's point under `capped` (the fastest plan meets it), in one step or two; a step
        after a hard one starts from `last`, the point before it (`hard_before`)."""
        if one_step:
            return self.step(replace(capped, min_makespan=fastest.makespan_min), model, fastest,
                             hint=last if self.hard_before else None)
        return self.point(capped, model=model, witness=fastest)

    def walk(self, bounds: Bounds, max_points: int | None, notes: list[str]) -> list[Outcome]:
        """The 2-D front (cost, makespan) under `bounds`, cheapest first."""
        found = self._walk(bounds, max_points, notes)
        self.walked += 1
        self._report(0.0)
        return found

    def _walk(self, bounds: Bounds, max_points: int | None, notes: list[str]) -> list[Outcome]:
        # (in two stages: in one step, lab_six_jobs' cheapest plan came out another of the same
        # cost and makespan, for 0.1 s of CPU)
        cheapest = self.point(bounds)
        cheapest_proven = self.proven
        if not cheapest.solved:
            return []
        fastest = self.fastest(bounds)
        self.hard_before = False  # (the fastest plan's step is no rung of the walk)
        self.missed += not fastest.solved
        if not fastest.solved or fastest.makespan_min >= cheapest.makespan_min:
            return [cheapest]
        found = [cheapest]
        span = cheapest.makespan_min - fastest.makespan_min
        # Every point in between costs at most the fastest plan and ends before the cheapest one.
        # (The walk holds every rule; with one lifted, it keeps the whole model.)
        model = None
        if self.session.holds_every_rule(bounds):
            model = PlanModel(
                front_problem(
                    self.session.problem,
                    max_cost=fastest.total_cost,
                    max_makespan=cheapest.makespan_min - 1,
                    with_risk=self.with_risk,
                )
            )
        # A later point costs more than a proven one (it ends sooner, and the earlier one was the
        # fastest at its cost): a lower bound for each next solve, which cuts the proof of the tight
        # ones.
        floor = cheapest.total_cost + 1 if cheapest_proven else None
        one_step = not self.with_risk and _weighs_safely(
            self.session.problem, cheapest.makespan_min - fastest.makespan_min)

        def solve(cap: int) -> Outcome:
            nonlocal floor
            # (the fastest plan meets every cap and costs more than any floor: infeasible cannot be
            # right)
            nxt = self._next(replace(bounds, max_makespan=cap, min_cost=floor, pool_energy=True),
                             model, fastest, one_step, found[-1])
            if nxt.solved:
                floor = nxt.total_cost + 1 if self.proven else None
            return nxt

        def advance(outcome: Outcome) -> None:
            found.append(outcome)
            self.found += 1
            self._report((cheapest.makespan_min - outcome.makespan_min) / span)

        self.found += 1
        self._report(0.0)
        if max_points is None:
            cap = cheapest.makespan_min - 1
            while cap > fastest.makespan_min:
                nxt = solve(cap)
                if not nxt.solved:  # (infeasible cannot be: the fastest plan meets every cap)
                    self.missed += 1
                    break
                advance(nxt)
                if len(found) >= MAX_EXACT_POINTS - 1:
                    self.missed += 1
                    notes.append(say("front.cut_at", points=MAX_EXACT_POINTS))
                    break
                cap = nxt.makespan_min - 1
        else:
            steps = max(1, max_points - 1)
            for k in range(1, steps):
                cap = cheapest.makespan_min - round(span * k / steps)
                if cap >= found[-1].makespan_min:
                    continue  # the last point already meets this cap
                nxt = solve(cap)
                if nxt.solved:
                    advance(nxt)
                else:
                    self.missed += 1
        if (found[-1].total_cost, found[-1].makespan_min) != (
            fastest.total_cost,
            fastest.makespan_min,
        ):
            found.append(fastest)
        return found


def _weighs_safely(problem: Problem, span_min: int) -> bool:
    """Whether the cost weighed by a walk's span of makespans (COST_THEN_TIME) stays well inside
    the solver's 64-bit integers."""
    return largest_money_units(problem) * (span_min + 1) <= MAX_MODEL_MAGNITUDE


def _limits_lifted(problem: Problem) -> frozenset[str]:
    return frozenset(
        name for name in problem.groups if name == "budget" or name.startswith("deadline/")
    )


def _non_dominated(outcomes: list[Outcome], with_risk: bool) -> list[Outcome]:
    def key(o: Outcome) -> tuple[float, ...]:
        return (
            (o.total_cost, o.makespan_min, risk_of(o))
            if with_risk
            else (o.total_cost, o.makespan_min)
        )

    unique = {key(o): o for o in outcomes}
    kept = []
    for k, o in unique.items():
        if not any(
            other != k and all(a <= b for a, b in zip(other, k, strict=True)) for other in unique
        ):
            kept.append(o)
    return kept


def _thin(outcomes: list[Outcome], keep: int) -> list[Outcome]:
    """At most `keep` outcomes: the cheapest and the fastest (and the least risky when there is
    room), then others evenly spaced in finishing time."""
    ordered = sorted(outcomes, key=lambda o: (o.makespan_min, o.total_cost, risk_of(o)))
    ends = [min(ordered, key=lambda o: (o.total_cost, o.makespan_min)), ordered[0],
            min(ordered, key=lambda o: (risk_of(o), o.total_cost, o.makespan_min))]
    chosen: list[int] = []
    for outcome in ends:
        index = ordered.index(outcome)
        if index not in chosen and len(chosen) < keep:
            chosen.append(index)
    spread = [round(k * (len(ordered) - 1) / max(1, keep - 1)) for k in range(keep)]
    for index in spread + list(range(len(ordered))):
        if len(chosen) >= keep:
            break
        if index not in chosen:
            chosen.append(index)
    return [ordered[i] for i in sorted(chosen)]


def pareto_front(session: Session, *, max_points: int | None = None, z: str | None = None,
                 relax_limits: bool = False, on_point: Progress | None = None) -> ParetoFront:
    """The front of the session's problem. `relax_limits` lifts the budget and deadlines, to show
    what lies beyond them (points are then marked inside or outside the limits). `on_point` hears
    of each point as it is found."""
    problem = session.problem
    deadlines = [d for d in problem.deadline_min.values() if d is not None]
    front = ParetoFront(
        scenario=problem.scenario_name,
        currency=problem.currency,
        x="cost",
        y="time",
        z=z,
        status="optimal",
        budget=SCALE.to_money(problem.budget) if problem.budget is not None else None,
        deadline_h=SCALE.to_hours(max(deadlines)) if deadlines else None,
        relaxed_limits=relax_limits,
    )
    base = Bounds(lifted=_limits_lifted(problem) if relax_limits else frozenset(),
                  keep_dominated=KEEP_DOMINATED)
    levels = max(2, min(6, max_points or 6))
    walker = _Walker(
        session, base, with_risk=z == "risk", on_point=on_point, walks=levels if z == "risk" else 1
    )
    outcomes = walker.walk(base, max_points, front.notes)
    if outcomes and z == "risk":
        # Risk caps from the least risky plan up to the riskiest plan on the 2-D front.
        least = session.run("risk", base)
        top = max(round(risk_of(o) * RISK_SCALE) for o in outcomes)
        if least.solved:
            low = round(risk_of(least) * RISK_SCALE)
            for k in range(levels - 1):
                cap = low + (top - low) * k // (levels - 1)
                if cap < top:
                    outcomes += walker.walk(replace(base, max_risk=cap), max_points, front.notes)
    # A front never lists a dominated point. The 2-D walk can still return one: on
    # frontier_private_vs_hybrid, CP-SAT 9.15's presolve made a solve on the narrowed model answer
    # "optimal" with a pricier plan at the fastest plan's own finish (without presolve the walk
    # finds none; presolve stays on, since without it the generated 32-job scenario takes twice as
    # long).
    outcomes = _non_dominated(outcomes, with_risk=z == "risk")
    if z == "risk" and max_points is not None and len(outcomes) > max_points:
        front.notes.append(say("front.thinned", found=len(outcomes), kept=max_points))
        outcomes = _thin(outcomes, max_points)
    if on_point is not None:
        on_point(walker.found, 1.0)  # risk caps above every point are skipped: the walk ends here
    if not outcomes:
        probe = session.run("cost", base)
        front.status = probe.status
        front.complete = probe.status == "infeasible"
        front.notes.append(say("front.infeasible") if probe.status == "infeasible"
                           else say("front.none_found"))
        _mark_cut(front, session)
        front.solve_time_s = time.perf_counter() - session.started
        return front
    outcomes.sort(key=lambda o: (o.makespan_min, o.total_cost, risk_of(o)))
    cheapest = min(outcomes, key=lambda o: (o.total_cost, o.makespan_min))
    for rank, outcome in enumerate(outcomes, start=1):
        plan = to_plan(problem, outcome, rank)
        explain_plan(session, plan, outcome, cheapest)
        front.points.append(FrontPoint(
            cost=plan.total_cost, makespan_h=plan.makespan_h, plan=plan,
            risk=risk_of(outcome) if z == "risk" else None,
            within_budget=problem.budget is None or outcome.total_cost <= problem.budget,
            meets_deadlines=all(limit is None or outcome.end_min[job] <= limit
                                for job, limit in problem.deadline_min.items())))
    _say_how_sure(front, session, walker)
    front.solve_time_s = time.perf_counter() - session.started
    return front


def _say_how_sure(front: ParetoFront, session: Session, walker: _Walker) -> None:
    """Solves run again without presolve, points not proven, points missed, and the safety net."""
    if session.presolve_retries:
        front.notes.append(say("front.presolve_retries", n=session.presolve_retries))
    if walker.unproven:
        front.status = "feasible"
        front.notes.append(say("front.unproven", n=walker.unproven))
    if walker.missed:
        front.complete = False
        front.notes.append(say("front.missed", n=walker.missed))
    _mark_cut(front, session)


def _mark_cut(front: ParetoFront, session: Session) -> None:
    """A front the wall-clock safety net cut is never labelled optimal or complete."""
    if session.wall_stopped:
        front.status, front.complete = "cut", False
        front.notes.append(session.cut_note("front", "--time-limit"))


def time_unit(front: ParetoFront) -> tuple[str, float]:
    """(unit, hours per unit): days unless every plan is done within two days."""
    longest = max((p.makespan_h for p in front.points), default=0.0)
    return ("hours", 1.0) if longest < 48 else ("days", 24.0)
