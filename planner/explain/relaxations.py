"""Relaxations of a conflict: for each kind of rule that helps, the least change (a budget, a
deadline, a level, a platform or GPU to allow, a setting) that gives the scenario a plan."""

from __future__ import annotations

from collections.abc import Mapping

from plan.constraints import memory as memory_rule
from plan.constraints.deadline import group as deadline_group
from plan.constraints.groups import family
from plan.constraints.ops_skill import ONE_CLICK_FEATURES
from plan.models.features import Feature
from plan.models.problem import SCALE, Candidate, Problem
from plan.models.scenario import Scenario
from plan.planner.candidates.soonest_end import soonest_ends
from plan.planner.cpsat.model import Bounds
from plan.planner.cpsat.run import Outcome
from plan.planner.estimate.advice import (
    LEANER_OPTIMIZERS,
    STACK_SETTINGS,
    MemorySaver,
    applies_to_job,
)
from plan.planner.explain.conflicts import POLICY_FIELDS, can_change, duration_text, is_policy
from plan.planner.i18n.said import Joined, money, say, word
from plan.planner.plan import Relaxation
from plan.planner.session import Session

SENSITIVITY_LEVELS = ("public", "internal", "confidential", "regulated")
RESIDENCY_LEVELS = ("any", "cn", "on_premises")
OPS_LEVELS = ("none", "basic", "expert")


def relaxations(
    session: Session, conflict: list[str], sets: list[list[str]] | None = None
) -> list[Relaxation]:
    """Each kind of change that alone makes the scenario feasible, with the cheapest plan then."""
    problem = session.problem
    cur = problem.currency
    names = set(session.model.groups.literals)
    found: list[Relaxation] = []
    if "budget" in names:
        out = session.run("cost", Bounds(lifted=frozenset({"budget"})))
        if out.solved:
            cost = SCALE.to_money(out.total_cost)
            found.append(
                Relaxation(
                    "budget",
                    "budget",
                    round(cost, 2),
                    cur,
                    say("relax.raise_budget_only", cost=money(cost, cur)),
                    cost,
                )
            )
    deadlines = frozenset(g for g in names if family(g) == "deadline")
    if deadlines:
        out = session.run("time", Bounds(lifted=deadlines))
        if out.solved:
            value, unit = duration_text(SCALE.to_hours(out.makespan_min))
            found.append(Relaxation("deadline", "deadline", value, unit,
                                    say("relax.extend_deadline_only", value=value,
                                        unit=word("dur", unit)),
                                    SCALE.to_money(out.total_cost)))
        else:  # the fastest plan ends beyond the model's horizon (3x the deadline): ask without one
            beyond = deadline_beyond_horizon(session)
            found += [beyond] if beyond is not None else []
    policy = sorted(g for g in names if is_policy(g))
    singles = 0
    for group in policy:
        out = session.run("cost", Bounds(lifted=frozenset({group})))
        if out.solved:
            found.append(_policy_relaxation(problem, [group], out))
            singles += 1
    if not singles and len(policy) > 1:  # no list alone, but widening them together may help
        out = session.run("cost", Bounds(lifted=frozenset(policy)))
        if out.solved:
            found.append(_policy_relaxation(problem, policy, out))
    for group in conflict:
        relaxation = _rule_relaxation(session, group)
        if relaxation is not None:
            found.append(relaxation)
    if any(group.startswith("ops_skill/") for group in conflict):
        pools = _pool_features_relaxation(session)
        found += [pools] if pools is not None else []
    headroom = headroom_relaxation(session)
    if headroom is not None:
        found.append(headroom)
    found.extend(optimizer_relaxations(session))
    found.extend(setting_relaxations(session))
    # no change alone is enough: one change per conflict, together (within one conflict too, where
    # changing either rule alone still leaves the other short: data moved to a dearer platform that
    # busts the budget)
    if not found and sets and (len(sets) > 1 or len(sets[0]) > 1):
        joint = _joint_for_conflicts(session, sets, names)
        found += [joint] if joint is not None else []
    return found


