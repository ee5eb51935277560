"""Running CP-SAT and reading its answer: statuses mapped explicitly, values turned into domain
plans.

This is the one place solver values become domain objects (`Plan`), and `CpSolver` stays here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import islice

from plan.constraints.sat import cp_model
from plan.models.errors import InputError
from plan.models.problem import SCALE, Candidate, Problem
from plan.models.said import say_as
from plan.models.scenario import SolverSettings
from plan.planner.cash_flow import cash_flow, when
from plan.planner.cpsat.interruptible import solve_interruptibly
from plan.planner.cpsat.model import PlanModel
from plan.planner.plan import JobPlan, Plan, ReservationPlan


class ModelInvalidError(RuntimeError):
    """CP-SAT rejected the model: a bug in the model builder, never a user's fault."""


@dataclass
class Outcome:
    status: str  # optimal | feasible | infeasible | unknown
    objective: float | None = None
    chosen: dict[str, Candidate] = field(default_factory=dict)
    start_min: dict[str, int] = field(default_factory=dict)
    end_min: dict[str, int] = field(default_factory=dict)
    # key -> (gpus, periods, start)
    resource_use: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    total_cost: int = 0
    makespan_min: int = 0
    core: list[int] = field(default_factory=list)  # assumption literal indices (infeasible runs)
    wall_s: float = 0.0
    bound: float | None = None  # CP-SAT's best objective bound, in the objective's model units
    work: float = 0.0  # deterministic time this solve used
    # the wall-clock safety net, not the work limit, ended an unproven solve
    wall_stopped: bool = False
    # every variable's value, where the solve was asked to keep them (a complete hint for a later
    # solve of the same model: Assignment)
    values: Assignment | None = None

    @property
    def solved(self) -> bool:
        return self.status in ("optimal", "feasible")

    def hint(self) -> dict[int, int]:
        return {c.index: 1 for c in self.chosen.values()}


@dataclass(frozen=True)
class Assignment:
    """The value of every variable of `model`'s base model (in the order CP-SAT numbers them) in
    one solved plan: hinted whole, it is a plan CP-SAT checks and keeps at once, where a hint of
    the choices alone leaves it to search for the schedule (PlanModel.instance)."""

    model: PlanModel
    values: tuple[int, ...]


_STATUS = {
    cp_model.OPTIMAL: "optimal",
    cp_model.FEASIBLE: "feasible",
    cp_model.INFEASIBLE: "infeasible",
    cp_model.UNKNOWN: "unknown",
}


MIN_WORK = 0.01  # deterministic time: every solve gets at least this much, even on an spent budget


def configure(
    solver: cp_model.CpSolver,
    settings: SolverSettings,
    time_limit_s: float,
    work_limit: float,
    probing: int = 0,
    presolve: bool = True,
    optimizing: bool = True,
    energetic: bool = False,
) -> None:
    """Parameters that make a solve repeatable whatever the machine's load: the deterministic work
    limit is the stop, the wall clock only a safety net, and the search itself is deterministic (one
    thread, or CP-SAT's interleaved portfolio, whose result does not depend on the worker count)."""
    params = solver.parameters
    params.max_deterministic_time = max(MIN_WORK, work_limit)
    params.max_time_in_seconds = max(0.05, time_limit_s)
    params.num_workers = settings.workers
    params.interleave_search = settings.workers > 1
    params.random_seed = settings.seed
    params.relative_gap_limit = 0.0
    params.catch_sigint_signal = False  # Ctrl-C is ours: see plan.planner.cpsat.interruptible
    # Tuned on the shipped scenarios (one thread): the LP relaxation of the choice-and-cost rows
    # prunes well, while probing costs more than it finds. 2-7x less work than the defaults on every
    # one. (A solve that needs a long proof may ask for probing: see the Pareto walk.)
    params.linearization_level = 2
    params.cp_model_probing_level = probing
    # Energetic reasoning on the shared pools (a Pareto walk's small packings: see
    # pareto/front.py's ENERGETIC_MAX_POOL_JOBS)
    params.use_overload_checker_in_cumulative = energetic
    params.use_timetable_edge_finding_in_cumulative = energetic
    # The presolve's search for constraints included in others took most of each optimising solve
    # on the recurring scenarios (finance_year: 8.1 s of CPU in eleven solves, 3.4 s without it)
    # and changed no shipped scenario's cost (the snapshot bench: same plans, two tie-breaks
    # better). A solve with no objective asks whether any plan exists (the conflict and relaxation
    # searches): its proofs of "none" lean on that search, and keep it (without it the deletion
    # filter ran out of work and kept a deadline in a conflict it is not part of).
    if optimizing:
        params.presolve_inclusion_work_limit = 0
        # Presolve to its fixed point cost 40-50 ms of CPU a pass, three or four passes a solve,
        # on lab_six_jobs (3,535 variables) for about 1e-5 work units of reductions: a third of
        # each budget-sweep row. One pass. (The symmetry search costs as much again, but without
        # it the tie-breaks of frontier_private_vs_hybrid came out worse: kept.)
        params.max_presolve_iterations = 1
    # off only to re-check a solve its presolve got wrong (Session.run)
    params.cp_model_presolve = presolve


