"""Platforms (rental clouds, managed training services, hyperscalers, owned clusters) and their
offers."""

from __future__ import annotations

import math
from functools import partial
from typing import Annotated, Literal

from pydantic import AliasChoices, BeforeValidator, Field, model_validator

from plan.models.availability import RegionCode, RenterRule
from plan.models.base import DateText, Strict
from plan.models.bounded import Id
from plan.models.derived_prices import (
    derived_problems,
    fill_derived_prices,
    unpriced_problems,
)
from plan.models.jurisdiction import check_code
from plan.models.limits import (
    MAX_EXCHANGE_RATE,
    MAX_GPUS,
    MAX_GPUS_PER_NODE,
    MAX_LEAD_TIME_DAYS,
    MAX_LIFE_YEARS,
    MAX_MONEY,
    MAX_PRICE_PER_GPU,
    MAX_PRICE_PER_GPU_HOUR,
    MIN_EXCHANGE_RATE,
)
from plan.models.said import say_as
from plan.models.units import HOURS_PER_DAY, HOURS_PER_MONTH, HOURS_PER_YEAR

PlatformKind = Literal["rental_cloud", "managed_training", "hyperscaler", "owned", "hybrid"]
BillingMode = Literal["hourly", "daily", "monthly", "yearly", "spot"]
FabricKind = Literal["infiniband", "roce", "ethernet", "none"]

# Length of one billing period in hours, per mode (a month is 30 days, the rental-cloud convention).
PERIOD_H: dict[str, float] = {
    "hourly": 1.0,
    "spot": 1.0,
    "daily": HOURS_PER_DAY,
    "monthly": HOURS_PER_MONTH,
    "yearly": HOURS_PER_YEAR,
}


def billed_hours(run_h: float, step_h: float, min_billed_h: float) -> float:
    """Hours a time-billed offer charges for a run of `run_h`: whole steps (a day on a daily offer,
    its granularity on an hourly or spot one), at least its minimum."""
    return max(min_billed_h, math.ceil(run_h / step_h - 1e-9) * step_h)


class Features(Strict):
    env_snapshot: bool = False
    checkpoint_resume: bool = False
    one_click_env: bool = False
    dedicated_hardware: bool = False
    encryption: bool = False
    private_line: bool = False
    domestic_compliance: bool = False
    managed_ops: bool = False
    team_collaboration: bool = False
    community_marketplace: bool = Field(default=False, description="hosts of unknown identity rent "
                                                                   "out cards")
    shared_nodes: bool = Field(default=False, description="several tenants on one physical node")
    qlora_kernels: bool = Field(default=True, description="the stack runs 4-bit (bitsandbytes) "
                                                          "kernels")


class Fabric(Strict):
    """Network between nodes. `gbps_per_gpu` is gigabits per second per GPU, one direction."""

    kind: FabricKind
    gbps_per_gpu: float = Field(ge=0)
    source: str | None = None
    assumed: bool = False


class CapacityLimit(Strict):
    """How much of one GPU type one customer can get on a platform, and how soon.

    `max_gpus`: the largest allocation one customer gets without arranging anything (quota, stock).
    `reservation_max_gpus`: the largest allocation with a reservation made with the vendor (sales
    contract, capacity block, dedicated pool); None when the platform offers no such path.
    `startup_h`: queue and provisioning hours before a job can start; `reservation_startup_h`:
    the lead time when the allocation needs a reservation. An entry without `gpu` covers every GPU,
    without `billing` every billing mode; the most specific entry wins.
    """

    gpu: str | None = None
    billing: list[BillingMode] = Field(default_factory=list)
    max_gpus: int = Field(gt=0, le=MAX_GPUS)
    reservation_max_gpus: int | None = Field(default=None, gt=0)
    startup_h: float = Field(default=0.0, ge=0)
    reservation_startup_h: float | None = Field(default=None, ge=0)
    source: str = Field(min_length=1)
    as_of: DateText
    assumed: bool = False
    assumption: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> CapacityLimit:
        if self.assumed and not self.assumption:
            raise ValueError("an assumed capacity limit must state its rule in `assumption`")
        if self.reservation_max_gpus is not None and self.reservation_max_gpus < self.max_gpus:
            raise ValueError(f"reservation_max_gpus ({self.reservation_max_gpus}) is below "
                             f"max_gpus ({self.max_gpus}); a reservation never gets less")
        return self

    def specificity(self, gpu: str, billing: str) -> int | None:
        """How closely this entry matches (gpu, billing): None if not at all, higher is closer."""
        if (self.gpu is not None and self.gpu != gpu) or (
            self.billing and billing not in self.billing
        ):
            return None
        return 2 * (self.gpu is not None) + bool(self.billing)


