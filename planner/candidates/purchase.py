"""Buying hardware: which purchase options a scenario weighs, and what they cost against its budget.

Purchases are weighed only when the scenario asks (`purchase:` quotes, or
`policy.consider_purchase`). A quote overrides the catalog entry's price, life and lead time; the
catalog supplies power, staff and node size. All figures here are in the scenario's currency.

Budget basis (the scenario's `budget_basis`):
- cash (default): the plan pays the full price of what it buys, plus power and staff while held.
- amortized: the plan pays the value the hardware loses within the planning horizon,
  price x min(1, horizon / life) (straight-line to zero over the life); the residual value at the
  horizon's end is credited.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plan.models.catalog import Catalog
from plan.models.platform import Platform, Purchase
from plan.models.scenario import Scenario
from plan.models.units import HOURS_PER_YEAR


@dataclass(frozen=True)
class BuyOption:
    platform: Platform
    entry: Purchase  # the catalog entry (power, staff, node size, source)
    gpu: str
    capex_per_gpu: float  # server share included
    power_per_gpu_hour: float
    staff_per_hour: float  # whatever the GPU count
    life_years: float
    lead_time_days: float
    gpus_per_node: int | None
    max_gpus: int | None
    notes: tuple[str, ...]

    def upfront_per_gpu(self, basis: str, horizon_h: float) -> float:
        """What one GPU bought costs the plan's budget, apart from running costs."""
        if basis == "amortized":
            return self.capex_per_gpu * min(1.0, horizon_h / (self.life_years * HOURS_PER_YEAR))
        return self.capex_per_gpu

    def residual_per_gpu(self, basis: str, horizon_h: float) -> float:
        """Value credited at the horizon's end (amortized basis only)."""
        return (
            self.capex_per_gpu - self.upfront_per_gpu(basis, horizon_h)
            if basis == "amortized"
            else 0.0
        )


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
            notes = [] if quote is not None and quote.price_per_gpu is not None else (
                [f"buying {entry.gpu}: {entry.assumption}"] if entry.assumed else [])
            capex = money(entry.capex_per_gpu, entry.currency)
            if quote is not None and quote.price_per_gpu is not None:
                capex = quote.price_per_gpu
                notes.append(f"buying {entry.gpu}: the scenario's quote, {capex:,.0f} "
                             f"{scenario.currency} per GPU"
                             + (f" ({quote.source})" if quote.source else ""))
            options.append(
                BuyOption(
                    platform=platform,
                    entry=entry,
                    gpu=entry.gpu,
                    capex_per_gpu=capex,
                    power_per_gpu_hour=entry.power_kw_per_gpu
                    * money(entry.electricity_per_kwh, entry.currency),
                    staff_per_hour=money(entry.ops_staff_per_year, entry.currency) / HOURS_PER_YEAR,
                    life_years=quote.life_years if quote and quote.life_years else entry.life_years,
                    lead_time_days=(
                        quote.lead_time_days
                        if quote and quote.lead_time_days is not None
                        else entry.lead_time_days
                    ),
                    gpus_per_node=entry.gpus_per_node,
                    max_gpus=quote.max_gpus if quote else None,
                    notes=tuple(notes),
                )
            )
    return options
