"""The CP-SAT model in three parts wired by a thin class: variables, constraints, objective."""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from dataclasses import dataclass

from plan.constraints import (
    budget,
    capacity,
    compatibility,
    deadline,
    ops_skill,
    policy,
    reproducibility,
    scheduling,
    sensitivity,
)
from plan.constraints.groups import Groups
from plan.constraints.sat import coefficient_gcd, cp_model
from plan.constraints.variables import Variables
from plan.models.problem import Problem
from plan.planner.cpsat.dominated import PRUNED_OBJECTIVES, dominated_candidates

RISK_SCALE = 1000  # risk (expected interruptions of the plan) counted in thousandths
# Min cost, then min makespan at that cost, in one solve: cost weighed by the makespan's span
# (Bounds.min_makespan to max_makespan) plus the makespan (PlanModel.cost_then_time)
COST_THEN_TIME = "cost_then_time"


def add_constraints(model: cp_model.CpModel, variables: Variables, groups: Groups) -> int | None:
    """Every constraint family, in one ordered place. Order does not change the model's meaning;
    rule families come first so that their group literals get the lowest indices (stable names).
    Returns the index of the budget's constraint (budget.post)."""
    for family in (sensitivity, reproducibility, ops_skill, compatibility, policy, capacity):
        family.post(model, variables, groups)
    scheduling.post(model, variables, groups)
    budget_index = budget.post(model, variables, groups)
    deadline.post(model, variables, groups)
    return budget_index


@dataclass
class Bounds:
    """Extra limits for one solve: caps used by alternatives, lexicographic and Pareto loops."""

    max_cost: int | None = None
    max_makespan: int | None = None
    max_risk: int | None = None  # expected interruptions in RISK_SCALE units (Pareto with --z risk)
    min_cost: int | None = None  # a proven lower bound on the cost (a Pareto walk's previous point)
    # a proven lower bound on the makespan (a Pareto walk's fastest plan), not posted: with
    # max_makespan, the span COST_THEN_TIME weighs the cost by. (Posting it, redundant, changed
    # CP-SAT's search: lab_six_jobs' walk took 4.3 units of work instead of 2.7.)
    min_makespan: int | None = None
    pool_energy: bool = False  # under max_makespan, owned pools' GPU-minutes cut (a redundant row)
    lifted: frozenset[str] = frozenset()  # groups not enforced in this solve
    forced: tuple[tuple[int, ...], ...] = ()  # per set: one of these candidates is chosen (why-not)
    # at least one of these candidates is chosen, whichever job's (a plan that buys something)
    some_of: tuple[int, ...] = ()
    max_objective: tuple[str, int] | None = None  # (objective, cap): alternatives within the gap
    # Previous plans' decisions (job, (platform, gpu, billing)): each new plan changes one of each.
    nogoods: tuple[tuple[tuple[str, tuple[str, str, str]], ...], ...] = ()
    # (cost, makespan) of previous plans: a new plan must beat each on one of them (a real trade).
    undominated: tuple[tuple[int, int], ...] = ()
    # each: jobs that all take one decision (a class of equal jobs moved as one)
    same_decision: tuple[tuple[str, ...], ...] = ()
    # with assumptions: only these groups (None: all); the rest held
    assume: frozenset[str] | None = None
    # every option stays in, dominated or not (dominated.py): where ties among plans of equal
    # objectives must come out as they always did (a front's points, planner/pareto/front.py)
    keep_dominated: bool = False


