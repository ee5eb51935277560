"""Alternatives as the trades a PI weighs (planner/solve.py runs them): the searches that each
propose the next alternative (another platform, GPU type or billing for a material job; a whole
class of equal jobs moved at once; the same choices with other GPU counts, for time), and the check
of the best plan at p90 time with the cheapest plan that holds every deadline there."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from plan.models.problem import SCALE, Candidate, Problem
from plan.planner.cpsat.model import Bounds
from plan.planner.cpsat.run import Outcome
from plan.planner.explain.conflicts import at_time
from plan.planner.explain.narrate import option
from plan.planner.i18n.said import Joined, say, signed_money
from plan.planner.session import Session

MATERIAL_SHARE = 0.2  # a job with this share of the cost or the time is one whose choice matters
COUNT_TRADE_SHARE = 0.1
"""A plan that changes only GPU counts is shown when it ends at least this share of the best plan's
time sooner (or a day sooner, whichever is less) for at most the gap's extra cost."""
COUNT_TRADE_DAY_MIN = 24 * 60

Decision = tuple[str, tuple[str, str, str]]  # (job, (platform, gpu, billing))


class HasId(Protocol):
    @property
    def id(self) -> str: ...


def job_classes(jobs: Iterable[HasId], pool_of: Callable[[str], str]) -> dict[str, list[str]]:
    """Jobs an alternative moves together: the instances of one recurring job (their `series`),
    else the jobs on one pool (`pool_of`: the platform or owned pool a job runs on in the best
    plan) that train the same model the same way. Keys read as the answer names the class
    ("series sft", "pool lab-a800")."""
    classes: dict[str, list[str]] = {}
    for job in jobs:
        series = getattr(job, "series", None)
        alike = (getattr(job, "model", None), getattr(job, "method", None))
        key = (f"series {series}" if series is not None
               else f"pool {pool_of(job.id)}" + "".join(f" {w}" for w in alike if w))
        classes.setdefault(key, []).append(job.id)
    return classes


@dataclass(frozen=True)
class _JobId:
    id: str


def strictly_material(problem: Problem, best: Outcome) -> list[str]:
    """Jobs that carry MATERIAL_SHARE or more of the best plan's cost or time on their own."""
    costs = {job: problem.standalone_cost(c) for job, c in best.chosen.items()}
    total = sum(costs.values())
    makespan = max(best.makespan_min, 1)
    return [job for job in problem.jobs
            if (total > 0 and costs[job] >= MATERIAL_SHARE * total)
            or best.chosen[job].duration_min >= MATERIAL_SHARE * makespan]


def material_classes(session: Session, best: Outcome) -> dict[str, list[str]]:
    """Classes (job_classes) of two or more jobs none of which carries MATERIAL_SHARE of the cost
    alone but which together do: with many equal jobs, the choice that matters is the class's."""
    problem = session.problem
    scenario_jobs = {j.id: j for j in session.loaded.scenario.jobs} if session.loaded else {}
    jobs = [scenario_jobs.get(job, _JobId(job)) for job in problem.jobs]
    costs = {job: problem.standalone_cost(c) for job, c in best.chosen.items()}
    total = sum(costs.values())
    classes = job_classes(jobs, lambda job: best.chosen[job].platform)
    return {key: members for key, members in classes.items()
            if len(members) >= 2 and total > 0
            and all(costs[job] < MATERIAL_SHARE * total for job in members)
            and sum(costs[job] for job in members) >= MATERIAL_SHARE * total}


def count_trade_move_min(best: Outcome) -> int:
    """How much sooner a GPU-count trade must end: COUNT_TRADE_SHARE of the best plan's time, or a
    day, whichever is less (at least a minute)."""
    return max(1, min(math.ceil(COUNT_TRADE_SHARE * best.makespan_min), COUNT_TRADE_DAY_MIN))


