"""Candidates no optimal plan chooses: another option of the same job, billed on its own as well,
is strictly cheaper and no later, no longer and no riskier, and breaks the same rules.

Swapping such a candidate for the one that dominates it keeps every schedule, deadline, `after`
order, cap and rule as it was and lowers the cost, so no cost-, time- or balance-optimal plan
under plain caps holds it: a solve may leave it out (PlanModel.instance fixes it to 0) and
keeps the same optima. A generated 64-job quarter: about half the rule-abiding candidates (the
same GPU dearer elsewhere, no faster), and the main solve's work 27.4 -> 14.2 units for the
same plan. Solves that force or forbid a job's options (why-not, alternatives' nogoods, a class
moved as one) or weigh risk keep them all: there a dominated option can be the answer.

Limited capacity: only options billed alone are compared, on either side. An option on an owned
pool, a reservation or a purchase shares GPUs with other jobs, so a cheaper one there may be taken
and is never a reason to drop a rental; a rental's own caps (per-job quota, a customer's stock,
a vendor reservation's lead time as `startup_min`) are the job's alone and already in its figures.
The one rule that ties a rental to other jobs, one GPU type for every job, makes only options of
the same GPU type comparable; budgets per period turn the pruning off. A future rule that ties
rentals across jobs (a stock shared by concurrent jobs) must join the buckets' key below.
"""

from __future__ import annotations

from collections import defaultdict

from plan.constraints.reproducibility import FIXED_GPU_TYPE
from plan.models.problem import Candidate, Problem

# Objectives whose optimum never holds a dominated candidate (risk weighs interruptions alone:
# a dearer option as safe may be an optimum; "earliest" is the tie-break under caps on both).
PRUNED_OBJECTIVES = frozenset({"cost", "time", "balanced", "earliest"})


def dominated_candidates(problem: Problem) -> tuple[int, ...]:
    """Indices of the candidates some other option of the same job dominates (module docstring),
    in candidate order. None where budgets per period count cash by calendar (a cheaper option
    may spend more in one period)."""
    if problem.budget_periods:
        return ()
    # Under the one-GPU-type rule a job's GPU type binds the others' (an H800 option cheaper and
    # faster than the job's A800 one is no use where another job runs on A800 alone).
    same_gpu = bool(problem.groups.get(FIXED_GPU_TYPE))
    found: list[int] = []
    for job in problem.jobs:
        buckets: dict[tuple[frozenset[str], str], list[Candidate]] = defaultdict(list)
        for c in problem.candidates[job]:
            if c.resource is None:  # (on a shared resource, its cost is the resource's)
                buckets[frozenset(c.violations), c.gpu if same_gpu else ""].append(c)
        for bucket in buckets.values():
            found += _dominated_in(bucket)
    return tuple(sorted(found))


def _dominated_in(bucket: list[Candidate]) -> list[int]:
    """The dominated ones of one job's candidates that break the same rules: in order of cost,
    each is checked against the undominated ones strictly cheaper than it (dominance is
    transitive, so those suffice)."""
    dominated: list[int] = []
    frontier: list[Candidate] = []
    by_cost = sorted(bucket, key=lambda c: (c.cost, c.index))
    start = 0
    while start < len(by_cost):
        end = start
        while end < len(by_cost) and by_cost[end].cost == by_cost[start].cost:
            end += 1
        same_cost = by_cost[start:end]
        beaten = [any(_dominates(o, c) for o in frontier) for c in same_cost]
        dominated += [c.index for c, out in zip(same_cost, beaten, strict=True) if out]
        frontier += [c for c, out in zip(same_cost, beaten, strict=True) if not out]
        start = end
    return dominated


def _dominates(o: Candidate, c: Candidate) -> bool:
    """`o` (strictly cheaper, by the caller's order) starts, ends and risks no worse than `c`."""
    return (o.startup_min <= c.startup_min and o.duration_min <= c.duration_min
            and o.expected_interruptions <= c.expected_interruptions)
