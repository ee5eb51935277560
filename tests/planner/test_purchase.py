"""Buying hardware (issue 47 item 6): a purchase competes whenever buying is weighed, even where
nothing rents its GPU; it is bought in whole units and held to the horizon's end; its payback is
stated against the best plan that rents instead (the same jobs, purchases left out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plan.models.loading import load_scenario
from plan.models.problem import HOURS_PER_MONTH, SCALE
from plan.planner.cpsat.model import Bounds
from plan.planner.session import Session, SolveOptions
from plan.planner.solve import solve
from tests.planner.builders import WALL_NET_S
from tests.planner.catalog_runs import run_catalog_scenario

ROOT = Path(__file__).resolve().parents[2]
FRONTIER = ROOT / "scenarios" / "frontier_private_vs_hybrid.yaml"
RUBIN = ROOT / "scenarios" / "rubin_buy_or_rent.yaml"
SFT = {"id": "sft", "model": "qwen2.5-7b", "method": "sft", "tokens": "20B", "seq_len": 4096,
       "deadline": "60d", "data": {"sensitivity": "internal"}}


def _rubin_quote(price_per_unit: float) -> dict[str, object]:
    return {"gpu": "rubin-nvl72", "price_per_unit": price_per_unit, "unit_gpus": 72,
            "lead_time_days": 0, "ops_staff_per_year": 0, "electricity_per_kwh": 0,
            "source": "test quote"}


def test_a_purchase_only_gpu_is_planned_when_cheapest(base_scenario, write_scenario):
    """No platform rents rubin-nvl72; at a price that makes it cheapest, the plan buys a whole
    72-GPU rack, and the answer states utilisation, cost per delivered GPU-hour and payback."""
    loaded, problem, result = run_catalog_scenario(
        base_scenario, write_scenario, [SFT], budget="10M", currency="CNY",
        sites=[{"id": "lab", "jurisdiction": "us"}], purchase=[_rubin_quote(72.0)])
    assert not any(o.gpu == "rubin-nvl72" for p in loaded.catalog.platforms.values()
                   for o in p.offers)
    plan = result.plans[0]
    job = plan.jobs[0]
    assert (job.gpu, job.billing, job.platform) == ("rubin-nvl72", "purchase", "buy-rubin-nvl72")
    (bought,) = [r for r in plan.reservations if r.kind == "purchase"]
    assert bought.gpus % 72 == 0 and bought.gpus >= job.gpus  # whole racks
    own = bought.ownership
    assert own is not None
    held_h = bought.gpus * bought.periods * bought.period_h
    assert own["utilisation"] == pytest.approx(job.gpus * (job.end_h - job.start_h) / held_h,
                                               abs=1e-3)
    assert 0 < own["utilisation"] <= 1
    assert own["cost_per_delivered_gpu_hour"] == pytest.approx(
        (bought.cost + job.cost) / own["delivered_gpu_hours"], abs=0.01)
    # payback against the best plan that rents instead, by hand
    rent = own["rent_instead_cost"]
    running = plan.total_cost - bought.upfront_cost
    months = own["price"] / ((rent - running) / (bought.periods * 24 / HOURS_PER_MONTH))
    assert rent > plan.total_cost  # buying was chosen because it is cheaper
    assert bought.payback_months == pytest.approx(months, abs=0.05)
    assert any(line.startswith("buying 72 CNY of hardware pays back after")
               for line in plan.explanation)
    assert problem.resources["buy:rubin-nvl72"].unit_gpus == 72


def test_not_available_where_the_site_is(base_scenario, write_scenario):
    """A Rubin rack for a site in China: the answer names the export rule beside the plan; with
    policy.only_available it is ruled out and the relaxation names the policy."""
    fields = {"budget": "10M", "currency": "CNY", "purchase": [_rubin_quote(72.0)],
              "sites": [{"id": "lab", "jurisdiction": "cn"}]}
    _, _, flagged = run_catalog_scenario(base_scenario, write_scenario, [SFT], **fields)
    plan = flagged.plans[0]
    assert plan.jobs[0].gpu == "rubin-nvl72"
    assert any(note.startswith("availability: rubin-nvl72 (purchase) is sold for us")
               and "not cn" in note and "introl.com" in note for note in plan.assumptions)
    fields["policy"] = {"only_available": True}
    _, problem, ruled = run_catalog_scenario(base_scenario, write_scenario, [SFT], **fields)
    assert all(j.gpu != "rubin-nvl72" for j in ruled.plans[0].jobs)
    assert all("policy.only_available" in c.violations for c in problem.all_candidates()
               if c.billing == "purchase")


def test_frontier_buys_where_only_buying_may_run_the_job():
    result = solve(load_scenario(FRONTIER), SolveOptions(top_k=1, time_limit_s=WALL_NET_S))
    plan = result.plans[0]
    bought = [r for r in plan.reservations if r.kind == "purchase"]
    assert bought, "the on-premises fine-tune can only run on hardware the institute buys"
    assert {j.job for j in plan.jobs if j.reservation == bought[0].key} == {"sensitive-sft"}
    assert any("buying is the only way and the payback test does not apply" in line
               for line in plan.explanation)
    exported = {x["key"]: x for x in result.to_dict()["plans"][0]["reservations"]}
    assert "utilisation" in exported[bought[0].key]["ownership"]


def test_rubin_scenario_weighs_the_rack():
    """The shipped roadmap: the rack is weighed; renting is cheaper at this use, and the answer
    says what the best plan that buys would cost, deliver and pay back."""
    result = solve(load_scenario(RUBIN), SolveOptions(time_limit_s=WALL_NET_S))
    assert result.status == "optimal"
    lines = result.plans[0].explanation
    assert any(line.startswith("not bought: the best plan that buys (72 rubin-nvl72)")
               for line in lines)
    assert any("per delivered GPU-hour" in line for line in lines)
    assert any("pays back" in line for line in lines)


def test_not_bought_names_the_period_budget_a_purchase_breaks(base_scenario, write_scenario):
    """A rack whose price is above a quarter's budget: the answer says which budgets keep every
    plan that buys out (those each of which alone, lifted, lets a plan buy: checked here by solves
    of their own) and the price of the cheapest purchase; a budget that is not why is not named."""
    loaded, _, result = run_catalog_scenario(
        base_scenario, write_scenario, [SFT], currency="CNY", start="2027-01-01",
        budget={"per": "quarter", "amount": "30万"}, sites=[{"id": "lab", "jurisdiction": "us"}],
        policy={"consider_purchase": True}, purchase=[_rubin_quote(1_000_000.0)])
    plan = result.plans[0]
    assert all(j.billing != "purchase" for j in plan.jobs)
    (line,) = [e for e in plan.explanation if e.startswith("not bought:")]
    session = Session.from_loaded(loaded)
    problem = session.problem
    bought = tuple(c.index for c in problem.all_candidates()
                   if c.billing == "purchase" and not c.violations)
    assert bought and not session.best(Bounds(some_of=bought)).solved
    named, unnamed = [], []
    for period in problem.budget_periods:
        lifted = Bounds(some_of=bought, lifted=frozenset({f"budget/{period.label}"}))
        (named if session.best(lifted).solved else unnamed).append(period.label)
    assert named and unnamed  # (the rack is paid in one quarter only)
    assert line.startswith(f"not bought: no plan that buys keeps to the {' or '.join(named)} "
                           f"budget of 300,000 CNY; the cheapest purchase, 72 rubin-nvl72, costs ")
    assert not any(label in line for label in unnamed)
    cheapest = min(problem.standalone_cost(c) for c in problem.all_candidates()
                   if c.index in bought)
    assert line.endswith(f"costs {SCALE.to_money(cheapest):,.0f} CNY on its own")


def test_not_bought_names_the_deadline_a_delivery_misses(base_scenario, write_scenario):
    """A rack delivered after the job's deadline: the line names the deadline, not a budget."""
    quote = {**_rubin_quote(72.0), "lead_time_days": 90}
    _, problem, result = run_catalog_scenario(
        base_scenario, write_scenario, [SFT], currency="CNY", budget="10M",
        sites=[{"id": "lab", "jurisdiction": "us"}], policy={"consider_purchase": True},
        purchase=[quote])
    (line,) = [e for e in result.plans[0].explanation if e.startswith("not bought:")]
    assert line.startswith(f"not bought: no plan that buys keeps to "
                           f"{problem.groups['deadline/sft']}; the cheapest purchase, 72 "
                           f"rubin-nvl72, costs ")
    assert "budget" not in line
