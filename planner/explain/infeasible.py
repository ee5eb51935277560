"""An infeasible answer: the conflict, the relaxations, and the facts that explain a job left
with no option (pools too small, windows too short, deadlines beyond the fastest run)."""

from __future__ import annotations

from collections import Counter

from plan.constraints import memory as memory_rule
from plan.models.problem import SCALE, Problem, Removed
from plan.planner.candidates import pinned_fields
from plan.planner.cpsat.model import Bounds
from plan.planner.explain.conflicts import at_time, conflict_sets, describe, held_back_by, held_fact
from plan.planner.explain.narrate import option as narrate_option
from plan.planner.explain.relaxations import (
    deadline_beyond_horizon,
    headroom_relaxation,
    optimizer_relaxations,
    relaxations,
    setting_relaxations,
)
from plan.planner.i18n.said import Joined, say, word
from plan.planner.plan import Conflict, Relaxation, SolveResult
from plan.planner.session import Session

# --- the whole scenario ---------------------------------------------------------------------------

def explain_infeasible(
    session: Session, result: SolveResult, empty_jobs: list[str] | None = None
) -> None:
    problem = session.problem
    if empty_jobs:
        _explain_empty(session, result, empty_jobs)
        return
    sets = conflict_sets(session, Bounds())
    conflict = [group for found in sets for group in found]
    for name in conflict:
        late = (
            _fastest_too_late(problem, name.split("/", 1)[1])
            if name.startswith("deadline/")
            else ""
        )
        result.conflicts.append(Conflict(name, say("infeasible.detail",
                                                   detail=describe(problem, name), late=late)))
    held = sorted(g for g in session.model.groups.literals if held_fact(g) and g not in conflict)
    if held:
        result.notes.append(say("infeasible.held",
                                facts=Joined([problem.groups.get(g, g) for g in held])))
    result.notes += (
        _pools_too_small(session) + pools_without_network(session) + _windows_too_short(problem)
    )
    result.relaxations += relaxations(session, conflict, sets)


def _fastest_too_late(problem: Problem, job: str) -> str:
    """Why a deadline binds, from the option of `job` that every per-option rule allows (within the
    budget where some is) and that could end soonest: when a purchase's delivery, an owned pool's
    opening or a queue holds it back, or its own run is too long. Empty where no such option
    exists."""
    limit = problem.deadline_min.get(job)
    abiding = [c for c in problem.candidates.get(job, []) if not c.violations]
    affordable = [
        c for c in abiding if problem.budget is None or problem.standalone_cost(c) <= problem.budget
    ]
    abiding = affordable or abiding
    if limit is None or not abiding:
        return ""

    c = min(abiding, key=lambda o: (problem.earliest_start_min(o) + o.duration_min, o.index))
    start_h, run_h, limit_h = (
        SCALE.to_hours(m) for m in (problem.earliest_start_min(c), c.duration_min, limit)
    )
    option = narrate_option(c.gpus, c.gpu, c.platform, c.billing)
    if start_h > 0 and run_h <= limit_h:
        return say("infeasible.soonest", option=option, start=at_time(start_h, limit_h),
                   held=held_back_by(problem, c), end=at_time(start_h + run_h, limit_h))
    return say("infeasible.fastest", option=option, run=run_h,
               end=at_time(start_h + run_h, limit_h))


def _pools_too_small(session: Session) -> list[str]:
    """Per job and owned pool where no GPU count holds the job in memory: the closest, the whole
    pool. The conflict names the rules that keep the job off the rest (data on premises); this says
    why the pool itself cannot take it, which is what the memory relaxations answer; and where its
    model states would fit in host memory but for the RAM the pool's servers are taken to have, that
    too."""
    problem = session.problem
    placed = {(c.job, c.platform) for c in problem.all_candidates()}
    largest: dict[tuple[str, str], Removed] = {}
    for r in problem.removed:
        if (
            r.rule == memory_rule.GROUP
            and r.billing == "owned"
            and (r.job, r.platform) not in placed
        ):
            key = (r.job, r.platform)
            if key not in largest or r.gpus > largest[key].gpus:
                largest[key] = r
    builder = session.builder
    lines = []
    for (job, pool), r in sorted(largest.items()):
        short = builder.host_shortfall(job, (pool, r.gpu, r.gpus, "owned")) if builder else None
        host = (
            say("infeasible.host_short", short=short, pool=pool)
            if short
            else ""
        )
        lines.append(say("infeasible.pool_memory", pool=pool, job=job, reason=r.reason,
                         host=host))
    return lines


