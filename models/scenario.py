"""The user's scenario file: jobs, money, time, data rules and what the team owns.

Quantities accept the short forms people write (`400k`, `40万`, `30d`, `2B`, `50GB`); after
validation they are plain floats in the unit their name says (`budget` in `currency`,
`deadline_h` in hours, `tokens` as a count, `size_gb` in 10^9 bytes).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    ModelWrapValidatorHandler,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from plan.models import units_schema
from plan.models.base import Strict
from plan.models.bounded import CatalogName, Id, Text
from plan.models.calendar import parse_fiscal_start
from plan.models.errors import did_you_mean
from plan.models.features import FeatureName
from plan.models.fields import (
    DEFAULT_MEMORY_HEADROOM,
    MAX_MEMORY_HEADROOM,
    BudgetBasis,
    DurationH,
    Jurisdiction,
    LinkKind,
    Money,
    ObjectiveChoice,
    OpsSkill,
    PositiveDurationH,
    PositiveMoney,
    StackMaturity,
)
from plan.models.job import DURATION_OR_DATE, Job
from plan.models.limits import (
    MAX_GAP,
    MAX_GBPS,
    MAX_GPUS,
    MAX_GPUS_PER_NODE,
    MAX_INTERRUPTIONS,
    MAX_JOBS,
    MAX_LEAD_TIME_DAYS,
    MAX_LIFE_YEARS,
    MAX_PRICE_PER_GPU,
    MAX_PRICE_PER_GPU_HOUR,
    MAX_SEED,
    MAX_SOLVER_LIMIT,
    MAX_VALUE_OF_TIME_PER_DAY,
    MAX_WORKERS,
)
from plan.models.money import active_conversion, converting
from plan.models.platform import FabricKind
from plan.models.said import say_as
from plan.models.timeline import (
    BudgetByPeriod,
    expand_repeats,
    move_budget_forms,
    written_dates_to_hours,
)


class Link(Strict):
    to: CatalogName = Field(description="a platform id (or another site id)")
    kind: LinkKind
    gbps: float = Field(gt=0, le=MAX_GBPS, description="gigabits per second")


class Site(Strict):
    id: Id
    jurisdiction: Jurisdiction = "cn"
    links: list[Link] = Field(default_factory=list)


class OwnedFabric(Strict):
    kind: FabricKind
    gbps_per_gpu: float = Field(ge=0, le=MAX_GBPS)


class OwnedPool(Strict):
    """Hardware the team already has; `cost_per_gpu_hour` is its running cost (power, staff), in
    `currency`."""

    id: Id
    site: Id
    gpu: CatalogName
    count: int = Field(gt=0, le=MAX_GPUS)
    gpus_per_node: int = Field(gt=0, le=MAX_GPUS_PER_NODE)
    fabric: OwnedFabric = Field(default_factory=lambda: OwnedFabric(kind="none", gbps_per_gpu=0))
    cost_per_gpu_hour: Annotated[Money, Field(le=MAX_PRICE_PER_GPU_HOUR)] = 0.0
    available_from_h: DurationH = Field(default=0.0, validation_alias=AliasChoices("available_from",
                                                                                   "available_from_h"))
    available_until_h: PositiveDurationH | None = Field(
        default=None, validation_alias=AliasChoices("available_until", "available_until_h")
    )
    features: list[FeatureName] = Field(
        default_factory=list, description="capabilities beyond the GPU's defaults (CUDA cards: "
                                          "qlora_kernels), e.g. env_snapshot, checkpoint_resume")
    lacks: list[FeatureName] = Field(default_factory=list,
                                     description="defaults this pool does not have, e.g. "
                                                 "[qlora_kernels]")
    host_memory_gib_per_gpu: float | None = Field(
        default=None, gt=0, le=4096, allow_inf_nan=False,
        description="server RAM free for offloading, per GPU (a 2-GPU box with 128 GiB to spare: "
                    "64); unset, 128 assumed (a DGX A100's 1 TB over 8 GPUs)")

    @model_validator(mode="after")
    def _window(self) -> OwnedPool:
        if self.count % self.gpus_per_node and self.count > self.gpus_per_node:
            raise ValueError(f"count ({self.count}) is not a whole number of nodes of "
                             f"{self.gpus_per_node}")
        if self.available_until_h is not None and self.available_until_h <= self.available_from_h:
            raise ValueError("available_until must be after available_from")
        both = sorted(set(self.features) & set(self.lacks))
        if both:
            raise ValueError(f"{', '.join(both)} is both in features and in lacks")
        return self

    def capabilities(self, defaults: frozenset[str]) -> frozenset[str]:
        """The GPU's defaults (`plan.models.features.owned_defaults`), plus `features`, less
        `lacks`."""
        return (defaults | {f.value for f in self.features}) - {f.value for f in self.lacks}


class Reproducibility(Strict):
    fixed_gpu_type: bool = False
    exclusive_hardware: bool = False
    env_snapshot: bool = False


class Policy(Strict):
    reproducibility: Reproducibility = Field(default_factory=Reproducibility)
    allow_platforms: list[CatalogName] = Field(default_factory=list, description="empty = all")
    forbid_platforms: list[CatalogName] = Field(default_factory=list)
    allow_gpus: list[CatalogName] = Field(default_factory=list, description="empty = all")
    forbid_gpus: list[CatalogName] = Field(default_factory=list)
    allow_spot: bool = Field(default=False, description="spot is a risk the scenario opts into")
    max_expected_interruptions: float | None = Field(
        default=None, ge=0, le=MAX_INTERRUPTIONS,
        description="per job: failures plus spot preemptions expected during the run")
    consider_purchase: bool = Field(default=False, description="weigh the catalog's purchase "
                                                               "options")
    trust_vendor_claims: bool = False
    max_gpus_per_job: int | None = Field(default=None, gt=0, le=MAX_GPUS)
    memory_headroom: float = Field(default=DEFAULT_MEMORY_HEADROOM, ge=0, le=MAX_MEMORY_HEADROOM,
                                   description="fraction of each card's memory kept free; a layout "
                                               "fits only if its peak is at most (1 - headroom) x "
                                               "the card")
    # --- issue 47, ownership (helper "ownership"): kept together at the class's end
    only_available: bool = Field(
        default=False, description="a purchase not available in the site's jurisdiction (its "
                                   "catalog entry's available_in), or a rental its platform's "
                                   "renter_rules flag for the renter, is ruled out, not just "
                                   "flagged")


class PurchaseQuote(Strict):
    """Hardware the team could buy, from its own quote; fields left out come from the catalog's
    purchase entry for the same GPU. `price_per_gpu` includes the GPU's share of the server."""

    gpu: CatalogName
    price_per_gpu: Annotated[PositiveMoney, Field(le=MAX_PRICE_PER_GPU)] | None = Field(
        default=None, description="in the scenario's currency")
    life_years: float | None = Field(default=None, gt=0, le=MAX_LIFE_YEARS)
    lead_time_days: float | None = Field(default=None, ge=0, le=MAX_LEAD_TIME_DAYS)
    max_gpus: int | None = Field(default=None, gt=0, le=MAX_GPUS, description="the most the team "
                                                                              "would buy")
    source: Text | None = Field(default=None, description="where the quote comes from")
    # --- issue 47, ownership (helper "ownership"): kept together at the class's end; each field
    # left out comes from the catalog's purchase entry. Money in the scenario's currency.
    price_per_unit: PositiveMoney | None = Field(
        default=None, description="the quoted price of one unit (server or rack); per GPU = this "
                                  "/ unit_gpus")
    unit_gpus: int | None = Field(default=None, gt=0, le=MAX_GPUS,
                                  description="GPUs per unit sold (8: a server, 72: an NVL72)")
    power_kw_per_gpu: float | None = Field(default=None, ge=0, le=1000,
                                           description="IT draw per GPU with its server share")
    pue: float | None = Field(default=None, ge=1, le=3)
    electricity_per_kwh: float | None = Field(default=None, ge=0, le=MAX_PRICE_PER_GPU)
    idle_power_fraction: float | None = Field(default=None, ge=0, le=1)
    ops_staff_per_year: Money | None = None
    space_per_unit_month: Money | None = None
    maintenance_share_per_year: float | None = Field(default=None, ge=0, le=1)
    residual_share: float | None = Field(
        default=None, ge=0, le=1, description="the share of the price the hardware is worth at the "
                                              "horizon's end (a buy-back offer); default: "
                                              "straight-line to zero over life_years")

    @model_validator(mode="after")
    def _one_price(self) -> PurchaseQuote:
        if self.price_per_gpu is not None and self.price_per_unit is not None:
            raise ValueError("give price_per_gpu or price_per_unit, not both")
        if self.price_per_unit is not None and self.unit_gpus is None:
            raise ValueError("price_per_unit needs unit_gpus (the GPUs in one unit)")
        return self


