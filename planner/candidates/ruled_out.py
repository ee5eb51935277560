"""Options that break a rule, left unsized by the build of a plain solve and sized only where an
answer reads them.

Most of a cold build used to size options no plan may use (bench/build_searches.py: 60-97% of the
layout searches of 8 of the 11 shipped scenarios). While every rule holds they can never be chosen
(`Problem.rule_abiding`), and a solve's plans do not depend on them: the build that defers them
(`CandidateBuilder(defer=True)`) records each as a `Removed` per rule it breaks, with `floor_cost`,
the least it could cost. A plan's "would cost less but is ruled out" and policy lines name such
options only where they cost less than the plan's choice; here the job's places (platform, GPU,
billing) with an option whose floor is under that are sized as a whole build sizes them (every GPU
count in order until more stop paying), so the options those lines name are the whole build's.
An answer with no plan, `--why-not`, `plan compare` and fronts still build every option.

The floor and why it holds: cost_floor.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from plan.models.problem import Candidate, Problem, Removed, Resource
from plan.planner.candidates.cost_floor import Place


class PlaceSizer(Protocol):
    """What sizes one place of a job as a whole build does (`CandidateBuilder`)."""

    resources: dict[str, Resource]

    def place_candidates(self, job_id: str, place: Place) -> list[Candidate]: ...


@dataclass
class DeferredPlace:
    """What a job's deferred options on one place break, and the least any of them could cost."""

    floor: int
    order: int  # the place's rank among the job's places, as the build met them
    policy: bool = False  # some option breaks a policy group
    rule: bool = False  # some option breaks only rules that are not the user's policy
    only_policy: bool = False  # some option breaks policy groups alone
    policy_groups: set[str] = field(default_factory=set)  # the policy groups its options break


def _deferred_by_job(removed: Iterable[Removed]) -> dict[str, dict[Place, DeferredPlace]]:
    """Per job, its places holding an option its build deferred, in the order the build met
    them."""
    broken: dict[tuple[str, str, str, int, str], list[Removed]] = {}  # an option -> its records
    for r in removed:
        if r.floor_cost is not None:
            broken.setdefault((r.job, r.platform, r.gpu, r.gpus, r.billing), []).append(r)
    found: dict[str, dict[Place, DeferredPlace]] = {}
    for (job, platform, gpu, _, billing), records in broken.items():
        floor = min(r.floor_cost or 0 for r in records)
        places = found.setdefault(job, {})
        entry = places.setdefault((platform, gpu, billing), DeferredPlace(floor, len(places)))
        entry.floor = min(entry.floor, floor)
        policy = [r.rule.startswith("policy.") for r in records]
        entry.policy |= any(policy)
        entry.rule |= not any(policy)
        entry.only_policy |= all(policy)
        entry.policy_groups |= {r.rule for r, p in zip(records, policy, strict=True) if p}
    return found


PLACE_INDICES = 100_000  # candidate indices set aside per place (a place holds a few dozen)


class RuledOut:
    """A deferring build's rule-breaking options, sized place by place as answers ask for them
    (one per session: `Session.ruled_out`). Sized candidates are numbered after every candidate of
    the problem, in the order a whole build would have met them."""

    def __init__(self, problem: Problem, builder: PlaceSizer,
                 interruptions_capped: bool = False) -> None:
        """`interruptions_capped`: the scenario caps a job's expected interruptions, a policy
        group a sized option may break beside those its build recorded."""
        self.problem = problem
        self.interruptions_capped = interruptions_capped
        self._builder = builder
        self._deferred = _deferred_by_job(problem.removed)
        self._sized: dict[tuple[str, Place], list[Candidate]] = {}
        self._priced = replace(problem, resources=dict(problem.resources))
        self._next = 1 + max((c.index for c in problem.all_candidates()), default=-1)

    def rule_places(self, job: str) -> dict[Place, int]:
        """The job's places with a deferred option that breaks only rules other than the user's
        policy, each with its least floor."""
        return {place: d.floor for place, d in self._deferred.get(job, {}).items() if d.rule}

    def deferred(self, job: str) -> dict[Place, DeferredPlace]:
        """The job's places with a deferred option, and what those options break."""
        return self._deferred.get(job, {})

    def place(self, job: str, place: Place) -> list[Candidate]:
        """The job's candidates on `place`, as a whole build leaves them (sized once), numbered
        in the order the build met the job's places whatever the order they are sized in."""
        key = (job, place)
        if key not in self._sized:
            first = self._next + self._deferred[job][place].order * PLACE_INDICES
            self._sized[key] = [c.but(index=first + i)
                                for i, c in enumerate(self._builder.place_candidates(job, place))]
            resources = self._priced.resources
            resources.update({k: r for k, r in self._builder.resources.items()
                              if k not in resources})
        return self._sized[key]

    def view(self, extra: dict[str, list[Candidate]]) -> Problem:
        """The problem with `extra` candidates added to their jobs (their shared resources too):
        what the lines that read rule-breaking options compare."""
        candidates = {job: [*cs, *extra.get(job, ())]
                      for job, cs in self.problem.candidates.items()}
        return replace(self._priced, candidates=candidates, resources=dict(self._priced.resources))

    def cost(self, c: Candidate) -> int:
        """What a sized candidate costs on its own (`Problem.standalone_cost`)."""
        return self._priced.standalone_cost(c)