@dataclass
class TradeSearch:
    """One way to propose the next alternative; `bounds` gives its limits against the plans shown
    so far. A search that found nothing (infeasible, or out of its work) is closed; its last
    answer is kept while it still meets the tighter limits of later rounds (the same optimum)."""

    kind: str  # decision | class | count
    label: str  # the jobs or class it changes, for the answer's note
    jobs: tuple[str, ...]
    cached: Outcome | None = None
    closed: bool = False
    ran_out: bool = False  # its work ran out: nothing is known beyond the gap either
    within_gap_only: bool = False
    extra: dict[str, int] = field(default_factory=dict)

    def bounds(self, problem: Problem, best: Outcome, shown: list[Outcome]) -> Bounds:
        undominated = tuple((o.total_cost, o.makespan_min) for o in shown)
        nogoods: tuple[tuple[Decision, ...], ...]
        if self.kind == "count":  # the best plan's choices, other counts, ending sooner
            # every other decision is a nogood of its own (not a forced set, which would need the
            # whole model, rule-breaking options included: slower to build)
            nogoods = tuple(((job, key),) for job in problem.jobs
                            for key in dict.fromkeys(c.decision for c in problem.candidates[job]
                                                     if not c.violations)
                            if key != best.chosen[job].decision)
            return Bounds(nogoods=nogoods, undominated=undominated,
                          max_makespan=best.makespan_min - self.extra["move_min"],
                          max_cost=self.extra["max_cost"])
        if self.kind == "class":  # every job of the class leaves its choice in each plan shown,
            # for one choice they all take: the trade a finance office weighs ("all twelve runs
            # monthly"), not each instance moved its own way
            nogoods = tuple(dict.fromkeys(
                ((job, o.chosen[job].decision),) for o in shown for job in self.jobs))
            return Bounds(nogoods=nogoods, undominated=undominated, same_decision=(self.jobs,))
        nogoods = tuple(dict.fromkeys(
            tuple((job, o.chosen[job].decision) for job in self.jobs) for o in shown))
        return Bounds(nogoods=nogoods, undominated=undominated)


    def hint(self, best: Outcome, last: Outcome) -> dict[int, int]:
        """The plan this search's solve starts from: the best plan for a count trade (its choices,
        other counts), the last plan shown otherwise; for a class trade, less the class's own jobs,
        whose choices in it are the ones the class must leave (hinting them cost finance_year's
        class trade 1.22 work units, 0.15 without)."""
        if self.kind == "count":
            return best.hint()
        if self.kind == "class":
            return {c.index: 1 for job, c in last.chosen.items() if job not in self.jobs}
        return last.hint()


def meets(outcome: Outcome, bounds: Bounds) -> bool:
    """Whether a plan meets the nogoods and the undominated limits of `bounds` (the ones that grow
    from round to round)."""
    for plan_keys in bounds.nogoods:
        if all(outcome.chosen[job].decision == key for job, key in plan_keys):
            return False
    for jobs in bounds.same_decision:
        if len({outcome.chosen[job].decision for job in jobs}) > 1:
            return False
    return all(outcome.total_cost < cost or outcome.makespan_min < makespan
               for cost, makespan in bounds.undominated)


def trade_searches(session: Session, best: Outcome) -> tuple[list[TradeSearch], list[str]]:
    """The searches for a plan's alternatives, and the jobs whose decisions count on their own
    (every job when no job and no class carries a real share: the old rule, one-job changes)."""
    problem, settings = session.problem, session.settings
    classes = material_classes(session, best)
    in_class = {job for members in classes.values() for job in members}
    singles = [job for job in strictly_material(problem, best) if job not in in_class]
    if not singles and not classes:
        singles = list(problem.jobs)
    searches = [TradeSearch("decision", ", ".join(singles), tuple(singles))] if singles else []
    searches += [TradeSearch("class", key, tuple(members)) for key, members in classes.items()]
    if session.objective != "time":  # the fastest plan has no count trade that ends sooner
        move = count_trade_move_min(best)
        searches.append(TradeSearch(
            "count", "", (), within_gap_only=True,
            extra={"move_min": move,
                   "max_cost": math.floor(best.total_cost * (1 + settings.gap))}))
    return searches, singles


