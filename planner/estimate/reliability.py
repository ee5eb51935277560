"""Whole-run duration with failures: interruptions, Young/Daly checkpointing, restarts, preemption.

Interruption rate of the job (per hour): lambda = gpus / gpu_mtbf_h + nodes x
spot_preemptions_per_day / 24 (a spot rate is per node-instance and per day); the job's MTBF is M =
1 / lambda. Checkpoint interval (Young 1974; Daly 2006 first-order correction): tau = sqrt(2 delta
M) - delta, delta the time to write one checkpoint. Overhead on failure-free time (the first-order
model of Young 1974 and Daly 2006):
    f = delta / tau + (tau / 2 + restart) / M
i.e. checkpoint writes, half an interval of lost work per interruption, and the restart itself.
Failure-free hours = tokens / steady-state throughput x the whole-run overhead of pre-training runs
(band.py; 1 for fine-tuning, where no published whole-run figures exist);
wall hours = failure-free hours x (1 + f); expected interruptions = lambda x wall hours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from plan.planner.estimate.band import (
    quantile_factors,
    run_band,
    stack_maturity_note,
    whole_run_overhead,
)

if TYPE_CHECKING:
    from plan.planner.estimate.cluster import Cluster


class SteadyState(Protocol):
    """What a whole run is computed from: an estimate's steady-state speed on its cluster
    (`Estimate` is one)."""

    @property
    def cluster(self) -> Cluster: ...
    @property
    def method(self) -> str: ...
    @property
    def tokens_per_s(self) -> float: ...
    @property
    def tokens_per_s_range(self) -> tuple[float, float]: ...


@dataclass(frozen=True)
class RunEstimate:
    """A whole run of `tokens` tokens: wall-clock hours and GPU-hours including failure overhead.

    failure_overhead_fraction: extra wall time over the failure-free time (checkpoint writes, lost
    work, restarts); hours include the whole-run overhead (band.WHOLE_RUN_OVERHEAD) and hours_range
    is their p10-p90 (the throughput band and the whole-run band as independent factors:
    band.run_band); checkpoint_interval_h: Young/Daly optimum; expected_interruptions: failures and
    preemptions expected during the run.
    """

    tokens: float
    hours: float
    gpu_hours: float
    failure_free_hours: float
    failure_overhead_fraction: float
    checkpoint_interval_h: float
    expected_interruptions: float
    notes: tuple[str, ...] = ()
    hours_range: tuple[float, float] = (0.0, 0.0)




def interruption_rate_per_h(
    gpus: int, nodes: int, gpu_mtbf_h: float, spot_per_node_day: float
) -> float:
    return gpus / gpu_mtbf_h + nodes * spot_per_node_day / 24.0


def checkpoint_interval_h(checkpoint_write_h: float, job_mtbf_h: float) -> float:
    """Young/Daly optimum; 0 when checkpoints are free."""
    if checkpoint_write_h <= 0:
        return 0.0
    if checkpoint_write_h >= 0.5 * job_mtbf_h:
        return job_mtbf_h
    return math.sqrt(2 * checkpoint_write_h * job_mtbf_h) - checkpoint_write_h


def failure_overhead_fraction(
    checkpoint_write_h: float, restart_h: float, job_mtbf_h: float
) -> float:
    tau = checkpoint_interval_h(checkpoint_write_h, job_mtbf_h)
    writes = checkpoint_write_h / tau if tau > 0 else 0.0
    return writes + (tau / 2 + restart_h) / job_mtbf_h


def run_estimate(est: SteadyState, tokens: float) -> RunEstimate:
    """Hours and GPU-hours for `tokens` tokens at the estimate's throughput, failures included.

    Raises ValueError for a negative token count.
    """
    if tokens < 0 or not math.isfinite(tokens):
        raise ValueError(f"tokens: must be a non-negative number, got {tokens}")
    c = est.cluster
    steady_h = tokens / est.tokens_per_s / 3600.0
    overhead, band = whole_run_overhead(est.method, c.stack_maturity)
    ideal_h = steady_h * overhead
    rate = interruption_rate_per_h(c.gpus, c.nodes, c.gpu_mtbf_h, c.spot_preemptions_per_day)
    job_mtbf = 1.0 / rate
    delta, restart = c.checkpoint_write_min / 60.0, c.restart_min / 60.0
    tau = checkpoint_interval_h(delta, job_mtbf)
    f = failure_overhead_fraction(delta, restart, job_mtbf)
    hours = ideal_h * (1 + f)
    notes = [f"job MTBF {job_mtbf:.1f} h from {c.gpus} GPUs x 1/{c.gpu_mtbf_h:,.0f} h"]
    if c.spot_preemptions_per_day:
        notes.append(f"spot: {c.spot_preemptions_per_day:g} preemptions per node per day")
    if f > 0.5:
        notes.append("failure overhead above 50%: checkpoint faster or use fewer, more reliable "
                     "GPUs")
    if overhead != 1.0:
        notes.append(f"whole-run overhead x{overhead:g} over steady-state steps (warm-up, "
                     "evaluation, stalls; published pre-training runs vs step estimates)")
    maturity = stack_maturity_note(est.method, c.stack_maturity)
    if maturity is not None:
        notes.append(maturity)
    t_lo, t_hi = est.tokens_per_s_range
    lo, hi = run_band((t_lo / est.tokens_per_s, t_hi / est.tokens_per_s), overhead, band)
    hours_band = (hours * lo, hours * hi)
    return RunEstimate(
        tokens=tokens,
        hours=hours,
        gpu_hours=hours * c.gpus,
        failure_free_hours=ideal_h,
        failure_overhead_fraction=f,
        checkpoint_interval_h=tau,
        expected_interruptions=rate * hours,
        notes=tuple(notes),
        hours_range=hours_band,
    )


def hours_quantile(run: RunEstimate, q: float) -> float:
    """Wall hours the run finishes within with probability q (log-normal through its p10-p90)."""
    return hours_quantiles(run, (q,))[0]


def hours_quantiles(run: RunEstimate, qs: tuple[float, ...]) -> list[float]:
    """`hours_quantile` of the run at each of `qs`."""
    if run.hours <= 0 or run.hours_range[0] <= 0:
        return [run.hours] * len(qs)
    band = (run.hours_range[0] / run.hours, run.hours_range[1] / run.hours)
    return [run.hours * factor for factor in quantile_factors(band, qs)]
