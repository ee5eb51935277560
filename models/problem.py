"""The solver-facing problem, as plain domain data: candidates per job and the resources they share.

Built by `plan.planner.candidates` from a scenario and the estimators; read by `constraints/` to
post the CP-SAT model. Integer scaling lives in `Scale`, the one place it is written down.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field, replace
from typing import Any

from plan.models.figures import CandidateFigures
from plan.models.jurisdiction import within
from plan.models.layout import Layout


@dataclass(frozen=True)
class Scale:
    """Integer units of the CP-SAT model.

    Money: 1 unit = 0.01 of the scenario's currency (cents/fen), so a 3k budget keeps cent precision
    and a 150M budget (1.5e10 units) stays far below int64 limits. Time: 1 unit = 1 minute.
    """

    money_units_per_currency: int = 100
    minutes_per_hour: int = 60

    def money(self, amount: float) -> int:
        """Round up: a plan's cost is never understated."""
        return math.ceil(amount * self.money_units_per_currency - 1e-9)

    def to_money(self, units: float) -> float:
        return units / self.money_units_per_currency

    def minutes(self, hours: float) -> int:
        return math.ceil(hours * self.minutes_per_hour - 1e-9)

    def to_hours(self, minutes: float) -> float:
        return minutes / self.minutes_per_hour


SCALE = Scale()


@dataclass(frozen=True)
class PurchaseEconomics:
    """What bought hardware costs, in the scenario's currency, for the answer's ownership lines:
    the price, the running costs while held and in use, and the residual value by its stated rule.
    Payback is stated against the best plan that rents instead (planner/explain/ownership.py), not
    against renting the same card."""

    capex_per_gpu: float
    running_per_gpu_hour: float  # power at full draw, while a job runs
    staff_per_hour: float  # ops staff, whatever the GPU count
    life_years: float
    idle_per_gpu_hour: float = 0.0  # power while held and idle
    held_per_gpu_hour: float = 0.0  # space and maintenance while held
    unit_gpus: int = 1  # bought in whole units of this many GPUs
    residual_share: float = 0.0  # the share of the price still worth at the horizon's end
    residual_rule: str = ""  # how residual_share was found, for the answer


HOURS_PER_MONTH = 730.0  # 8760 / 12


