"""The least a job's option could cost, before it is sized: what lets a build leave the options
that break a rule unsized (ruled_out.py) and size only those an answer could name.

Why the floor holds: a run's GPU-seconds are at least its linear layers' and output head's FLOPs
at the GPU's best GEMM rate (planner/estimate/compute.py `rates`: the peak for the job's precision
times the architecture's GEMM fraction and kernel efficiency; each further factor is under 1); its
billed hours are at least its training hours; a reservation is held at least its minimum periods,
and at least its run's hours at the scenario's confidence, which are never under the run's median
(`least_scheduled_share`).
tests/planner/test_ruled_out.py checks it against every sized option of the shipped scenarios.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable

from plan.models.gpu import GPU
from plan.models.model_card import ModelCard
from plan.models.problem import SCALE
from plan.models.scenario import Job, Scenario
from plan.planner.candidates.options import _Option
from plan.planner.estimate.band import THROUGHPUT_BAND, whole_run_overhead
from plan.planner.estimate.compute import FP8_GEMM_RELATIVE_EFFICIENCY
from plan.planner.estimate.factors import GEMM_FRACTION_OF_PEAK, training_kernel_efficiency
from plan.planner.estimate.flops import ADAPTER_METHODS, reference_forward_passes, shape_of

Place = tuple[str, str, str]  # (platform, GPU, billing): what a build walks the counts of


def gpu_hours_floor(job: Job, card: ModelCard, gpu: GPU) -> float:
    """The fewest GPU-hours any layout could train the job's tokens in: its linear layers' and
    output head's FLOPs (forward, backward, a DPO reference's forward) at the GPU's best GEMM
    rate for the job's precision, times a whole run's overhead over its steady state."""
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
    # a whole run's hours are its steady state's times the overhead of its kind (1 for fine-tunes;
    # a stack stated `new` only adds to it: NEW_STACK_FACTOR > 1), failures on top
    overhead = whole_run_overhead(job.method)[0]
    return 0.0 if best <= 0 else job.tokens * flops / best / 3600 * overhead


def cost_floor(job: Job, card: ModelCard, option: _Option, gpu: GPU,
               money: Callable[[float, str], float], scenario: Scenario,
               planning_horizon_h: float, calibrated: bool) -> int:
    """The least the option could cost on its own (money units): a purchase's price (its share
    within the horizon where amortized), a reservation's minimum periods, else its price at the
    job's fewest GPU-hours (`gpu_hours_floor`; none under a user's measured speed, which may beat
    the estimator's best rate)."""
    if option.purchase is not None:  # (its price, paid whatever the run; running costs beside)
        buy = option.purchase
        return _money_below(buy.upfront_per_gpu(scenario.budget_basis, planning_horizon_h)
                            * buy.bought(option.place.gpus))
    if calibrated:
        return 0
    gpu_h = gpu_hours_floor(job, card, gpu)  # (billed at its expected hours, or more)
    if option.pool is not None:
        return _money_below(option.pool.cost_per_gpu_hour * gpu_h)
    offer = option.offer
    if offer is None:
        return 0
    price = money(offer.price_per_gpu_period, offer.currency)
    if scenario.academic and offer.academic_discount:
        price *= 1 - offer.academic_discount
    if offer.billing in ("monthly", "yearly"):
        # (held for its run at the scenario's confidence: GPU-hours at least the floor's times the
        # least share of its expected hours those may be)
        held_gpu_h = gpu_h * least_scheduled_share(job, scenario)
        return _money_below(max(price * option.place.gpus * offer.min_periods,
                                price / offer.period_h * held_gpu_h))
    return _money_below(price / offer.period_h * gpu_h)


def least_scheduled_share(job: Job, scenario: Scenario) -> float:
    """The least share of a run's expected hours its hours at the scenario's confidence may be (at
    most 1): what a reservation is held for (build.py `hours_quantile`). A scenario's confidence
    is 0.5 or more, so those hours are at least the median of the run's log-normal band, the
    expected hours times the band's centre (band.run_band): the throughput band's as time (one
    over the centre of its class's, which widening for an uncalibrated mechanism keeps) times the
    whole-run overhead band's about its point."""
    time_centre = min(1 / math.sqrt(lo * hi) for lo, hi in THROUGHPUT_BAND.values())
    point, (lo, hi) = whole_run_overhead(job.method, scenario.stack_maturity_of(job))
    return min(1.0, time_centre * math.sqrt(lo * hi) / point)


ROUNDING_SLACK = 1e-3
"""A bill is rounded in money units per GPU and period (a reservation's price) or in whole: the
floor stays this share and one unit under the amount, so that rounding never lifts a bill's floor
above the bill."""


def _money_below(amount: float) -> int:
    return max(0, SCALE.money(amount * (1 - ROUNDING_SLACK)) - 1)


def options_by_place(options: Iterable[_Option]) -> dict[Place, list[_Option]]:
    """Options grouped by the place a build walks their counts in."""
    groups: dict[Place, list[_Option]] = defaultdict(list)
    for o in options:
        groups[(o.place.platform, o.place.gpu, o.place.billing)].append(o)
    return groups
