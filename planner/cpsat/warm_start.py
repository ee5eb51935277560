"""A greedy plan to start the main solve from: each job's best rule-abiding option on its own.

It ignores what jobs share (an owned pool's GPUs, a reservation, the budget), so it may not be a
plan at all; CP-SAT takes it as a hint, repairs what it breaks and proves the optimum from there.
Every choice is hinted (the chosen option 1, the job's others 0): with many jobs on one cheap pool,
finding a schedule that packs them is the hard part of the search, and the whole hint cut it to a
quarter (64 generated jobs: 19.7 -> 5.3 work units; 32 jobs: 2.8 -> 1.3), where hinting the chosen
options alone gave 7.7 and 3.6. A small scenario solves faster without the options' hint, so the
first solve (planner/solve.py, QUICK_BEST_WORK) starts from nothing, unless a solve that forces the
greedy options finds them a schedule: then each solve of the main stage starts from that whole plan
(planner/solve.py, _greedy_start; 64 generated jobs' greedy options were their optimum, proven in
0.02 units from the whole plan where the options' hint took 8.8).
"""

from __future__ import annotations

from collections.abc import Callable

from plan.models.problem import Candidate, Problem

WARM_START_NOTE = ("search: not proven in a first short solve, so CP-SAT started again from a "
                   "greedy plan (each job's best rule-abiding option on its own, shared GPUs and "
                   "the budget ignored) and repaired and improved it from there")


def greedy_hint(problem: Problem, objective: str) -> dict[int, int]:
    """Candidate index -> 1 for each job's best option on its own for `objective` (cost, time,
    balanced or lexicographic), 0 for the job's other options. A job's own deadline is kept where
    some option meets it; rule-breaking options are never chosen."""
    key = _key(problem, objective)
    hint: dict[int, int] = {}
    for job in problem.jobs:
        options = [c for c in problem.candidates[job] if not c.violations]
        limit = problem.deadline_min.get(job)
        in_time = [c for c in options if limit is None or c.startup_min + c.duration_min <= limit]
        pick = min(in_time or options, key=key, default=None)
        for c in problem.candidates[job]:
            hint[c.index] = int(c is pick)
    return hint


def _key(problem: Problem, objective: str) -> Callable[[Candidate], tuple[int, int]]:
    if objective == "time":
        return lambda c: (c.duration_min, problem.standalone_cost(c))
    if objective == "balanced":
        per_min = problem.value_of_time_per_min
        return lambda c: (problem.standalone_cost(c) + per_min * c.duration_min, c.duration_min)
    # cost, lexicographic (cost first)
    return lambda c: (problem.standalone_cost(c), c.duration_min)
