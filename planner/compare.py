"""`plan compare`: one job's best layout under every billing mode on every platform the scenario
allows, side by side, for a finance office.

Each row is a plan of the whole scenario solved by the model with the job (every instance of a
recurring job) forced onto one (platform, billing) pair: the forcing `plan explain --why-not` uses,
restricted to options that break no rule, so every row is a plan the scenario's rules allow and
its figures are the model's (reservation windows held once or several times, period budgets,
releases), not a hand formula. A pair that cannot run the job says why in one line. Pairs the
scenario's own policy lists exclude (platforms, GPUs, spot) are left out and named once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from plan.models.problem import SCALE, Candidate, Problem
from plan.models.validation_words import listed
from plan.planner.cpsat.model import Bounds
from plan.planner.cpsat.run import Outcome, to_plan
from plan.planner.explain.conflicts import conflict_words
from plan.planner.explain.ownership import payback_lines, rent_instead
from plan.planner.i18n.said import Joined, say, word
from plan.planner.plan import Plan
from plan.planner.session import Session

BILLING_ORDER = ("hourly", "daily", "monthly", "yearly", "spot", "owned", "purchase")
POLICY_EXCLUDES = {"policy.platforms": "platforms", "policy.gpus": "GPUs", "policy.spot": "spot"}
"""Rule groups that mean the scenario's policy lists leave an option out (not a rule it breaks)."""


@dataclass
class CompareRow:
    """The job under one (platform, billing) pair: the best plan the rules allow with the job
    forced there, or why there is none. Money in the scenario's currency, times in hours from the
    plan's start."""

    billing: str
    platform: str
    status: str  # feasible (a plan) | infeasible (rules conflict) | unavailable (no option)
    choice: str = ""  # e.g. "8x h800" (instances on several counts: "8-16x h800")
    job_cost: float | None = None  # the job's own bills plus its share of what it holds
    plan_cost: float | None = None  # the whole scenario's plan with the job forced here
    delta_cost: float | None = None  # plan_cost against the unforced best plan
    run_h: float | None = None  # hours the job's runs take, summed over its instances
    end_h: float | None = None  # when its last instance ends
    interruptions: float | None = None  # expected, summed over its instances
    held: str = ""  # reservations or purchases the job holds: "12 windows of 1 month"
    payback_months: float | None = None  # purchases: against the best plan that rents instead
    payback: str = ""  # purchases: "14.2 months", "never" (renting costs less than running it)
    proven: bool = True  # the forced solve proved its optimum
    cheapest: bool = False  # the lowest plan cost of all rows (ties all marked)
    in_best: bool = False  # the unforced best plan runs the job so
    reason: str = ""  # why there is no plan (one line)
    note: str = ""  # instances left free: due before the pair's options can start

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Comparison:
    job: str
    instances: list[str]
    currency: str
    best_cost: float | None
    rows: list[CompareRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"job": self.job, "instances": self.instances, "currency": self.currency,
                "best_cost": self.best_cost, "rows": [r.to_dict() for r in self.rows],
                "notes": self.notes}


def job_instances(session: Session, job: str) -> list[str]:
    """The jobs `job` names: a recurring job's instances (its `series`), or the job itself.
    Raises ValueError naming the jobs there are."""
    scenario = session.loaded.scenario if session.loaded is not None else None
    if scenario is not None:
        series = [j.id for j in scenario.jobs if j.series == job]
    else:  # a bare problem: instances are named ID-01, ID-02, ...
        named = re.compile(rf"{re.escape(job)}-\d{{2,}}")
        series = [j for j in session.problem.jobs if named.fullmatch(j)]
    if series:
        return series
    if job in session.problem.jobs:
        return [job]
    names = sorted({j.series or j.id for j in scenario.jobs} if scenario is not None
                   else session.problem.jobs)
    raise ValueError(say("compare.unknown_job", job=repr(job), jobs=listed(names)))


def compare_job(session: Session, job: str) -> Comparison:
    """Every (platform, billing) pair of `job` (a job id or a recurring job's id): a forced solve
    each. Raises ValueError for an unknown job."""
    instances = job_instances(session, job)
    problem = session.problem
    # (each solve's jobs then end as early as its cost and makespan allow, as `plan solve`'s do:
    # otherwise how many windows a reservation is held in could hang on a tie)
    best = session.earliest(session.best(Bounds()))
    result = Comparison(job, instances, problem.currency,
                        SCALE.to_money(best.total_cost) if best.solved else None)
    if not best.solved:
        result.notes.append(say("compare.no_plan", status=word("status", best.status)))
    excluded: dict[str, set[str]] = {}
    rent: list[tuple[Outcome | None, list[str]]] = []  # the rent-instead solve, once
    for pair in _pairs(problem, instances):
        options = [_on(problem, i, pair) for i in instances]
        abiding = [tuple(c.index for c in cs if not c.violations) for cs in options]
        if all(abiding):
            late = [i for i, cs in zip(instances, options, strict=True)
                    if not any(_in_time(problem, c) for c in cs if not c.violations)]
            row = _forced_row(session, instances, pair, abiding, best, rent, late)
        else:
            policy = _policy_only(options, abiding)
            if policy:
                excluded.setdefault(policy, set()).add(f"{pair[0]} ({pair[1]})")
                continue
            row = CompareRow(pair[1], pair[0], "unavailable",
                             reason=_why_none(problem, instances, pair, options, abiding))
        result.rows.append(row)
    _mark(result.rows, best, instances)
    for what, pairs in sorted(excluded.items()):
        result.notes.append(say("compare.policy", what=what,
                                pairs=Joined(sorted(pairs), "list_comma")))
    return result


