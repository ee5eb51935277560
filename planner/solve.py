"""Solve a scenario: optimal plan, near-optimal alternatives, explanations; one time budget for all."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from plan.models.loading import LoadedScenario
from plan.models.problem import Problem
from plan.models.scenario import Scenario, SolverSettings
from plan.planner.build_deadline import BuildTimeout, build_deadline
from plan.planner.candidates import build_problem
from plan.planner.cpsat.model import Bounds, PlanModel
from plan.planner.cpsat.run import Outcome, solve_model, to_plan
from plan.planner.explain import explain_plan, hybrid_shard_lines, offload_lines
from plan.planner.infeasible import explain_infeasible, pools_without_network
from plan.planner.overflow_guard import check_magnitudes
from plan.planner.plan import Plan, SolveResult
from plan.planner.warm_start import WARM_START_NOTE, greedy_hint

MATERIAL_SHARE = 0.2  # a job with this share of the cost or the time is one whose choice matters
TIE_BREAK_WORK = 1.0  # deterministic time for the makespan tie-break among cheapest plans
EARLIEST_WORK = 0.3  # and for the last one, jobs ending as early as that plan's cost and makespan allow
ALTERNATIVE_WORK = 3.0
"""Deterministic time for each alternative's solve: an alternative is shown once found and checked to
be a real trade; proving it the nearest one must not take the whole budget on a large scenario (the
shipped scenarios prove each in under a quarter of a unit)."""
QUICK_BEST_WORK = 0.25
"""Deterministic time the main solve first gets on its own. Every shipped scenario proves its optimum in
a sixth of it; many jobs on one shared pool do not, and are solved again from a greedy plan, which
they need (64 generated jobs: 19.7 work units from nothing, 0.25 + 5.3 this way), while a greedy start
slows the small ones (lab_six_jobs: 0.04 -> 0.07 units)."""


@dataclass
class SolveOptions:
    objective: str | None = None
    top_k: int | None = None
    gap: float | None = None
    time_limit_s: float | None = None
    work_limit: float | None = None
    workers: int | None = None
    seed: int | None = None


class Session:
    """One scenario's problem and base model, with one work budget (deterministic time) for every
    re-solve, and the wall-clock safety net."""

    def __init__(self, problem: Problem, settings: SolverSettings, objective: str,
                 started: float | None = None, loaded: LoadedScenario | None = None) -> None:
        self.loaded = loaded  # the scenario, when there is one: explanations re-plan variants of it
        self.settings = settings
        self.objective = objective
        self.started = time.perf_counter() if started is None else started
        self.problem = problem
        # Figures the 64-bit model cannot hold are bad input, said in one line.
        check_magnitudes(problem, str(loaded.path) if loaded else problem.scenario_name)
        self._model: PlanModel | None = None
        self._abiding: PlanModel | None = None
        self._rule_groups = problem.rule_groups()
        self.deadline = self.started + settings.time_limit_s
        self.work_left = settings.work_limit
        self.wall_stopped = False  # some solve was cut by the wall clock: the result may depend on load
        self.presolve_retries = 0  # solves run again without presolve (see run)

    @classmethod
    def from_loaded(cls, loaded: LoadedScenario, options: SolveOptions | None = None) -> Session:
        """Build candidates (estimator calls) and the model; their time counts against the limit."""
        started = time.perf_counter()
        options = options or SolveOptions()
        s = loaded.scenario
        settings = SolverSettings(
            time_limit_s=options.time_limit_s or s.solver.time_limit_s,
            work_limit=options.work_limit or s.solver.work_limit,
            workers=options.workers or s.solver.workers,
            seed=s.solver.seed if options.seed is None else options.seed,
            top_k=options.top_k or s.solver.top_k,
            gap=s.solver.gap if options.gap is None else options.gap,
        )
        with build_deadline(settings.time_limit_s, started):
            problem = build_problem(loaded)
        return cls(problem, settings, options.objective or s.objective, started, loaded)

    def variant(self, scenario: Scenario) -> Session | None:
        """A session for a changed copy of this scenario (a relaxation to try), sharing this one's work
        budget and safety net; None when the session was built from a bare problem."""
        if self.loaded is None:
            return None
        other = Session(build_problem(dataclasses.replace(self.loaded, scenario=scenario)), self.settings,
                        self.objective, self.started, self.loaded)
        other.work_left, other.deadline = self.work_left, self.deadline
        return other

    def spend(self, other: Session) -> None:
        """Charge a variant's solves to this session's budget."""
        self.work_left = min(self.work_left, other.work_left)
        self.wall_stopped |= other.wall_stopped

    @property
    def model(self) -> PlanModel:
        """The whole model, rule-breaking candidates included: what explanations of infeasibility
        (rules as assumptions) and why-not questions (a forced option) solve."""
        if self._model is None:
            self._model = PlanModel(self.problem)
        return self._model

    def holds_every_rule(self, bounds: Bounds) -> bool:
        """No rule a candidate can break is lifted and no option forced: rule-breaking candidates can
        never be chosen, so a model of the rule-abiding ones alone has the same optima."""
        return not bounds.forced and not bounds.lifted & self._rule_groups

    def model_for(self, bounds: Bounds, with_assumptions: bool = False) -> PlanModel:
        """The model a solve needs: while every rule a candidate can break holds and no option is
        forced, the rule-abiding candidates alone (the same optima, a smaller model)."""
        if with_assumptions or not self.holds_every_rule(bounds):
            return self.model
        if self._abiding is None:
            self._abiding = PlanModel(self.problem.rule_abiding())
        return self._abiding

    def remaining_s(self) -> float:
        return max(0.05, self.deadline - time.perf_counter())

    def run(self, objective: str | None, bounds: Bounds, hint: Outcome | dict[int, int] | None = None,
            with_assumptions: bool = False, max_work: float | None = None, probing: int = 0,
            model: PlanModel | None = None, witness: Outcome | None = None) -> Outcome:
        """One solve. `hint`: a plan to start from (an outcome, or candidate index -> 0/1); `model`: a
        narrower model with the same optimum under `bounds` (a Pareto walk's), instead of the session's;
        `witness`: a plan known to meet `bounds`, so that "infeasible" is impossible. CP-SAT 9.15's presolve
        was seen to say so anyway (frontier_private_vs_hybrid's front: an exactly-one it emptied); such a
        solve is run again without presolve, whose answer is then the one kept."""
        model = model or self.model_for(bounds, with_assumptions)
        instance = model.instance(objective, bounds, with_assumptions=with_assumptions,
                                  hint=hint.hint() if isinstance(hint, Outcome) else hint)

        def solved(presolve: bool) -> Outcome:
            work = self.work_left if max_work is None else min(max_work, self.work_left)
            outcome = solve_model(model, instance, self.settings, self.remaining_s(), work, probing, presolve=presolve)
            self.work_left = max(0.0, self.work_left - outcome.work)
            self.wall_stopped |= outcome.wall_stopped
            return outcome

        outcome = solved(presolve=True)
        if outcome.status == "infeasible" and witness is not None and witness.solved:
            self.presolve_retries += 1
            outcome = solved(presolve=False)
        return outcome

    def earliest(self, outcome: Outcome) -> Outcome:
        """Among plans no worse on cost and makespan, the one whose jobs end earliest in total. Without
        it a job that does not set the makespan may start late for no reason (frontier_private_vs_hybrid:
        the 405B run on a rented month started on day 60, not day 5, since its successor waits for
        bought H200s either way). Only a tie-break, on a short time slice: it never changes the cost,
        the makespan or their proof."""
        if not outcome.solved or self.objective == "risk" or self._starts_at_earliest(outcome):
            return outcome
        tied = Bounds(max_cost=outcome.total_cost, max_makespan=outcome.makespan_min)
        return self._second(self.run("earliest", tied, outcome, max_work=EARLIEST_WORK), outcome)

    def _starts_at_earliest(self, outcome: Outcome) -> bool:
        """Whether every job starts as soon as its option's start-up, its pool's opening and the jobs
        it follows allow: then no plan of the same options ends its jobs sooner."""
        problem = self.problem
        for job, chosen in outcome.chosen.items():
            earliest = max([problem.earliest_start_min(chosen),
                            *(outcome.end_min[before] for before in problem.after.get(job, ()))])
            if outcome.start_min[job] > earliest:
                return False
        return True

    def best(self, bounds: Bounds, hint: Outcome | dict[int, int] | None = None,
             max_work: float | None = None) -> Outcome:
        """The optimum under `bounds` for the session's objective (two stages where it is lexicographic),
        each stage stopping at `max_work` when given."""
        if self.objective == "time":
            first = self.run("time", bounds, hint, max_work=max_work)
            if not first.solved:
                return first
            second = self.run("cost", replace(bounds, max_makespan=first.makespan_min), first, max_work=max_work)
            return self._second(second, first)
        if self.objective == "lexicographic":
            first = self.run("cost", bounds, hint, max_work=max_work)
            if not first.solved:
                return first
            cap = math.floor(first.total_cost * (1 + self.settings.gap))
            return self._second(self.run("time", replace(bounds, max_cost=cap), first, max_work=max_work), first)
        first = self.run(self.objective, bounds, hint, max_work=max_work)
        if self.objective != "cost" or not first.solved:
            return first
        # Among the cheapest plans, the one that finishes first (same cost, jobs not left idle). Only a
        # tie-break: it gets a short time slice and never changes the cost or its proof.
        second = self.run("time", replace(bounds, max_cost=first.total_cost), first, max_work=TIE_BREAK_WORK)
        return self._second(second, first)

    @staticmethod
    def _second(second: Outcome, first: Outcome) -> Outcome:
        """The second stage's plan, with the first stage's status, value and bound: that is the
        objective proven."""
        if not second.solved:
            return first
        second.status, second.objective, second.bound = first.status, first.objective, first.bound
        return second

    def objective_value(self, outcome: Outcome) -> int:
        if self.objective == "time":
            return outcome.makespan_min
        if self.objective == "balanced":
            return outcome.total_cost + self.problem.value_of_time_per_min * outcome.makespan_min
        return outcome.total_cost

    def cap_objective(self) -> str:
        return {"time": "time", "balanced": "balanced"}.get(self.objective, "cost")


def solve(loaded: LoadedScenario, options: SolveOptions | None = None) -> SolveResult:
    """Best plan and up to top_k - 1 alternatives that differ in platform, GPU type or count per job.

    When the time limit runs out while candidates are still being built, the result is "unknown"
    (exit 3) with a note saying how far building got."""
    started = time.perf_counter()
    try:
        session = Session.from_loaded(loaded, options)
    except BuildTimeout as exc:
        s = loaded.scenario
        return SolveResult(scenario=s.name, status="unknown", objective=(options and options.objective) or s.objective,
                           currency=s.currency, solve_time_s=time.perf_counter() - started, notes=[str(exc)])
    return solve_session(session)


def solve_session(session: Session) -> SolveResult:
    problem = session.problem
    result = SolveResult(scenario=problem.scenario_name, status="unknown", objective=session.objective,
                         currency=problem.currency, solve_time_s=0.0)
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
        plans[0].explanation += offload_lines(session, best)  # (one more search per job: the top plan only)
        plans[0].explanation += hybrid_shard_lines(session, best)  # (and per hybrid-sharded job)
        result.notes += pools_without_network(session)
        result.plans = plans
        _record_proof(session, result, best)
    result.solve_time_s = time.perf_counter() - session.started
    return result


def _best(session: Session, result: SolveResult) -> Outcome:
    """The main solve: first on its own for QUICK_BEST_WORK, which proves most scenarios; then, if that
    did not, again from a greedy plan (planner/warm_start.py), and the answer says so. The plan kept
    then has its jobs end as early as its cost and makespan allow (Session.earliest)."""
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


def _alternatives(session: Session, best: Outcome, result: SolveResult) -> tuple[list[Outcome], int]:
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
        bounds = Bounds(nogoods=tuple(nogoods), max_objective=(session.cap_objective(), cap) if within_gap else None,
                        undominated=tuple((o.total_cost, o.makespan_min) for o in [best, *found]))
        alt = session.best(bounds, hint=last, max_work=ALTERNATIVE_WORK)
        if alt.status == "feasible":
            unproven += 1
        if alt.status == "unknown":  # ran out of its slice: nothing is known about plans beyond it either
            within = "the time limit" if alt.wall_stopped else f"{ALTERNATIVE_WORK:g} work units"
            result.notes.append(f"alternatives: {'no further one' if found else 'none'} found within "
                                f"{within} (not proven that none exists)")
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
            break  # one plan beyond the gap, the nearest, is enough to show what a real change costs
    inside = len(found) - beyond
    if unproven:
        result.notes.append(f"alternatives: {unproven} shown as found within {ALTERNATIVE_WORK:g} work units "
                            f"each, real trades but not proven the nearest ones")
    if len(found) < settings.top_k - 1 or beyond:
        result.notes.append(
            f"alternatives: {inside} within {settings.gap:.0%} of the best are cheaper or faster than the plans "
            f"above them and change the platform, GPU type or billing of {', '.join(material)} (the jobs "
            f"carrying {MATERIAL_SHARE:.0%} or more of the cost or time)"
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
    """The best plan's objective bound and gap, in the objective's unit, and what stopped the search."""
    scale = session.problem.scale
    to_unit: Callable[[float], float]
    if session.objective == "time":
        result.bound_unit, to_unit = "h", scale.to_hours
    else:  # cost, balanced and lexicographic's first stage are all money
        result.bound_unit, to_unit = session.problem.currency, scale.to_money
    value = best.objective if best.objective is not None else 0.0
    bound = best.bound if best.bound is not None else value
    result.bound = round(to_unit(bound), 2)
    result.gap = 0.0 if best.status == "optimal" else round(max(0.0, value - bound) / max(abs(value), 1e-9), 4)
    settings = session.settings
    if session.wall_stopped:
        result.notes.append(f"the wall-clock safety net ({settings.time_limit_s:g} s) stopped a solve before its "
                            f"work limit; this answer may depend on the machine's load: raise "
                            f"solver.time_limit_s")
    elif best.status == "feasible":
        result.notes.append(f"not proven optimal within the work limit ({settings.work_limit:g} units): the best "
                            f"possible is {result.bound:,.2f} {result.bound_unit}, gap {result.gap:.1%}; "
                            f"raise solver.work_limit (or --work-limit) to close it")