def _joint_for_conflicts(
    session: Session, sets: list[list[str]], names: set[str]
) -> Relaxation | None:
    """One change per conflict, together: the least kind of change of each conflict, else all of
    their rules, else every rule of the jobs and kinds they name."""
    # one kind of change per conflict (the same rule for every job it names), else all of them
    least = [
        g for s in sets for g in s if g.partition("/")[0] == _least_change(s).partition("/")[0]
    ]
    joint = _joint_relaxation(session, least)
    everything = [g for s in sets for g in s]
    if joint is None and set(everything) != set(least):
        joint = _joint_relaxation(session, everything)
    # widening the conflicts' rules can expose another (a job's residency widened meets its
    # sensitivity rule): then every rule of the jobs they name, of the kinds they name, together
    jobs = {g.partition("/")[2] for g in everything}
    kinds = {g.partition("/")[0] for g in everything}
    wider = sorted(
        set(everything)
        | {
            g
            for g in names
            if can_change(g)
            and g.partition("/")[2] in jobs
            and g.partition("/")[0] in kinds | set(LEVEL_RULES)
        }
    )
    if joint is None and set(wider) != set(everything):
        joint = _joint_relaxation(session, wider)
    return joint


def _least_change(conflict: list[str]) -> str:
    """The rule of a conflict to change when changes must be combined: money before a level rule
    before a policy list, and the deadline last (a deadline relaxed with others hands the choice to
    the fastest plan, whatever it costs)."""
    def order(group: str) -> int:
        if group == "budget":
            return 0
        if group.partition("/")[0] in LEVEL_RULES:
            return 1
        if family(group) == "deadline":
            return 3
        return 2
    return min(conflict, key=order)


LEVEL_RULES = ("sensitivity", "residency", "ops_skill")
"""Rules with levels a relaxation steps through (sensitivity and residency down, ops skill up)."""


def _level_field(group: str) -> str:
    """The scenario field a level rule's group is set by."""
    head, _, job_id = group.partition("/")
    return "ops_skill" if head == "ops_skill" else f"jobs[{job_id}].data.{head}"


def _level_steps(scenario: Scenario, group: str) -> tuple[str, list[str]]:
    """(the level now, the levels a change may go to, least change first) of a level rule's group:
    sensitivity and residency down, ops skill up."""
    head, _, job_id = group.partition("/")
    if head == "ops_skill":
        return scenario.ops_skill, list(OPS_LEVELS[OPS_LEVELS.index(scenario.ops_skill) + 1:])
    job = scenario.job(job_id)
    current = job.data.sensitivity if head == "sensitivity" else job.data.residency
    levels = SENSITIVITY_LEVELS if head == "sensitivity" else RESIDENCY_LEVELS
    # a jurisdiction code other than cn sits where cn does: one step down is `any`
    index = levels.index(current) if current in levels else levels.index("cn")
    return current, list(reversed(levels[:index]))


def _joint_relaxation(session: Session, conflict: list[str]) -> Relaxation | None:
    """Where no single change makes the scenario feasible, the changes the conflicts ask for,
    together: no budget or deadline (the plan then says what it costs and takes: the fastest plan
    where a deadline is in the conflict, the cheapest otherwise), the level rules stepped together
    one level at a time (least first), policy lists and reproducibility rules dropped."""
    loaded = session.loaded
    if loaded is None:
        return None
    base = loaded.scenario
    levels = {g: _level_steps(base, g) for g in conflict if g.partition("/")[0] in LEVEL_RULES}
    if any(not steps for _, steps in levels.values()):
        return None
    rounds = max((len(steps) for _, steps in levels.values()), default=1)
    late = any(family(g) == "deadline" for g in conflict)
    lifted = frozenset(g for g in conflict if is_policy(g) or g.startswith("reproducibility."))
    for k in range(rounds):
        scenario = base
        if "budget" in conflict:
            scenario = scenario.model_copy(update={"budget": None})
        if late:
            scenario = _without_deadlines(scenario)
        chosen = {g: steps[min(k, len(steps) - 1)] for g, (_, steps) in levels.items()}
        for group, level in chosen.items():
            head, _, job_id = group.partition("/")
            scenario = _with_level(scenario, head, job_id, level)
        # with a deadline in the conflict, the fastest plan (as the deadline relaxation alone asks),
        # else the cheapest, which without a deadline may take years
        out = _solve_variant(session, scenario, "time" if late else "cost", Bounds(lifted=lifted))
        if out is None or not out.solved:
            continue
        cost = SCALE.to_money(out.total_cost)
        cur = session.problem.currency
        changes: list[str] = []
        if "budget" in conflict:
            changes.append(say("relax.raise_budget", cost=money(cost, cur)))
        if late:
            value, unit = duration_text(SCALE.to_hours(out.makespan_min))
            changes.append(say("relax.extend_deadline", value=value, unit=word("dur", unit)))
        for group, level in chosen.items():
            changes.append(say("relax.set_level", field=_level_field(group), level=level,
                               now=levels[group][0]))
        changes += [say("relax.drop", group=g) for g in sorted(lifted)]
        changes = list(dict.fromkeys(changes))  # ops skill is one field for every job that names it
        which = "relax.joint_fastest" if late else "relax.joint_cheapest"
        return Relaxation("joint", "; ".join(sorted(conflict)), "; ".join(changes), "setting",
                          say(which, changes=Joined(changes, "list_comma"),
                              cost=money(cost, cur)), cost)
    return None


