"""What an option costs: a time-billed offer's bill (its rounding priced over the training time's
band), or the shared resource it draws on (an owned pool, a reservation, a purchase) with the GPU
counts that resource may be sized to.
"""

from __future__ import annotations

import math

from plan.models.figures import CandidateCost
from plan.models.platform import PERIOD_H, billed_hours
from plan.models.problem import SCALE, Placement, PurchaseEconomics, Resource
from plan.models.scenario import Job
from plan.planner.candidates.options import Options, _Option
from plan.planner.candidates.purchase import BuyOption
from plan.planner.estimate.reliability import RunEstimate, hours_quantiles
from plan.planner.i18n.said import say, word

BILLING_QUANTILES = tuple((i + 0.5) / 20 for i in range(20))
"""Where the training time's band is sampled to price rounded billing (every 5th percentile's
midpoint): the expected unused part of a billed day or hour."""


def _band_offsets_h(run: RunEstimate) -> list[float]:
    """The training time's band around its expected hours, at BILLING_QUANTILES, as offsets that
    average to zero (so a bill rounded at a fine granularity stays the expected hours' bill)."""
    if run.hours <= 0:
        return [0.0]
    factors = [hours / run.hours for hours in hours_quantiles(run, BILLING_QUANTILES)]
    mean_factor = sum(factors) / len(factors)
    return [run.hours * (f / mean_factor - 1) for f in factors]