def pools_without_network(session: Session) -> list[str]:
    """Per owned pool of several nodes that declares no network between them (its `fabric` left at
    none): the jobs the planner kept to one of its nodes, and the field that says what joins
    them."""
    if session.loaded is None:
        return []
    lines = []
    for pool in session.loaded.scenario.owned:
        if pool.count <= pool.gpus_per_node or (
            pool.fabric.kind != "none" and pool.fabric.gbps_per_gpu > 0
        ):
            continue
        kept = sorted({r.job for r in session.problem.removed
                       if r.platform == pool.id and r.billing == "owned" and r.rule == "layout"
                       and r.gpus > pool.gpus_per_node})
        if kept:
            lines.append(say("infeasible.no_network", pool=pool.id,
                             nodes=pool.count // pool.gpus_per_node, per_node=pool.gpus_per_node,
                             jobs=Joined(kept, "list_comma")))
    return lines


def _windows_too_short(problem: Problem) -> list[str]:
    """Per job and owned pool with a closing window: where even the job's fastest option on the pool
    takes longer than the window is open, by how much (the note next to 'held as given')."""
    notes = []
    for key, res in sorted(problem.resources.items()):
        if res.kind != "owned" or res.available_until_min is None:
            continue
        window_h = SCALE.to_hours(res.available_until_min - res.available_from_min)
        for job in problem.jobs:
            mine = [c for c in problem.candidates[job] if c.resource == key]
            if not mine:
                continue
            fastest = min(mine, key=lambda c: c.duration_min)
            need_h = SCALE.to_hours(fastest.duration_min)
            if need_h > window_h:
                notes.append(say("infeasible.window", pool=key, window=window_h,
                                 start=SCALE.to_hours(res.available_from_min),
                                 end=SCALE.to_hours(res.available_until_min), job=job,
                                 need=need_h, gpus=fastest.gpus, gpu=fastest.gpu))
    return notes


def _explain_empty(session: Session, result: SolveResult, empty_jobs: list[str]) -> None:
    problem = session.problem
    late = [
        job
        for job in empty_jobs
        if any(r.job == job and r.rule == "horizon" for r in problem.removed)
    ]
    deadline = deadline_beyond_horizon(session) if late else None
    for job in empty_jobs:
        by_rule = Counter((r.rule, r.reason) for r in problem.removed if r.job == job)
        if job in late and deadline is not None:
            result.conflicts.append(Conflict(
                f"deadline/{job}", say("infeasible.no_option_in_time", job=job, to=deadline.to,
                                       unit=word("dur", deadline.unit))))
        elif by_rule:
            (rule, reason), _ = by_rule.most_common(1)[0]
            result.conflicts.append(Conflict(f"{rule}/{job}", say("infeasible.none_left", job=job,
                                                                  reason=reason)))
        else:
            result.conflicts.append(Conflict(f"catalog/{job}", f"{job}: no option in the catalog "
                                                               "or owned pools"))
    if deadline is not None:
        result.relaxations.append(deadline)
    found = headroom_relaxation(session)
    if found is not None:
        result.relaxations.append(found)
    result.relaxations.extend(optimizer_relaxations(session))
    result.relaxations.extend(setting_relaxations(session))
    for job in empty_jobs:
        pinned = problem.pinned.get(job)
        if pinned:
            fields = "/".join(pinned_fields(session.loaded.scenario.job(job)) if session.loaded
                              else ["gpus", "min_gpus", "layout"])
            result.relaxations.append(
                Relaxation(
                    "rule",
                    f"jobs[{job}].{fields}",
                    "remove",
                    "setting",
                    say("infeasible.pinned", job=job, pinned=pinned),
                )
            )
    if not result.relaxations:
        result.relaxations.append(Relaxation(
            "rule", "jobs", "smaller model, shorter sequence or QLoRA", "setting",
            say("infeasible.no_count")))
