"""What the "would cost less but is ruled out" lines of a plan name: per job, the cheapest option
cheaper than the chosen one and the rule or limit that blocks it.

Which options are blocked, and why, depends on the problem alone; only the threshold (the chosen
option's cost) depends on the plan. So each problem's blocked options are listed once, cheapest
first, and a plan's lines read the heads of each job's list: a Pareto front explains 81 plans of one
problem (lab_six_jobs), and listing the blocked options (with their sentences) for each plan took
most of its explanations' time.
"""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

from plan.constraints.groups import family
from plan.models.problem import SCALE, Candidate, Problem
from plan.planner.candidates.ruled_out import RuledOut
from plan.planner.cpsat.run import Outcome
from plan.planner.explain.conflicts import at_time, held_back_by
from plan.planner.i18n.said import say
from plan.planner.session import Session

RULE, BAND, LATE = "rule", "band", "late"  # why an option is blocked: a rule, the band, its end


@dataclass(frozen=True)
class Blocked:
    cost: int  # standalone, in money units
    candidate: Candidate
    why: str  # RULE, BAND or LATE


@dataclass(frozen=True)
class Heads:
    """A job's cheapest blocked option, and its cheapest the band alone sets aside (ties broken by
    index): the only ones a plan's lines can name."""

    cheapest: Blocked | None
    by_band: Blocked | None


# Per session, its problem and that problem's heads per job. A session's problem is set once
# (Session.__init__); the entry keeps it to check.
_HEADS: WeakKeyDictionary[Session, tuple[Problem, dict[str, Heads]]] = WeakKeyDictionary()


def by_policy(group: str) -> bool:
    """Whether a rule group is the scenario's own policy (its allow and forbid lists, spot,
    limits), which the user chose rather than a fact of the data, the team or the hardware."""
    return family(group).startswith("policy.")


def blocked_heads(session: Session) -> dict[str, Heads]:
    """Per job, the heads of the options a rule (not the user's policy: said once, as policy) or
    the job's deadline keeps out."""
    kept = _HEADS.get(session)
    if kept is not None and kept[0] is session.problem:
        return kept[1]
    problem = session.problem
    heads = {}
    for job in problem.jobs:
        blocked = _job_blocked(problem, job)
        heads[job] = Heads(min(blocked, key=_order, default=None),
                           min((b for b in blocked if b.why == BAND), key=_order, default=None))
    _HEADS[session] = (problem, heads)
    return heads


def _order(b: Blocked) -> tuple[int, int]:
    return b.cost, b.candidate.index


def _job_blocked(problem: Problem, job: str) -> list[Blocked]:
    limit = problem.deadline_min[job]
    found = []
    for c in problem.candidates[job]:
        if any(by_policy(group) for group in c.violations):
            continue
        if c.violations:
            found.append(Blocked(problem.standalone_cost(c), c, RULE))
        elif limit is not None and problem.earliest_start_min(c) + c.duration_min > limit:
            why = BAND if _expected_start_and_run(problem, c) <= limit else LATE
            found.append(Blocked(problem.standalone_cost(c), c, why))
    return found


def _deferred_head(ruled_out: RuledOut, job: str, below: int) -> Blocked | None:
    """The cheapest rule-breaking option (not the user's policy) a deferring build left unsized
    that costs less than `below`: the job's places sized in order of their floor, until the next
    floor reaches `below` or passes the cheapest found (no option costs less than its place's
    floor, so none left could be cheaper)."""
    best: Blocked | None = None
    # (places where some option breaks only rules that are not policy: the others hold none)
    for place, floor in sorted(ruled_out.rule_places(job).items(), key=lambda item: item[1]):
        if floor >= below or (best is not None and floor > best.cost):
            break
        for c in ruled_out.place(job, place):
            if c.violations and not any(by_policy(group) for group in c.violations):
                found = Blocked(ruled_out.cost(c), c, RULE)
                if found.cost < below and (best is None or _order(found) < _order(best)):
                    best = found
    return best


def _expected_h(c: Candidate) -> float:
    """The option's run at the expected time (its `hours` are at the scenario's confidence)."""
    time = c.figures.time if c.figures else None
    return c.hours - time.train_at_confidence_h + time.train_h if time else c.hours


def _expected_start_and_run(problem: Problem, c: Candidate) -> int:
    return problem.earliest_start_min(c) + SCALE.minutes(_expected_h(c))


def cheaper_blocked(session: Session, outcome: Outcome) -> list[tuple[str, Blocked]]:
    """Per job, the cheapest blocked option cheaper than the chosen one and, where that is another,
    the cheapest one the band alone set aside: a plan chosen over a cheaper one only because of the
    band always says so."""
    problem = session.problem
    found = []
    for job, heads in blocked_heads(session).items():
        mine = problem.standalone_cost(outcome.chosen[job])
        if session.ruled_out is not None:  # (a deferring build's: sized as far as it could show)
            limit = mine if heads.cheapest is None else min(mine, heads.cheapest.cost + 1)
            ruled = _deferred_head(session.ruled_out, job, limit)
            if ruled is not None and (heads.cheapest is None
                                      or _order(ruled) < _order(heads.cheapest)):
                heads = Heads(ruled, heads.by_band)
        # (the cheapest of those under `mine` is the cheapest of all, when it is under `mine`)
        cheapest, by_band = (b if b is not None and b.cost < mine else None
                             for b in (heads.cheapest, heads.by_band))
        found += [(job, b) for b in (cheapest, by_band if by_band is not cheapest else None) if b]
    return found


def why_blocked(problem: Problem, job: str, b: Blocked) -> str:
    """The rule, the band or the deadline that blocks the option, in words."""
    c = b.candidate
    if b.why == RULE:
        group, reason = next(iter(sorted(c.violations.items())))
        return say("narrate.ruled_out", group=group, reason=reason)
    limit = problem.deadline_min[job]
    assert limit is not None  # (a deadline blocks it)
    if b.why == BAND:
        return say("narrate.band_only", job=job, expected=_expected_h(c),
                   confidence=problem.confidence, at=c.hours)
    return too_late(problem, job, c, limit)


def too_late(problem: Problem, job: str, c: Candidate, limit_min: int) -> str:
    """Why an option misses its job's deadline: its run, or what holds its start back (a queue or
    reservation lead time, a purchase's delivery, an owned pool's opening)."""
    start_h, limit_h = SCALE.to_hours(problem.earliest_start_min(c)), SCALE.to_hours(limit_min)
    end_h = start_h + SCALE.to_hours(c.duration_min)
    if start_h > 0 and SCALE.to_hours(c.duration_min) <= limit_h:
        return say("narrate.too_late", job=job, start=at_time(start_h, limit_h),
                   held=held_back_by(problem, c), end=at_time(end_h, limit_h),
                   deadline=at_time(limit_h, limit_h))
    return say("narrate.too_slow", job=job, end=at_time(end_h, limit_h),
               deadline=at_time(limit_h, limit_h))