def deadline_beyond_horizon(session: Session) -> Relaxation | None:
    """The deadline that makes the scenario feasible when its fastest plan ends beyond the model's
    horizon (three times the latest deadline, which bounds every schedule): the scenario without
    deadlines, solved for time, the rest held."""
    loaded = session.loaded
    if loaded is None:
        return None
    scenario = loaded.scenario
    if scenario.deadline_h is None and not any(j.deadline_h for j in scenario.jobs):
        return None
    # (every rule held and no job kept from this build, since the horizon moves: rule-breaking
    # options are left unsized, as a plain solve leaves them)
    out = _solve_variant(session, _without_deadlines(scenario), "time", defer=True)
    if out is None or not out.solved:
        return None
    value, unit = duration_text(SCALE.to_hours(out.makespan_min))
    return Relaxation("deadline", "deadline", value, unit,
                      say("relax.extend_deadline_fastest", value=value, unit=word("dur", unit)),
                      SCALE.to_money(out.total_cost))


def _policy_relaxation(problem: Problem, groups: list[str], out: Outcome) -> Relaxation:
    """What the cheapest plan with these policy lists lifted uses that the lists exclude."""
    cost = SCALE.to_money(out.total_cost)
    fields, values, units = [], [], []
    for group in groups:
        used = [c for c in out.chosen.values() if group in c.violations]
        if not used:
            continue  # lifted, but the plan does not need it
        field, unit = POLICY_FIELDS.get(group, (group, "setting"))
        if group == "policy.platforms":
            value = ", ".join(sorted({c.platform for c in used}))
        elif group == "policy.gpus":
            value = ", ".join(sorted({c.gpu for c in used}))
        elif group == "policy.max_gpus":
            value = str(max(c.gpus for c in used))
        elif group == "policy.only_available":  # the rule is lifted by turning it off
            value = "false, to " + _unavailable_used(used)
        else:
            value = "true"
        fields.append(field)
        values.append(value)
        units.append(unit)
    to: float | str = (float(values[0]) if units == ["GPUs"] else "; ".join(values))
    words = " and ".join(f"{v} ({f})" for f, v in zip(fields, values, strict=True))
    return Relaxation(
        "policy",
        " + ".join(fields),
        to,
        " + ".join(units),
        say("relax.allow", words=words, cost=money(cost, problem.currency)),
        cost,
    )


def _unavailable_used(used: list[Candidate]) -> str:
    """What a plan uses that the catalog's availability rules keep out: 'buy h100' for purchases,
    'rent b200 on lambda' for rentals a renter rule flags."""
    bought = sorted({c.gpu for c in used if c.billing == "purchase"})
    rented = sorted({f"{c.gpu} on {c.platform}" for c in used if c.billing != "purchase"})
    return " and ".join(f"{verb} {', '.join(names)}"
                        for verb, names in (("buy", bought), ("rent", rented)) if names)


