"""Scheduling: jobs on one owned pool, reservation or purchase share its GPUs over time
(cumulative over optional intervals); a reservation is held for whole periods around its jobs;
`after` precedences."""

from __future__ import annotations

from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import ResourceVars, Variables
from plan.models.problem import Candidate

AFTER = "scheduling.after"
# Beyond this many candidates on one reservation the redundant cuts below (one per candidate, one
# per pair) cost CP-SAT's presolve more than they save its search (finance_year: 150 candidates of
# twelve monthly runs on each reservation, 41k terms).
MANY_USERS = 60


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    problem = variables.problem
    after_literal = groups.literal(AFTER) if any(problem.after.values()) else None
    for job, before in problem.after.items():
        for dep in before:
            assert after_literal is not None
            model.add(variables.jobs[job].start >= variables.jobs[dep].end).only_enforce_if(
                after_literal
            )

    for key in variables.private:
        # Held for one job alone: it only has to exist (a purchase arrives after its lead time).
        res = problem.resources[key]
        for c in problem.all_candidates():
            if c.resource == key and res.available_from_min:
                model.add(variables.jobs[c.job].start >= res.available_from_min).only_enforce_if(
                    variables.chosen(c)
                )
    for key, rv in variables.resources.items():
        users = [c for c in problem.all_candidates() if c.resource == key]
        if not users:
            continue
        shared = groups.literal(f"scheduling/{key}")
        intervals, demands = [], []
        for job in problem.jobs:
            mine = [c for c in users if c.job == job]
            if not mine:
                continue
            on = model.new_bool_var(f"on[{job}@{key}]")
            model.add(sum(variables.chosen(c) for c in mine) == on)
            jv = variables.jobs[job]
            intervals.append(model.new_optional_interval_var(jv.start, jv.duration, jv.end, on,
                                                             f"use[{job}@{key}]"))
            demand = model.new_int_var(0, max(c.gpus for c in mine), f"gpus[{job}@{key}]")
            model.add(demand == sum(c.gpus * variables.chosen(c) for c in mine))
            demands.append(demand)
            if rv.periods is not None:
                # The reservation (or purchase) is held from its start for whole periods.
                res = rv.resource
                model.add(jv.start >= rv.start).only_enforce_if(on)
                model.add(jv.end <= rv.start + res.period_min * rv.periods).only_enforce_if(on)
                for c in mine:
                    chosen = variables.chosen(c)
                    model.add(rv.capacity >= c.gpus).only_enforce_if(chosen)
                    # Redundant cuts that give the LP the obvious bounds: a chosen job alone needs
                    # ceil(duration / period) periods, and the reservation costs at least that much.
                    least = max(res.min_periods, -(-c.duration_min // res.period_min))
                    model.add(rv.periods >= least).only_enforce_if(chosen)
                    if len(users) <= MANY_USERS:
                        model.add(
                            variables.resource_cost(rv)
                            >= (res.price_per_gpu_period * c.gpus + res.fixed_price_per_period)
                            * least
                            * chosen
                        )
        if rv.periods is not None:
            # Reserved capacity is bought for the plan; sharing it in time is the point.
            model.add_cumulative(intervals, demands, rv.capacity)
            _disjoint_pairs(model, variables, rv, users)
            _disjoint_sets(model, variables, rv, users)
            # Energy cut (redundant): reserved GPU-minutes cover the GPU-minutes of the jobs on it.
            reserved_gpu_periods = sum(level * p for level, p in rv.level_periods.items())
            model.add(rv.resource.period_min * reserved_gpu_periods
                      >= sum(c.gpus * c.duration_min * variables.chosen(c) for c in users))
        else:
            # Cumulative takes no enforcement literal: lifting the group instead lifts the capacity.
            lifted = sum(c.gpus for c in users)
            model.add_cumulative(
                intervals, demands, cp_model.LinearExpr.sum([rv.capacity, lifted, -lifted * shared])
            )


def _cut_scale(rv: ResourceVars, users: list[Candidate]) -> tuple[int, cp_model.IntVar] | None:
    """The largest level the redundant cuts below compare GPUs with, and the periods held; None
    where they are not added (a resource not held for periods, no level, or too many candidates
    on it)."""
    most = max(rv.resource.levels, default=rv.resource.capacity or 0)
    if rv.periods is None or not most or len(users) > MANY_USERS:
        return None
    return most, rv.periods


def _disjoint_pairs(model: cp_model.CpModel, variables: Variables, rv: ResourceVars,
                    users: list[Candidate]) -> None:
    """Redundant cut: two jobs whose GPUs together exceed the largest reservation level cannot run
    at the same time, so the held span covers both durations. The cumulative implies it, but CP-SAT
    was seen to take seconds to prove it on a two-job case (a reservation that two jobs in a row
    overrun by an hour); with the cut the LP sees it at once."""
    res = rv.resource
    cut = _cut_scale(rv, users)
    if cut is None:
        return
    most, periods = cut

    def least(minutes: int) -> int:
        return max(res.min_periods, -(-minutes // res.period_min))

    for i, a in enumerate(users):
        for b in users[i + 1:]:
            # (only where the pair needs more periods than either alone, which `post` already
            # bounds)
            if (
                a.job != b.job
                and a.gpus + b.gpus > most
                and least(a.duration_min + b.duration_min)
                > max(least(a.duration_min), least(b.duration_min))
            ):
                model.add(
                    res.period_min * periods >= a.duration_min + b.duration_min
                ).only_enforce_if([variables.chosen(a), variables.chosen(b)])


def _disjoint_sets(model: cp_model.CpModel, variables: Variables, rv: ResourceVars,
                   users: list[Candidate]) -> None:
    """Redundant cut: runs that no two of can share the largest level run one after another, so
    the held span covers all their durations. Runs of more than half the largest level are such a
    set; so are they with the smaller runs of any one job that do not fit beside the smallest of
    them. Linear in the choices, the cut does not depend on where the window starts: without it
    CP-SAT proved three such runs too long for two periods by trying every start minute of the
    window in turn (seconds on a 1,000-hour horizon, a test case of three runs)."""
    res = rv.resource
    cut = _cut_scale(rv, users)
    if cut is None:
        return
    most, periods = cut
    big = [c for c in users if 2 * c.gpus > most]
    if not big:
        return
    smallest = min(c.gpus for c in big)
    span = res.period_min * periods

    def serial(cands: list[Candidate]) -> cp_model.LinearExprT:
        return cp_model.LinearExpr.weighted_sum([variables.chosen(c) for c in cands],
                                                [c.duration_min for c in cands])

    if len({c.job for c in big}) > 1:
        model.add(span >= serial(big))
    for job in dict.fromkeys(c.job for c in users):  # (in order: the model is the same each run)
        beside = [c for c in users if c.job == job and 2 * c.gpus <= most
                  and c.gpus + smallest > most]
        others = [c for c in big if c.job != job]
        if beside and others:
            model.add(span >= serial(others + beside + [c for c in big if c.job == job]))
