"""Buying a cluster: the payback period against the cheapest rental of the same GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from plan.models.loading import load_scenario
from plan.models.problem import HOURS_PER_MONTH, PurchaseEconomics
from plan.planner.candidates import build_problem
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.planner.catalog_runs import run_catalog_scenario

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "frontier_private_vs_hybrid.yaml"


def test_payback_months_by_hand():
    econ = PurchaseEconomics(capex_per_gpu=100_000.0, running_per_gpu_hour=1.0, staff_per_hour=50.0,
                             life_years=5, rent_per_gpu_hour=6.0, rent_label="monthly on x")
    # 16 GPUs save (6 - 1) x 16 - 50 = 30 per hour; 1.6M / 30 = 53,333 h = 73.06 months
    assert econ.payback_months(16) == pytest.approx(1_600_000 / 30 / HOURS_PER_MONTH)
    # staff outweighs the saving on one GPU: never pays back
    assert econ.payback_months(1) is None
    assert PurchaseEconomics(1.0, 0.0, 0.0, 5, None).payback_months(8) is None


def test_purchase_in_plan_reports_payback_against_cheapest_rental():
    loaded = load_scenario(SCENARIO)
    problem = build_problem(loaded)
    res = problem.resources["buy:a800-80gb"]
    assert res.economics is not None
    catalog = loaded.catalog
    rents = [
        catalog.to_currency(o.price_per_gpu_period, o.currency, "CNY") / o.period_h
        for p in catalog.platforms.values()
        for o in p.offers
        if o.gpu == "a800-80gb" and o.billing != "spot"
    ]
    assert res.economics.rent_per_gpu_hour == pytest.approx(min(rents))

    result = solve(loaded, SolveOptions(top_k=1, time_limit_s=60))
    assert result.status in ("optimal", "feasible")
    plan = result.plans[0]
    bought = [r for r in plan.reservations if r.kind == "purchase"]
    # Regulated data must stay on the institute's premises and it owns nothing there: it must buy.
    assert bought, "the on-premises fine-tune can only run on hardware the institute buys"
    for r in bought:
        econ = problem.resources[r.key].economics
        assert econ is not None
        # no rental of this GPU to compare with: no payback period
        if econ.rent_per_gpu_hour is None:
            expected = None
        else:
            saving = (
                econ.rent_per_gpu_hour - econ.running_per_gpu_hour
            ) * r.gpus - econ.staff_per_hour
            expected = (
                econ.capex_per_gpu * r.gpus / saving / HOURS_PER_MONTH if saving > 0 else None
            )
        assert r.payback_months == (
            pytest.approx(expected, abs=0.05) if expected is not None else None
        )
        users = [j for j in plan.jobs if j.reservation == r.key]
        assert {j.job for j in users} == {"sensitive-sft"}  # the rentable pre-training job rents
        exported = {x["key"]: x for x in result.to_dict()["plans"][0]["reservations"]}
        assert exported[r.key]["payback_months"] == r.payback_months
    assert any("buying is the only way" in line for line in plan.explanation)


def test_purchases_left_out_say_why_for_every_count(base_scenario, write_scenario):
    """A university weighs buying against renting for six months of pre-training. Where no GPU count
    pays back within the hardware's life, the plan says so with the closest count (the most GPUs,
    staff spread thinnest), not as if that count had been the proposal; a GPU nobody rents cannot be
    weighed."""
    loaded, problem, result = run_catalog_scenario(
        base_scenario,
        write_scenario,
        [
            {
                "id": "pt7b",
                "model": "qwen2.5-7b",
                "method": "pretrain",
                "tokens": "1T",
                "seq_len": 4096,
            }
        ],
        budget="300万元",
        deadline="180d",
        ops_skill="expert",
        academic=True,
        policy={"consider_purchase": True},
    )
    lines = [x for x in result.plans[0].explanation if x.startswith("not bought: ")]
    assert lines
    for line in lines:
        gpu = next(
            r.gpu
            for r in problem.removed
            if r.rule == "purchase.payback" and f" {r.gpu} " in f"{line} "
        )
        econ = problem.resources.get(f"buy:{gpu}")
        rented = any(
            o.gpu == gpu and o.billing != "spot"
            for p in loaded.catalog.platforms.values()
            for o in p.offers
        )
        if not rented:
            assert line == (
                f"not bought: buying {gpu} cannot be weighed against renting: the catalog rents no "
                f"{gpu}"
            )
            continue
        assert line.startswith(f"not bought: {gpu} pays back within its life at no GPU count")
        most = max(r.gpus for r in problem.removed if r.rule == "purchase.payback" and r.gpu == gpu)
        assert f"buying {most}x {gpu} " in line
        assert econ is None  # no count was kept as a candidate