def _rule_relaxation(session: Session, group: str) -> Relaxation | None:
    """The least change of a changeable rule in the conflict that makes the scenario feasible."""
    head, _, job = group.partition("/")
    loaded = session.loaded
    if head in LEVEL_RULES and loaded is not None:
        return _level_relaxation(session, loaded.scenario, head, job)
    if head in LEVEL_RULES:  # a bare problem: say the rule, not the level
        out = session.run("cost", Bounds(lifted=frozenset({group})))
        if out.solved:
            cost = SCALE.to_money(out.total_cost)
            field = "ops_skill" if head == "ops_skill" else f"jobs[{job}].data.{head}"
            return Relaxation(
                "sensitivity" if head != "ops_skill" else "rule",
                field,
                "lifted",
                "setting",
                say("relax.lift", group=group, cost=money(cost, session.problem.currency)),
                cost,
            )
    if head.startswith("reproducibility."):
        out = session.run("cost", Bounds(lifted=frozenset({group})))
        if out.solved:
            cost = SCALE.to_money(out.total_cost)
            return Relaxation("rule", f"policy.{head}", "false", "setting",
                              say("relax.drop_policy", head=head,
                                  cost=money(cost, session.problem.currency)), cost)
    return None


def _level_relaxation(
    session: Session, scenario: Scenario, head: str, job_id: str
) -> Relaxation | None:
    """Sensitivity and residency one step down at a time, ops skill one step up, until a plan
    exists."""
    current, steps = _level_steps(scenario, f"{head}/{job_id}")
    field = _level_field(f"{head}/{job_id}")
    for level in steps:
        out = _solve_variant(session, _with_level(scenario, head, job_id, level))
        if out is not None and out.solved:
            cost = SCALE.to_money(out.total_cost)
            kind = "sensitivity" if head in ("sensitivity", "residency") else "rule"
            return Relaxation(kind, field, level, "level",
                              say("relax.level", field=field, level=level, now=current,
                                  cost=money(cost, session.problem.currency)), cost)
    return None


def _pool_features_relaxation(session: Session) -> Relaxation | None:
    """For a team with no ops skill: whether its owned pools, declared to run a one-click
    environment with checkpoint resume (what the rule asks of a platform), make the scenario
    feasible. A pool with LLaMA-Factory's web UI or a vendor's image installed has them; the
    scenario cannot know."""
    loaded = session.loaded
    if loaded is None or loaded.scenario.ops_skill != "none":
        return None
    wanted = {Feature(f) for f in ONE_CLICK_FEATURES}
    # a feature the pool `lacks` on purpose stays lacking
    lacking = [
        p
        for p in loaded.scenario.owned
        if not wanted <= set(p.features) and not wanted & set(p.lacks)
    ]
    if not lacking:
        return None
    names = {p.id for p in lacking}
    owned = [
        p.model_copy(update={"features": sorted(set(p.features) | wanted)}) if p.id in names else p
        for p in loaded.scenario.owned
    ]
    out = _solve_variant(session, loaded.scenario.model_copy(update={"owned": owned}))
    if out is None or not out.solved:
        return None
    used = sorted({c.platform for c in out.chosen.values()} & names) or sorted(names)
    cost = SCALE.to_money(out.total_cost)
    fields = " and ".join(f"owned[{pool}].features" for pool in used)
    return Relaxation("rule", fields, ", ".join(ONE_CLICK_FEATURES), "setting",
                      say("relax.pool_features", pools=", ".join(used), fields=fields,
                          features=", ".join(ONE_CLICK_FEATURES),
                          cost=money(cost, session.problem.currency)), cost)


def _with_level(scenario: Scenario, head: str, job_id: str, level: str) -> Scenario:
    if head == "ops_skill":
        return scenario.model_copy(update={"ops_skill": level})
    jobs = [
        j.model_copy(update={"data": j.data.model_copy(update={head: level})})
        if j.id == job_id
        else j
        for j in scenario.jobs
    ]
    return scenario.model_copy(update={"jobs": jobs})


def headroom_relaxation(session: Session) -> Relaxation | None:
    """The largest smaller memory headroom (half, then none) that makes the scenario feasible."""
    loaded = session.loaded
    headroom = session.problem.memory_headroom
    if (
        loaded is None
        or headroom <= 0
        or not any(r.rule == memory_rule.GROUP for r in session.problem.removed)
    ):
        return None
    best: Relaxation | None = None
    for value in (0.0, round(headroom / 2, 3)):
        policy = loaded.scenario.policy.model_copy(update={"memory_headroom": value})
        out = _solve_variant(session, loaded.scenario.model_copy(update={"policy": policy}))
        if out is None or not out.solved:
            break
        cost = SCALE.to_money(out.total_cost)
        best = Relaxation("headroom", "policy.memory_headroom", value, "fraction of card",
                          say("relax.headroom", value=value, headroom=headroom,
                              cost=money(cost, session.problem.currency)), cost)
    return best


