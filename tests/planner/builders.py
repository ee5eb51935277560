"""Hand-built problems (no estimator) and an independent brute-force solver for them."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from plan.constraints.reproducibility import FIXED_GPU_TYPE
from plan.models.layout import Layout
from plan.models.problem import SCALE, Candidate, Problem, Resource
from plan.models.scenario import SolverSettings
from plan.planner.session import Session
from plan.planner.solve import solve_session

LAYOUT = Layout(
    tp=1,
    pp=1,
    dp=1,
    zero=0,
    recompute="none",
    micro_batch=1,
    global_batch=8,
    seq_len=2048,
    precision="bf16",
    sequence_parallel=False,
    lora_rank=None,
)


@dataclass
class Spec:
    """A candidate in readable units: cost in currency, duration in hours."""

    job: str
    platform: str
    gpu: str = "a800-80gb"
    gpus: int = 8
    billing: str = "hourly"
    hours: float = 10.0
    cost: float = 100.0
    resource: str | None = None
    violations: dict[str, str] = field(default_factory=dict)


def make_problem(
    specs: list[Spec],
    *,
    jobs: list[str] | None = None,
    budget: float | None = None,
    deadlines_h: dict[str, float] | None = None,
    after: dict[str, list[str]] | None = None,
    resources: list[Resource] | None = None,
    groups: dict[str, str] | None = None,
    objective: str = "cost",
    horizon_h: float = 1000.0,
) -> Problem:
    jobs = jobs or sorted({s.job for s in specs})
    candidates: dict[str, list[Candidate]] = {j: [] for j in jobs}
    index = 0
    for job in jobs:
        for s in (s for s in specs if s.job == job):
            candidates[job].append(
                Candidate(
                    index=index,
                    job=job,
                    platform=s.platform,
                    gpu=s.gpu,
                    gpus=s.gpus,
                    nodes=1,
                    billing=s.billing,
                    duration_min=SCALE.minutes(s.hours),
                    transfer_min=0,
                    cost=SCALE.money(s.cost),
                    resource=s.resource,
                    layout=LAYOUT,
                    memory_gib_per_gpu=50.0,
                    gpu_memory_gib=80.0,
                    tokens_per_s=1000.0,
                    mfu=0.4,
                    hours=s.hours,
                    gpu_hours=s.hours * s.gpus,
                    violations=dict(s.violations),
                )
            )
            index += 1
    all_groups = dict(groups or {})
    for s in specs:
        for g, reason in s.violations.items():
            all_groups.setdefault(g, reason)
    if budget is not None:
        all_groups["budget"] = "budget"
    deadline_min = {
        j: (SCALE.minutes(deadlines_h[j]) if deadlines_h and j in deadlines_h else None)
        for j in jobs
    }
    for j, limit in deadline_min.items():
        if limit is not None:
            all_groups[f"deadline/{j}"] = f"{j} deadline"
    after = after or {}
    if any(after.values()):
        all_groups["scheduling.after"] = "after"
    res = {r.key: r for r in (resources or [])}
    for r in res.values():
        if r.kind == "owned":
            all_groups.setdefault(f"capacity/{r.key}", "capacity")
            all_groups.setdefault(f"scheduling/{r.key}", "sharing")
    return Problem(
        scenario_name="tiny",
        currency="CNY",
        objective=objective,
        budget=SCALE.money(budget) if budget is not None else None,
        deadline_min=deadline_min,
        after={j: after.get(j, []) for j in jobs},
        jobs=jobs,
        candidates=candidates,
        resources=res,
        groups=all_groups,
        removed=[],
        horizon_min=SCALE.minutes(horizon_h),
    )


# The work limit decides every test solve; the wall clock is only a net far above it, so a busy CI
# machine cannot cut a solve (a 5-s net once did).
WALL_NET_S = 300


def session(problem: Problem, objective: str = "cost", top_k: int = 1, gap: float = 0.1) -> Session:
    settings = SolverSettings(time_limit_s=WALL_NET_S, workers=1, seed=0, top_k=top_k, gap=gap)
    return Session(problem, settings, objective)


def solve_problem(problem: Problem, objective: str = "cost", top_k: int = 1, gap: float = 0.1):
    return solve_session(session(problem, objective, top_k, gap))


# --- brute force: plain Python over every combination and every job order
# -----------------------------

def _schedules(problem: Problem, combo: dict[str, Candidate], order: tuple[str, ...],
               levels: dict[str, int]) -> Iterator[dict[str, tuple[int, int]]]:
    """Serial schedule generation: each job in `order` at its earliest feasible start, at the start
    of a later budget period (its cash then counts there) or, on a reservation, at any later event
    where it fits: another job's end, or a start that makes the held span a whole number of periods
    with a job already placed (holding a reservation for whole periods makes such starts cheaper:
    two short jobs in one period)."""

    def place(k: int, placed: dict[str, tuple[int, int]]) -> Iterator[dict[str, tuple[int, int]]]:
        if k == len(order):
            yield dict(placed)
            return
        job = order[k]
        c = combo[job]
        if any(dep not in placed for dep in problem.after[job]):
            return
        earliest = max([placed[d][1] for d in problem.after[job]]
                       + [problem.release_min.get(job, 0)])
        res = problem.resources.get(c.resource) if c.resource else None
        # a budget period's first minute: waiting for it moves the job's cash into that period
        boundaries = {p.from_min for p in problem.budget_periods if p.from_min > earliest}
        starts = [earliest, *sorted(boundaries)]
        if res is not None:
            earliest = max(earliest, res.available_from_min)
            cap = res.capacity if res.kind == "owned" else levels[res.key]
            if c.gpus > cap:
                return
            mates = [(s, e) for j, (s, e) in placed.items() if combo[j].resource == c.resource]
            times = {earliest} | {e for _s, e in mates} | boundaries
            if res.kind != "owned":  # a window whose fees fall just after a period's boundary
                times |= {b - k * res.period_min for b in boundaries
                          for k in range(res.max_periods + 1)}
            # align the held span to whole periods with a job already placed
            if res.kind != "owned":
                for s, e in mates:
                    for n in range(1, res.max_periods + 1):
                        times |= {s + n * res.period_min - c.duration_min, e - n * res.period_min}
            events = sorted(t for t in times if t >= earliest)
            starts = [
                t
                for t in events
                if sum(
                    combo[j].gpus
                    for j, (s, e) in placed.items()
                    if combo[j].resource == c.resource and s < t + c.duration_min and e > t
                )
                + c.gpus
                <= cap
            ]
            if res.kind == "owned":
                # owned GPUs cost by the hour used: earliest is never worse, but for the period
                # its cost counts in
                starts = [t for t in starts if t == starts[0] or t in boundaries]
        for t in starts:
            placed[job] = (t, t + c.duration_min)
            yield from place(k + 1, placed)
            del placed[job]

    yield from place(0, {})


def feasible_outcomes(problem: Problem):
    """Every (cost, makespan) reachable by a rule-abiding combination, reservation size and job
    order."""
    reserved = [r for r in problem.resources.values() if r.kind != "owned"]
    for combo_tuple in itertools.product(*(problem.candidates[j] for j in problem.jobs)):
        combo = dict(zip(problem.jobs, combo_tuple, strict=True))
        if any(c.violations for c in combo.values()):
            continue
        if problem.groups.get(FIXED_GPU_TYPE) and len({c.gpu for c in combo.values()}) > 1:
            continue  # (the paper's rule: one GPU type for every job)
        for level_tuple in itertools.product(*(r.levels for r in reserved)):
            levels = dict(zip([r.key for r in reserved], level_tuple, strict=True))
            for order in itertools.permutations(problem.jobs):
                for times in _schedules(problem, combo, order, levels):
                    yield from _outcome(problem, combo, levels, reserved, times)


def _outcome(
    problem: Problem,
    combo: dict[str, Candidate],
    levels: dict[str, int],
    reserved: list[Resource],
    times: dict[str, tuple[int, int]],
) -> Iterator[tuple[int, int]]:
    """(cost, makespan) of one schedule, if it keeps the deadlines, availability and budget."""
    for job, (_s, e) in times.items():
        limit = problem.deadline_min[job]
        res = problem.resources.get(combo[job].resource or "")
        if limit is not None and e > limit:
            return
        if res is not None and res.available_until_min is not None and e > res.available_until_min:
            return
    makespan = max(e for _, e in times.values())
    private = problem.private_resources()
    windows: list[list[tuple[int, int, list[tuple[int, int]]]]] = []  # per resource: options
    for r in reserved:
        users = [times[j] for j in problem.jobs if combo[j].resource == r.key]
        if users:
            windows.append(_window_options(problem, r, levels[r.key], users, r.key in private))
    for chosen in itertools.product(*windows):
        cost = sum(c.cost for c in combo.values()) + sum(w[0] for w in chosen)
        # cash by the rules of plan.planner.cash_flow: (minute paid, amount)
        paid = [(times[j][0], c.cost) for j, c in combo.items()]
        paid += [p for w in chosen for p in w[2]]
        if problem.budget is not None and cost > problem.budget:
            continue
        if any(sum(a for t, a in paid if period.from_min <= t < period.to_min) > period.amount
               for period in problem.budget_periods):
            continue
        yield cost, makespan


def _window_options(problem: Problem, r: Resource, level: int, users: list[tuple[int, int]],
                    private: bool) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """(cost, start, payments) of each way to hold a reservation over its users' runs: from the
    first run's start, or (with budget periods) earlier, so that a fee falls just before or at a
    period's boundary."""
    first, last = min(s for s, _ in users), max(e for _, e in users)
    fee = r.price_per_gpu_period * level + r.fixed_price_per_period
    starts = {first}
    for period in [] if private else problem.budget_periods:
        for k in range(r.max_periods + 1):
            for t in (period.from_min - k * r.period_min, period.from_min - k * r.period_min - 1):
                if max(0, first - r.period_min) < t <= first:
                    starts.add(t)
    options = []
    for start in sorted(starts):
        periods = max(r.min_periods, math.ceil((last - start) / r.period_min))
        paid = ([(first, fee * periods)] if private
                else [(start + k * r.period_min, fee) for k in range(periods)])
        options.append((fee * periods, start, paid))
    return options


