"""FSDP hybrid sharding in plans: a pod of 64 H100s joined by a slow network (25 Gb/s per GPU) that
must pre-train an 8B model within 12 hours gets it across nodes where it is faster than the full
shard; the plan line says so, the layout carries it into the exports, and a stack without it refuses
by name."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from plan.models.loading import load_scenario
from plan.planner.candidates import build_problem
from plan.planner.export import ExportError, build_layout
from plan.planner.export.writer import render_stack
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.planner.builders import WALL_NET_S


def _pod(base_scenario: dict[str, Any], gbps: float) -> dict[str, Any]:
    base_scenario.update(
        budget="100000",
        deadline="12h",
        ops_skill="expert",
        academic=False,
        policy={},
        sites=[{"id": "site", "jurisdiction": "cn"}],
        owned=[
            {
                "id": "pod",
                "site": "site",
                "gpu": "h100-sxm",
                "count": 64,
                "gpus_per_node": 8,
                "cost_per_gpu_hour": 10,
                "fabric": {"kind": "ethernet", "gbps_per_gpu": gbps},
            }
        ],
    )
    base_scenario["jobs"] = [
        {
            "id": "pre8b",
            "model": "llama3.1-8b",
            "method": "pretrain",
            "tokens": "5B",
            "seq_len": 4096,
            "global_batch": 128,
            "framework": "fsdp",
            "data": {"sensitivity": "regulated", "residency": "on_premises", "at": "site"},
        }
    ]
    return base_scenario


def test_a_slow_network_gets_it_and_the_plan_says_so(base_scenario, write_scenario):
    loaded = load_scenario(write_scenario(_pod(base_scenario, 25)))
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    assert result.plans
    (job,) = result.plans[0].jobs
    assert job.nodes > 1 and job.shard_group == 8 and job.zero >= 2
    line = next(x for x in result.plans[0].explanation if x.startswith(f"pre8b: {job.gpus}x "
                                                                       "h100-sxm on pod"))
    assert "hybrid-sharded over 8 per node" in line
    gain = next(x for x in result.plans[0].explanation if "hybrid sharding (HSDP" in x)
    assert (
        gain.startswith("pre8b: ")
        and "faster than the full shard" in gain
        and "25 Gb/s per GPU ethernet" in gain
    )
    # the pool's declared network, not the fabric a cluster without a platform is assumed to have
    assert not any("no platform given" in note for note in result.plans[0].assumptions)
    layout = build_layout(job, loaded.scenario.jobs[0], loaded.models["pre8b"])
    assert (layout.dp_shard, layout.dp_replicate) == (8, job.dp // 8)
    files, _ = render_stack(layout, "torchtitan")
    toml = next(text for name, text in files.items() if name.endswith(".toml"))
    assert (
        f"data_parallel_replicate_degree = {job.dp // 8}" in toml
        and "data_parallel_shard_degree = 8" in toml
    )
    with pytest.raises(ExportError, match="deepspeed: no hybrid sharding"):
        render_stack(layout, "deepspeed")


def test_every_hybrid_candidate_is_faster_than_the_full_shard_of_its_place(
    base_scenario, write_scenario
):
    """The search keeps the full shard unless the hybrid one is faster: on a fast network (400 Gb/s
    per GPU) and a slow one, each hybrid candidate beats the full-shard layout of the same GPU
    count."""
    from plan.models.catalog import builtin_catalog
    from plan.planner.estimate import Cluster, LayoutSpec, search_layout

    for gbps in (25.0, 400.0):
        problem = build_problem(load_scenario(write_scenario(_pod(base_scenario, gbps))))
        hybrid = [
            c for c in problem.all_candidates() if c.layout.shard_group and c.platform == "pod"
        ]
        for c in hybrid:
            cluster = replace(
                Cluster.of(builtin_catalog().gpu("h100-sxm"), c.gpus, gpus_per_node=8),
                fabric_gbps_per_gpu=gbps,
            )
            full = search_layout(
                builtin_catalog().model("llama3.1-8b"),
                "pretrain",
                cluster,
                LayoutSpec(
                    seq_len=4096,
                    global_batch=128,
                    framework="fsdp",
                    hybrid_shard=False,
                    memory_headroom=0.08,
                ),
            ).best
            assert full is None or c.tokens_per_s >= full.tokens_per_s * 0.999, c.name
        if gbps == 25.0:
            assert hybrid  # the slow network has some


def _jobs_line(result: Any, job_id: str) -> str:
    return next(
        x
        for x in result.plans[0].explanation
        if "hybrid sharding (HSDP" in x and x.startswith(job_id)
    )


def test_a_job_states_it_or_forbids_it(base_scenario, write_scenario):
    """`hybrid_shard: false` keeps the slow pod's job on the full shard (a slower plan, as asked);
    `true` on a fast network, where the search keeps the full shard, shards hybrid all the same and
    says so and at what speed."""
    slow = _pod(base_scenario, 25)
    slow["jobs"][0]["hybrid_shard"] = False
    never = solve(load_scenario(write_scenario(slow, "never.yaml")),
        SolveOptions(time_limit_s=WALL_NET_S))
    assert never.plans and not any(job.shard_group for job in never.plans[0].jobs)
    assert not any("hybrid sharding (HSDP" in x for x in never.plans[0].explanation)

    fast = _pod(base_scenario, 400)
    searched = solve(
        load_scenario(write_scenario(fast, "searched.yaml")), SolveOptions(time_limit_s=WALL_NET_S)
    )
    assert searched.plans and not any(job.shard_group for job in searched.plans[0].jobs)
    fast["jobs"][0]["hybrid_shard"] = True
    stated = solve(
        load_scenario(write_scenario(fast, "stated.yaml")), SolveOptions(time_limit_s=WALL_NET_S)
    )
    assert stated.plans
    (job,) = stated.plans[0].jobs
    assert job.shard_group == 8 and job.nodes > 1
    line = _jobs_line(stated, "pre8b")
    assert "the job states hybrid_shard: true" in line and "than the full shard" in line


@pytest.mark.parametrize(("change", "why"), [
    ({"framework": "megatron"}, "hybrid sharding is FSDP's (HSDP); framework megatron has none"),
    ({"cpu_offload": True}, "hybrid sharding keeps the shards on the GPUs"),
    ({"layout": {"zero": 1}}, "hybrid sharding shards ZeRO-2/3 states inside a node; layout.zero "
                              "is 1"),
])
def test_a_stated_hybrid_shard_that_cannot_be_is_one_line(
    base_scenario, write_scenario, change, why
):
    from plan.models.errors import InputError

    data = _pod(base_scenario, 25)
    data["jobs"][0].update(hybrid_shard=True, **change)
    with pytest.raises(InputError) as raised:
        load_scenario(write_scenario(data))
    assert any(why in line and "hybrid_shard" in line for line in raised.value.problems), (
        raised.value.problems
    )


def test_a_stated_hybrid_shard_no_option_can_run_is_an_answer_naming_it(
    base_scenario, write_scenario
):
    """A team with no ops skill is kept to LLaMA-Factory's one-click path, whose sharding is
    DeepSpeed's: a job that states hybrid_shard: true has no option left, and the answer says why
    and offers to let the planner choose, not a smaller model."""
    data = _pod(base_scenario, 25)
    data.update(ops_skill="none")
    data["jobs"][0]["hybrid_shard"] = True
    result = solve(load_scenario(write_scenario(data)), SolveOptions(time_limit_s=WALL_NET_S))
    assert result.status == "infeasible" and not result.plans
    assert any(
        "one-click path" in c.detail and "hybrid shard" in c.detail for c in result.conflicts
    )
    assert any(r.field == "jobs[pre8b].hybrid_shard" and "let the planner choose" in r.detail
               for r in result.relaxations), result.relaxations