def _savers_for(
    session: Session, savers: tuple[MemorySaver, ...]
) -> list[tuple[MemorySaver, list[str]]]:
    """Each saver with the jobs memory removed options of that it applies to (those it applies to
    none left out)."""
    loaded = session.loaded
    memory_jobs = {r.job for r in session.problem.removed if r.rule == memory_rule.GROUP}
    if loaded is None or not memory_jobs:
        return []
    pairs = [
        (
            saver,
            sorted(
                j.id
                for j in loaded.scenario.jobs
                if j.id in memory_jobs and applies_to_job(saver, j)
            ),
        )
        for saver in savers
    ]
    return [(saver, names) for saver, names in pairs if names]


def optimizer_relaxations(session: Session) -> list[Relaxation]:
    """For each leaner optimizer (`advice.LEANER_OPTIMIZERS`), whether giving it to the jobs it
    applies to among those memory removed options of makes the scenario feasible, and the cheapest
    plan then. Jobs that already name another optimizer, or a stack the optimizer does not run on,
    are left as they are."""
    swaps = _savers_for(session, LEANER_OPTIMIZERS)
    found = [r for r in (_saver_relaxation(session, [pair]) for pair in swaps) if r is not None]
    if not found and len(swaps) > 1:  # each alone leaves another job without options: all together
        together: list[tuple[MemorySaver, list[str]]] = []
        # one optimizer per job: the first swap listed for it (the least change)
        for swap, names in swaps:
            if not {n for _, taken in together for n in taken} & set(names):
                together.append((swap, names))
        relaxed = _saver_relaxation(session, together) if len(together) > 1 else None
        found += [relaxed] if relaxed is not None else []
    return found


def setting_relaxations(session: Session) -> list[Relaxation]:
    """Each of a PyTorch stack's settings (`advice.STACK_SETTINGS`: a fused loss, fused layers)
    given to the jobs memory removed options of, alone, and when none alone is enough, all of them
    together (as Liger and Unsloth run them): the cheapest plan then, where it is feasible."""
    swaps = _savers_for(session, STACK_SETTINGS)
    found = [r for r in (_saver_relaxation(session, [pair]) for pair in swaps) if r is not None]
    if not found and len(swaps) > 1:
        together = _saver_relaxation(session, swaps)
        found += [together] if together is not None else []
    return found


def _saver_relaxation(
    session: Session, swaps: list[tuple[MemorySaver, list[str]]]
) -> Relaxation | None:
    """The scenario with each swap's setting given to its jobs: its cheapest plan as a relaxation,
    or None when it is still infeasible."""
    loaded = session.loaded
    assert loaded is not None
    changes: dict[str, dict[str, str]] = {}
    for swap, names in swaps:
        for name in names:
            changes.setdefault(name, {})[swap.field] = swap.to
    if stays_without_options(session.problem, set(changes)):
        return None
    variant = loaded.scenario.model_copy(
        update={
            "jobs": [
                j.model_copy(update=changes[j.id]) if j.id in changes else j
                for j in loaded.scenario.jobs
            ]
        }
    )
    out = _solve_variant(session, variant)
    if out is None or not out.solved:
        return None
    cost = SCALE.to_money(out.total_cost)
    fields = [
        f"jobs[{', '.join(names)}].{swap.field}" + (" (each)" if len(names) > 1 else "")
        for swap, names in swaps
    ]
    what = [f"{', '.join(names)} with {swap.why}" for swap, names in swaps]
    kinds = {swap.field for swap, _ in swaps}
    return Relaxation(kinds.pop() if len(kinds) == 1 else "joint", "; ".join(fields),
                      ", ".join(swap.to for swap, _ in swaps), "setting",
                      say("relax.train", what=" and ".join(what),
                          cost=money(cost, session.problem.currency)), cost)


