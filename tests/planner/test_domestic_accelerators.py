"""A lab limited to the newly catalogued domestic accelerators (Hygon and Cambricon servers of its
own, Ascend 910C on ModelArts) gets a plan, on those cards only, saying what it assumes of them."""

from __future__ import annotations

from plan.models.loading import load_scenario
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.planner.builders import WALL_NET_S

NEW = ["ascend-910b1", "ascend-910b3", "ascend-910b4", "ascend-910c", "hygon-k100-ai",
       "hygon-bw200", "cambricon-mlu370-x8"]


def test_scenario_limited_to_new_accelerators_plans(base_scenario, write_scenario) -> None:
    base_scenario.update(budget="300k", deadline="30d", currency="CNY", ops_skill="expert")
    base_scenario["sites"] = [{"id": "lab", "jurisdiction": "cn"}]
    base_scenario["owned"] = [
        {"id": "lab-k100ai", "site": "lab", "gpu": "hygon-k100-ai", "count": 8,
         "gpus_per_node": 8, "fabric": {"kind": "roce", "gbps_per_gpu": 100},
         "cost_per_gpu_hour": 1.0},
        {"id": "lab-mlu370", "site": "lab", "gpu": "cambricon-mlu370-x8", "count": 8,
         "gpus_per_node": 8, "fabric": {"kind": "roce", "gbps_per_gpu": 100},
         "cost_per_gpu_hour": 0.8},
    ]
    base_scenario["policy"] = {"allow_gpus": NEW}
    base_scenario["jobs"] = [
        {"id": "sft", "model": "qwen2.5-7b", "method": "lora", "lora_rank": 16,
         "tokens": "200M", "seq_len": 4096, "data": {"sensitivity": "internal", "at": "lab"}},
        {"id": "cpt", "model": "qwen2.5-7b", "method": "continued_pretrain", "tokens": "1B",
         "seq_len": 4096, "data": {"sensitivity": "internal", "residency": "cn"}},
    ]
    loaded = load_scenario(write_scenario(base_scenario))
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    assert result.status == "optimal" and result.plans
    for plan in result.plans:
        assert plan.total_cost <= 300_000
        assert {job.gpu for job in plan.jobs} <= set(NEW)
        for job in plan.jobs:
            assert job.memory_gib_per_gpu <= job.gpu_memory_gib
            arch = loaded.catalog.gpus[job.gpu].architecture
            assert any(f"compute efficiency of {arch} GPUs on " in a for a in plan.assumptions)
