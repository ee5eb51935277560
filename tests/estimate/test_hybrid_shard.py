"""FSDP hybrid sharding (HSDP): the model states sharded over the data-parallel ranks of one node
and replicated across nodes. Its memory is the full shard's times the replicas, its gathers stay
inside the node, the search takes it only where it is faster, and every export writes it or refuses
it by name."""

from __future__ import annotations

from dataclasses import replace

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.scenario import Job
from plan.planner.estimate import Cluster, LayoutSpec, estimate, search_layout
from plan.planner.export import ExportError, build_layout, render_stack
from tests.export.helpers import check_identities, parse_all
from tests.export.test_export_golden import _plan

CATALOG = builtin_catalog()
LLAMA8B = CATALOG.model("llama3.1-8b")
H100 = CATALOG.gpu("h100-sxm")


def _full_shard(gpus: int = 32, fabric_gbps: float | None = None) -> tuple[Cluster, object]:
    cluster = Cluster.of(H100, gpus)
    if fabric_gbps is not None:
        cluster = replace(cluster, fabric_gbps_per_gpu=fabric_gbps)
    spec = LayoutSpec(
        framework="fsdp",
        tp=1,
        pp=1,
        zero=3,
        recompute="none",
        micro_batch=1,
        global_batch=64,
        seq_len=4096,
        hybrid_shard=False,
    )
    found = search_layout(LLAMA8B, "pretrain", cluster, spec).best
    assert found is not None and found.layout.shard_group is None
    return cluster, found


def test_its_states_are_the_full_shards_times_the_replicas() -> None:
    cluster, full = _full_shard(32)
    hybrid = estimate(LLAMA8B, "pretrain", cluster, replace(full.layout, shard_group=8))
    assert hybrid.layout.replicas == 4 and hybrid.layout.state_shards == 8
    for part in ("weights_gib", "gradients_gib", "optimizer_gib"):
        assert getattr(hybrid.memory, part) == pytest.approx(
            4 * getattr(full.memory, part), rel=1e-9
        )
    assert hybrid.memory.activations_gib == pytest.approx(full.memory.activations_gib)
    assert any(
        "hybrid sharding (HSDP)" in note and "kept in 4 copies" in note for note in hybrid.notes
    )
    assert "zero=3/hsdp8" in hybrid.layout.short()


def test_its_gathers_stay_in_the_node_so_a_slower_fabric_costs_it_less() -> None:
    """A slower network between nodes slows the full shard's layer gathers and reductions, which
    cross it; the hybrid shard moves only each gradient shard's all-reduce across it (an eighth of
    the bytes)."""
    costs = {}
    for gbps in (400.0, 25.0):
        cluster, full = _full_shard(32, gbps)
        hybrid = estimate(LLAMA8B, "pretrain", cluster, replace(full.layout, shard_group=8))
        costs[gbps] = (full.time.dp_comm_s, hybrid.time.dp_comm_s)
    full_rise = costs[25.0][0] - costs[400.0][0]
    hybrid_rise = costs[25.0][1] - costs[400.0][1]
    assert full_rise > 0 and 0 <= hybrid_rise < full_rise
    assert costs[25.0][1] < costs[25.0][0]  # on the slow network the hybrid shard exposes less


@pytest.mark.parametrize("fabric_gbps", [25.0, 400.0])
def test_the_search_takes_it_only_where_it_is_faster(fabric_gbps: float) -> None:
    cluster = replace(Cluster.of(H100, 64), fabric_gbps_per_gpu=fabric_gbps)
    base = LayoutSpec(framework="fsdp", seq_len=4096, global_batch=128)
    searched, never, forced = (
        search_layout(LLAMA8B, "pretrain", cluster, replace(base, hybrid_shard=h)).best
        for h in (None, False, True)
    )
    assert searched is not None and never is not None and forced is not None
    assert never.layout.shard_group is None and forced.layout.shard_group
    assert searched.tokens_per_s >= max(never.tokens_per_s, forced.tokens_per_s) * (1 - 1e-9)
    assert bool(searched.layout.shard_group) == (forced.tokens_per_s > never.tokens_per_s)


@pytest.mark.parametrize(("change", "why"), [
    (dict(framework="megatron"), "framework megatron has none"),
    (dict(zero=1), "zero is 1"),
    (dict(state_offload=True), "CPU offload"),
    (dict(tp=8), "tp 8 leaves fewer than two"),
])
def test_a_stated_hybrid_shard_that_cannot_be_is_refused(change: dict, why: str) -> None:
    spec = replace(LayoutSpec(seq_len=4096, hybrid_shard=True), **change)
    with pytest.raises(ValueError, match=f"hybrid_shard: .*{why}"):
        search_layout(LLAMA8B, "pretrain", Cluster.of(H100, 32), spec)
    with pytest.raises(ValueError, match="no nodes to replicate across"):
        search_layout(
            LLAMA8B, "pretrain", Cluster.of(H100, 8), LayoutSpec(seq_len=4096, hybrid_shard=True)
        )


