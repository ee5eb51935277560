"""Solve a scenario: optimal plan, near-optimal alternatives, explanations; one time budget for all."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

from models.loading import LoadedScenario
from models.problem import Problem
from models.scenario import SolverSettings
from planner.candidates import build_problem
from planner.cpsat.model import Bounds, PlanModel
from planner.cpsat.run import Outcome, solve_model, to_plan
from planner.explain import explain_infeasible, explain_plan
from planner.plan import Plan, SolveResult

TIE_BREAK_S = 1.0  # seconds for the makespan tie-break among cheapest plans


@dataclass
class SolveOptions:
    objective: str | None = None
    top_k: int | None = None
    gap: float | None = None
    time_limit_s: float | None = None
    workers: int | None = None
    seed: int | None = None


class Session:
    """One scenario's problem and base model, with a shared time budget for every re-solve."""

    def __init__(self, problem: Problem, settings: SolverSettings, objective: str,
                 started: float | None = None) -> None:
        self.settings = settings
        self.objective = objective
        self.started = time.perf_counter() if started is None else started
        self.problem = problem
        self.model = PlanModel(problem)
        self.deadline = self.started + settings.time_limit_s

    @classmethod
    def from_loaded(cls, loaded: LoadedScenario, options: SolveOptions | None = None) -> Session:
        """Build candidates (estimator calls) and the model; their time counts against the limit."""
        started = time.perf_counter()
        options = options or SolveOptions()
        s = loaded.scenario
        settings = SolverSettings(
            time_limit_s=options.time_limit_s or s.solver.time_limit_s,
            workers=options.workers or s.solver.workers,
            seed=s.solver.seed if options.seed is None else options.seed,
            top_k=options.top_k or s.solver.top_k,
            gap=s.solver.gap if options.gap is None else options.gap,
        )
        return cls(build_problem(loaded), settings, options.objective or s.objective, started)

    def remaining_s(self) -> float:
        return max(0.05, self.deadline - time.perf_counter())

    def run(self, objective: str | None, bounds: Bounds, hint: Outcome | None = None,
            with_assumptions: bool = False, max_s: float | None = None) -> Outcome:
        instance = self.model.instance(objective, bounds, with_assumptions=with_assumptions,
                                       hint=hint.hint() if hint else None)
        limit = self.remaining_s() if max_s is None else min(max_s, self.remaining_s())
        return solve_model(self.model, instance, self.settings, limit)

    def best(self, bounds: Bounds, hint: Outcome | None = None) -> Outcome:
        """The optimum under `bounds` for the session's objective (two stages where it is lexicographic)."""
        if self.objective == "time":
            first = self.run("time", bounds, hint)
            if not first.solved:
                return first
            return self._second(self.run("cost", replace(bounds, max_makespan=first.makespan_min), first), first)
        if self.objective == "lexicographic":
            first = self.run("cost", bounds, hint)
            if not first.solved:
                return first
            cap = math.floor(first.total_cost * (1 + self.settings.gap))
            return self._second(self.run("time", replace(bounds, max_cost=cap), first), first)
        first = self.run(self.objective, bounds, hint)
        if self.objective != "cost" or not first.solved:
            return first
        # Among the cheapest plans, the one that finishes first (same cost, jobs not left idle). Only a
        # tie-break: it gets a short time slice and never changes the cost or its proof.
        second = self.run("time", replace(bounds, max_cost=first.total_cost), first, max_s=TIE_BREAK_S)
        return self._second(second, first)

    @staticmethod
    def _second(second: Outcome, first: Outcome) -> Outcome:
        """The second stage's plan, with the first stage's status: that is the objective proven."""
        if not second.solved:
            return first
        second.status = first.status
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
    """Best plan and up to top_k - 1 alternatives that differ in platform, GPU type or count per job."""
    return solve_session(Session.from_loaded(loaded, options))


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
    best = session.best(Bounds())
    result.status = best.status
    if best.status == "infeasible":
        explain_infeasible(session, result)
    elif best.solved:
        plans: list[Plan] = [to_plan(problem, best, 1)]
        outcomes = [best]
        cap = math.floor(session.objective_value(best) * (1 + session.settings.gap))
        nogoods: list[tuple[tuple[str, tuple[str, str, int]], ...]] = []
        for rank in range(2, session.settings.top_k + 1):
            last = outcomes[-1]
            nogoods.append(tuple((job, last.chosen[job].key) for job in problem.jobs))
            bounds = Bounds(nogoods=tuple(nogoods), max_objective=(session.cap_objective(), cap))
            alt = session.best(bounds, hint=last)
            if not alt.solved:
                break
            plans.append(to_plan(problem, alt, rank))
            outcomes.append(alt)
        for plan, outcome in zip(plans, outcomes, strict=True):
            explain_plan(session, plan, outcome, best)
        result.plans = plans
    result.solve_time_s = time.perf_counter() - session.started
    return result