class SolverSettings(Strict):
    """How CP-SAT runs. It stops on `work_limit`, CP-SAT's deterministic time (a count of work,
    about a second of one unloaded core per unit), so the same scenario gives the same plan on a
    busy machine; `time_limit_s` (wall clock) is only a safety net, and a result it cut says so."""

    work_limit: float = Field(default=30.0, gt=0, le=MAX_SOLVER_LIMIT,
                              description="deterministic time units, all solves together")
    time_limit_s: float = Field(default=600.0, gt=0, le=MAX_SOLVER_LIMIT,
                                description="wall-clock safety net, seconds: an answer it cuts "
                                "says status cut (exit 3)")
    workers: int = Field(default=1, ge=1, le=MAX_WORKERS,
                         description="1: one search thread; more: CP-SAT's interleaved (still "
                                     "deterministic) portfolio")
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    top_k: int = Field(default=3, ge=1, le=20)
    gap: float = Field(default=0.1, ge=0, le=MAX_GAP, description="alternatives within this "
                                                                  "fraction of the best")


BUDGET_SCHEMA = {
    "anyOf": [
        units_schema.money(positive=True),
        {"type": "object", "additionalProperties": False, "required": ["per", "amount"],
         "properties": {"per": {"enum": ["month", "quarter", "year"]},
                        "amount": units_schema.money(positive=True)},
         "description": "the same amount every month, quarter or fiscal year"},
        {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["period", "amount"],
            "properties": {"period": {"type": ["string", "integer"],
                                      "description": "2027 (a fiscal year), 2027-Q1 or 2027-03"},
                           "amount": units_schema.money(positive=True)}}},
        {"type": "null"},
    ],
    "description": "cash within the planning horizon, or per period (needs start)",
}


