"""Whether a solve under some bounds has a plan, as the conflict search asks it (conflicts.py):
answered without a solve where the options alone say no (`soonest_end.late_job`), kept per session
once proven, and tried first on one option per job (a solve of a few variables: medical_hybrid's
"every rule it may name lifted" took 1.0 s of CPU in full, 0.15 s so; a job forced onto a place,
as `plan compare` and `--why-not` force it, on the fastest of its options there), the full solve
asked only where that one finds none."""

from __future__ import annotations

import dataclasses
from weakref import WeakKeyDictionary

from plan.constraints.deadline import group as deadline_group
from plan.models.problem import Problem
from plan.planner.candidates.soonest_end import late_job, usable
from plan.planner.cpsat.model import Bounds
from plan.planner.session import Session

PLAN, NONE, UNKNOWN = "plan", "none", "unknown"

# Per session, the bounds (their fields) asked and the answer proven: plan or none, never a search
# cut by a limit
_PROVEN: WeakKeyDictionary[Session, dict[tuple[object, ...], str]] = WeakKeyDictionary()


def runs_late(problem: Problem, bounds: Bounds) -> bool:
    """Whether a solve under `bounds` (its lifted groups; the rest held) has no plan by its options
    alone: a job with no option the held rules allow, or one that cannot end by a deadline held
    (`soonest_end.late_job`: its fastest allowed option, after the jobs it follows). Forced options
    and caps only narrow the solve: a bound without them holds."""
    limits = {job: limit for job, limit in problem.deadline_min.items()
              if limit is not None and deadline_group(job) not in bounds.lifted}
    return late_job(problem.candidates, limits, problem.after, problem.release_min,
                    bounds.lifted) is not None


def answer(session: Session, bounds: Bounds) -> str:
    """PLAN where some plan meets `bounds`, NONE where none does, UNKNOWN where a limit cut the
    solve: `runs_late` first, then the answer this session proved before, then a solve on one
    option per job (`_one_each`: a plan it finds is a plan), then the full solve."""
    if runs_late(session.problem, bounds):
        return NONE
    known = _PROVEN.setdefault(session, {})
    key = tuple(getattr(bounds, f.name) for f in dataclasses.fields(bounds))
    if key not in known:
        picks = _one_each(session.problem, bounds)
        if picks is not None and session.run(None, dataclasses.replace(bounds,
                                                                        forced=picks)).solved:
            known[key] = PLAN
        else:
            outcome = session.run(None, bounds)
            if outcome.status == "unknown":
                return UNKNOWN
            known[key] = PLAN if outcome.solved else NONE
    return known[key]


def _one_each(problem: Problem, bounds: Bounds) -> tuple[tuple[int, ...], ...] | None:
    """Per job, the option a quick solve forces (the plan of the jobs' fastest options the held
    rules allow, on no shared pool or reservation where one is, is often one where every rule held
    but a deadline is lifted); a job that `bounds` forces onto a set of its options takes the
    fastest of those. None where `bounds` asks some option of a set (a plan that buys) or forces a
    set that spans jobs, or two sets on one job."""
    if bounds.some_of:
        return None
    forced: dict[str, set[int]] = {}  # job -> the options it is forced onto
    if bounds.forced:
        job_of = {c.index: job for job in problem.jobs for c in problem.candidates[job]}
        for indices in bounds.forced:
            jobs = {job_of.get(i) for i in indices}
            job = jobs.pop() if len(jobs) == 1 else None
            if job is None or job in forced:
                return None
            forced[job] = set(indices)
    picks = []
    for job in problem.jobs:
        options = usable(problem.candidates[job], bounds.lifted)
        if job in forced:
            options = [c for c in options if c.index in forced[job]]
        alone = [c for c in options if c.resource is None] or options
        if not alone:
            return None
        picks.append((min(alone, key=lambda c: (c.duration_min, c.cost, c.index)).index,))
    return tuple(picks)
