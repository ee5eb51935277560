"""The 信创 case the guide describes: Ascend only, confidential data, Huawei ModelArts. It must plan
on ModelArts out of the box, every plan keeping the data rule (dedicated hardware and encryption,
so ModelArts' dedicated pools and never its public hourly pool), with the facts it relies on
sourced in the catalog."""

from __future__ import annotations

import pytest

from plan.constraints.sensitivity import RULES
from plan.models.catalog import load_catalog
from plan.models.loading import load_scenario
from plan.planner.candidates import build_problem
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import REPO
from tests.planner.builders import WALL_NET_S

XINCHUANG = REPO / "scenarios" / "xinchuang_ascend.yaml"


@pytest.fixture(scope="module")
def solved():
    loaded = load_scenario(XINCHUANG)
    return loaded, solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))


def test_plans_on_modelarts_within_budget(solved) -> None:
    loaded, result = solved
    scenario = loaded.scenario
    assert result.status == "optimal" and result.plans
    ascend = {g.id for g in loaded.catalog.gpus.values() if g.vendor == "huawei"}
    for plan in result.plans:
        assert scenario.budget is not None and plan.total_cost <= scenario.budget
        for job in plan.jobs:
            assert job.platform == "huawei-modelarts" and job.gpu in ascend
            assert job.end_h <= scenario.effective_deadline_h(scenario.job(job.job)) + 1e-6
            assert job.memory_gib_per_gpu <= job.gpu_memory_gib


def test_every_plan_keeps_the_confidential_data_rule(solved) -> None:
    """Each job runs where the platform, less what the offer lacks, has every feature the data's
    rule needs: the public hourly pool (not dedicated) never carries confidential data."""
    loaded, result = solved
    catalog = loaded.catalog
    for plan in result.plans:
        for job in plan.jobs:
            data = loaded.scenario.job(job.job).data
            assert data.sensitivity == "confidential"
            platform = catalog.platforms[job.platform]
            offer = next(o for o in platform.offers
                         if o.gpu == job.gpu and o.billing == job.billing)
            has = {k for k, v in platform.features.model_dump().items() if v} - set(offer.lacks)
            assert set(RULES[data.sensitivity].needs) <= has
            assert job.billing in ("monthly", "yearly")
        # what the plan relies on is said, with what the user must do for it
        assert any("relies on encryption on huawei-modelarts" in a and "OBS" in a
                   for a in plan.assumptions)


def test_public_pool_is_ruled_out_for_the_data_rule() -> None:
    problem = build_problem(load_scenario(XINCHUANG))
    hourly = [c for cs in problem.candidates.values() for c in cs
              if c.platform == "huawei-modelarts" and c.billing == "hourly"]
    assert hourly and all(any(k.startswith("sensitivity/") for k in c.violations)
                          and "dedicated_hardware" in " ".join(c.violations.values())
                          for c in hourly)


def test_modelarts_facts_the_rule_needs_are_sourced() -> None:
    """The features the confidential rule needs, on ModelArts, each carry a public source with its
    date (not an assumption); the others at least a source or a stated rule."""
    modelarts = load_catalog().platforms["huawei-modelarts"]
    for name in RULES["confidential"].needs:
        fact = modelarts.feature_facts[name]
        assert not fact.assumed and fact.as_of and "https://" in fact.source
    for name in ("private_line", "checkpoint_resume", "domestic_compliance"):
        fact = modelarts.feature_facts[name]
        assert fact.source and (fact.as_of or fact.assumption)
