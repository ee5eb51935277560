"""Why a scenario (or a forced option) has no plan: the smallest set of rules a person can change
that conflict, and the relaxations that help.

Rule groups fall in three kinds. Facts (what hardware can run, owned pools' size and calendar, job
precedences) are always held. The user's policy lists (platforms, GPUs, spot, job size) define the
options; conflicts are computed over the options they leave, so a rule about an excluded platform
never shows, and widening a list is offered as a relaxation. The rest (budget, deadlines, data
sensitivity and residency, reproducibility, ops skill) are rules a person can change: a conflict
names only these, minimal (lifting any one of them alone, with the others held, removes it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from plan.models.problem import SCALE, Candidate, Problem
from plan.planner.cpsat.model import Bounds
from plan.planner.explain import plan_exists
from plan.planner.i18n.said import money, say
from plan.planner.session import Session

CHANGEABLE = ("budget", "deadline", "sensitivity", "residency", "reproducibility", "ops_skill")
POLICY_FIELDS = {"policy.platforms": ("policy.allow_platforms", "platform"),
                 "policy.gpus": ("policy.allow_gpus", "gpu"),
                 "policy.spot": ("policy.allow_spot", "setting"),
                 "policy.max_gpus": ("policy.max_gpus_per_job", "GPUs"),
                 "policy.only_available": ("policy.only_available", "setting")}
HOURS_STATED_BELOW_H = 48.0  # deadlines under two days are stated in hours


def can_change(group: str) -> bool:
    """Budget, deadlines, data handling, reproducibility and ops skill: rules, not facts."""
    return group.split("/", 1)[0].split(".", 1)[0] in CHANGEABLE


def is_policy(group: str) -> bool:
    return group.startswith("policy.")


def held_fact(group: str) -> bool:
    """Owned pools' size, calendar and sharing, and job order: facts worth naming next to a
    conflict."""
    return group.startswith(("capacity/", "scheduling/", "scheduling.after"))


def duration_text(hours: float) -> tuple[float, str]:
    """(value, unit): hours under two days, else days; rounded up to a tenth."""
    if hours < HOURS_STATED_BELOW_H:
        return _up(hours), "h"
    return _up(hours / 24), "d"


def _up(value: float) -> float:
    return -(-round(value * 10, 6) // 1) / 10


# --- the minimal conflicting set ------------------------------------------------------------------

def find_conflict(session: Session, base: Bounds, among: set[str]) -> list[str]:
    """A minimal set of groups from `among` that cannot all hold (every other group held), or []
    when lifting all of `among` still leaves no plan (or the problem is feasible)."""
    among = among - base.lifted
    if not among or not _has_plan(session, _lifted(base, among)):
        return []
    outcome = session.run(None, _assume(base, among), with_assumptions=True)
    if outcome.status != "infeasible":
        return []
    by_index = session.model.groups.by_index()
    core = sorted({by_index[i] for i in outcome.core if i in by_index} & among) or sorted(among)
    return minimal_conflict(session, base, core, among)


def minimal_conflict(session: Session, base: Bounds, core: list[str], among: set[str]) -> list[str]:
    """Shrink by deletion: drop a group whenever the rest still conflict (one solve per group, less
    those answered without one: all of `among` lifted has a plan, as `find_conflict` found, and
    where a job cannot end by a deadline held the rest conflict: `plan_exists.answer`)."""
    names = list(core)
    for name in list(names):
        trial = [n for n in names if n != name]
        if not trial:
            continue
        if plan_exists.answer(session, _lifted(base, among - set(trial))) == plan_exists.NONE:
            names = trial
    return names


def _has_plan(session: Session, bounds: Bounds) -> bool:
    return plan_exists.answer(session, bounds) == plan_exists.PLAN


def _lifted(base: Bounds, groups: set[str]) -> Bounds:
    return Bounds(
        lifted=base.lifted | frozenset(groups),
        forced=base.forced,
        max_cost=base.max_cost,
        max_makespan=base.max_makespan,
    )


def _assume(base: Bounds, groups: set[str]) -> Bounds:
    return Bounds(lifted=base.lifted, forced=base.forced, max_cost=base.max_cost,
                  max_makespan=base.max_makespan, assume=frozenset(groups))


MAX_CONFLICTS = 8
"""Disjoint conflicts looked for, one after another, when lifting the ones found still leaves no
plan."""


def conflict_groups(session: Session, base: Bounds) -> list[str]:
    """The conflict over the options the policy leaves; if those options cannot run the jobs under
    any rule, the conflict among the policy lists and the rules together. Where lifting it still
    leaves no plan (a budget too small and data no rented GPU may hold), the next conflict among the
    remaining rules, and so on: every rule a person must change is named, not only the first."""
    return [group for found in conflict_sets(session, base) for group in found]


def conflict_sets(session: Session, base: Bounds) -> list[list[str]]:
    """The conflicts of `conflict_groups`, each on its own: at least one rule of each must
    change."""
    found = _one_conflict(session, base)
    sets = [found] if found else []
    for _ in range(MAX_CONFLICTS - 1):
        lifted = {g for s in sets for g in s}
        if not found or _has_plan(session, _lifted(base, lifted)):
            break
        found = _one_conflict(session, _lifted(base, lifted))
        sets += [found] if found else []
    return sets


def _one_conflict(session: Session, base: Bounds) -> list[str]:
    names = set(session.model.groups.literals) - base.lifted
    changeable = {g for g in names if can_change(g)}
    found = find_conflict(session, base, changeable)
    if not found:
        found = find_conflict(session, base, changeable | {g for g in names if is_policy(g)})
    if not found:  # the facts alone leave no plan (a pool's window too short): name them
        found = find_conflict(session, base, names)
    return found


def conflict_words(session: Session, base: Bounds, options: Sequence[Candidate] = ()) -> list[str]:
    """The rules that leave no plan under `base` (a forced option), each in words
    (`group_words`)."""
    return [group_words(session.problem, name, options)
            for name in conflict_groups(session, base)]


def group_words(problem: Problem, group: str, options: Sequence[Candidate] = ()) -> str:
    """A rule that blocks `options` in words: a period's budget by its period and amount, any
    other as `describe` words it."""
    for p in problem.budget_periods:
        if group == f"budget/{p.label}":
            return say("compare.period_budget", label=p.label,
                       budget=money(SCALE.to_money(p.amount), problem.currency))
    return describe(problem, group, options)


def describe(problem: Problem, group: str, options: Sequence[Candidate] = ()) -> str:
    """The group in words: the reason `options` (a forced option) break it, else reasons taken only
    from options the scenario's policy leaves."""
    for c in options:
        if group in c.violations:
            return c.violations[group]
    # the options this rule alone removes come first (an owned pool that only the ops rule keeps out
    # says more than the clouds that residency removes too), then the most common reasons
    reasons: Counter[str] = Counter()
    others: dict[str, int] = {}
    for c in problem.all_candidates():
        if group in c.violations and not any(is_policy(g) for g in c.violations):
            reason = c.violations[group]
            reasons[reason] += 1
            others[reason] = min(others.get(reason, len(c.violations)), len(c.violations))
    if reasons:
        ranked = sorted(reasons, key=lambda reason: (others[reason], -reasons[reason]))
        first, second = [*ranked, ""][:2]
        head, _, tail = second.partition("; ")
        # the same rule for another option: name the option only
        if tail and first.startswith(head + "; "):
            return f"{first}; {tail}"
        return "; ".join(ranked[:2])
    if is_policy(group):  # every option it removes breaks it: say what it does, not one of them
        example = next(
            (c.violations[group] for c in problem.all_candidates() if group in c.violations), ""
        )
        field = POLICY_FIELDS.get(group, (group, ""))[0]
        return say("conflict.policy_leaves", field=field,
                   example=say("conflict.policy_example", example=example) if example else "")
    return problem.groups.get(group, group)


def at_time(hours: float, limit_h: float) -> str:
    """A point in the plan's time, in hours against a deadline under two days, else in days."""
    return (say("time.hour", h=hours) if limit_h < HOURS_STATED_BELOW_H
            else say("time.day", d=hours / 24))


def held_back_by(problem: Problem, c: Candidate) -> str:
    """What keeps an option from starting at once (`Problem.earliest_start_min`)."""
    res = problem.resources.get(c.resource) if c.resource else None
    kind = res.kind if res is not None else ""
    return say(
        "held_back.purchase"
        if kind == "purchase"
        else "held_back.owned"
        if kind == "owned"
        else "held_back.lead"
    )