class Limits(Strict):
    max_gpus_per_job: int | None = Field(default=None, gt=0, le=MAX_GPUS)
    max_gpus_per_node: int | None = Field(default=None, gt=0, le=MAX_GPUS_PER_NODE)
    multi_node: bool = True
    capacity: list[CapacityLimit] = Field(default_factory=list)

    def capacity_for(self, gpu: str, billing: str) -> CapacityLimit | None:
        """The most specific capacity entry for (gpu, billing), or None when the catalog has
        none."""
        scored = [(score, entry) for entry in self.capacity
                  if (score := entry.specificity(gpu, billing)) is not None]
        return max(scored, key=lambda item: item[0])[1] if scored else None


class SpotMarket(Strict):
    """The platform sells spot/preemptible capacity (with the source that says so).

    `capacity_return_h`: expected hours, after a preemption, until the platform has capacity to
    restart the job (the risk of not getting it back, as an expected wait).
    """

    source: str = Field(min_length=1)
    as_of: DateText
    capacity_return_h: float = Field(ge=0)
    assumed: bool = False
    assumption: str | None = None

    @model_validator(mode="after")
    def _assumption_stated(self) -> SpotMarket:
        if self.assumed and not self.assumption:
            raise ValueError("an assumed spot figure must state its rule in `assumption`")
        return self


class Reliability(Strict):
    """Interruption figures. MTBF is per GPU, in hours; restart is the time to resume after one."""

    gpu_mtbf_h: float = Field(gt=0)
    restart_min: float = Field(ge=0)
    checkpoint_write_min: float = Field(default=2.0, ge=0)
    spot_preemptions_per_day: float | None = Field(default=None, ge=0)
    source: str
    assumed: bool = False
    assumption: str | None = None


class VendorClaim(Strict):
    """A speed or reliability claim a vendor makes without a published measurement (opt-in only)."""

    kind: Literal["speedup", "fault_rate"]
    factor: float = Field(gt=0, description="speedup: multiplier on throughput; fault_rate: "
                                            "fraction")
    source: str
    note: str | None = None


class DerivedPrice(Strict):
    """The rule that sets an offer's price from another offer of the same GPU on the platform:
    base price per hour (its price / its period's hours) x `hours` x `factor`, rounded half up to
    0.01 (plan.models.derived_prices). Written `derived: {from: hourly, hours: 720, factor: 0.65}`.
    """

    from_billing: BillingMode = Field(validation_alias=AliasChoices("from", "from_billing"),
                                      serialization_alias="from",
                                      description="the billing mode of the base offer")
    hours: float = Field(gt=0, le=HOURS_PER_YEAR, description="hours of the base's hourly rate "
                                                               "in one period of this offer")
    factor: float = Field(gt=0, le=10, description="multiplier on those hours' price (0.65: 35% "
                                                   "off)")