def brute_force(problem: Problem, objective: str = "cost") -> tuple[int, int] | None:
    """(best objective value, its makespan) over all feasible combinations, or None if
    infeasible."""
    best: tuple[int, int] | None = None
    for cost, makespan in feasible_outcomes(problem):
        value = {"cost": cost, "time": makespan}.get(
            objective, cost + problem.value_of_time_per_min * makespan
        )
        if best is None or value < best[0]:
            best = (value, makespan)
    return best


def brute_front(problem: Problem) -> set[tuple[int, int]]:
    """The non-dominated (cost, makespan) pairs of every feasible outcome."""
    outcomes = set(feasible_outcomes(problem))
    return {o for o in outcomes
            if not any(other != o and other[0] <= o[0] and other[1] <= o[1] for other in outcomes)}


def solved_as_brute_force(problem: Problem, objective: str):
    """The planner's best plan, checked against the brute force: the same objective value, or
    infeasible both ways (then None). A CP-SAT solve that finds the value without closing the proof
    (status feasible) is accepted: the planner reports that honestly."""
    expected = brute_force(problem, objective)
    result = solve_problem(problem, objective=objective)
    if expected is None:
        assert result.status == "infeasible"
        return None
    assert result.status in ("optimal", "feasible")
    plan = result.plans[0]
    value = SCALE.money(plan.total_cost) if objective == "cost" else SCALE.minutes(plan.makespan_h)
    assert value == expected[0]
    return plan


def late_and_short(base_scenario: dict[str, Any]) -> dict[str, Any]:
    """A LoRA run no option finishes within the model's horizon (three hours for a one-hour
    deadline: the explanation asks the scenario without deadlines), beside a small full fine-tune
    that some cards cannot hold (so memory savers and a smaller headroom name it alone: variants
    that change one job or a scenario-wide figure)."""
    base_scenario.update(owned=[], sites=[], budget="1M", deadline="1h")
    base_scenario["jobs"] = [
        {"id": "late-lora", "model": "qwen2.5-7b", "method": "lora", "tokens": "20B",
         "seq_len": 2048},
        {"id": "small-ft", "model": "qwen2.5-1.5b", "method": "full_finetune", "tokens": "2M",
         "seq_len": 2048},
    ]
    return base_scenario


def slow_and_short(base_scenario: dict[str, Any]) -> dict[str, Any]:
    """`late_and_short` with a LoRA run short enough to have options within the model's horizon,
    none of which ends within its one-hour deadline (its fastest runs 81 minutes): a job late, not
    left without options."""
    late_and_short(base_scenario)
    base_scenario["jobs"][0]["tokens"] = "4B"
    return base_scenario
