"""Moving data in and results out: hours in the job's duration, egress fees in its cost."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from plan.models.loading import load_scenario, load_scenario_data
from plan.models.scenario import Job
from plan.planner.candidates import build_problem
from plan.planner.candidates.transfer import RESULT_BYTES_PER_PARAM, result_size_gb
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import REPO
from tests.planner.builders import WALL_NET_S

BASE = {
    "name": "egress-check", "currency": "CNY", "objective": "cost",
    "sites": [{"id": "lab", "jurisdiction": "cn"}],
    "policy": {"allow_platforms": ["tencent-ti-one"]},
    "jobs": [{"id": "ft", "model": "qwen3-0.6b", "method": "sft", "tokens": "20M", "seq_len": 2048,
              "data": {"sensitivity": "public", "size": "20GB", "at": "lab"}}],
    "solver": {"work_limit": 10, "time_limit_s": 30, "workers": 1, "seed": 0, "top_k": 1},
}


def _solve(raw: dict):
    loaded = load_scenario_data(raw, Path("egress-check.yaml"))
    return loaded, solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))


def test_result_size_is_the_model_or_its_adapters():
    loaded = load_scenario_data(BASE, Path("x.yaml"))
    card = loaded.models["ft"]
    full = result_size_gb(card, loaded.scenario.jobs[0])
    assert full == pytest.approx(card.params * RESULT_BYTES_PER_PARAM / 1e9)
    lora_job = Job.model_validate({**BASE["jobs"][0], "method": "lora_dpo", "lora_rank": 16})
    assert 0 < result_size_gb(card, lora_job) < full / 20


def test_result_leaving_a_cloud_pays_its_egress_and_takes_time():
    loaded, result = _solve(BASE)
    job = result.plans[0].jobs[0]
    assert job.platform == "tencent-ti-one"
    gb = result_size_gb(loaded.models["ft"], loaded.scenario.jobs[0])
    assert job.figures.cost.result_gb == pytest.approx(gb)
    # 0.8 CNY/GB, the catalog's TI-ONE figure
    assert job.figures.cost.egress_cost == pytest.approx(0.8 * gb)
    # assumed 1 Gb/s internet
    assert job.figures.time.transfer_out_h == pytest.approx(gb * 8 / 1.0 / 3600)
    assert job.cost >= job.figures.cost.egress_cost
    assert any(line.startswith("transfer for ft:") for line in result.plans[0].explanation)


def test_no_site_means_nothing_comes_home_and_no_fee():
    raw = copy.deepcopy(BASE)
    del raw["sites"]
    raw["jobs"][0]["data"] = {"sensitivity": "public"}
    _, result = _solve(raw)
    job = result.plans[0].jobs[0]
    assert job.figures.cost.egress_cost == 0 and job.figures.time.transfer_out_h == 0
    with_site = _solve(BASE)[1].plans[0]
    # the egress fee (and held hours) cost money
    assert with_site.total_cost > result.plans[0].total_cost
    assert with_site.makespan_h >= result.plans[0].makespan_h


def test_platform_without_egress_figure_is_not_charged_and_says_so():
    raw = copy.deepcopy(BASE)
    raw["policy"] = {"allow_platforms": ["autodl"]}
    _, result = _solve(raw)
    plan = result.plans[0]
    job = plan.jobs[0]
    assert (
        job.platform == "autodl"
        and job.figures.cost.egress_cost == 0
        and job.figures.time.transfer_out_h > 0
    )
    assert any("publishes no egress price" in a for a in plan.assumptions)


def test_patient_data_never_lands_on_rental_clouds():
    """The hospital's regulated LoRA job: every candidate on the new rental clouds and Volcano
    Engine breaks a sensitivity or residency rule, so no plan can put it there however cheap they
    are."""
    problem = build_problem(load_scenario(REPO / "scenarios" / "medical_hybrid.yaml"))
    new = {"autodl", "gpushare", "matpool", "volcengine-ml"}
    for c in problem.candidates["clinical-sft"]:
        if c.platform in new:
            assert any(g.startswith(("sensitivity/", "residency/")) for g in c.violations), (
                c.platform
            )
    # public data may go there
    assert any(c.platform in new for c in problem.candidates["domain-cpt"])


def test_a_private_line_carries_the_result_without_a_per_gb_fee():
    raw = copy.deepcopy(BASE)
    raw["sites"] = [{"id": "lab", "jurisdiction": "cn",
                     "links": [{"to": "tencent-ti-one", "kind": "private_line", "gbps": 10}]}]
    loaded, result = _solve(raw)
    job = result.plans[0].jobs[0]
    gb = result_size_gb(loaded.models["ft"], loaded.scenario.jobs[0])
    assert job.platform == "tencent-ti-one" and job.figures.cost.egress_cost == 0
    # at the line's 10 Gb/s
    assert job.figures.time.transfer_out_h == pytest.approx(gb * 8 / 10 / 3600)
    assert any("private line" in a for a in result.plans[0].assumptions)


def test_data_uploaded_before_the_gpus_are_rented_delays_the_job_but_is_not_billed():
    """5 TB behind the lab's 100 Mb/s internet: the upload takes 111 h before training can start.
    Users upload a dataset to the platform's storage first, so the job ends that much later but its
    GPU bill is the training's: each option costs what it costs with the data already there.
    Platforms the lab declares no link to are reached no faster than the internet speed it
    declares."""
    small, large = copy.deepcopy(BASE), copy.deepcopy(BASE)
    for raw, size in ((small, "1GB"), (large, "5TB")):
        raw["sites"] = [{"id": "lab", "jurisdiction": "cn",
                         "links": [{"to": "aliyun-pai", "kind": "internet", "gbps": 0.1}]}]
        raw["policy"] = {}
        raw["jobs"][0]["data"]["size"] = size
    problems = [
        build_problem(load_scenario_data(raw, Path("upload.yaml"))) for raw in (small, large)
    ]
    before, after = (
        {(c.platform, c.gpu, c.gpus, c.billing): c for c in p.candidates["ft"]} for p in problems
    )
    hourly = [k for k in before.keys() & after.keys() if k[3] == "hourly"]
    assert hourly
    for key in hourly:
        b, a = before[key], after[key]
        upload_h = a.figures.time.transfer_in_h - b.figures.time.transfer_in_h
        # 0.1 Gb/s everywhere
        assert upload_h == pytest.approx((5000 - 1) * 8 / 0.1 / 3600, rel=1e-6)
        assert a.cost == b.cost  # the GPUs are not billed for the upload
        assert a.duration_min - b.duration_min == pytest.approx(upload_h * 60, abs=2)
