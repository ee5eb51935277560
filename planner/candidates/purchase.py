"""Buying hardware: which purchase options a scenario weighs, and what holding them costs.

Purchases are weighed only when the scenario asks (`purchase:` quotes, or
`policy.consider_purchase`). A quote overrides the catalog entry's figures field by field (price,
unit, life, lead time, power, PUE, staff, space, maintenance, residual value); the catalog supplies
the rest. All figures here are in the scenario's currency.

Hardware is bought in whole units (`unit_gpus`: an 8-GPU server, a 72-GPU NVL72 rack). Holding it
costs, per GPU-hour: power at its idle draw, space and maintenance; a job running on it adds the
difference to full draw for its GPU-hours; staff is paid per hour whatever the size.

Budget basis (the scenario's `budget_basis`):
- cash (default): the plan pays the full price of what it buys, plus running costs while held.
- amortized: the plan pays the value the hardware loses within the planning horizon, price x (1 -
  residual share); the residual share is the quote's `residual_share` (a buy-back offer) or else
  straight-line to zero over the life, 1 - horizon / life.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from plan.models.catalog import Catalog
from plan.models.platform import Platform, Purchase, purchase_platform_id
from plan.models.problem import HOURS_PER_MONTH
from plan.models.scenario import PurchaseQuote, Scenario
from plan.models.units import HOURS_PER_YEAR
from plan.planner.i18n.said import say


@dataclass(frozen=True)
class BuyOption:
    platform: Platform
    entry: Purchase  # the catalog entry (power, staff, node size, source)
    gpu: str
    capex_per_gpu: float  # server or rack share included
    power_per_gpu_hour: float  # at full draw: kW x PUE x electricity
    idle_per_gpu_hour: float  # power while held and running no job
    held_per_gpu_hour: float  # space and maintenance while held
    staff_per_hour: float  # whatever the GPU count
    life_years: float
    lead_time_days: float
    gpus_per_node: int | None
    unit_gpus: int
    max_gpus: int | None
    notes: tuple[str, ...]
    residual_share: float | None = None  # stated by the quote; None: straight-line over life

    @property
    def platform_id(self) -> str:
        """The id plans and `plan explain --why-not` use for buying this GPU."""
        return purchase_platform_id(self.gpu)

    def residual_at(self, horizon_h: float) -> float:
        """The share of the price the hardware is still worth at the horizon's end."""
        if self.residual_share is not None:
            return self.residual_share
        return max(0.0, 1.0 - horizon_h / (self.life_years * HOURS_PER_YEAR))

    def residual_rule(self, horizon_h: float) -> str:
        """The rule behind `residual_at`, for the answer."""
        share = self.residual_at(horizon_h)
        if self.residual_share is not None:
            return say("own.residual_quoted", share=share)
        return say("own.residual_straight", share=share, life=self.life_years,
                   months=horizon_h / HOURS_PER_MONTH)

    def upfront_per_gpu(self, basis: str, horizon_h: float) -> float:
        """What one GPU bought costs the plan's budget, apart from running costs."""
        if basis == "amortized":
            return self.capex_per_gpu * (1.0 - self.residual_at(horizon_h))
        return self.capex_per_gpu

    def residual_per_gpu(self, basis: str, horizon_h: float) -> float:
        """Value credited at the horizon's end (amortized basis only)."""
        return (
            self.capex_per_gpu - self.upfront_per_gpu(basis, horizon_h)
            if basis == "amortized"
            else 0.0
        )

    def bought(self, gpus: int) -> int:
        """GPUs bought for `gpus` in use: whole units."""
        return -(-gpus // self.unit_gpus) * self.unit_gpus


def buy_options(
    scenario: Scenario, catalog: Catalog, money: Callable[[float, str], float]
) -> list[BuyOption]:
    """The purchase options the scenario asked for; `money(amount, currency)` converts to its
    currency."""
    if not scenario.considers_purchase:
        return []
    quotes = {catalog.gpu(q.gpu).id: q for q in scenario.purchase}
    options = []
    for platform in catalog.platforms.values():
        for entry in platform.purchase:
            quote = quotes.get(entry.gpu)
            if quote is None and not scenario.policy.consider_purchase:
                continue  # quotes only: the team named what it would buy
            per_node = entry.gpus_per_node or catalog.gpus[entry.gpu].gpus_per_node
            options.append(_option(scenario, platform, entry, quote, per_node,
                                   partial(_in_currency, money, entry.currency)))
    return options


def _in_currency(money: Callable[[float, str], float], currency: str, amount: float) -> float:
    return money(amount, currency)


def _pick(stated: float | None, catalog_value: float) -> float:
    return catalog_value if stated is None else stated


def _option(scenario: Scenario, platform: Platform, entry: Purchase, quote: PurchaseQuote | None,
            per_node: int, money: Callable[[float], float]) -> BuyOption:
    """One purchase option: the catalog entry with the quote's figures laid over it."""
    q = quote or PurchaseQuote(gpu=entry.gpu)
    unit = q.unit_gpus or entry.unit or per_node
    capex = money(entry.capex_per_gpu)
    priced = q.price_per_gpu if q.price_per_gpu is not None else (
        q.price_per_unit / unit if q.price_per_unit is not None else None)
    notes = ([say("note.buying", gpu=entry.gpu, assumption=entry.assumption)]
             if entry.assumed and priced is None else [])
    if priced is not None:
        capex = priced
        notes.append(f"buying {entry.gpu}: the scenario's quote, {capex:,.0f} {scenario.currency} "
                     f"per GPU ({capex * unit:,.0f} per {unit}-GPU unit)"
                     + (f" ({q.source})" if q.source else ""))
    kw = _pick(q.power_kw_per_gpu, entry.power_kw_per_gpu) * _pick(q.pue, entry.pue)
    per_kwh = _pick(q.electricity_per_kwh, money(entry.electricity_per_kwh))
    idle = _pick(q.idle_power_fraction, entry.idle_power_fraction)
    life = q.life_years or entry.life_years
    space = _pick(q.space_per_unit_month, money(entry.space_per_unit_month))
    upkeep = _pick(q.maintenance_share_per_year, entry.maintenance_share_per_year)
    return BuyOption(
        platform=platform, entry=entry, gpu=entry.gpu, capex_per_gpu=capex,
        power_per_gpu_hour=kw * per_kwh, idle_per_gpu_hour=kw * per_kwh * idle,
        held_per_gpu_hour=space / unit / HOURS_PER_MONTH + capex * upkeep / HOURS_PER_YEAR,
        staff_per_hour=_pick(q.ops_staff_per_year, money(entry.ops_staff_per_year))
        / HOURS_PER_YEAR,
        life_years=life,
        lead_time_days=_pick(q.lead_time_days, entry.lead_time_days),
        gpus_per_node=entry.gpus_per_node, unit_gpus=unit, max_gpus=q.max_gpus,
        notes=tuple(notes), residual_share=q.residual_share)