def solve_model(
    plan_model: PlanModel,
    model: cp_model.CpModel,
    settings: SolverSettings,
    time_limit_s: float,
    work_limit: float,
    probing: int = 0,
    presolve: bool = True,
    keep_values: bool = False,
    energetic: bool = False,
) -> Outcome:
    """One CP-SAT run of `model` (an instance of `plan_model`); `keep_values`: the outcome keeps
    every variable's value (Outcome.values)."""
    solver = cp_model.CpSolver()
    configure(solver, settings, time_limit_s, work_limit, probing, presolve,
              optimizing=model.has_objective(), energetic=energetic)
    started = time.perf_counter()
    status = solve_interruptibly(solver, model)  # Ctrl-C raises: an interrupted search is no result
    wall = time.perf_counter() - started
    if status == cp_model.MODEL_INVALID:
        invalid = model.validate()
        # money or time figures the 64-bit model cannot hold: the input's, not a bug
        if "overflow" in invalid:
            raise InputError([say_as(
                "cli.model_overflow", "scenario {name}: the money and time figures are too large "
                "for the solver's 64-bit integers (prices, exchange rates, budget or "
                "value_of_time_per_day near their bounds; see docs/limits.md); lower them",
                name=repr(plan_model.problem.scenario_name))])
        raise ModelInvalidError(invalid)
    name = _STATUS[status]
    work = solver.deterministic_time
    outcome = Outcome(
        name,
        wall_s=wall,
        work=work,
        wall_stopped=name in ("feasible", "unknown")
        and work < solver.parameters.max_deterministic_time
        and wall >= solver.parameters.max_time_in_seconds * 0.95,
    )
    if name == "infeasible":
        try:
            outcome.core = list(solver.sufficient_assumptions_for_infeasibility())
        except Exception:  # no assumptions in this model
            outcome.core = []
        return outcome
    if name == "unknown":
        return outcome
    v = plan_model.variables
    problem = plan_model.problem
    outcome.objective = solver.objective_value
    outcome.bound = solver.best_objective_bound
    # every variable's value, read once (an optimal or feasible answer holds them all):
    # `boolean_value` of each candidate in turn was most of reading a plan of many jobs (64
    # generated jobs: 11,000 calls a solve)
    values = list(solver.response_proto.solution)
    for job in problem.jobs:
        chosen = next(c for c in problem.candidates[job] if values[v.x[c.index].index])
        outcome.chosen[job] = chosen
        outcome.start_min[job] = solver.value(v.jobs[job].start)
        outcome.end_min[job] = solver.value(v.jobs[job].end)
    for key, rv in v.resources.items():
        if rv.periods is None:
            continue
        periods = solver.value(rv.periods)
        gpus = next((level for level, b in rv.level.items() if solver.boolean_value(b)), 0)
        if periods and gpus:
            outcome.resource_use[key] = (gpus, periods, solver.value(rv.start))
    for job, c in outcome.chosen.items():
        if c.resource in v.private:
            res = problem.resources[c.resource]
            periods, _ = res.held_alone(c.gpus, c.duration_min)
            outcome.resource_use[c.resource] = (res.bought(c.gpus), periods, outcome.start_min[job])
    outcome.total_cost = solver.value(v.total_cost)
    outcome.makespan_min = solver.value(v.makespan)
    if keep_values:
        base = len(plan_model.model.proto.variables)  # (the instance's own come after them)
        outcome.values = Assignment(plan_model, tuple(islice(solver.response_proto.solution, base)))
    return outcome


def to_plan(problem: Problem, outcome: Outcome, rank: int) -> Plan:
    """Domain plan from a solved outcome. Hours count from the plan's start."""
    jobs = []
    for job in problem.jobs:
        c = outcome.chosen[job]
        jobs.append(
            JobPlan(
                job=job,
                platform=c.platform,
                gpu=c.gpu,
                gpus=c.gpus,
                nodes=c.nodes,
                layout=c.layout,
                billing=c.billing,
                start_h=round(SCALE.to_hours(outcome.start_min[job]), 2),
                end_h=round(SCALE.to_hours(outcome.end_min[job]), 2),
                cost=SCALE.to_money(c.cost),
                memory_gib_per_gpu=round(c.memory_gib_per_gpu, 2),
                gpu_memory_gib=c.gpu_memory_gib,
                tokens_per_s=round(c.tokens_per_s, 1),
                mfu=round(c.mfu, 4),
                gpu_hours=round(c.gpu_hours, 1),
                reservation=c.resource
                if c.resource and problem.resources[c.resource].kind != "owned"
                else None,
                expected_interruptions=round(c.expected_interruptions, 2),
                figures=c.figures,
                dates=_dates(problem, outcome.start_min[job], outcome.end_min[job]),
                series=problem.series.get(job),
            )
        )
    reservations = []
    for key, (gpus, periods, start) in sorted(outcome.resource_use.items()):
        res = problem.resources[key]
        upfront = res.upfront_per_gpu * gpus
        cost = SCALE.to_money(
            res.price_per_gpu_period * gpus * periods
            + res.fixed_price_per_period * periods
            + upfront
        )
        reservations.append(
            ReservationPlan(
                key=key,
                label=res.label,
                kind=res.kind,
                gpus=gpus,
                periods=periods,
                period_h=SCALE.to_hours(res.period_min),
                start_h=SCALE.to_hours(start),
                cost=cost,
                upfront_cost=SCALE.to_money(upfront),
            )
        )
    return Plan(
        rank=rank,
        total_cost=SCALE.to_money(outcome.total_cost),
        makespan_h=round(SCALE.to_hours(outcome.makespan_min), 2),
        jobs=jobs,
        reservations=reservations,
        optimal=outcome.status == "optimal",
        cash_flow=cash_flow(problem, jobs, reservations),
    )


def _dates(problem: Problem, start_min: int, end_min: int) -> tuple[str, str] | None:
    if problem.start_date is None:
        return None
    return (when(problem.start_date, SCALE.to_hours(start_min)),
            when(problem.start_date, SCALE.to_hours(end_min)))

