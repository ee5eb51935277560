"""A candidate's figures, typed: its estimate, its hours and its bill (`Candidate.figures`,
`JobPlan.figures`). `plan solve` writes them as each job's `detail` object, whose keys and order
`CandidateFigures.to_dict` keeps."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class SpotFigures:
    """What spot preemptions cost a run: preemptions expected, hours waiting for capacity after
    them, GPU-hours held per GPU while the other nodes wait (planner/candidates/spot_risk.py)."""

    preemptions: float
    capacity_wait_h: float
    held_h: float

    def to_dict(self) -> dict[str, float]:
        return {"spot_preemptions": self.preemptions, "spot_capacity_wait_h": self.capacity_wait_h,
                "spot_held_h": self.held_h}


@dataclass(frozen=True, slots=True)
class EstimateFigures:
    """The estimate behind a candidate: memory per GPU by term (GiB), one step's time by term (s),
    the step time, the memory band's factor and the causal-attention MFU."""

    memory_gib: dict[str, float] = field(default_factory=dict)
    time_s: dict[str, float] = field(default_factory=dict)
    step_time_s: float = 0.0
    memory_band_factor: float = 1.0
    mfu_causal: float = 0.0


@dataclass(frozen=True, slots=True)
class CandidateTime:
    """A candidate's hours: training expected, its p10-p90 band and at the scenario's
    confidence (what the schedule holds), the failure overhead in it, the checkpoint interval,
    queue/provisioning before
    the start, data in and the result out, and spot's waits where it runs on spot."""

    train_h: float = 0.0
    train_p10_h: float = 0.0
    train_p90_h: float = 0.0
    train_at_confidence_h: float = 0.0
    confidence: float = 0.5
    failure_overhead: float = 0.0
    checkpoint_interval_h: float = 0.0
    """Young/Daly's checkpoint interval (planner/estimate/reliability.py): exports' save
    interval."""
    startup_h: float = 0.0
    transfer_in_h: float = 0.0
    transfer_out_h: float = 0.0
    spot: SpotFigures | None = None

    @property
    def transfer_h(self) -> float:
        return self.transfer_in_h + self.transfer_out_h


@dataclass(frozen=True, slots=True)
class CandidateCost:
    """How a candidate is billed: an owned pool's rate; a reservation's price per GPU and period;
    a time-billed offer's price, the hours it bills (rounded to its step, at least its minimum,
    averaged over the time band) against the hours it runs; and the result's egress fee. Figures
    a billing does not have are None."""

    rate_per_gpu_hour: float | None = None
    price_per_gpu_period: float | None = None
    billed_hours: float | None = None
    billable_hours: float | None = None
    billing_step_h: float | None = None
    min_billed_hours: float | None = None
    price_per_gpu_hour: float | None = None
    result_gb: float = 0.0
    egress_cost: float = 0.0
    result_home: str | None = None

    def billing_dict(self) -> dict[str, float]:
        """The billing figures this candidate has, by name."""
        named = {"rate_per_gpu_hour": self.rate_per_gpu_hour,
                 "price_per_gpu_period": self.price_per_gpu_period,
                 "billed_hours": self.billed_hours, "billable_hours": self.billable_hours,
                 "billing_step_h": self.billing_step_h, "min_billed_hours": self.min_billed_hours,
                 "price_per_gpu_hour": self.price_per_gpu_hour}
        return {name: value for name, value in named.items() if value is not None}


@dataclass(frozen=True, slots=True)
class CandidateFigures:
    """A candidate's estimate, hours and bill, with the stack its estimate assumed."""

    framework: str
    estimate: EstimateFigures = field(default_factory=EstimateFigures)
    time: CandidateTime = field(default_factory=CandidateTime)
    cost: CandidateCost = field(default_factory=CandidateCost)

    def to_dict(self) -> dict[str, object]:
        """The figures as a job's `detail` in `plan solve`'s JSON (keys and order as written)."""
        est, time, cost = self.estimate, self.time, self.cost
        return {
            "memory_gib": dict(est.memory_gib), "time_s": dict(est.time_s),
            "step_time_s": est.step_time_s, "failure_overhead": time.failure_overhead,
            "checkpoint_interval_h": time.checkpoint_interval_h,
            "transfer_h": time.transfer_h, "train_h": time.train_h, "startup_h": time.startup_h,
            "train_p10_h": time.train_p10_h, "train_p90_h": time.train_p90_h,
            "train_at_confidence_h": time.train_at_confidence_h, "confidence": time.confidence,
            "framework": self.framework, "memory_band_factor": est.memory_band_factor,
            "mfu_causal": est.mfu_causal,
            **(time.spot.to_dict() if time.spot else {}), **cost.billing_dict(),
            "transfer_in_h": time.transfer_in_h, "transfer_out_h": time.transfer_out_h,
            "result_gb": cost.result_gb, "egress_cost": cost.egress_cost,
            "result_home": cost.result_home}