class Billing(Options):
    """Costs for `CandidateBuilder` (planner/candidates/build.py): shared resources are added to
    `resources` as candidates ask for them."""

    resources: dict[str, Resource]
    planning_horizon_h: float
    # shared resource -> GPU counts asked of it by the job being built (job_builds.py keeps them),
    # and those asked by its options that break no rule
    asked: dict[str, set[int]]
    asked_abiding: dict[str, set[int]]

    def _billing(self, job: Job, option: _Option, hours: float, run: RunEstimate,
                 abiding: bool) -> tuple[int, str | None, CandidateCost]:
        """(cost in money units for this job alone, shared resource key or None, billing figures).
        `abiding`: the option breaks no rule (the counts it asks of a shared resource: `_levels`).

        A time-billed offer rounds the hours up to its step (a day for a daily offer), so the
        expected bill is the average bill over the training time's band (`_band_offsets_h` of
        `run`): a run expected at 23.6 h on a daily offer costs two days whenever it runs past 24 h,
        and that chance is priced, not ignored."""
        place = option.place
        academic = self.scenario.academic
        if option.pool is not None:
            cost = option.pool.cost_per_gpu_hour * place.gpus * hours
            return SCALE.money(cost), option.pool.id, CandidateCost(
                rate_per_gpu_hour=option.pool.cost_per_gpu_hour)
        if option.purchase is not None:
            buy = option.purchase
            # a job on bought hardware adds its power above the idle draw the holding pays for
            active = (buy.power_per_gpu_hour - buy.idle_per_gpu_hour) * place.gpus * hours
            return (SCALE.money(active) if active > 0 else 0,
                    self._purchase_resource(buy, place, abiding), CandidateCost())
        offer = option.offer
        assert offer is not None
        price = self._money(offer.price_per_gpu_period, offer.currency)
        if academic and offer.academic_discount:
            price *= 1 - offer.academic_discount
        if offer.billing in ("monthly", "yearly"):
            return (0, self._reservation(option, price, abiding),
                    CandidateCost(price_per_gpu_period=price))
        step_h = PERIOD_H["daily"] if offer.billing == "daily" else offer.granularity_s / 3600
        min_h = offer.min_periods * step_h
        runs_h = [max(0.0, hours + d) for d in _band_offsets_h(run)]
        billed_h = max(hours, sum(billed_hours(h, step_h, min_h) for h in runs_h) / len(runs_h))
        # the rounding travels with the plan, so its cost band bills p10 and p90 hours the same way
        return (
            SCALE.money(price / offer.period_h * billed_h * place.gpus),
            None,
            CandidateCost(
                price_per_gpu_period=price,
                billed_hours=billed_h,
                billable_hours=hours,
                billing_step_h=step_h,
                min_billed_hours=min_h,
                price_per_gpu_hour=price / offer.period_h,
            ),
        )

    def _levels(self, key: str, gpus: int,
                abiding: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """GPU counts a shared resource may be sized to: every count a candidate on it asks for;
        and those asked by candidates that break no rule (`abiding`: whether this one does)."""
        self.asked.setdefault(key, set()).add(gpus)
        if abiding:
            self.asked_abiding.setdefault(key, set()).add(gpus)
        existing = self.resources.get(key)
        held = existing.abiding_levels or () if existing else ()
        return (tuple(sorted({*(existing.levels if existing else ()), gpus})),
                tuple(sorted({*held, gpus})) if abiding else held)

    def _reservation(self, option: _Option, price: float, abiding: bool) -> str:
        offer, place = option.offer, option.place
        assert offer is not None
        key = f"{place.platform}:{place.gpu}:{offer.billing}"
        levels, abiding_levels = self._levels(key, place.gpus, abiding)
        period_min = SCALE.minutes(offer.period_h)
        # (the key names everything the label says: each count of the offer asks again)
        existing = self.resources.get(key)
        label = existing.label if existing is not None else say(
            "label.reservation", billing=word("billing", offer.billing), gpu=place.gpu,
            platform=place.platform)
        self.resources[key] = Resource(
            key=key, kind="reservation", platform=place.platform, gpu=place.gpu,
            label=label, levels=levels, abiding_levels=abiding_levels,
            period_min=period_min, price_per_gpu_period=SCALE.money(price),
            min_periods=offer.min_periods,
            max_periods=max(offer.min_periods, math.ceil(self.horizon_h / offer.period_h) + 1))
        return key

    def _economics(self, buy: BuyOption) -> PurchaseEconomics:
        return PurchaseEconomics(
            capex_per_gpu=buy.capex_per_gpu, running_per_gpu_hour=buy.power_per_gpu_hour,
            staff_per_hour=buy.staff_per_hour, life_years=buy.life_years,
            idle_per_gpu_hour=buy.idle_per_gpu_hour, held_per_gpu_hour=buy.held_per_gpu_hour,
            unit_gpus=buy.unit_gpus, residual_share=buy.residual_at(self.planning_horizon_h),
            residual_rule=buy.residual_rule(self.planning_horizon_h))

    def _purchase_resource(self, buy: BuyOption, place: Placement, abiding: bool) -> str:
        """A purchase as a resource, sized in whole units: the price (cash, or the value lost within
        the horizon when amortized) once per GPU bought, then idle power, space and maintenance per
        GPU and staff per day while held, from delivery to the planning horizon's end at least (a
        job on it adds its power above idle draw)."""
        key = f"buy:{place.gpu}"
        levels, abiding_levels = self._levels(key, buy.bought(place.gpus), abiding)
        period_h = 24.0  # held by the day once bought and installed
        basis = self.scenario.budget_basis
        upfront = buy.upfront_per_gpu(basis, self.planning_horizon_h)
        currency = self.scenario.currency
        unit = say("label.unit", n=buy.unit_gpus) if buy.unit_gpus > 1 else ""
        label = (say("label.buy_cash", gpu=place.gpu, unit=unit, price=buy.capex_per_gpu,
                     currency=currency)
                 if basis == "cash" else
                 say("label.buy_amortized", gpu=place.gpu, unit=unit, price=buy.capex_per_gpu,
                     currency=currency, share=upfront / buy.capex_per_gpu,
                     days=self.planning_horizon_h / 24))
        self.resources[key] = Resource(
            key=key, kind="purchase", platform=place.platform, gpu=place.gpu, label=label,
            levels=levels, abiding_levels=abiding_levels,
            period_min=SCALE.minutes(period_h),
            price_per_gpu_period=SCALE.money(
                (buy.idle_per_gpu_hour + buy.held_per_gpu_hour) * period_h),
            fixed_price_per_period=SCALE.money(buy.staff_per_hour * period_h),
            upfront_per_gpu=SCALE.money(upfront),
            available_from_min=SCALE.minutes(buy.lead_time_days * 24),
            # once delivered it is held to the planning horizon's end, used or idle
            min_periods=max(1, math.ceil(
                (self.planning_horizon_h - buy.lead_time_days * 24) / period_h - 1e-9)),
            max_periods=math.ceil(self.horizon_h / period_h) + 1, economics=self._economics(buy),
            unit_gpus=buy.unit_gpus)
        return key
