"""A job's candidates on the places where some option abides by the rules a solve holds: enough to
bound when the job can end in that solve, for a fraction of its build where the rules leave it few
places.

A changed copy of a scenario being explained (reuse.py's `jobs_first`) builds first the jobs most
likely to prove it has no plan: each alone often takes most of its options' time, and at a one-hour
deadline the copy of each memory saver rebuilt one job whose data may not leave its premises
(medical_hybrid's clinical-sft: 1 place of 95 where its data may go; lab_six_jobs' confidential
LoRA run, the same) only to find that every place it may use ends too late.

Why the bound holds: a build (`CandidateBuilder._job_candidates`) walks each place (platform, GPU,
billing) on its own, its GPU counts in order until more stop paying, and prunes within a place
(`_prune`: a bucket is one place and one set of broken rules). So the candidates a build keeps on a
place are the same whether or not it built the other places. An option that breaks a rule the
solve holds is never chosen (`soonest_end.usable`), and a place none of whose options abides by the
held rules (`CandidateBuilder.violations`: the rules an option breaks before it is estimated; the
run's interruptions may add one, never take one away) has no candidate the solve may choose. The
candidates on the other places are thus every candidate the solve may choose, and their soonest
ends (`soonest_end.soonest_ends`) are the job's.
"""

from __future__ import annotations

from collections.abc import Collection

from plan.models.loading import LoadedScenario
from plan.models.problem import Candidate
from plan.models.scenario import Job
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.candidates.estimating import EstimateCache
from plan.planner.candidates.options import _Option
from plan.planner.candidates.windows import instance_shape

Place = tuple[str, str, str]


def _place(option: _Option) -> Place:
    """The place a build walks the option's GPU counts in (`_job_candidates`' groups)."""
    return option.place.platform, option.place.gpu, option.place.billing


class AbidingPlaces(CandidateBuilder):
    """Builds jobs on the places where some option breaks no rule but `lifted` ones; what it builds
    bounds a solve and is never kept (its estimates are shared with the real build's)."""

    def __init__(self, loaded: LoadedScenario, estimates: EstimateCache,
                 lifted: Collection[str]) -> None:
        super().__init__(loaded, estimates)
        self.lifted = frozenset(lifted)
        self._split: dict[str, tuple[list[_Option], int]] = {}  # job -> (kept options, all)

    def _abiding(self, job: Job) -> tuple[list[_Option], int]:
        """The job's options on places where one abides by the held rules, and how many options
        the job has in all."""
        if job.id not in self._split:
            options = super()._options(job)
            places: set[Place] = set()
            for o in options:  # (a place one option abides in needs no other checked)
                if _place(o) not in places and all(group in self.lifted
                                                   for group in self.violations(job, o)):
                    places.add(_place(o))
            self._split[job.id] = ([o for o in options if _place(o) in places], len(options))
        return self._split[job.id]

    def _options(self, job: Job) -> list[_Option]:
        return self._abiding(job)[0]

    def share(self, job: Job) -> tuple[int, int]:
        """(options on the abiding places, options in all) of `job`: what building it here costs
        against a whole build."""
        kept, every = self._abiding(job)
        return len(kept), every

    def candidates(self, job: Job) -> list[Candidate]:
        """The job's candidates on its abiding places, as a whole build would leave them there."""
        return self.job_build(job, 0, instance_shape(job))[0]