@dataclass(frozen=True)
class Resource:
    """Something jobs share over time: an owned pool, a monthly/yearly reservation or a purchase.

    Capacity is fixed (owned) or chosen from `levels` (a reservation or purchase of that many GPUs).
    Reserved resources are held from their start for whole periods; `price_per_gpu_period` is per
    GPU per period and `fixed_price_per_period` covers costs that do not scale with GPUs (ops
    staff); `upfront_per_gpu` is paid once per GPU (a purchase).
    """

    key: str  # stable id used in variable names and explanations
    kind: str  # "owned" | "reservation" | "purchase"
    platform: str
    gpu: str
    label: str
    capacity: int | None = None  # owned: fixed GPU count
    levels: tuple[int, ...] = ()  # reservation/purchase: GPU counts that may be reserved
    # those asked by options that break no rule: the counts while every rule holds (a count only a
    # rule-breaking option asks is not one a plan that keeps the rules reserves); None: all of them
    abiding_levels: tuple[int, ...] | None = None
    period_min: int = 0
    price_per_gpu_period: int = 0  # money units
    fixed_price_per_period: int = 0  # money units
    # money units, once per GPU (a purchase's price, or its amortized share)
    upfront_per_gpu: int = 0
    min_periods: int = 1
    available_from_min: int = 0
    available_until_min: int | None = None
    max_periods: int = 0
    economics: PurchaseEconomics | None = None  # purchases only
    unit_gpus: int = 1  # levels are whole units of this many GPUs (a server, a rack)

    def bought(self, gpus: int) -> int:
        """The GPUs held for `gpus` in use: whole units."""
        return -(-gpus // self.unit_gpus) * self.unit_gpus

    def held_alone(self, gpus: int, duration_min: int) -> tuple[int, int]:
        """(periods, cost in money units) of this reservation or purchase sized and held for one
        job (in whole units)."""
        periods = max(self.min_periods, -(-duration_min // self.period_min))
        held = self.bought(gpus)
        return periods, ((self.price_per_gpu_period * held + self.fixed_price_per_period) * periods
                         + self.upfront_per_gpu * held)


@dataclass(frozen=True)
class Candidate:
    """One way to run one job: where, on what, how many, laid out how, billed how.

    `cost` (money units) is the job's own cost; for candidates on a reservation or purchase it is 0
    and the resource carries the cost. `violations` maps a rule group to the reason this candidate
    breaks it; the model forbids the candidate while that group's assumption literal holds.
    """

    index: int
    job: str
    platform: str  # platform id, or the owned pool's id
    gpu: str
    gpus: int
    nodes: int
    billing: str  # hourly | daily | monthly | yearly | spot | owned | purchase
    duration_min: int
    transfer_min: int
    cost: int
    resource: str | None
    layout: Layout
    memory_gib_per_gpu: float
    gpu_memory_gib: float
    tokens_per_s: float
    mfu: float
    hours: float
    gpu_hours: float
    violations: dict[str, str] = field(default_factory=dict)
    expected_interruptions: float = 0.0  # failures and spot preemptions during the run
    startup_min: int = 0  # queue/provisioning (or reservation lead time) before the job can start
    assumptions: tuple[str, ...] = ()
    figures: CandidateFigures | None = None  # its estimate, hours and bill, typed

    @property
    def name(self) -> str:
        return f"{self.job}:{self.gpus}x{self.gpu}@{self.platform}/{self.billing}"

    def but(self, **changes: Any) -> Candidate:
        """A copy with `changes`: `dataclasses.replace` without its per-field `__init__` call (a
        recurring job's twelve instances copy and renumber some 20,000 candidates: 0.5 s of a warm
        finance_year). The class has no `__post_init__` to skip; an unknown field name raises."""
        unknown = changes.keys() - self.__dict__.keys()
        if unknown:
            raise TypeError(f"Candidate has no field {sorted(unknown)[0]!r}")
        copy = object.__new__(Candidate)
        copy.__dict__.update(self.__dict__)
        copy.__dict__.update(changes)
        return copy

    @property
    def decision(self) -> tuple[str, str, str]:
        """The choices that make two plans genuinely different (for alternatives): where, on what
        GPU and billed how. The GPU count alone tunes the same choice: a plan that changes only
        counts is shown as a time-for-money trade when it moves the end enough
        (planner/trades.py)."""
        return (self.platform, self.gpu, self.billing)


@dataclass(frozen=True)
class Removed:
    """An option dropped before the model, and why (memory, dominance): answers 'why not X?'."""

    job: str
    platform: str
    gpu: str
    gpus: int
    billing: str
    rule: str
    reason: str
    # an option that breaks `rule` (a rule group), left unsized by a build that defers them
    # (planner/candidates/ruled_out.py): the least it could cost, in money units
    floor_cost: int | None = None


def resources_in_use(
    candidates: dict[str, list[Candidate]], resources: dict[str, Resource]
) -> dict[str, Resource]:
    """The resources some candidate uses, and every owned pool (it stands whether used or not)."""
    used = {c.resource for cs in candidates.values() for c in cs if c.resource}
    return {k: r for k, r in resources.items() if k in used or r.kind == "owned"}


@dataclass(frozen=True)
class BudgetPeriod:
    """Money a calendar period may spend (`budget: {per: ...}` or a list): [from_min, to_min) from
    the plan's start, `amount` in money units."""

    label: str
    from_min: int
    to_min: int
    amount: int


@dataclass
class Problem:
    scenario_name: str
    currency: str
    objective: str
    budget: int | None
    deadline_min: dict[str, int | None]
    after: dict[str, list[str]]
    jobs: list[str]
    candidates: dict[str, list[Candidate]]
    resources: dict[str, Resource]
    groups: dict[str, str]  # group name -> human-readable description
    removed: list[Removed]
    value_of_time_per_min: int = 0  # money units per minute, for balanced
    horizon_min: int = 0
    memory_headroom: float = 0.0  # fraction of each card every candidate's layout leaves free
    confidence: float = 0.5  # quantile of the estimator's band that memory and the schedule hold at
    memory_band_factor: float = 1.0  # the memory band's factor at that quantile
    # job -> what the scenario fixed ("gpus=8, tp=2")
    pinned: dict[str, str] = field(default_factory=dict)
    release_min: dict[str, int] = field(default_factory=dict)  # job -> earliest start (its data)
    budget_periods: tuple[BudgetPeriod, ...] = ()
    start_date: dt.date | None = None  # the plan's first day, where the scenario states it
    fiscal_year_start: tuple[int, int] = (1, 1)  # (month, day)
    series: dict[str, str] = field(default_factory=dict)  # a recurring job's instance -> its job
    scale: Scale = SCALE

    def all_candidates(self) -> list[Candidate]:
        return [c for job in self.jobs for c in self.candidates[job]]

    def rule_groups(self) -> frozenset[str]:
        """The groups some candidate breaks (policy, sensitivity, compatibility and the like)."""
        return frozenset(group for c in self.all_candidates() for group in c.violations)

    def rule_abiding(self) -> Problem:
        """This problem with only the candidates that break no rule, keeping their indices: while
        every rule holds, the others can never be chosen, and a model without them presolves and
        searches faster."""
        candidates = {
            job: [c for c in cs if not c.violations] for job, cs in self.candidates.items()
        }
        resources = {key: r if r.kind == "owned" or r.abiding_levels is None
                     else replace(r, levels=r.abiding_levels)
                     for key, r in resources_in_use(candidates, self.resources).items()}
        return replace(self, candidates=candidates, resources=resources)

    def narrowed(self, keep: dict[str, set[int]]) -> Problem:
        """`rule_abiding`, with the candidates of each job in `keep` cut to the indices named
        there: where bounds force each of those jobs onto one of them (`plan compare`'s rows), the
        same optima from a smaller model."""
        abiding = self.rule_abiding()
        candidates = {job: [c for c in cs if job not in keep or c.index in keep[job]]
                      for job, cs in abiding.candidates.items()}
        return replace(abiding, candidates=candidates,
                       resources=resources_in_use(candidates, abiding.resources))

    def private_resources(self) -> set[str]:
        """Reservations and purchases that only one job's candidates use: sharing them in time is
        moot, so the model prices each candidate on them as if held alone (the same optimum)."""
        users: dict[str, set[str]] = {}
        for c in self.all_candidates():
            if c.resource is not None:
                users.setdefault(c.resource, set()).add(c.job)
        return {
            key
            for key, jobs in users.items()
            if len(jobs) == 1 and self.resources[key].kind != "owned"
        }

    def own_cost(self, c: Candidate, private: set[str]) -> int:
        """What the model charges the job for the candidate apart from a shared resource's bill: on
        a reservation or purchase only its job uses (`private`), holding it alone; otherwise its own
        cost."""
        return self.standalone_cost(c) if c.resource in private else c.cost

    def earliest_start_min(self, c: Candidate) -> int:
        """The soonest the candidate can start, on its own: after its queue or reservation lead
        time, once its resource is available (an owned pool's window opening, a purchase's
        delivery) and not before its job's release."""
        res = self.resources.get(c.resource) if c.resource else None
        return max(c.startup_min, res.available_from_min if res else 0,
                   self.release_min.get(c.job, 0))

    def standalone_cost(self, c: Candidate) -> int:
        """What the candidate costs on its own (a reservation or purchase sized and held just for
        it)."""
        if c.resource is None or self.resources[c.resource].kind == "owned":
            return c.cost
        # c.cost is what the job adds on a held resource (a purchase: power above idle draw)
        return self.resources[c.resource].held_alone(c.gpus, c.duration_min)[1] + c.cost


@dataclass(frozen=True)
class Placement:
    """Where a job would run, before estimation: a cloud offer, an owned pool or a purchase.

    `platform` is the platform id, or the owned pool's id for owned hardware. Rule checks in
    `constraints/` read only this, the job and the scenario.
    """

    kind: str  # "cloud" | "owned" | "purchase"
    platform: str
    platform_kind: str  # rental_cloud | managed_training | hyperscaler | owned | hybrid
    gpu: str
    gpu_architecture: str
    gpu_has_bf16: bool
    gpu_has_fp8: bool
    gpus: int
    gpus_per_node: int
    billing: str
    jurisdiction: str
    features: frozenset[str]  # names of true Features flags (env_snapshot, dedicated_hardware, ...)
    site: str | None = None  # owned: the pool's site
    multi_node_allowed: bool = True
    max_gpus_per_job: int | None = None
    offer_assumed: bool = False
    regions: tuple[str, ...] = ()  # other jurisdictions the platform can run the job in
    # gpus_per_node is the GPU's typical server, not the offer's or pool's
    node_size_from_gpu: bool = False
    # jurisdictions where it can be had (a purchase's export rules); None = not stated
    available_in: tuple[str, ...] | None = None
    available_rule: str = ""  # the rule behind available_in, with its source or 'assumed'
    # a rental: the renter's jurisdiction when one of the platform's renter_rules flags it
    flagged_renter: str | None = None

    @property
    def unavailable(self) -> bool:
        """Whether the catalog says this cannot be had where it would run, or by this renter."""
        return self.flagged_renter is not None or (self.available_in is not None and not any(
            within(code, self.jurisdiction) for code in self.available_in))

    @property
    def nodes(self) -> int:
        return max(1, math.ceil(self.gpus / self.gpus_per_node))
