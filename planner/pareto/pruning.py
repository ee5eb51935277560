"""The candidates a cost/time front's walk can leave out without changing a single point of it.

Between its cheapest and its fastest plan, every point of the front costs at most the fastest plan's
cost and finishes before the cheapest plan does; the walk's model only needs the candidates that can
take part in such a plan. Three exact rules, each an exchange argument (any plan that uses what is
left out is matched or beaten, on cost and on finishing time, by a plan without it):

- Ceilings: a candidate whose own least cost, plus the least the other jobs must cost, is above the
  cost ceiling, or which cannot end by the time ceiling, is in no point.
- Reservations: a monthly/yearly reservation (or purchase) shared by jobs is left out when, for
every
  way of using it, renting each of its jobs by the hour (or day) instead is at least as fast, starts
  as early and costs no more in sum than holding the reservation would (it costs at least what
  holding it for its largest user alone costs).
- Rentals: a rented option another rented option of the same job beats (no dearer, no slower,
starting
  no later) is left out.

"Beats" also asks for the same GPU type when the scenario fixes one GPU type for every job, and for
no more expected interruptions when the front has a risk axis. A rented option couples with other
jobs through nothing else: every other rule is per candidate, and the budget, deadlines and
precedences only ask jobs to cost less or end sooner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from plan.constraints.reproducibility import FIXED_GPU_TYPE
from plan.models.problem import Candidate, Problem, resources_in_use


def front_problem(
    problem: Problem, *, max_cost: int, max_makespan: int, with_risk: bool
) -> Problem:
    """`problem`'s rule-abiding candidates that a plan costing at most `max_cost` and finishing by
    `max_makespan` may need (module docstring)."""
    abiding = problem.rule_abiding()
    private = abiding.private_resources()
    same_gpu = bool(abiding.groups.get(FIXED_GPU_TYPE))

    def rented(c: Candidate) -> bool:
        """Held for this job alone: no other job shares what it runs on."""
        return c.resource is None or c.resource in private

    def own_cost(c: Candidate) -> int:
        return abiding.own_cost(c, private)

    def least_cost(c: Candidate) -> int:
        """The least a plan with this candidate pays for it: a shared reservation is held at
        least for it."""
        shared = (
            c.resource is not None
            and not rented(c)
            and abiding.resources[c.resource].kind != "owned"
        )
        return own_cost(c) + (abiding.standalone_cost(c) if shared else 0)

    least = {
        job: min((own_cost(c) for c in cs), default=0) for job, cs in abiding.candidates.items()
    }
    others = sum(least.values())
    candidates: dict[str, list[Candidate]] = {}
    for job, cs in abiding.candidates.items():
        floor = others - least[job]
        candidates[job] = [c for c in cs if least_cost(c) + floor <= max_cost
                           and abiding.earliest_start_min(c) + c.duration_min <= max_makespan]

    def stands_in(a: Candidate, b: Candidate) -> bool:
        """`a` can run the job wherever `b` does: ends no later, on every count a front reads but
        cost."""
        return (
            a.duration_min <= b.duration_min
            and abiding.earliest_start_min(a) <= abiding.earliest_start_min(b)
            and (not same_gpu or a.gpu == b.gpu)
            and (not with_risk or a.expected_interruptions <= b.expected_interruptions)
        )

    def beats(a: Candidate, b: Candidate) -> bool:
        """`a` stands in for `b` at no higher cost (ties included)."""
        return own_cost(a) <= own_cost(b) and stands_in(a, b)

    rentals = {job: [c for c in abiding.candidates[job] if rented(c)] for job in abiding.jobs}
    for key in _shared_reservations(abiding, candidates, private):
        if _rentals_cover(abiding, key, candidates, rentals, stands_in, own_cost):
            candidates = {
                job: [c for c in cs if c.resource != key] for job, cs in candidates.items()
            }
    for job, cs in candidates.items():
        mine = [c for c in cs if rented(c)]
        candidates[job] = [c for c in cs if not rented(c) or not any(
            o is not c and beats(o, c) and not beats(c, o) for o in mine)]
    return replace(
        abiding, candidates=candidates, resources=resources_in_use(candidates, abiding.resources)
    )


def _shared_reservations(
    problem: Problem, candidates: dict[str, list[Candidate]], private: set[str]
) -> list[str]:
    used = {c.resource for cs in candidates.values() for c in cs if c.resource}
    return sorted(
        key for key in used if key not in private and problem.resources[key].kind != "owned"
    )


def _rentals_cover(
    problem: Problem,
    key: str,
    candidates: dict[str, list[Candidate]],
    rentals: dict[str, list[Candidate]],
    stands_in: Callable[[Candidate, Candidate], bool],
    own_cost: Callable[[Candidate], int],
) -> bool:
    """Whether every plan that holds reservation `key` is matched by renting instead. Holding it
    costs at least `held_alone` of each job on it, the largest of those included; renting in its
    place costs the sum, over its jobs, of each one's cheapest rental that beats its candidate on
    it."""
    res = problem.resources[key]
    users: list[tuple[str, int, int]] = []  # (job, held alone, extra cost of renting instead)
    for job, cs in candidates.items():
        for c in cs:
            if c.resource != key:
                continue
            stand_ins = [own_cost(r) for r in rentals[job] if stands_in(r, c)]
            if not stand_ins:
                return False
            users.append((job, res.held_alone(c.gpus, c.duration_min)[1], min(stand_ins) - c.cost))
    for job, held, extra in users:
        # The plan's largest holder is this candidate: every other job's candidate on it holds no
        # more.
        rest: dict[str, int] = {}
        for other, other_held, other_extra in users:
            if other != job and other_held <= held:
                rest[other] = max(rest.get(other, 0), other_extra)  # (a job off it adds nothing)
        if extra + sum(rest.values()) > held:
            return False
    return True
