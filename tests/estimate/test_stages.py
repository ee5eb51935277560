"""Pipeline splits the stacks can run (planner/estimate/stages.py), and the search proposing only
those."""

from __future__ import annotations

import pytest

from plan.models.catalog import builtin_catalog
from plan.planner.estimate import Cluster, LayoutSpec, search_layout
from plan.planner.estimate.search_space import virtual_stage_candidates
from plan.planner.estimate.stages import (
    megatron_split_flags,
    split_problem,
    torchtitan_layers_per_stage,
)

CATALOG = builtin_catalog()


@pytest.mark.parametrize(
    ("layers", "pp", "virtual", "flags"),
    [
        (80, 4, 20, ()),  # NeMo's Llama 2 70B: 20 layers per stage, one per chunk
        (
            126,
            16,
            4,
            ("--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"),
        ),
        (
            80,
            12,
            1,
            ("--decoder-first-pipeline-num-layers 5", "--decoder-last-pipeline-num-layers 5"),
        ),
        (
            32,
            3,
            1,
            ("--decoder-first-pipeline-num-layers 10", "--decoder-last-pipeline-num-layers 11"),
        ),
        (80, 12, 2, None),  # 7 layers on the middle stages: no two equal chunks
        (92, 4, 2, None),  # 23 layers per stage
        (92, 4, 23, ()),
    ],
)
def test_megatron_splits(layers: int, pp: int, virtual: int, flags: tuple[str, ...] | None) -> None:
    assert megatron_split_flags(layers, pp, virtual) == flags
    assert (split_problem(layers, pp, virtual, "megatron") is None) == (flags is not None)