def p90_extra_min(c: Candidate) -> int:
    """Minutes a candidate's run takes beyond its scheduled time when training takes its p90
    time (0 where the schedule already holds at p90 or more)."""
    time = c.figures.time if c.figures else None
    if time is None or not time.train_h:
        return 0
    return max(0, SCALE.minutes(time.train_p90_h - time.train_at_confidence_h))


def p90_ends(problem: Problem, outcome: Outcome) -> dict[str, int]:
    """Each job's end (minutes) when it and the jobs it follows (`after`) take their p90 time, on
    the plan's own schedule otherwise."""
    ends: dict[str, int] = {}

    def end(job: str) -> int:
        if job not in ends:
            start = max([outcome.start_min[job],
                         *(end(before) for before in problem.after.get(job, ()))])
            chosen = outcome.chosen[job]
            ends[job] = start + chosen.duration_min + p90_extra_min(chosen)
        return ends[job]

    for job in problem.jobs:
        end(job)
    return ends


def p90_misses(problem: Problem, outcome: Outcome) -> list[tuple[str, int, int]]:
    """(job, end at p90 time, deadline) for each job whose deadline the plan misses at p90."""
    ends = p90_ends(problem, outcome)
    return [(job, ends[job], limit) for job in problem.jobs
            if (limit := problem.deadline_min[job]) is not None and ends[job] > limit]


def p90_problem(problem: Problem) -> Problem:
    """The problem with every option scheduled at its p90 time (options that cannot then end within
    the model's horizon left out): its plans hold every deadline at p90."""
    candidates = {
        job: [longer for c in cs
              if problem.earliest_start_min(
                  longer := replace(c, duration_min=c.duration_min + p90_extra_min(c)))
              + longer.duration_min <= problem.horizon_min]
        for job, cs in problem.candidates.items()}
    return replace(problem, candidates=candidates)


def cheapest_holding_p90(session: Session, max_work: float) -> Outcome | None:
    """The cheapest plan whose every job meets its deadline at p90 time, scheduled as the answer
    schedules plans (at the scenario's confidence); None where none exists or the work ran out."""
    problem = session.problem
    longer = p90_problem(problem)
    if any(not cs for cs in longer.candidates.values()):
        return None
    other = Session(longer, session.settings, "cost", session.started, session.loaded,
                    session.builder)
    other.work_left, other.deadline = session.work_left, session.deadline
    held = other.best(Bounds(), max_work=max_work)
    session.spend(other)
    if not held.solved:
        return None
    forced = tuple((c.index,) for c in held.chosen.values())
    again = session.best(Bounds(forced=forced), hint=held, max_work=max_work)
    if not again.solved or p90_misses(problem, again):
        return None
    return again


def p90_lines(problem: Problem, best: Outcome, misses: list[tuple[str, int, int]],
              holding: Outcome | None, holding_rank: int | None) -> list[str]:
    """Plan 1's flag: the deadlines it misses when its jobs take their p90 time, and the cheapest
    plan that holds them all there (its rank where it is shown)."""
    currency = problem.currency
    lines: list[str] = []
    for job, end_min, limit_min in misses:
        limit_h = SCALE.to_hours(limit_min)
        lines.append(say("p90.misses", job=job, end=at_time(SCALE.to_hours(end_min), limit_h),
                         deadline=at_time(limit_h, limit_h), confidence=problem.confidence))
    if holding is None:
        lines.append(say("p90.none"))
        return lines
    extra = SCALE.to_money(holding.total_cost - best.total_cost)
    share = extra / max(SCALE.to_money(best.total_cost), 1e-9)
    what = (say("p90.plan", rank=holding_rank) if holding_rank is not None else Joined([
        say("narrate.job_note", job=job, note=option(c.gpus, c.gpu, c.platform, c.billing))
        for job, c in holding.chosen.items()]))
    lines.append(say("p90.holding", what=what, extra=signed_money(extra, currency), share=share,
                     end=SCALE.to_hours(holding.makespan_min)))
    return lines
