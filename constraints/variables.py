"""Typed containers for the CP-SAT variables, with stable names built from domain ids."""

from __future__ import annotations

from dataclasses import dataclass, field

from plan.constraints.sat import cp_model
from plan.models.problem import Candidate, Problem, Resource


@dataclass
class ResourceVars:
    resource: Resource
    start: cp_model.IntVar
    periods: cp_model.IntVar | None = None  # reserved resources only
    level: dict[int, cp_model.IntVar] = field(default_factory=dict)  # GPUs reserved -> chosen?
    # periods if level chosen
    level_periods: dict[int, cp_model.IntVar] = field(default_factory=dict)
    capacity: cp_model.LinearExprT = 0
    used: cp_model.IntVar | None = None


@dataclass
class JobVars:
    job: str
    start: cp_model.IntVar
    end: cp_model.IntVar
    duration: cp_model.IntVar
    cost: cp_model.LinearExprT


class Variables:
    """x[candidate] (exactly one per job), job start/end, resource capacity and periods, totals."""

    def __init__(self, model: cp_model.CpModel, problem: Problem) -> None:
        self.model = model
        self.problem = problem
        horizon = problem.horizon_min
        self.x: dict[int, cp_model.IntVar] = {
            c.index: model.new_bool_var(f"x[{c.name}]") for c in problem.all_candidates()
        }
        self.jobs: dict[str, JobVars] = {}
        self.private = problem.private_resources()
        for job in problem.jobs:
            candidates = problem.candidates[job]
            # Not before the job's release: its data does not exist earlier (a fact, not a rule).
            release = min(problem.release_min.get(job, 0), horizon)
            start = model.new_int_var(release, horizon, f"start[{job}]")
            end = model.new_int_var(0, horizon, f"end[{job}]")
            durations = [c.duration_min for c in candidates] or [0]
            # An IntVar, not the raw sum: interval sizes must be affine.
            duration = model.new_int_var(min(durations), max(durations), f"duration[{job}]")
            model.add(duration == sum(c.duration_min * self.x[c.index] for c in candidates))
            own = [(self.own_cost(c), self.x[c.index]) for c in candidates]
            cost = sum(amount * x for amount, x in own if amount)
            model.add_exactly_one(self.x[c.index] for c in candidates)
            model.add(end == start + duration)
            self.jobs[job] = JobVars(job, start, end, duration, cost)
        self.resources: dict[str, ResourceVars] = {}
        for key, res in problem.resources.items():
            if key in self.private:
                continue
            rv = ResourceVars(
                res, model.new_int_var(res.available_from_min, horizon, f"res_start[{key}]")
            )
            if res.kind != "owned":
                rv.periods = model.new_int_var(0, res.max_periods, f"res_periods[{key}]")
                for level in res.levels:
                    chosen = model.new_bool_var(f"res_level[{key}={level}]")
                    periods = model.new_int_var(
                        0, res.max_periods, f"res_level_periods[{key}={level}]"
                    )
                    model.add(periods == rv.periods).only_enforce_if(chosen)
                    model.add(periods == 0).only_enforce_if(~chosen)
                    rv.level[level] = chosen
                    rv.level_periods[level] = periods
                model.add_at_most_one(rv.level.values())
                # An IntVar, not the raw sum: cumulative capacities must be affine.
                rv.capacity = model.new_int_var(0, max(res.levels, default=0), f"res_gpus[{key}]")
                model.add(rv.capacity == sum(level * b for level, b in rv.level.items()))
                used = model.new_bool_var(f"res_used[{key}]")
                model.add(sum(rv.level.values()) == used)
                model.add(rv.periods >= res.min_periods).only_enforce_if(used)
                model.add(rv.periods == 0).only_enforce_if(~used)
                rv.used = used
            else:
                rv.capacity = res.capacity or 0
            self.resources[key] = rv
        self.makespan = model.new_int_var(0, horizon, "makespan")
        model.add_max_equality(self.makespan, [jv.end for jv in self.jobs.values()])
        self.total_cost: cp_model.LinearExprT = cp_model.LinearExpr.sum(
            [
                *(jv.cost for jv in self.jobs.values()),
                *(self.resource_cost(rv) for rv in self.resources.values()),
            ]
        )

    def own_cost(self, c: Candidate) -> int:
        """The candidate's cost to the plan apart from shared resources (which are priced on
        their own)."""
        return self.problem.own_cost(c, self.private)

    @staticmethod
    def resource_cost(rv: ResourceVars) -> cp_model.LinearExprT:
        res = rv.resource
        if res.kind == "owned" or rv.periods is None:
            return 0
        per_gpu = sum(res.price_per_gpu_period * level * p for level, p in rv.level_periods.items())
        upfront = (
            sum(res.upfront_per_gpu * level * b for level, b in rv.level.items())
            if res.upfront_per_gpu
            else 0
        )
        return per_gpu + res.fixed_price_per_period * rv.periods + upfront

    def chosen(self, candidate: Candidate) -> cp_model.IntVar:
        return self.x[candidate.index]