class Offer(Strict):
    """One GPU type on one platform under one billing mode.

    `price_per_gpu_period` is per GPU for one billing period of the mode: an hour for hourly and
    spot, a day for daily, a 30-day month for monthly, a 365-day year for yearly.
    """

    gpu: Id
    billing: BillingMode
    price_per_gpu_period: float = Field(ge=0, le=MAX_PRICE_PER_GPU_HOUR * 365 * 24,
                                        description="bounded by plan.models.limits (per hour, "
                                                    "times a year's hours)")
    currency: str = Field(min_length=3, max_length=3)
    granularity_s: int = Field(default=3600, gt=0, le=365 * 24 * 3600,
                               description="hourly/spot: billed in steps of this")
    min_periods: int = Field(default=1, ge=1, le=10_000)
    academic_discount: float = Field(default=0.0, ge=0, lt=1, description="fraction off when "
                                                                          "academic")
    max_gpus: int | None = Field(
        default=None, gt=0, le=MAX_GPUS, description="quota for this offer"
    )
    gpus_per_node: int | None = Field(default=None, gt=0, le=MAX_GPUS_PER_NODE,
                                      description="overrides the GPU's typical node")
    derived: DerivedPrice | None = Field(
        default=None, description="the price is set by this rule from another offer (and moves "
                                  "when an overlay changes that one); unset: the price is stated")
    min_gpus: int | None = Field(default=None, gt=0, le=MAX_GPUS,
                                 description="the fewest GPUs it rents (one instance as sold)")
    step: int | None = Field(default=None, gt=0, le=MAX_GPUS,
                             description="GPUs are rented in whole instances of this many")
    lacks: list[str] = Field(default_factory=list,
                             description="features of the platform this offer does not give "
                                         "(a public pool on a platform that also sells "
                                         "dedicated ones); `lacks_source` says why")
    lacks_source: str | None = None
    source: str = Field(min_length=1)
    as_of: DateText
    assumed: bool = False
    assumption: str | None = None

    @model_validator(mode="after")
    def _assumption_stated(self) -> Offer:
        if self.assumed and not self.assumption:
            raise ValueError(f"offer {self.gpu}/{self.billing}: an assumed price must state its "
                             "rule")
        if self.derived is not None and self.derived.from_billing == self.billing:
            raise ValueError(f"offer {self.gpu}/{self.billing}: derived from itself")
        if self.min_gpus is not None and self.step is not None and self.min_gpus % self.step:
            raise ValueError(f"offer {self.gpu}/{self.billing}: min_gpus {self.min_gpus} is not "
                             f"a whole number of instances of step {self.step}")
        unknown = [name for name in self.lacks if name not in Features.model_fields]
        if unknown:
            raise ValueError(f"offer {self.gpu}/{self.billing}: lacks names unknown features "
                             f"{unknown}; known: {', '.join(Features.model_fields)}")
        if self.lacks and not self.lacks_source:
            raise ValueError(f"offer {self.gpu}/{self.billing}: `lacks` needs `lacks_source`, the "
                             "source that says the offer lacks them")
        return self

    @property
    def period_h(self) -> float:
        return PERIOD_H[self.billing]

    @property
    def sold_by_instance(self) -> bool:
        """Whether the offer rents only whole instances bigger than one GPU."""
        return (self.step or 1) > 1 or (self.min_gpus or 1) > 1

    def rented_gpus(self, wanted: int) -> int:
        """The GPUs rented to have `wanted`: whole instances of `step`, at least `min_gpus`."""
        step = self.step or 1
        return max(self.min_gpus or 1, -(-wanted // step) * step)

    def instance_text(self) -> str:
        """How the offer is sold, e.g. 'whole 8-GPU instances' or 'at least 2 GPUs'."""
        step, least = self.step or 1, self.min_gpus or 1
        if step > 1 and least <= step:
            return say_as("rule.instance_whole", "whole {step}-GPU instances", step=step)
        if step > 1:
            return say_as("rule.instance_whole_least",
                          "whole {step}-GPU instances, at least {least} GPUs", step=step,
                          least=least)
        return say_as("rule.instance_least", "at least {least} GPUs", least=least)


def purchase_platform_id(gpu: str) -> str:
    return f"buy-{gpu}"


MAX_PUE = 3.0  # assumed: no data centre runs above 3 (Uptime's global average is 1.54, 2025)


class Purchase(Strict):
    """Buying hardware outright. `capex_per_gpu` is the price per GPU with its share of the server
    (chassis, CPUs, memory, NICs), in `currency`; power and staff run while the hardware is held."""

    gpu: Id
    capex_per_gpu: float = Field(gt=0, le=MAX_PRICE_PER_GPU)
    currency: str = Field(min_length=3, max_length=3)
    life_years: float = Field(gt=0, le=MAX_LIFE_YEARS)
    power_kw_per_gpu: float = Field(ge=0, le=1000, description="including the server's share and "
                                                               "cooling")
    electricity_per_kwh: float = Field(ge=0, le=MAX_PRICE_PER_GPU_HOUR)
    ops_staff_per_year: float = Field(ge=0, le=MAX_MONEY, description="cost of the staff that run "
                                                                      "the cluster")
    lead_time_days: float = Field(default=0, ge=0, le=MAX_LEAD_TIME_DAYS)
    gpus_per_node: int | None = Field(default=None, gt=0, le=MAX_GPUS_PER_NODE)
    source: str
    as_of: DateText
    assumed: bool = False
    assumption: str | None = None
    # --- ownership economics (issue 47): the unit bought, what holding it costs, where it is sold
    unit_gpus: int | None = Field(
        default=None, gt=0, le=MAX_GPUS_PER_NODE,
        description="GPUs in the unit sold (an 8-GPU server, a 72-GPU NVL72 rack); bought in whole "
                    "units; default gpus_per_node")
    pue: float = Field(default=1.0, ge=1, le=MAX_PUE,
                       description="power_kw_per_gpu x pue is drawn from the grid; 1 where "
                                   "power_kw_per_gpu already includes cooling")
    idle_power_fraction: float = Field(
        default=1.0, ge=0, le=1, description="share of the power drawn while held but running no "
                                             "job (1: always at full draw)")
    space_per_unit_month: float = Field(default=0.0, ge=0, le=MAX_MONEY,
                                        description="rack space and colocation per unit per month")
    maintenance_share_per_year: float = Field(
        default=0.0, ge=0, le=1, description="maintenance and support per year, as a share of the "
                                             "price")
    available_in: list[RegionCode] | None = Field(
        default=None, description="jurisdictions it may be bought and delivered in; none = not "
                                  "stated (no rule applied)")
    available_source: str | None = Field(
        default=None, description="the rule behind available_in, with its public source, or "
                                  "'assumed: ...'")

    @model_validator(mode="after")
    def _availability_sourced(self) -> Purchase:
        if self.available_in is not None and not self.available_source:
            raise ValueError("available_in needs available_source: the rule and its public "
                             "source, or 'assumed: <the rule>'")
        return self

    @property
    def plan_platform(self) -> str:
        """The platform id plans and `plan explain --why-not` give buying this GPU."""
        return purchase_platform_id(self.gpu)

    @property
    def unit(self) -> int | None:
        """GPUs per unit bought, where stated (else the GPU's node size applies)."""
        return self.unit_gpus or self.gpus_per_node


PlatformJurisdiction = Annotated[str, BeforeValidator(partial(check_code, allow_global=True))]
class Egress(Strict):
    """What the platform charges for data leaving it (to the internet, another cloud or the user's
    site), per GB (10^9 bytes) in `currency`; the first `free_gb_per_month` each month are free.
    Data coming in is free on every platform in the catalog's sources."""

    price_per_gb: float = Field(ge=0)
    currency: str = Field(min_length=3, max_length=3)
    free_gb_per_month: float = Field(default=0.0, ge=0)
    source: str = Field(min_length=1)
    as_of: DateText
    assumed: bool = False
    assumption: str | None = None

    @model_validator(mode="after")
    def _assumption_stated(self) -> Egress:
        if self.assumed and not self.assumption:
            raise ValueError("an assumed egress price must state its rule in `assumption`")
        return self


class FeatureFact(Strict):
    """Where a platform's feature value (true or false) comes from: its public source and date, or
    `assumed` with the rule. `note` is what a user must do to have it (e.g. turn on the bucket's
    default encryption); a plan that relies on the feature repeats it."""

    source: str = Field(min_length=1)
    as_of: DateText | None = None
    assumed: bool = False
    assumption: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _assumption_stated(self) -> FeatureFact:
        if self.assumed and not self.assumption:
            raise ValueError("an assumed feature must state its rule in `assumption`")
        if not self.assumed and self.as_of is None:
            raise ValueError("a sourced feature needs `as_of`, the source's date")
        return self


class Platform(Strict):
    id: Id
    aliases: list[str] = Field(default_factory=list)
    name: str
    kind: PlatformKind
    jurisdiction: PlatformJurisdiction = Field(description="where it is run from: cn, us, sg, ..., "
                                                           "or global")
    regions: list[RegionCode] = Field(
        default_factory=list, description="other jurisdictions it has regions in (a job may run "
                                          "there)")
    regions_source: str | None = None
    features: Features = Field(default_factory=Features)
    feature_facts: dict[str, FeatureFact] = Field(
        default_factory=dict, description="per feature name: the source of its value")
    fabric: Fabric
    limits: Limits = Field(default_factory=Limits)
    reliability: Reliability | None = None
    spot: SpotMarket | None = Field(default=None, description="set only where the platform sells "
                                                              "spot")
    offers: list[Offer] = Field(default_factory=list)
    purchase: list[Purchase] = Field(default_factory=list)
    vendor_claims: list[VendorClaim] = Field(default_factory=list)
    egress: Egress | None = Field(default=None, description="data-out price; None where no figure "
                                                            "is known")
    source: str = Field(min_length=1)
    notes: str | None = None
    renter_rules: list[RenterRule] = Field(
        default_factory=list, description="who may rent its offers, by the renter's jurisdiction, "
                                          "each rule with its source; none = not stated")

    @model_validator(mode="before")
    @classmethod
    def _derive_prices(cls, data: object) -> object:
        """A derived offer that states no price gets its base's price by its rule."""
        if isinstance(data, dict) and isinstance(data.get("offers"), list):
            offers = fill_derived_prices(data["offers"])
            problems = unpriced_problems(offers)
            if problems:
                raise ValueError(f"platform {data.get('id')}: " + "; ".join(problems))
            return {**data, "offers": offers}
        return data

    @model_validator(mode="after")
    def _unique_offers(self) -> Platform:
        unknown = [name for name in self.feature_facts if name not in Features.model_fields]
        if unknown:
            raise ValueError(f"platform {self.id}: feature_facts names unknown features "
                             f"{unknown}; known: {', '.join(Features.model_fields)}")
        seen: set[tuple[str, str]] = set()
        for offer in self.offers:
            key = (offer.gpu, offer.billing)
            if key in seen:
                raise ValueError(f"platform {self.id}: two offers for {offer.gpu} billed "
                                 f"{offer.billing}")
            seen.add(key)
            if offer.billing == "spot" and self.spot is None:
                raise ValueError(f"platform {self.id}: a spot offer for {offer.gpu}, but the "
                                 "platform declares no spot market (add `spot:` with the source "
                                 "that says it sells spot)")
        problems = derived_problems(self.offers)
        if problems:
            raise ValueError(f"platform {self.id}: " + "; ".join(problems))
        offered = {offer.gpu for offer in self.offers}
        for rule in self.renter_rules:
            if not set(rule.gpus) <= offered:
                raise ValueError(f"platform {self.id}: renter_rules names GPUs it does not rent "
                                 f"{sorted(set(rule.gpus) - offered)}; it rents "
                                 f"{', '.join(sorted(offered)) or 'none'}")
        return self

    def renter_rule(self, gpu: str, renter: str) -> RenterRule | None:
        """The first of the platform's rules on renting `gpu` that a renter in `renter` falls
        under, or None."""
        return next((rule for rule in self.renter_rules
                     if rule.covers(gpu) and rule.excludes(renter)), None)


class ExchangeRates(Strict):
    """How many units of `base` one unit of each currency buys."""

    base: str = "CNY"
    rates: dict[str, Annotated[float, Field(ge=MIN_EXCHANGE_RATE, le=MAX_EXCHANGE_RATE)]]
    source: str
    as_of: DateText

    def convert(self, amount: float, from_currency: str, to_currency: str) -> float:
        def to_base(cur: str) -> float:
            if cur == self.base:
                return 1.0
            if cur not in self.rates:
                raise KeyError(
                    f"no exchange rate for {cur}; known: {', '.join(sorted(self.rates))}"
                )
            return self.rates[cur]

        return amount * to_base(from_currency) / to_base(to_currency)
