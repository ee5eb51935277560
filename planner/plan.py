"""Domain results of a solve: plans, job assignments, reservations, conflicts, relaxations.

Nothing here knows CP-SAT; `plan.planner.cpsat.extract` is the one place solver values become these.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from plan.models.figures import CandidateFigures
from plan.models.layout import (
    Layout,
    fused_pytorch_kernels,
    recompute_label,
)
from plan.models.timeline import instances_label
from plan.planner.cash_flow import CashFlow


@dataclass(frozen=True)
class JobPlan:
    """One job of a plan: where it runs, laid out how (`layout`), when, at what cost and speed.
    `figures` holds the candidate's estimate, hours and billing figures (`Candidate.figures`)."""

    job: str
    platform: str
    gpu: str
    gpus: int
    nodes: int
    layout: Layout
    billing: str
    start_h: float
    end_h: float
    cost: float  # the job's own cost; reservation and purchase costs are on the plan's reservations
    memory_gib_per_gpu: float
    gpu_memory_gib: float
    tokens_per_s: float
    mfu: float
    gpu_hours: float
    reservation: str | None = None
    expected_interruptions: float = 0.0  # failures plus spot preemptions expected during the run
    figures: CandidateFigures | None = None
    dates: tuple[str, str] | None = None  # (start, end) as dates, where the plan has a start date
    series: str | None = None  # the recurring job this job is an instance of

    @property
    def tp(self) -> int:
        return self.layout.tp

    @property
    def pp(self) -> int:
        return self.layout.pp

    @property
    def dp(self) -> int:
        return self.layout.dp

    @property
    def zero(self) -> int:
        return self.layout.zero

    @property
    def recompute(self) -> str:
        return self.layout.recompute

    @property
    def micro_batch(self) -> int:
        return self.layout.micro_batch

    @property
    def framework(self) -> str:
        """The training stack the estimate assumed (megatron, deepspeed, fsdp)."""
        return self.layout.framework

    @property
    def cp(self) -> int:
        return self.layout.cp

    @property
    def virtual_pipeline(self) -> int:
        return self.layout.virtual_pipeline

    @property
    def recompute_text(self) -> str:
        """The recomputation policy, with the layers per model chunk where Megatron's block
        method is used."""
        return recompute_label(self.recompute, self.layout.recompute_layers)

    @property
    def state_offload(self) -> bool:
        """Whether the layout keeps the sharded model states in host memory (ZeRO-3 CPU offload)."""
        return self.layout.state_offload

    @property
    def ep(self) -> int:
        """Expert-parallel ranks each MoE layer's routed experts are split over (1: whole, or a
        dense model)."""
        return self.layout.ep

    @property
    def shard_group(self) -> int:
        """The ranks of a hybrid-sharded layout's shard group (FSDP's HSDP,
        `Layout.shard_group`); 0 if not."""
        return self.layout.shard_group or 0

    @property
    def stack(self) -> str:
        """The training stack the estimate assumed (`Layout.framework`)."""
        return self.layout.framework

    @property
    def assumes_fused_kernels(self) -> bool:
        """Whether the plan assumed fused or compiled kernels on a PyTorch stack
        (`fused_pytorch_kernels`)."""
        return fused_pytorch_kernels(self.layout.kernels, self.layout.framework)

    @property
    def loss(self) -> str:
        """The cross-entropy the plan assumed (`Layout.loss`): plain, or chunked or fused on a
        PyTorch stack."""
        return self.layout.loss

    def to_dict(self) -> dict[str, Any]:
        """The job as `plan solve` writes it: the layout's leading numbers beside the job's, the
        whole layout as `detail["layout"]` (`Layout.to_dict`)."""
        lay = self.layout
        return {"job": self.job, "platform": self.platform, "gpu": self.gpu, "gpus": self.gpus,
                "nodes": self.nodes, "tp": lay.tp, "pp": lay.pp, "dp": lay.dp, "zero": lay.zero,
                "recompute": lay.recompute, "micro_batch": lay.micro_batch, "billing": self.billing,
                "start_h": self.start_h, "end_h": self.end_h, "cost": self.cost,
                "memory_gib_per_gpu": self.memory_gib_per_gpu,
                "gpu_memory_gib": self.gpu_memory_gib, "tokens_per_s": self.tokens_per_s,
                "mfu": self.mfu, "gpu_hours": self.gpu_hours, "reservation": self.reservation,
                "expected_interruptions": self.expected_interruptions,
                "detail": {**(self.figures.to_dict() if self.figures else {}),
                           "layout": lay.to_dict()},
                "framework": lay.framework, "cp": lay.cp, "virtual_pipeline": lay.virtual_pipeline,
                **({"start_date": self.dates[0], "end_date": self.dates[1]} if self.dates else {}),
                **({"series": self.series} if self.series else {})}


@dataclass(frozen=True)
class ReservationPlan:
    key: str
    label: str
    kind: str  # reservation | purchase
    gpus: int
    periods: int
    period_h: float
    start_h: float
    # everything the plan pays for it: price (purchases: cash or amortized share) and running
    cost: float
    upfront_cost: float = 0.0  # purchases: the part of `cost` paid once for the hardware
    # purchases: months until buying beats the best plan that rents instead, at this plan's use
    payback_months: float | None = None
    # purchases: utilisation, cost per delivered GPU-hour, residual value, the rent-instead cost
    ownership: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        found = asdict(self)
        if found["ownership"] is None:
            del found["ownership"]
        return found