def _pairs(problem: Problem, instances: Sequence[str]) -> list[tuple[str, str]]:
    """Every (platform, billing) the job was offered: its candidates and the options dropped
    before the model (memory, horizon, capacity, its billing: list), in billing order."""
    found = {(c.platform, c.billing) for i in instances for c in problem.candidates[i]}
    found |= {(r.platform, r.billing) for r in problem.removed if r.job in instances}
    order = {b: k for k, b in enumerate(BILLING_ORDER)}
    return sorted(found, key=lambda p: (order.get(p[1], len(order)), p[0]))


def _on(problem: Problem, job: str, pair: tuple[str, str]) -> list[Candidate]:
    return [c for c in problem.candidates[job] if (c.platform, c.billing) == pair]


def _policy_only(options: list[list[Candidate]], abiding: list[tuple[int, ...]]) -> str:
    """What of the policy lists leaves the pair out ('platforms', 'GPUs', 'spot'), where an instance
    has options here and every one of them is excluded by a policy list; '' otherwise."""
    for cs, ok in zip(options, abiding, strict=True):
        if ok or not cs:
            continue
        kinds = [{POLICY_EXCLUDES[g] for g in c.violations if g in POLICY_EXCLUDES} for c in cs]
        if all(kinds):
            return ", ".join(sorted(set().union(*kinds)))
    return ""


def _why_none(problem: Problem, instances: Sequence[str], pair: tuple[str, str],
              options: list[list[Candidate]], abiding: list[tuple[int, ...]]) -> str:
    """One line: the rules the pair's most favourable option breaks, or why the options were
    dropped before the model, for the first instance without a rule-abiding option."""
    for job, cs, ok in zip(instances, options, abiding, strict=True):
        if ok:
            continue
        who = job if len(instances) > 1 else ""
        if cs:
            c = min(cs, key=lambda c: (len(c.violations), problem.standalone_cost(c)))
            return say("compare.who" if who else "compare.plain", who=who, what=Joined(
                [say("whynot.removed_rule", rule=g, reason=r)
                 for g, r in sorted(c.violations.items())]))
        removed = [r for r in problem.removed if r.job == job and (r.platform, r.billing) == pair
                   and r.rule != "dominated"]
        if removed:  # the largest count tried says most about the offer (a quota names a count
            # above those tried)
            r = max(removed, key=lambda r: (r.rule != "capacity", r.gpus))
            return say("compare.who" if who else "compare.plain", who=who,
                       what=say("whynot.removed_rule", rule=r.rule, reason=r.reason))
        return say("compare.who" if who else "compare.plain", who=who,
                   what=say("compare.no_option"))
    return ""


def _in_time(problem: Problem, c: Candidate) -> bool:
    """Whether the candidate, started as soon as it can (its release, queue, a purchase's
    delivery), ends by its job's deadline."""
    limit = problem.deadline_min.get(c.job)
    return limit is None or problem.earliest_start_min(c) + c.duration_min <= limit


def _late_note(problem: Problem, late: Sequence[str], pair: tuple[str, str]) -> str:
    """Instances due before the pair's options can start, left to their best option."""
    first = min((c for c in _on(problem, late[0], pair) if not c.violations),
                key=problem.earliest_start_min)
    start_d = SCALE.to_hours(problem.earliest_start_min(first)) / 24
    names = late[0] if len(late) == 1 else f"{late[0]}..{late[-1]} ({len(late)})"
    return say("compare.late", names=names, platform=pair[0], billing=word("billing", pair[1]),
               day=start_d)