class Scenario(Strict):
    name: Text = Field(min_length=1)
    description: Text | None = None
    currency: str = Field(default="CNY", pattern=r"^[A-Z]{3}$", description="ISO 4217 code, e.g. "
                                                                            "CNY or USD")
    lang: Literal["en", "zh"] | None = Field(
        default=None, description="language of the answers people read (tables, markdown, the "
                                  "HTML report): en or zh; --lang wins, else the locale (zh*)")
    calibration: str | None = Field(default=None, description="calibration overlay from `plan "
                                                              "calibrate` (path "
                                    "relative to this file): your measured speed per "
                                    "GPU/framework/method")
    budget: Annotated[PositiveMoney | None, WithJsonSchema(BUDGET_SCHEMA)] = None
    budget_by_period: BudgetByPeriod | None = Field(
        default=None, description="written as budget: {per: month|quarter|year, amount: ...} or "
                                  "budget: [{period: 2027, amount: ...}]; needs start")
    deadline_h: Annotated[PositiveDurationH | None, WithJsonSchema(DURATION_OR_DATE)] = Field(
        default=None, validation_alias=AliasChoices("deadline", "deadline_h")
    )
    start: dt.date | None = Field(default=None, description="the plan's first day (2027-01-01): "
                                  "dates allowed for releases and deadlines, shown in answers")
    fiscal_year_start: Annotated[tuple[int, int], BeforeValidator(parse_fiscal_start),
                                 WithJsonSchema({"type": "string", "pattern": r"^\d{2}-\d{2}$"})
                                 ] = Field(default=(1, 1), description="MM-DD a fiscal year "
                                                                       "begins, e.g. 04-01")
    objective: ObjectiveChoice = "cost"
    value_of_time_per_day: Annotated[Money, Field(le=MAX_VALUE_OF_TIME_PER_DAY)] = 0.0
    academic: bool = False
    ops_skill: OpsSkill = "basic"
    sites: list[Site] = Field(default_factory=list)
    renter_jurisdiction: Jurisdiction | None = Field(
        default=None, description="where the team that rents is (headquartered), for the catalog's "
                                  "renter_rules; default: the sites' jurisdiction when they agree")
    owned: list[OwnedPool] = Field(default_factory=list)
    policy: Policy = Field(default_factory=Policy)
    confidence: float = Field(
        default=0.8, ge=0.5, le=0.95,
        description="memory must fit, and deadlines hold, at this quantile of the estimator's "
                    "error band")
    budget_basis: BudgetBasis = Field(
        default="cash", description="cash: purchases at full price; amortized: residual value "
                                    "credited")
    purchase: list[PurchaseQuote] = Field(default_factory=list, description="buy options; none = "
                                                                            "rent only")
    catalog: Text | None = Field(default=None, description="overlay file, relative to the scenario")
    stack_maturity: StackMaturity | None = Field(
        default=None, description="the training stack at its jobs' scale, for every job that "
                                  "does not state its own: mature (the team has run it there) or "
                                  "new (its first run there: a pre-training run's whole run timed "
                                  "longer, assumed); unset, timed as mature and not said")
    jobs: list[Job] = Field(min_length=1, max_length=MAX_JOBS)
    solver: SolverSettings = Field(default_factory=SolverSettings)

    @model_validator(mode="wrap")
    @classmethod
    def _in_currency(cls, data: Any, handler: ModelWrapValidatorHandler[Scenario]) -> Scenario:
        # Amounts that name a currency (`20k USD`) convert into this scenario's `currency`.
        if not isinstance(data, Mapping):
            return handler(data)
        data = dict(data)
        move_budget_forms(data)
        problems = written_dates_to_hours(data)
        if problems:
            raise PydanticCustomError("scenario_reference", "{summary}",
                                      {"summary": "; ".join(problems), "problems": problems})
        if active_conversion() is not None:
            scenario = handler(data)
        else:
            with converting(data.get("currency", "CNY")):
                scenario = handler(data)
        jobs, problems = expand_repeats(scenario.jobs, scenario.start)
        if len(jobs) > MAX_JOBS:
            problems.append(f"jobs: {len(jobs)} jobs once recurring jobs are expanded; at most "
                            f"{MAX_JOBS}")
        if problems:
            raise PydanticCustomError("scenario_reference", "{summary}",
                                      {"summary": "; ".join(problems), "problems": problems})
        return scenario if jobs is scenario.jobs else scenario.model_copy(update={"jobs": jobs})

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        problems = self.reference_problems()
        if problems:
            # One error carrying every problem, each already 'field.path: message'.
            raise PydanticCustomError("scenario_reference", "{summary}",
                                      {"summary": "; ".join(problems), "problems": problems})
        return self

    def reference_problems(self) -> list[str]:
        """Internal cross-references as 'field.path: message' (catalog ids are checked by the
        loader)."""
        problems: list[str] = []
        for section, ids in (
            ("jobs", [j.id for j in self.jobs]),
            ("sites", [s.id for s in self.sites]),
            ("owned", [o.id for o in self.owned]),
        ):
            for i, item_id in enumerate(ids):
                if item_id in ids[:i]:
                    problems.append(say_as("rule.duplicate_id", "{section}[{i}].id: duplicate "
                                           "id {id}; ids must be unique", section=section, i=i,
                                           id=repr(item_id)))
        site_ids = {s.id for s in self.sites}
        job_ids = [j.id for j in self.jobs]
        declared = ", ".join(sorted(site_ids)) or say_as("rule.none_declared", "none declared")
        for i, pool in enumerate(self.owned):
            if pool.site not in site_ids:
                problems.append(say_as("rule.undeclared_site", "{path}: {site} is not a declared "
                                       "site ({declared})", path=f"owned[{i}].site",
                                       site=repr(pool.site), declared=declared))
        for i, job in enumerate(self.jobs):
            if job.data.at is not None and job.data.at not in site_ids:
                problems.append(say_as("rule.undeclared_site", "{path}: {site} is not a declared "
                                       "site ({declared})", path=f"jobs[{i}].data.at",
                                       site=repr(job.data.at), declared=declared))
            for dep in job.after:
                if dep == job.id:
                    problems.append(say_as("rule.after_itself", "jobs[{i}].after: job {job} cannot "
                                           "come after itself", i=i, job=repr(job.id)))
                elif dep not in job_ids:
                    problems.append(say_as("rule.after_unknown", "jobs[{i}].after: unknown job "
                                           "{dep}{hint}", i=i, dep=repr(dep),
                                           hint=did_you_mean(dep, job_ids)))
        if not problems:
            cycle = _find_cycle({j.id: j.after for j in self.jobs})
            if cycle:
                problems.append(say_as("rule.after_cycle", "jobs.after: cycle {cycle}; `after` "
                                       "must not loop", cycle=" -> ".join(cycle)))
        if self.budget_by_period is not None:
            problems += self.budget_by_period.problems()
            if self.start is None:
                problems.append(say_as("rule.budget_needs_start", "budget: a budget per period "
                                       "needs the scenario's start date (start: 2027-01-01)"))
        if self.objective == "balanced" and self.value_of_time_per_day <= 0:
            problems.append(say_as("rule.balanced_needs_value", "value_of_time_per_day: "
                                   "objective balanced needs a value > 0"))
        return problems

    @property
    def considers_purchase(self) -> bool:
        return bool(self.purchase) or self.policy.consider_purchase

    @property
    def renter(self) -> str | None:
        """The renter's jurisdiction: `renter_jurisdiction`, else the sites' when they all agree;
        None (no site, or sites that disagree) = unknown, and no renter rule is checked."""
        if self.renter_jurisdiction is not None:
            return self.renter_jurisdiction
        codes = {site.jurisdiction for site in self.sites}
        return codes.pop() if len(codes) == 1 else None

    def job(self, job_id: str) -> Job:
        return next(j for j in self.jobs if j.id == job_id)

    def stack_maturity_of(self, job: Job) -> str | None:
        """The job's stated stack maturity, else the scenario's; None where neither states one."""
        return job.stack_maturity or self.stack_maturity

    def effective_deadline_h(self, job: Job) -> float | None:
        limits = [d for d in (job.deadline_h, self.deadline_h) if d is not None]
        return min(limits) if limits else None


def _find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in graph:
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None