@dataclass(frozen=True)
class Trade:
    """An alternative against the best plan: its extra cost and time, and the decisions it
    changes."""

    delta_cost: float  # currency; positive = dearer than plan 1
    delta_makespan_h: float  # positive = finishes later than plan 1
    # "domain-cpt: 16x a800-80gb on hospital-a800 (owned) -> 32x h800 on ..."
    changes: tuple[str, ...]
    # decision (another platform, GPU type or billing) | class (every job of a class moved) |
    # count (the same choices, other GPU counts) | p90 (the cheapest plan holding at p90 time)
    kind: str = "decision"

    def summary(self, currency: str) -> str:
        """'+116 CNY, -14.4 h'; a change under one unit in cents, so that it never reads +0."""
        cost = self.delta_cost
        shown = f"{cost:+,.2f}" if 0 < abs(cost) < 1 else f"{cost:+,.0f}"
        return f"{shown} {currency}, {self.delta_makespan_h:+,.1f} h"


@dataclass
class Plan:
    rank: int
    total_cost: float
    makespan_h: float
    jobs: list[JobPlan]
    reservations: list[ReservationPlan] = field(default_factory=list)
    explanation: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    optimal: bool = True
    trade: Trade | None = None  # alternatives: what this plan trades against plan 1
    within_gap: bool = True  # False: the nearest genuinely different plan, shown beyond the gap
    cash_flow: CashFlow | None = None  # when its money leaves, by period (planner/cash_flow.py)

    def summary(self) -> str:
        parts = [f"{name}: {j.gpus}x {j.gpu} on {j.platform} ({j.billing})"
                 for name, j in self.places()]
        return "; ".join(parts)

    def places(self) -> list[tuple[str, JobPlan]]:
        """Each job beside its name, in order; the instances of one recurring job placed alike
        (GPUs, card, platform, billing) named once where the first stands ('sft-01..12'), with the
        first as their example: twelve equal monthly runs read as one line."""
        alike: dict[tuple[object, ...], list[JobPlan]] = {}
        for j in self.jobs:
            key = (j.series, j.gpus, j.gpu, j.platform, j.billing) if j.series else (j.job,)
            alike.setdefault(key, []).append(j)
        return [(instances_label(group[0].series, [j.job for j in group]) if group[0].series
                 else group[0].job, group[0]) for group in alike.values()]

    @property
    def expected_interruptions(self) -> float:
        return sum(j.expected_interruptions for j in self.jobs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "total_cost": round(self.total_cost, 2),
            "makespan_h": round(self.makespan_h, 2),
            "optimal": self.optimal,
            "within_gap": self.within_gap,
            "trade": asdict(self.trade) if self.trade else None,
            "jobs": [j.to_dict() for j in self.jobs],
            "reservations": [r.to_dict() for r in self.reservations],
            "explanation": self.explanation,
            "assumptions": self.assumptions,
            "cash_flow": self.cash_flow.to_dict() if self.cash_flow else None,
        }


@dataclass(frozen=True)
class Conflict:
    constraint: str
    detail: str


@dataclass(frozen=True)
class Relaxation:
    """One change to the scenario that makes it feasible: set `field` to `to` (in `unit`).

    `to` is a number for budget (currency), deadline (hours under two days, else days) and headroom
    (fraction of the card); a name for policy lists (the platform or GPU to allow) and a value for
    rules (the sensitivity level, `false` for a reproducibility rule). `cost` is the cheapest plan
    then.
    """

    # budget | deadline | headroom | optimizer | loss | kernels | policy | sensitivity | rule |
    # joint (several at once)
    kind: str
    # the scenario field to change, e.g. "budget", "policy.allow_gpus", "jobs[sft].data.sensitivity"
    field: str
    to: float | str
    # CNY (the currency) | h | d | fraction of card | platform | gpu | GPUs | level | setting
    unit: str
    detail: str
    cost: float | None = None


@dataclass
class SolveResult:
    scenario: str
    status: str  # optimal | feasible | infeasible | unknown | cut (the wall-clock safety net fired)
    objective: str
    currency: str
    solve_time_s: float
    plans: list[Plan] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    relaxations: list[Relaxation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gap: float | None = None  # (best plan's objective - bound) / objective; 0 when optimal
    bound: float | None = None  # no plan can do better than this on the objective
    bound_unit: str = ""  # the currency (cost, balanced, lexicographic) or "h" (time)

    def proof(self) -> str:
        """'optimal, gap 0.0%, bound 600 CNY' (status alone when there is no plan)."""
        if self.gap is None or self.bound is None:
            return self.status
        return f"{self.status}, gap {self.gap:.1%}, bound {self.bound:,.2f} {self.bound_unit}"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "scenario": self.scenario, "status": self.status, "gap": self.gap, "bound": self.bound,
            "bound_unit": self.bound_unit, "objective": self.objective,
            "currency": self.currency, "solve_time_s": round(self.solve_time_s, 3),
            "plans": [p.to_dict() for p in self.plans], "notes": self.notes,
        }
        if self.status in ("infeasible", "unknown") or self.conflicts:
            data["conflicts"] = [asdict(c) for c in self.conflicts]
            data["relaxations"] = [asdict(r) for r in self.relaxations]
        return data
