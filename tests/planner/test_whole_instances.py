"""Offers sold only as whole instances (`Offer.min_gpus`, `Offer.step`): every candidate rents whole
instances, the plan says so, and a pinned count that is no whole number of instances is refused
with a reason."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from plan.models.catalog import load_catalog
from plan.models.loading import load_scenario
from plan.models.platform import Offer
from plan.planner.candidates import build_problem

OFFER = {"gpu": "b200", "billing": "hourly", "price_per_gpu_period": 6.69, "currency": "USD",
         "source": "test", "as_of": "2026-09-20"}


def test_rented_gpus_round_up_to_whole_instances() -> None:
    offer = Offer.model_validate({**OFFER, "step": 8})
    assert [offer.rented_gpus(n) for n in (1, 2, 8, 9, 16, 17)] == [8, 8, 8, 16, 16, 24]
    least = Offer.model_validate({**OFFER, "min_gpus": 16, "step": 8})
    assert [least.rented_gpus(n) for n in (1, 8, 16, 24)] == [16, 16, 16, 24]
    plain = Offer.model_validate(OFFER)
    assert not plain.sold_by_instance and plain.rented_gpus(3) == 3


def test_min_gpus_must_be_whole_instances() -> None:
    with pytest.raises(ValidationError, match="not a whole number of instances"):
        Offer.model_validate({**OFFER, "min_gpus": 12, "step": 8})


def test_catalog_instance_offers_are_sourced() -> None:
    """Lambda and AWS sell 8-GPU instances; ModelArts' dedicated pools whole nodes (8 910B, 16
    910C): each such offer says so in its source or its platform's notes."""
    catalog = load_catalog()
    for pid in ("lambda", "aws"):
        platform = catalog.platforms[pid]
        assert all(o.step == 8 for o in platform.offers)
        assert "whole instances" in (platform.notes or "")
    modelarts = catalog.platforms["huawei-modelarts"]
    steps = {(o.gpu, o.billing): o.step for o in modelarts.offers}
    assert steps[("ascend-910b", "hourly")] is None
    assert steps[("ascend-910b", "monthly")] == steps[("ascend-910b", "yearly")] == 8
    assert steps[("ascend-910c", "monthly")] == steps[("ascend-910c", "yearly")] == 16
    assert all("whole nodes" in o.source for o in modelarts.offers if o.step)


def _lambda_only(base_scenario, **job):
    base_scenario.update(owned=[], sites=[], budget="1M", ops_skill="expert")
    base_scenario["policy"] = {"allow_platforms": ["lambda"], "allow_gpus": ["h100-sxm"]}
    base_scenario["jobs"] = [{"id": "a", "model": "llama3-8b", "method": "lora", "lora_rank": 16,
                              "tokens": "50M", "seq_len": 2048, **job}]
    return base_scenario


def test_small_job_rents_a_whole_instance(base_scenario, write_scenario) -> None:
    problem = build_problem(load_scenario(write_scenario(_lambda_only(base_scenario))))
    lambda_h100 = [c for c in problem.candidates["a"]
                   if c.platform == "lambda" and c.gpu == "h100-sxm"]
    assert lambda_h100, "the 8-GPU instance must stay a candidate"
    assert all(c.gpus % 8 == 0 for c in lambda_h100)
    assert all(any("only as whole 8-GPU instances" in a and "rents" in a for a in c.assumptions)
               for c in lambda_h100)


def test_pinned_count_below_an_instance_is_refused_with_its_reason(
        base_scenario, write_scenario) -> None:
    problem = build_problem(load_scenario(write_scenario(_lambda_only(base_scenario, gpus=2))))
    assert not [c for c in problem.candidates["a"] if c.platform == "lambda"]
    reasons = [r.reason for r in problem.removed if r.platform == "lambda" and r.gpus == 2]
    assert any("whole 8-GPU instances" in r and "pins gpus: 2" in r for r in reasons)
