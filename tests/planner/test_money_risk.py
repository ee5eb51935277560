"""Money, risk and capacity, checked as properties of the plans (issue 10, items 1-3).

Each property is re-checked from domain data (catalog, scenario), not from the solver's own sums.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from plan.models.catalog import load_catalog
from plan.models.errors import InputError
from plan.models.loading import load_scenario, load_scenario_data
from plan.models.units import HOURS_PER_YEAR
from plan.planner.candidates import build_problem
from plan.planner.candidates.capacity_limits import allowance
from plan.planner.cli.app import app
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import REPO

runner = CliRunner()

# A regulated fine-tune that must stay in the lab: with nothing owned, buying is the only way.
ON_PREM: dict[str, Any] = {
    "name": "buy-or-nothing",
    "budget": "10M",
    "deadline": "120d",
    "ops_skill": "expert",
    "sites": [{"id": "lab", "jurisdiction": "cn"}],
    "policy": {"consider_purchase": True},
    "jobs": [
        {
            "id": "sft",
            "model": "llama3-8b",
            "method": "lora",
            "tokens": "100M",
            "seq_len": 2048,
            "data": {"sensitivity": "regulated", "residency": "on_premises", "at": "lab"},
        }
    ],
    "solver": {"time_limit_s": 20, "workers": 2, "seed": 0, "top_k": 3},
}
# Public data on one cloud that sells spot.
CLOUD: dict[str, Any] = {
    "name": "spot-or-not",
    "budget": "50k",
    "deadline": "10d",
    "ops_skill": "expert",
    "policy": {"allow_platforms": ["aws"]},
    "jobs": [
        {"id": "ft", "model": "llama3-8b", "method": "lora", "tokens": "300M", "seq_len": 2048}
    ],
    "solver": {"time_limit_s": 20, "workers": 2, "seed": 0, "top_k": 3},
}


def _load(data: dict[str, Any], tmp_path: Path, **changes: Any):
    raw = copy.deepcopy(data)
    for dotted, value in changes.items():
        node = raw
        *parents, last = dotted.split("__")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return load_scenario_data(raw, tmp_path / "scenario.yaml")


def _buy_prices(loaded) -> dict[str, float]:
    """Price per GPU of every purchase option, in the scenario's currency, straight from the
    catalog."""
    cat, cur = loaded.catalog, loaded.scenario.currency
    return {f"buy:{b.gpu}": cat.to_currency(b.capex_per_gpu, b.currency, cur)
            for p in cat.platforms.values() for b in p.purchase}


# --- 1. purchases against the cash budget
# ------------------------------------------------------------

def test_a_purchase_counts_at_full_price_within_the_cash_budget(tmp_path):
    loaded = _load(ON_PREM, tmp_path)
    result = solve(loaded, SolveOptions())
    assert result.status in ("optimal", "feasible") and result.plans
    prices = _buy_prices(loaded)
    for plan in result.plans:
        bought = [r for r in plan.reservations if r.kind == "purchase"]
        assert bought, "nothing else may run regulated on-premises data"
        full_price = sum(prices[r.key] * r.gpus for r in bought)
        assert full_price <= loaded.scenario.budget
        assert plan.total_cost >= full_price - 0.01
        for r in bought:
            assert r.upfront_cost == pytest.approx(prices[r.key] * r.gpus, abs=0.01)


def test_a_budget_below_the_hardware_price_buys_nothing(tmp_path):
    loaded = _load(ON_PREM, tmp_path, budget="1M")  # one 8x A800 server is 1.5M in the catalog
    result = solve(loaded, SolveOptions(top_k=1))
    assert result.status == "infeasible"
    assert any(c.constraint == "budget" for c in result.conflicts)


def test_amortized_basis_credits_the_residual_value(tmp_path):
    loaded = _load(ON_PREM, tmp_path, budget="1M", budget_basis="amortized")
    problem = build_problem(loaded)
    horizon_h = 120 * 24
    for res in problem.resources.values():
        if res.kind == "purchase":
            econ = res.economics
            assert econ is not None
            share = min(1.0, horizon_h / (econ.life_years * HOURS_PER_YEAR))
            assert res.upfront_per_gpu == pytest.approx(econ.capex_per_gpu * share * 100, abs=1)
    result = solve(loaded, SolveOptions(top_k=1))
    assert result.status == "optimal"
    assert any("amortized" in r.label for r in result.plans[0].reservations)


def test_purchases_only_when_the_scenario_asks(tmp_path):
    silent = _load(ON_PREM, tmp_path, policy={})
    assert not [c for c in build_problem(silent).all_candidates() if c.billing == "purchase"]
    quoted = _load(ON_PREM, tmp_path, policy={}, purchase=[{"gpu": "a800", "price_per_gpu": "200k",
                                                              "source": "vendor quote 2026-11"}])
    problem = build_problem(quoted)
    bought = [c for c in problem.all_candidates() if c.billing == "purchase"]
    assert bought and {c.gpu for c in bought} == {"a800-80gb"}
    assert problem.resources["buy:a800-80gb"].upfront_per_gpu == 200_000 * 100


def test_purchases_compete_where_renting_is_possible_too():
    """Issue 47 item 6 replaces the old rule (a purchase kept only where it paid back against
    renting the same card): buying competes in the model whenever the scenario weighs it, and the
    model takes it only where the whole plan is cheaper; the answer states payback against the best
    plan that rents instead (tests/planner/test_purchase.py)."""
    loaded = load_scenario(REPO / "scenarios" / "frontier_private_vs_hybrid.yaml")
    problem = build_problem(loaded)
    rentable = [job for job in problem.jobs
                if any(c.billing not in ("purchase", "owned") and not c.violations
                       for c in problem.candidates[job])]
    assert rentable
    for job in rentable:
        assert any(c.billing == "purchase" for c in problem.candidates[job])
    assert not any(r.rule == "purchase.payback" for r in problem.removed)


def test_catalog_purchase_prices_sit_in_the_market_range():
    """An 8x H800 server is several million CNY (prices-2026.md: ~2.8M); an A800 one ~1.4-1.5M."""
    catalog = load_catalog()
    for platform in catalog.platforms.values():
        for b in platform.purchase:
            per_server = catalog.to_currency(b.capex_per_gpu, b.currency, "CNY") * (
                b.gpus_per_node or 8
            )
            assert b.source and b.as_of and (b.assumption or not b.assumed)
            if b.gpu == "h800":
                assert 2e6 <= per_server <= 4e6
            if b.gpu == "a800-80gb":
                assert 1e6 <= per_server <= 2e6


def test_catalog_purchases_command_lists_them():
    out = runner.invoke(app, ["catalog", "purchases", "--format", "json"])
    assert out.exit_code == 0
    rows = json.loads(out.stdout)
    assert {"a800-80gb", "h800"} <= {r["gpu"] for r in rows}
    assert all(r["source"] and r["server_price"] >= r["capex_per_gpu"] for r in rows)


# --- 2. spot as an opt-in risk
# ---------------------------------------------------------------------

def test_spot_offers_only_where_the_platform_sells_spot():
    catalog = load_catalog()
    for platform in catalog.platforms.values():
        if any(o.billing == "spot" for o in platform.offers):
            assert platform.spot is not None and platform.spot.source
    bad = {"platforms": [{"id": "lambda", "offers": [
        {"gpu": "h100-sxm", "billing": "spot", "price_per_gpu_period": 1.0, "currency": "USD",
         "source": "x", "as_of": "2026"}]}]}
    with pytest.raises(InputError, match="spot"):
        catalog.overlay(bad, "overlay.yaml")


@pytest.mark.parametrize("allow", [False, True])
def test_no_spot_in_a_plan_unless_allowed(tmp_path, allow):
    loaded = _load(CLOUD, tmp_path, policy__allow_spot=allow)
    result = solve(loaded, SolveOptions())
    assert result.plans
    used = {j.billing for p in result.plans for j in p.jobs}
    if not allow:
        assert "spot" not in used
    else:
        assert "spot" in used  # AWS spot is the cheapest way here, risk and all
        spot_jobs = [j for p in result.plans for j in p.jobs if j.billing == "spot"]
        assert all(j.expected_interruptions > 0 for j in spot_jobs)


def test_spot_risk_is_in_duration_and_cost(tmp_path):
    problem = build_problem(_load(CLOUD, tmp_path, policy__allow_spot=True))
    by_key = {(c.gpu, c.gpus, c.billing): c for c in problem.all_candidates()}
    compared = 0
    for (gpu, gpus, billing), spot in by_key.items():
        hourly = by_key.get((gpu, gpus, "hourly"))
        if billing != "spot" or hourly is None:
            continue
        compared += 1
        assert spot.expected_interruptions > hourly.expected_interruptions
        assert spot.hours > hourly.hours  # lost work, restarts and waiting for capacity
        assert spot.figures.time.spot.preemptions > 0 and spot.figures.time.spot.capacity_wait_h > 0
        assert any(note.startswith("spot on aws") for note in spot.assumptions)
    assert compared


def test_expected_interruptions_are_capped_and_shown(tmp_path, write_scenario):
    data = copy.deepcopy(CLOUD)
    data["policy"].update(allow_spot=True, max_expected_interruptions=0.05)
    path = write_scenario(data)
    out = runner.invoke(app, ["solve", str(path), "--format", "json"])
    assert out.exit_code == 0, out.output
    plans = json.loads(out.stdout)["plans"]
    for plan in plans:
        for job in plan["jobs"]:
            assert job["expected_interruptions"] <= 0.05
    table = runner.invoke(app, ["solve", str(path)])
    assert "expected interruptions" in table.stdout


# --- 3. capacity and start-up delay
# ----------------------------------------------------------------

def _allowances(loaded):
    cat = loaded.catalog
    found = {}
    for platform in cat.platforms.values():
        for offer in platform.offers:
            gpu = cat.gpus[offer.gpu]
            per_node = offer.gpus_per_node or min(
                gpu.gpus_per_node, platform.limits.max_gpus_per_node or gpu.gpus_per_node
            )
            found[(platform.id, offer.gpu, offer.billing)] = allowance(platform, offer, per_node)
    return found


def test_every_allocation_within_its_platform_limits():
    loaded = load_scenario(REPO / "scenarios" / "pretrain_70b_scale.yaml")
    problem = build_problem(loaded)
    limits = _allowances(loaded)
    for c in problem.all_candidates():
        allowed = limits[(c.platform, c.gpu, c.billing)]
        assert c.gpus <= allowed.ceiling
        assert c.startup_min >= round(allowed.startup_for(c.gpus) * 60) - 1
    result = solve(loaded, SolveOptions(top_k=2))
    for plan in result.plans:
        for j in plan.jobs:
            allowed = limits[(j.platform, j.gpu, j.billing)]
            assert j.gpus <= allowed.ceiling
            assert j.start_h >= allowed.startup_for(j.gpus) - 1e-6


def test_an_overlay_raises_a_quota(tmp_path):
    overlay = tmp_path / "quota.yaml"
    overlay.write_text(
        yaml.safe_dump(
            {
                "platforms": [
                    {
                        "id": "lambda",
                        "limits": {
                            "capacity": [
                                {
                                    "max_gpus": 2048,
                                    "startup_h": 2,
                                    "source": "our account manager's quote",
                                    "as_of": "2026-11-28",
                                }
                            ]
                        },
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    scenario = REPO / "scenarios" / "pretrain_70b_scale.yaml"
    before = max(
        c.gpus
        for c in build_problem(load_scenario(scenario)).all_candidates()
        if c.platform == "lambda"
    )
    raised = build_problem(load_scenario(scenario, (overlay,)))
    after = max(c.gpus for c in raised.all_candidates() if c.platform == "lambda")
    assert before <= 512 < after
    assert all(c.startup_min == 120 for c in raised.all_candidates() if c.platform == "lambda")


# --- bad input: one line naming file, field and what is allowed, exit 2
# -------------------------------

@pytest.mark.parametrize(("change", "expected"), [
    ({"budget_basis": "accrual"}, "budget_basis"),
    ({"policy": {"allow_spot": "perhaps"}}, "policy.allow_spot"),
    ({"policy": {"max_expected_interruptions": -1}}, "policy.max_expected_interruptions"),
    ({"purchase": [{"gpu": "rtx4090", "price_per_gpu": "20k"}]}, "purchase[0].gpu"),
    ({"purchase": [{"gpu": "a800", "price": "20k"}]}, "purchase[0].price"),
])
def test_bad_money_and_risk_fields_exit_2(write_scenario, change, expected):
    data = copy.deepcopy(CLOUD)
    data.update(change)
    path = write_scenario(data)
    out = runner.invoke(app, ["validate", str(path)])
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and expected in lines[0], lines


def test_bad_capacity_entry_is_named():
    catalog = load_catalog()
    bad = {"platforms": [{"id": "lambda", "limits": {"capacity": [
        {"max_gpus": 64, "reservation_max_gpus": 8, "source": "x", "as_of": "2026"}]}}]}
    with pytest.raises(InputError, match="reservation_max_gpus"):
        catalog.overlay(bad, "overlay.yaml")


def test_built_in_capacity_spot_and_purchase_figures_cite_public_sources():
    """Every offer is covered by a capacity entry (no silent fallback in the shipped catalog), and
    the money/risk/capacity figures name a public source, not a file outside the repository."""
    catalog = load_catalog()
    for platform in catalog.platforms.values():
        for offer in platform.offers:
            assert platform.limits.capacity_for(offer.gpu, offer.billing) is not None, (
                platform.id,
                offer.gpu,
            )
        sourced = [
            *platform.limits.capacity,
            *platform.purchase,
            *([platform.spot] if platform.spot else []),
        ]
        for entry in sourced:
            assert entry.source and "shared/" not in entry.source, (platform.id, entry.source)
            assert entry.as_of and (entry.assumption or not entry.assumed)


def test_a_platform_without_capacity_figures_gets_one_node_and_says_so(tmp_path):
    overlay = tmp_path / "new-cloud.yaml"
    overlay.write_text(yaml.safe_dump({"platforms": [{
        "id": "new-cloud", "name": "A new cloud", "kind": "rental_cloud", "jurisdiction": "cn",
        "fabric": {"kind": "infiniband", "gbps_per_gpu": 400, "source": "their spec sheet"},
        "source": "their price page", "offers": [
            {"gpu": "h800", "billing": "hourly", "price_per_gpu_period": 1.0, "currency": "CNY",
             "source": "their price page", "as_of": "2026-11"}]}]}), encoding="utf-8")
    data = copy.deepcopy(CLOUD)
    data["policy"] = {"allow_platforms": ["new-cloud"]}
    data["catalog"] = str(overlay)
    problem = build_problem(_load(data, tmp_path))
    mine = [c for c in problem.all_candidates() if c.platform == "new-cloud"]
    assert mine and max(c.gpus for c in mine) <= 8
    assert all(any("no capacity figure" in note for note in c.assumptions) for c in mine)
