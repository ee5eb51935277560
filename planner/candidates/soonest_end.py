"""Whether a deadline is out of reach without a solve: each job's soonest end, from its options
alone, and the jobs it waits for.

A job ends at its start plus its chosen option's `duration_min`, and starts no sooner than its
release (the start variable's lower bound), its option's start-up (`capacity.post`: a physical
delay, posted without a literal) and, while `scheduling.after` holds, the ends of the jobs it
follows (`scheduling.post`). An option that breaks a rule is never chosen while that rule holds
(`common.forbid_violations`; `Problem.rule_abiding` rests on the same). So a job's soonest end is
at least

    soonest(job) = min over its usable options c of max(release, startup(c), soonest(before)...)
                   + duration(c)

and a job whose deadline holds and lies before it, or that has no usable option, leaves the solve
no plan, and so does one released after its deadline, built or not (a series' later instances at
a deadline of one hour): the conflict search and the relaxations' copies (explain/) say
"infeasible" without one, and a copy need not build its other jobs (`reuse.jobs_first`). A bound,
never more: where it says nothing the solve answers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from plan.constraints.scheduling import AFTER
from plan.models.problem import Candidate

UNREACHABLE = float("inf")


def usable(options: Sequence[Candidate], lifted: Collection[str]) -> list[Candidate]:
    """The options a solve with `lifted` groups (the rest held) may choose: those whose every
    broken rule is lifted."""
    return [c for c in options if all(group in lifted for group in c.violations)]


def soonest_ends(
    candidates: Mapping[str, Sequence[Candidate]],
    after: Mapping[str, Sequence[str]],
    release_min: Mapping[str, int],
    lifted: Collection[str],
) -> dict[str, float]:
    """Per job of `candidates`, the soonest minute it can end (UNREACHABLE: no usable option). A
    job it follows that `candidates` lacks (not built yet) counts from its release alone; the
    precedences count only while `scheduling.after` holds."""
    follows = AFTER not in lifted
    ends: dict[str, float] = {}

    def end(job: str, seen: frozenset[str]) -> float:
        if job in ends:
            return ends[job]
        options = usable(candidates.get(job, ()), lifted)
        if job not in candidates or job in seen:  # (not built, or a cycle: no bound from it)
            return float(release_min.get(job, 0))
        before = [end(dep, seen | {job}) for dep in after.get(job, ())] if follows else []
        ready = max([float(release_min.get(job, 0)), *before])
        found = min((max(ready, c.startup_min) + c.duration_min for c in options),
                    default=UNREACHABLE)
        ends[job] = found
        return found

    for job in candidates:
        end(job, frozenset())
    return ends


def late_job(
    candidates: Mapping[str, Sequence[Candidate]],
    limits: Mapping[str, int | None],
    after: Mapping[str, Sequence[str]],
    release_min: Mapping[str, int],
    lifted: Collection[str],
) -> str | None:
    """A job no plan of a solve with `lifted` groups has: one of `candidates` with no usable
    option, or one whose soonest end (`soonest_ends`) lies beyond its minutes in `limits` (the
    deadline the solve holds it to), or one not built yet released after them (it starts no
    sooner than its release, or where that lies beyond the horizon has no option: a build drops
    every option that would end after it); None where every job may be in time."""
    for job, soonest in soonest_ends(candidates, after, release_min, lifted).items():
        limit = limits.get(job)
        if soonest == UNREACHABLE or (limit is not None and soonest > limit):
            return job
    return next((job for job, limit in limits.items() if job not in candidates
                 and limit is not None and release_min.get(job, 0) > limit), None)
