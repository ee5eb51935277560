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

Why the floor holds: a run's GPU-seconds are at least its linear layers' FLOPs at the GPU's best
GEMM rate (planner/estimate/compute.py `rates`: the peak for the job's precision times the
architecture's GEMM fraction and kernel efficiency, each further factor under 1); its billed
hours are at least its training hours, and a reservation is held at least its minimum periods.
tests/planner/test_ruled_out.py checks it against every sized option of the shipped scenarios.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from plan.models.gpu import GPU
from plan.models.model_card import ModelCard
from plan.models.problem import SCALE, Candidate, Problem, Removed
from plan.models.scenario import Job
from plan.planner.candidates.options import _Option
from plan.planner.estimate.compute import FP8_GEMM_RELATIVE_EFFICIENCY
from plan.planner.estimate.factors import GEMM_FRACTION_OF_PEAK, training_kernel_efficiency
from plan.planner.estimate.flops import ADAPTER_METHODS, reference_forward_passes, shape_of

if TYPE_CHECKING:
    from plan.planner.candidates.build import CandidateBuilder

Place = tuple[str, str, str]  # (platform, GPU, billing): what a build walks the counts of


def gpu_hours_floor(job: Job, card: ModelCard, gpu: GPU) -> float:
    """The fewest GPU-hours any layout could train the job's tokens in: its linear layers' and
    output head's FLOPs (forward, backward, a DPO reference's forward) at the GPU's best GEMM
    rate for the job's precision."""
    shape = shape_of(card)
    backward = 1.0 if job.method in ADAPTER_METHODS else 2.0
    passes = 1.0 + backward + reference_forward_passes(job.method)
    flops = 2.0 * (shape.layer_linear_active * shape.layers + shape.vocab * shape.hidden) * passes
    peaks = gpu.peak_tflops
    peak16 = peaks.for_precision("bf16") or peaks.for_precision("fp16") or 0.0
    if job.precision == "fp8":
        peak = (peaks.for_precision("fp8") or peak16) * FP8_GEMM_RELATIVE_EFFICIENCY
    else:
        peak = peaks.for_precision(job.precision) or peak16
    best = peak * 1e12 * GEMM_FRACTION_OF_PEAK.get(gpu.architecture, 0.6) * (
        training_kernel_efficiency(gpu.architecture))
    return 0.0 if best <= 0 else job.tokens * flops / best / 3600


def cost_floor(builder: CandidateBuilder, job: Job, card: ModelCard, option: _Option,
               gpu: GPU) -> int:
    """The least the option could cost on its own (money units): its price at the job's fewest
    GPU-hours (`gpu_hours_floor`), or a reservation's minimum periods. 0 where nothing bounds it
    (a purchase; a user's measured speed, which may beat the estimator's best rate)."""
    if builder.calibration is not None or option.purchase is not None:
        return 0
    gpu_h = gpu_hours_floor(job, card, gpu)
    if option.pool is not None:
        return SCALE.money(option.pool.cost_per_gpu_hour * gpu_h)
    offer = option.offer
    if offer is None:
        return 0
    price = builder._money(offer.price_per_gpu_period, offer.currency)
    if builder.scenario.academic and offer.academic_discount:
        price *= 1 - offer.academic_discount
    if offer.billing in ("monthly", "yearly"):
        return SCALE.money(price * option.place.gpus * offer.min_periods)
    return SCALE.money(price / offer.period_h * gpu_h)


def deferred_places(problem: Problem, job: str) -> dict[Place, int]:
    """The job's places holding an option its build deferred, each with its least floor, in the
    order the build met them."""
    floors: dict[Place, int] = {}
    for r in problem.removed:
        if r.job == job and r.floor_cost is not None:
            place = (r.platform, r.gpu, r.billing)
            floors[place] = min(floors.get(place, r.floor_cost), r.floor_cost)
    return floors


def deferred(removed: Iterable[Removed]) -> bool:
    """Whether any of these dropped options was deferred unsized."""
    return any(r.floor_cost is not None for r in removed)


class RuledOut:
    """A deferring build's rule-breaking options, sized place by place as answers ask for them
    (one per session: `Session.ruled_out`). Sized candidates are numbered after every candidate of
    the problem, in the order a whole build would have met them."""

    def __init__(self, problem: Problem, builder: CandidateBuilder) -> None:
        self.problem = problem
        self._builder = builder
        self._sized: dict[tuple[str, Place], list[Candidate]] = {}
        self._resources = dict(problem.resources)
        self._next = 1 + max((c.index for c in problem.all_candidates()), default=-1)

    def places(self, job: str) -> dict[Place, int]:
        """The job's places with a deferred option, each with its least floor."""
        return deferred_places(self.problem, job)

    def below(self, job: str, cost: int, policy: bool) -> list[Candidate]:
        """The job's rule-breaking candidates on every place whose floor is under `cost` (money
        units) and where an option breaks a policy group (`policy`) or another rule: every such
        candidate that costs less than `cost` among them."""
        found: list[Candidate] = []
        for place, floor in self.places(job).items():
            if floor < cost and self._breaks(job, place, policy):
                found += self.place(job, place)
        return found

    def _breaks(self, job: str, place: Place, policy: bool) -> bool:
        return any(r.job == job and (r.platform, r.gpu, r.billing) == place
                   and r.floor_cost is not None and r.rule.startswith("policy.") == policy
                   for r in self.problem.removed)

    def place(self, job: str, place: Place) -> list[Candidate]:
        """The job's candidates on `place`, as a whole build leaves them (sized once)."""
        key = (job, place)
        if key not in self._sized:
            numbered = []
            for c in self._builder.place_candidates(job, place):
                numbered.append(c.but(index=self._next))
                self._next += 1
            self._sized[key] = numbered
            self._resources.update({k: r for k, r in self._builder.resources.items()
                                    if k not in self._resources})
        return self._sized[key]

    def view(self, extra: dict[str, list[Candidate]]) -> Problem:
        """The problem with `extra` candidates added to their jobs (their shared resources too):
        what the lines that read rule-breaking options compare."""
        candidates = {job: [*cs, *extra.get(job, ())]
                      for job, cs in self.problem.candidates.items()}
        return replace(self.problem, candidates=candidates, resources=dict(self._resources))

    def cost(self, c: Candidate) -> int:
        """What a sized candidate costs on its own (`Problem.standalone_cost`)."""
        return replace(self.problem, resources=self._resources).standalone_cost(c)


def places_by_job(options: Iterable[_Option]) -> dict[Place, list[_Option]]:
    """Options grouped by the place a build walks their counts in."""
    groups: dict[Place, list[_Option]] = defaultdict(list)
    for o in options:
        groups[(o.place.platform, o.place.gpu, o.place.billing)].append(o)
    return groups