def test_megatron_uneven_split_keeps_every_stage_at_most_the_middle_one_and_a_multiple_of_v() -> (
    None
):
    for layers in range(8, 130):
        for pp in range(2, 17):
            for virtual in (1, 2, 3, 4):
                flags = megatron_split_flags(layers, pp, virtual)
                if not flags or not flags[0].startswith("--decoder"):
                    continue
                first, last = (int(f.split()[-1]) for f in flags)
                per = -(-layers // pp)
                assert first + last + per * (pp - 2) == layers if pp > 2 else first + last == layers
                assert 1 <= first <= per and 1 <= last <= per
                assert first % virtual == last % virtual == per % virtual == 0


def test_torchtitan_needs_a_layers_per_stage_value() -> None:
    # (32 + 2) / 9 -> 4 stages (launch-configs.md's worked example); 80 layers cannot make 24 stages
    assert torchtitan_layers_per_stage(32, 4) == 9
    assert torchtitan_layers_per_stage(80, 24) is None
    assert split_problem(80, 12, 2, "fsdp") is not None
    assert split_problem(126, 16, 4, "fsdp") is None
    assert split_problem(32, 2, 2, "deepspeed") is not None  # no interleaving in DeepSpeed's engine
    assert split_problem(33, 4, 1, "deepspeed") is None


def test_virtual_stage_candidates_include_the_divisors_of_a_stage() -> None:
    assert virtual_stage_candidates(80, 4) == (1, 2, 4, 10, 20)  # the two largest above 4
    assert virtual_stage_candidates(126, 16) == (1, 2, 4, 8)
    assert virtual_stage_candidates(80, 1) == (1,)
    assert virtual_stage_candidates(105, 35) == (1, 2, 3)  # 3 layers per stage: one per chunk


@pytest.mark.parametrize(("model", "gpu", "gpus", "seq_len", "global_batch"), [
    ("qwen2.5-72b", "h800", 48, 4096, 512),        # 80 layers: pp=12 with vpp=2 was proposed before
    ("llama3.1-405b", "h100-sxm", 2048, 8192, 1024),
    ("llama3.1-70b", "h100-sxm", 512, 8192, 512),
])
def test_the_search_proposes_only_splits_its_framework_runs(
    model: str, gpu: str, gpus: int, seq_len: int, global_batch: int
) -> None:
    card = CATALOG.model(model)
    found = search_layout(card, "pretrain", Cluster.of(CATALOG.gpu(gpu), gpus),
                          LayoutSpec(seq_len=seq_len, global_batch=global_batch))
    assert found.best is not None
    lay = found.best.layout
    assert split_problem(card.layers, lay.pp, lay.virtual_pipeline, lay.framework) is None


def test_a_fixed_split_no_stack_runs_is_refused_with_the_reason() -> None:
    card = CATALOG.model("qwen2.5-72b")
    cluster = Cluster.of(CATALOG.gpu("h800"), 48)
    with pytest.raises(ValueError, match=r"^virtual_pipeline: Megatron cannot split 80 layers .*; "
                                         r"torchtitan has no"):
        search_layout(
            card,
            "pretrain",
            cluster,
            LayoutSpec(tp=4, pp=12, virtual_pipeline=2, seq_len=4096, global_batch=512),
        )
    # searched, the same pp keeps to the virtual stages a stack runs
    found = search_layout(
        card, "pretrain", cluster, LayoutSpec(tp=4, pp=12, seq_len=4096, global_batch=512)
    )
    assert found.best is not None and found.best.layout.virtual_pipeline == 1
    assert found.reasons["no stack splits the layers so (pipeline stages)"] > 0


def test_megatron_interleaves_only_with_at_least_pp_micro_batches() -> None:
    # Megatron runs interleaved micro-batches in groups of pp: fewer than pp per step is refused, so
    # the search never proposes it; torchtitan's interleaved schedule only warns, and stays
    # searchable
    card = CATALOG.model("llama3-70b")
    cluster = Cluster.of(CATALOG.gpu("h100-sxm"), 64)
    for gb in (4, 8, 16):
        result = search_layout(
            card,
            "pretrain",
            cluster,
            LayoutSpec(tp=8, pp=8, global_batch=gb, seq_len=4096, framework="megatron"),
        )
        assert result.best is not None
        lay = result.best.layout
        micro_batches = -(-lay.global_batch // lay.dp // lay.micro_batch)
        assert lay.virtual_pipeline == 1 or micro_batches >= lay.pp
    few = search_layout(
        card,
        "pretrain",
        cluster,
        LayoutSpec(tp=8, pp=8, global_batch=4, seq_len=4096, framework="megatron"),
    )
    assert (
        few.reasons.get("Megatron interleaves only with at least pp micro-batches per step", 0) > 0
    )
    with pytest.raises(ValueError, match="at least pp = 8 micro-batches"):
        search_layout(
            card,
            "pretrain",
            cluster,
            LayoutSpec(
                tp=8, pp=8, global_batch=4, seq_len=4096, framework="megatron", virtual_pipeline=2
            ),
        )
    titan = search_layout(
        card,
        "pretrain",
        cluster,
        LayoutSpec(tp=8, pp=4, global_batch=2, seq_len=4096, framework="fsdp", virtual_pipeline=2),
    )
    assert titan.best is not None and titan.best.layout.virtual_pipeline == 2


def test_exact_batch_stacks_take_micro_batches_that_fill_the_replica_batch() -> None:
    # Megatron (gbs % (mbs * dp) == 0), DeepSpeed (train_batch_size) and the Hugging Face Trainer
    # run micro-batch x accumulation = the per-replica batch exactly; FSDP as Composer runs it may
    # end a step on a smaller micro-batch. 120 sequences over dp = 8 leave 15 per replica (divisors
    # 1, 3, 5, 15).
    card = CATALOG.model("llama3.1-8b")
    cluster = Cluster.of(CATALOG.gpu("h100-sxm"), 8)
    for name, spec in {
        "megatron": LayoutSpec(framework="megatron", tp=1, pp=1, global_batch=120, seq_len=2048),
        "deepspeed": LayoutSpec(framework="deepspeed", tp=1, pp=1, global_batch=120, seq_len=2048),
        "one-click": LayoutSpec(
            tp=1, pp=1, global_batch=120, seq_len=2048, pytorch_stacks_only=True
        ),
        "fsdp": LayoutSpec(framework="fsdp", tp=1, pp=1, global_batch=120, seq_len=2048),
    }.items():
        best = search_layout(card, "full_finetune", cluster, spec).best
        assert best is not None and best.layout.dp == 8
        # the balanced size: as few micro-batches as the largest fitting size allows
        if name == "fsdp":
            mb = best.layout.micro_batch
            assert mb == -(-15 // -(-15 // mb))
        else:
            assert 15 % best.layout.micro_batch == 0, (name, best.layout.micro_batch)