class PlanModel:
    """Base model with every group literal free; each solve works on a clone with its own bounds."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.model = cp_model.CpModel()
        self.groups = Groups(self.model, problem.groups)
        self.variables = Variables(self.model, problem)
        self._budget_index = add_constraints(self.model, self.variables, self.groups)
        self._built_budget = problem.budget
        self._dominated: tuple[int, ...] | None = None
        self._zeroed: cp_model.CpModel | None = None  # `_dominated`'s rows, made once (`instance`)
        self._cost_step: int | None = None
        self._by_decision: dict[str, dict[tuple[str, str, str], list[int]]] | None = None

    @functools.cached_property
    def largest_pool_jobs(self) -> int:
        """The most jobs that may share one owned pool, reservation or purchase: the tasks of the
        model's largest cumulative (constraints/scheduling.py), 0 where none is shared."""
        jobs_on: dict[str, set[str]] = {key: set() for key in self.variables.resources}
        for candidate in self.problem.all_candidates():
            if candidate.resource in jobs_on:
                jobs_on[candidate.resource].add(candidate.job)
        return max(map(len, jobs_on.values()), default=0)

    def for_budget(self, problem: Problem) -> PlanModel:
        """This model for `problem`, which differs from its own only in the budget's amount (and
        the figures no constraint reads: name, objective, value of time, rule texts): it shares
        the built model, and each instance sets the budget's bound. A budget sweep's variants
        spent half their time building the same model (lab_six_jobs: 0.34 of 0.71 s each)."""
        if (problem.budget is None) != (self._built_budget is None):
            raise ValueError("a model built with a budget serves only problems with one")
        other = copy.copy(self)
        other.problem = problem
        return other

    def dominated(self, objective: str | None, bounds: Bounds,
                  with_assumptions: bool) -> tuple[int, ...]:
        """The candidates a solve of `objective` under `bounds` may leave out (dominated.py): none
        where it forces or forbids options, moves jobs as one or weighs risk, nor where it asks
        which rules conflict or the bounds keep them (`keep_dominated`)."""
        if (objective not in PRUNED_OBJECTIVES or with_assumptions or bounds.keep_dominated
                or bounds.assume is not None
                or bounds.forced or bounds.some_of or bounds.nogoods or bounds.same_decision):
            return ()
        if self._dominated is None:
            self._dominated = dominated_candidates(self.problem)
        return self._dominated

    def _zero_rows(self) -> cp_model.CpModel:
        """The rows that fix each dominated candidate to 0 (`x == 0`, in candidate order), made
        once and appended whole to each instance that leaves them out: posted one by one they were
        most of an instance's Python time (a generated 128-job quarter: 13,000 rows, 15 solves)."""
        if self._zeroed is None:
            zeroed = cp_model.CpModel()
            x = self.variables.x
            for index in self._dominated or ():
                zeroed.add(x[index] == 0)
            self._zeroed = zeroed
        return self._zeroed

    def objective_expr(self, objective: str) -> cp_model.LinearExprT:
        v = self.variables
        if objective == "time":
            return v.makespan
        if objective == "balanced":
            return cp_model.LinearExpr.sum(
                [v.total_cost, self.problem.value_of_time_per_min * v.makespan]
            )
        if objective == "risk":
            return self.risk_expr()
        # the tie-break after the others: every job ends as early as it can
        if objective == "earliest":
            return cp_model.LinearExpr.sum([jv.end for jv in v.jobs.values()])
        return v.total_cost  # cost and the first stage of lexicographic

    def cost_weight(self, bounds: Bounds) -> int:
        """COST_THEN_TIME's weight on the cost: one step of cost (any two plans' costs differ by a
        multiple of the gcd of the cost's coefficients) outweighs the whole span of makespans
        `bounds` allow (min_makespan to max_makespan). The step keeps the weight small where prices
        are coarse: xinchuang_ascend's costs are multiples of 5,215,392 units, and its front's first
        point took 1.17 s of CPU (0.09 units) weighed by the span (10,884), 0.011 s by 1."""
        if bounds.max_makespan is None or bounds.min_makespan is None:
            raise ValueError(f"{COST_THEN_TIME} needs both makespan bounds")
        if self._cost_step is None:
            self._cost_step = coefficient_gcd(self.variables.total_cost)
        return max(0, bounds.max_makespan - bounds.min_makespan) // self._cost_step + 1

    def cost_then_time(self, bounds: Bounds) -> cp_model.LinearExprT:
        """Cost times its weight plus the makespan: its minimum is the cheapest plan and, among
        the cheapest, the fastest (the makespan lies between the bounds, so it never outweighs a
        step of cost)."""
        v = self.variables
        return cp_model.LinearExpr.sum([self.cost_weight(bounds) * v.total_cost, v.makespan])

    def risk_expr(self) -> cp_model.LinearExprT:
        """Expected interruptions (failures, spot preemptions) of the plan, in RISK_SCALE units."""
        v = self.variables
        return cp_model.LinearExpr.sum([round(c.expected_interruptions * RISK_SCALE) * v.x[c.index]
                                        for c in self.problem.all_candidates()])

    def decisions(self, job: str) -> dict[tuple[str, str, str], list[int]]:
        """`job`'s decisions (platform, GPU, billing) in the order its candidates first take them,
        each with the indices of the candidates that take it, in candidate order. Alternatives'
        nogoods and classes moved as one read them for every plan shown: each candidate's
        `decision` read again took a third of lab_six_jobs' solve phase (profiled)."""
        if self._by_decision is None:
            self._by_decision = {}
            for name, options in self.problem.candidates.items():
                per_job = self._by_decision.setdefault(name, {})
                for c in options:
                    per_job.setdefault(c.decision, []).append(c.index)
        return self._by_decision.get(job, {})

    def _pool_energy(self, model: cp_model.CpModel, max_makespan: int, held: set[str]) -> None:
        """The GPU-minutes of the jobs on an owned pool fit in its GPUs times the minutes between
        its opening and the makespan cap: redundant with its cumulative, but the LP sees it (a
        packing bound for a tight cap's cheapest plan: lab_six_jobs' nine hardest front points 22.6
        -> 13.6 s alone, 7.4 -> 5.8 s beside the walk's cost floor)."""
        v = self.variables
        for key, rv in v.resources.items():
            res = rv.resource
            if res.kind != "owned" or not {f"capacity/{res.platform}", f"scheduling/{key}"} <= held:
                continue
            users = [c for c in self.problem.all_candidates() if c.resource == key]
            window = max(0, max_makespan - res.available_from_min)
            model.add(
                sum(c.gpus * c.duration_min * v.x[c.index] for c in users)
                <= (res.capacity or 0) * window
            )

    def _same_decision(self, model: cp_model.CpModel, jobs: tuple[str, ...]) -> None:
        """Every job of `jobs` takes the decision (platform, GPU, billing) the first takes."""
        x = self.variables.x
        keys = dict.fromkeys(key for job in jobs for key in self.decisions(job))
        first, *rest = jobs
        for key in keys:
            on_first = sum(x[i] for i in self.decisions(first).get(key, ()))
            for job in rest:
                model.add(sum(x[i] for i in self.decisions(job).get(key, ())) == on_first)

    def instance(self, objective: str | None, bounds: Bounds, *, with_assumptions: bool = False,
                 hint: dict[int, int] | None = None,
                 values: Sequence[int] | None = None) -> cp_model.CpModel:
        """A clone with the active groups enforced (fixed, or as assumptions) and the bounds
        added. `hint`: candidate index -> 0/1; `values`: instead, every variable of this model
        (run.Assignment), a complete plan to start from."""
        model = self.model.clone()
        if self._budget_index is not None and self.problem.budget != self._built_budget:
            budget.set_budget(model, self._budget_index, self.problem.budget or 0)
        v = self.variables
        active = {
            name: lit for name, lit in self.groups.literals.items() if name not in bounds.lifted
        }
        assumed = {
            name
            for name in active
            if with_assumptions and (bounds.assume is None or name in bounds.assume)
        }
        if assumed:
            model.add_assumptions([active[name] for name in sorted(assumed)])
        for name, lit in active.items():
            if name not in assumed:
                model.add(lit == 1)
        if bounds.max_cost is not None:
            model.add(v.total_cost <= bounds.max_cost)
        if bounds.max_makespan is not None:
            model.add(v.makespan <= bounds.max_makespan)
            if bounds.pool_energy:
                self._pool_energy(model, bounds.max_makespan, active.keys() - assumed)
        if bounds.min_cost is not None:
            model.add(v.total_cost >= bounds.min_cost)
        if bounds.max_risk is not None:
            model.add(self.risk_expr() <= bounds.max_risk)
        for indices in bounds.forced:
            model.add(sum(v.x[i] for i in indices) == 1)
        if bounds.some_of:
            model.add(sum(v.x[i] for i in bounds.some_of) >= 1)
        if bounds.max_objective is not None:
            model.add(self.objective_expr(bounds.max_objective[0]) <= bounds.max_objective[1])
        for n, (cost, makespan) in enumerate(bounds.undominated):
            cheaper = model.new_bool_var(f"cheaper_than_plan[{n}]")
            model.add(v.total_cost <= cost - 1).only_enforce_if(cheaper)
            model.add(v.makespan <= makespan - 1).only_enforce_if(~cheaper)
        for plan_keys in bounds.nogoods:
            same = []
            for job, key in plan_keys:
                same += [v.x[i] for i in self.decisions(job).get(key, ())]
            model.add(sum(same) <= len(plan_keys) - 1)
        for jobs in bounds.same_decision:
            self._same_decision(model, jobs)
        if self.dominated(objective, bounds, with_assumptions):
            model.proto.merge_from(self._zero_rows().proto)  # (rows alone: no variable)
        if objective == COST_THEN_TIME:
            model.minimize(self.cost_then_time(bounds))
        elif objective is not None:
            model.minimize(self.objective_expr(objective))
        if values is not None:
            if len(values) != len(self.model.proto.variables):
                raise ValueError("a complete hint needs a value for every variable of the model")
            model.proto.solution_hint.vars.extend(range(len(values)))
            model.proto.solution_hint.values.extend(values)
        elif hint:
            # (a plan from the whole model may use a candidate this one leaves out; each x is a
            # plain Boolean, so these are the pairs `add_hint` would append one at a time)
            kept = [(v.x[index].index, int(value)) for index, value in hint.items()
                    if index in v.x]
            model.proto.solution_hint.vars.extend(var for var, _ in kept)
            model.proto.solution_hint.values.extend(value for _, value in kept)
        return model