def _forced_row(session: Session, instances: Sequence[str], pair: tuple[str, str],
                abiding: list[tuple[int, ...]], best: Outcome,
                rent: list[tuple[Outcome | None, list[str]]], late: list[str]) -> CompareRow:
    """The pair's row: the best plan with every instance that can end in time there forced onto
    it (the others left free, and said so)."""
    problem = session.problem
    row = CompareRow(pair[1], pair[0], "infeasible")
    keep = {job: ids for job, ids in zip(instances, abiding, strict=True) if job not in late}
    forced = list(keep.values())
    if late:
        row.note = _late_note(problem, late, pair)
    if not forced:
        row.reason, row.note = say("compare.none_in_time", note=row.note), ""
        return row
    bounds = Bounds(forced=tuple(forced))
    # (the forced instances' other options cannot be chosen: a model without them, 4x smaller on
    # a quarterly job of five)
    narrow = session.narrowed({job: set(ids) for job, ids in keep.items()})
    outcome = narrow.earliest(narrow.best(bounds), bounds)
    session.spend(narrow)
    if not outcome.solved:
        row.reason = _unsolved_reason(session, bounds, forced, outcome.status)
        return row
    row.status = "feasible"
    plan = to_plan(problem, outcome, 0)
    row.proven = outcome.status == "optimal"
    row.plan_cost = plan.total_cost
    row.delta_cost = plan.total_cost - SCALE.to_money(best.total_cost) if best.solved else None
    _job_figures(row, plan, instances)
    if pair[1] == "purchase":
        if not rent:
            rent.append(rent_instead(session))
        lines = payback_lines(session, plan, *rent[0])
        months = [r.payback_months for r in plan.reservations
                  if r.kind == "purchase" and r.payback_months is not None]
        row.payback_months = min(months) if months else None
        row.payback = (say("compare.payback_months", months=row.payback_months)
                       if row.payback_months is not None
                       else say("compare.never") if lines and "never pays back" in lines[0]
                       else say("compare.not_applicable"))
    return row


def _unsolved_reason(session: Session, bounds: Bounds, forced: list[tuple[int, ...]],
                     status: str) -> str:
    """Why a forced solve found no plan: the rules that conflict with the pair, in words."""
    if status == "unknown":
        return say("compare.work_limit")
    problem = session.problem
    by_index = {c.index: c for c in problem.all_candidates()}
    favourable = [min((by_index[i] for i in ids), key=problem.standalone_cost) for ids in forced]
    said = conflict_words(session, bounds, favourable)
    return (say("compare.conflicts", said=Joined(said)) if said
            else say("compare.no_plan_here"))


def _job_figures(row: CompareRow, plan: Plan, instances: Sequence[str]) -> None:
    """The job's cost (its bills plus its GPU-hour share of each reservation or purchase it
    holds), run time, last end, interruptions, choice and what it holds."""
    ours = [j for j in plan.jobs if j.job in instances]
    cost = sum(j.cost for j in ours)
    held = []
    for r in plan.reservations:
        users = [j for j in plan.jobs if j.reservation == r.key]
        mine = [j for j in users if j.job in instances]
        if not mine:
            continue
        total = sum(j.gpus * (j.end_h - j.start_h) for j in users)
        share = sum(j.gpus * (j.end_h - j.start_h) for j in mine) / total if total else 1.0
        cost += r.cost * share
        held.append(r)
    row.job_cost = cost
    row.run_h = sum(j.end_h - j.start_h for j in ours)
    row.end_h = max(j.end_h for j in ours)
    row.interruptions = round(sum(j.expected_interruptions for j in ours), 2)
    counts = sorted({j.gpus for j in ours})
    gpus = sorted({j.gpu for j in ours})
    many = f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else f"{counts[0]}"
    row.choice = f"{many}x {'/'.join(gpus)}"
    if held:
        row.held = _held_text(held)


def _held_text(held: Sequence[Any]) -> str:
    """What the job holds, short: '1 window: 12 x 30 d' (12 periods of 30 days), '12 windows: 1 x
    30 d each', '2 windows: 1 + 10 periods of 30 d',
    '1 purchase: 8 GPUs for 9.1 months'."""
    if {r.kind for r in held} == {"purchase"}:
        gpus = sum(r.gpus for r in held)
        months = max(r.periods * r.period_h for r in held) / (24 * 30)
        return say("compare.held_purchase", n=len(held), gpus=gpus, months=months)
    periods = sorted(r.periods for r in held)
    length = held[0].period_h
    unit = (say("compare.unit_d", n=length / 24) if length % 24 == 0
            else say("compare.unit_h", n=length))
    if len(held) == 1:
        return say("compare.held_one", periods=periods[0], unit=unit)
    if len(set(periods)) == 1:
        return say("compare.held_each", n=len(held), periods=periods[0], unit=unit)
    sizes = " + ".join(map(str, periods)) if len(held) <= 4 else f"{periods[0]}..{periods[-1]}"
    return say("compare.held_sizes", n=len(held), sizes=sizes, unit=unit)


def _mark(rows: list[CompareRow], best: Outcome, instances: Sequence[str]) -> None:
    """The cheapest plan(s) among the rows, and the row the unforced best plan takes."""
    costs = [r.plan_cost for r in rows if r.plan_cost is not None]
    low = min(costs) if costs else None
    chosen = {best.chosen[i].decision[::2] for i in instances} if best.solved else set()
    for r in rows:
        r.cheapest = low is not None and r.plan_cost is not None and r.plan_cost <= low + 0.005
        r.in_best = chosen == {(r.platform, r.billing)}
