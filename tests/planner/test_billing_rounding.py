"""Rounded billing is priced as a bill: the expected cost of a time-billed option includes the
chance that its run spills into one more day (or hour), and the plan's cost band bills p10 and p90
the same way."""

from __future__ import annotations

import math

from plan.models.loading import load_scenario
from plan.models.problem import SCALE
from plan.planner.candidates import build_problem
from plan.planner.solve import solve_session
from tests.conftest import REPO, generous_session

MEDICAL = REPO / "scenarios" / "medical_hybrid.yaml"


def _rounded(hours: float, step_h: float, min_h: float) -> float:
    return max(min_h, math.ceil(hours / step_h - 1e-9) * step_h)


def test_expected_bill_prices_the_chance_of_another_day():
    problem = build_problem(load_scenario(MEDICAL))
    spilling = 0
    for c in problem.all_candidates():
        d = c.figures.to_dict()
        step_h = d.get("billing_step_h")
        if not step_h:
            continue
        billable, billed = d["billable_hours"], d["billed_hours"]
        # the lowest and highest quantiles sampled (2.5% and 97.5%) lie within the band's whole
        # width beyond p10 and p90 (a band need not be centred on its point: a fine-tuning run's
        # overhead has no lower side, so its point sits near its p10)
        width = d["train_p90_h"] - d["train_p10_h"]
        low = billable + d["train_p10_h"] - d["train_h"] - width
        high = billable + d["train_p90_h"] - d["train_h"] + width
        # the bill lies between the rounding of a fast run and of a very slow one, never below the
        # hours
        assert billable - 1e-9 <= billed
        assert _rounded(low, step_h, d["min_billed_hours"]) - 1e-9 <= billed
        assert billed <= _rounded(high, step_h, d["min_billed_hours"]) + 1e-9
        # the cost is that bill at the offer's price (plus any egress)
        assert c.cost >= SCALE.money(d["price_per_gpu_hour"] * c.gpus * billed) - 1
        p90 = billable + d["train_p90_h"] - d["train_h"]
        at_expected = _rounded(billable, step_h, d["min_billed_hours"])
        if step_h == 24 and _rounded(low, step_h, d["min_billed_hours"]) == at_expected < _rounded(
            p90, 24, 0
        ):
            # even a fast run bills the days the expected one does, and p90 runs past them: the
            # chance of one more day is in the expected bill
            assert billed > at_expected + 1e-6
            spilling += 1
    assert spilling > 0  # the scenario has daily offers whose run may spill into a second day


def _bill_at(job, train_h: float) -> float:
    """A time-billed job's cost if training took `train_h` hours, rounded as its offer bills."""
    d = job.figures.to_dict()
    run_h = max(0.0, d["billable_hours"] + train_h - d["train_h"])
    billed = _rounded(run_h, d["billing_step_h"], d["min_billed_hours"])
    return job.cost + d["price_per_gpu_hour"] * job.gpus * (billed - d["billed_hours"])


def test_cost_band_bills_p10_and_p90_as_the_offers_do():
    result = solve_session(generous_session(MEDICAL))
    assert result.status == "optimal"
    checked = 0
    for plan in result.plans:
        bands = [line for line in plan.explanation if line.startswith("cost band p10-p90")]
        if not bands:  # nothing billed by time in this plan
            continue
        (band,) = bands
        printed = [
            float(x.replace(",", "").replace(" CNY", ""))
            for x in band.split(": ", 1)[1].split(" (")[0].split(" to ")
        ]
        low = high = plan.total_cost
        for job in plan.jobs:
            d = job.figures.to_dict()
            if job.cost and job.billing not in ("owned", "purchase") and "billing_step_h" in d:
                low += _bill_at(job, d["train_p10_h"]) - job.cost
                high += _bill_at(job, d["train_p90_h"]) - job.cost
                checked += 1
            # the pool's rate per GPU-hour, for the hours it runs
            elif job.cost and job.billing == "owned":
                low += job.cost * (d["train_p10_h"] / d["train_h"] - 1)
                high += job.cost * (d["train_p90_h"] / d["train_h"] - 1)
        assert printed[0] == round(low) and printed[1] == round(high)
    assert checked > 0