def test_a_stated_hybrid_shard_that_does_not_fit_is_an_answer_not_a_refusal() -> None:
    """70B on two nodes of 8 H100s: its states kept in two copies need far more than a card, and CPU
    offload (tried where nothing fits) would move the full shard to the host, which hybrid sharding
    is not: the answer is the least-memory hybrid layout, judged not to fit, not the refusal of an
    offload nobody asked for."""
    spec = LayoutSpec(seq_len=8192, tp=1, pp=1, hybrid_shard=True)
    result = search_layout(CATALOG.model("llama3.1-70b"), "pretrain", Cluster.of(H100, 16), spec)
    assert result.best is None and result.closest is not None
    assert result.closest.layout.shard_group == 8 and not result.closest.layout.state_offload
    assert not result.closest.fits


def test_a_stated_hybrid_shard_whose_split_leaves_no_node_two_ranks_says_so() -> None:
    """16 GPUs in two nodes at pp 8: each node holds one pipeline, so the two data-parallel ranks
    sit one to a node and there is nothing to shard inside one. The refusal says that, not only 'tp
    spans nodes'. (12 GPUs in nodes of 8 have no whole nodes to shard inside either.)"""
    spec = LayoutSpec(seq_len=4096, pp=8, hybrid_shard=True)
    result = search_layout(
        CATALOG.model("llama3.2-1b"),
        "full_finetune",
        Cluster.of(CATALOG.gpu("a100-80gb"), 16),
        spec,
    )
    assert result.best is None
    assert result.reasons.get("hybrid sharding needs the data-parallel ranks in whole nodes, two "
                              "or more to a node")


def _export_layout(zero: int = 3, cp: int = 1):
    job = Job(
        id="pre",
        model="llama3-8b",
        method="pretrain",
        tokens=64 * 4096 * 100,
        seq_len=4096,
        global_batch=64,
    )
    plan = _plan(
        "pre",
        32,
        4,
        dp=32 // cp,
        cp=cp,
        zero=zero,
        recompute="full",
        global_batch=64,
        seq_len=4096,
        framework="fsdp",
        shard_group=8,
    )
    return build_layout(plan, job, CATALOG.model("llama3-8b"))


def test_the_fsdp_stacks_write_the_shard_and_replicate_degrees() -> None:
    layout = _export_layout()
    assert (layout.dp_shard, layout.dp_replicate) == (8, 4)
    assert "hybrid-sharded" in layout.paragraph()
    files, _ = render_stack(layout, "torchtitan")
    check_identities("torchtitan", layout, files)
    parallel = next(value["parallelism"] for value in parse_all(files).values()
                    if isinstance(value, dict) and "parallelism" in value)
    assert (parallel["data_parallel_replicate_degree"], parallel["data_parallel_shard_degree"]) == (
        4,
        8,
    )
    for stack in ("accelerate", "torchrun-fsdp"):
        files, _ = render_stack(layout, stack)
        check_identities(stack, layout, files)
        config = parse_all(files)["accelerate_config.yaml"]["parallelism_config"]
        assert (
            config["parallelism_config_dp_replicate_size"],
            config["parallelism_config_dp_shard_size"],
        ) == (4, 8)
    # with context parallelism the shard group holds cp ranks too: FSDP's shard degree is the dp
    # part
    with_cp = _export_layout(cp=2)
    assert (with_cp.dp_shard, with_cp.dp_replicate) == (4, 4)


@pytest.mark.parametrize("stack", ["deepspeed", "megatron", "llamafactory"])
def test_the_stacks_without_it_refuse_it_by_name(stack: str) -> None:
    with pytest.raises(ExportError, match=f"{stack}: no hybrid sharding"):
        render_stack(_export_layout(), stack)


def test_a_team_kept_to_the_one_click_path_gets_none() -> None:
    """LLaMA-Factory's multi-GPU sharding goes through DeepSpeed, which has no hybrid shard (its
    export refuses one), so a team planned on that path is never given one, even where it would be
    faster."""
    cluster = replace(Cluster.of(H100, 64), fabric_gbps_per_gpu=25.0)
    spec = LayoutSpec(framework="fsdp", seq_len=4096, global_batch=128)
    assert search_layout(LLAMA8B, "full_finetune", cluster, spec).best.layout.shard_group
    kept = search_layout(
        LLAMA8B, "full_finetune", cluster, replace(spec, pytorch_stacks_only=True)
    ).best
    assert kept is not None and kept.layout.shard_group is None


def test_its_shard_group_holds_whole_context_parallel_groups() -> None:
    """FSDP shards over dp_shard x cp: a context-parallel group that does not fit in a node leaves
    no hybrid shard inside it."""
    from plan.planner.estimate.estimator import layout_problems
    from plan.planner.estimate.flops import shape_of
    from plan.planner.estimate.types import hybrid_shard_group

    assert hybrid_shard_group("fsdp", 3, 1, 32, 8, cp=2) == 8
    assert hybrid_shard_group("fsdp", 3, 1, 32, 8, cp=16) == 0
    cluster, full = _full_shard(32)
    split = replace(full.layout, dp=2, cp=16, seq_len=65536, shard_group=8)
    assert any(
        "whole context-parallel groups" in p
        for p in layout_problems(shape_of(LLAMA8B), "pretrain", cluster, split)
    )