def stays_without_options(problem: Problem, changed_jobs: set[str]) -> bool:
    """Whether a variant that changes only `changed_jobs` (their own fields, no scenario-wide one)
    still leaves a job with no option, so it has no plan, and building its candidates (most of an
    infeasible answer's time: each variant estimates every job again) can be skipped. Sound since
    a job's options depend on its own fields and the scenario-wide ones (the horizon on deadlines
    and releases only: `candidates.build.horizons_h`), never on another job's."""
    return any(not problem.candidates[job] and job not in changed_jobs for job in problem.jobs)


def _solve_variant(session: Session, scenario: Scenario, objective: str = "cost",
                   bounds: Bounds | None = None, defer: bool = False) -> Outcome | None:
    """A changed copy of the scenario solved for `objective` on this session's budget; None for a
    bare problem, infeasible where a job is left no option (those left none in the scenario are
    built first, and where one still has none the rest is not built). `defer`: the copy leaves
    rule-breaking options unsized where no rule is lifted (Session.variant)."""
    if session.loaded is None:
        return None
    problem = session.problem
    bounds = bounds or Bounds()
    limits = _held_deadlines(scenario, bounds)
    first = _first_built(problem, limits, bounds.lifted, _build_work(session))
    other = session.variant(scenario, first, limits, bounds.lifted, defer)
    if other is None:
        return Outcome("infeasible")
    if any(not other.problem.candidates[j] for j in other.problem.jobs):
        return Outcome("infeasible")
    out = other.run(objective, bounds)
    session.spend(other)
    return out


def _first_built(problem: Problem, limits: dict[str, int], lifted: frozenset[str],
                 work: Mapping[str, int] | None = None) -> list[str]:
    """The jobs a variant builds first, most likely to prove it has no plan: those the scenario left
    no option, then those that cannot end within `limits` in a solve with `lifted` groups (the
    conflict of a one-hour deadline: a memory saver that keeps them as slow spares building the
    rest), each before the jobs it follows (late alone, it needs none of them built; else they
    bound when it may start). Within each, the job whose build weighed the fewest options in the
    scenario's own build first (`work`: the cheapest proof first; a proof is a proof whichever job
    gives it), else the scenario's order."""
    order = {job: i for i, job in enumerate(problem.jobs)}
    ends = soonest_ends(problem.candidates, problem.after, problem.release_min, lifted)
    empty = [j for j in problem.jobs if not problem.candidates[j]]
    late = [j for j in problem.jobs
            if problem.candidates[j] and j in limits and ends[j] > limits[j]]
    first: list[str] = []
    for group in (empty, late):
        for job in sorted(group, key=lambda j: ((work or {}).get(j, 0), order[j])):
            before = _with_before(problem, {job}) - {job} if group is late else set()
            first += [j for j in (job, *sorted(before, key=order.__getitem__)) if j not in first]
    return first


def _build_work(session: Session) -> dict[str, int]:
    """Per job, the options the scenario's build weighed for it (kept and dropped): what building
    it again in a copy is likely to cost."""
    builds = session.builder.job_builds if session.builder is not None else {}
    return {job: len(build.removed) + build.span for job, build in builds.items()}


def _with_before(problem: Problem, jobs: set[str]) -> set[str]:
    """`jobs` and every job they follow, directly or not."""
    found, todo = set(jobs), list(jobs)
    while todo:
        for before in problem.after.get(todo.pop(), ()):
            if before not in found:
                found.add(before)
                todo.append(before)
    return found


def _held_deadlines(scenario: Scenario, bounds: Bounds) -> dict[str, int]:
    """Per job, the minutes its deadline gives it in a solve of `scenario` under `bounds` (as a
    build sets `Problem.deadline_min`), where that solve holds it."""
    held = {}
    for job in scenario.jobs:
        limit_h = scenario.effective_deadline_h(job)
        if limit_h and deadline_group(job.id) not in bounds.lifted:
            held[job.id] = SCALE.minutes(limit_h)
    return held


def _without_deadlines(scenario: Scenario) -> Scenario:
    """The scenario with no deadline, its own or any job's."""
    return scenario.model_copy(update={"deadline_h": None, "jobs": [
        j.model_copy(update={"deadline_h": None}) for j in scenario.jobs]})
