"""What the training stacks can run (docs/sources/launch-configs.md and the exporters), kept by the
estimator and the search so that no plan names a layout no stack runs:
- DeepSpeed's pipeline engine runs ZeRO stage 0 or 1 only: `PipelineModule` asserts stage < 2
("ZeRO-2 and
  ZeRO-3 are incompatible with pipeline parallelism"); its exporter refuses the rest too; and no FP8
  (its JSON has none, and accelerate, which runs FP8 on DeepSpeed, does not pipeline);
- Megatron's context parallelism cuts each sequence into 2 x cp chunks (`seq % (2 * cp) == 0`), and
it and the
  FSDP family run ring attention through flash kernels only (DeepSpeed's Ulysses runs any attention,
  in BF16: the deepspeed export's JSON has no FP8, and accelerate, which runs FP8 on DeepSpeed,
  splits no sequence there);
- no FSDP-family stack pipelines LoRA/QLoRA, DPO, a PyTorch optimizer or fp16, none
tensor-parallelizes a
  4-bit QLoRA base;
- tp or cp beside replicated (ZeRO-0) data parallelism runs on torchtitan alone (AdamW or Adam, bf16
or fp8);
- offloaded checkpoints run data-parallel only (no tp, pp, cp or ep), fully sharded (no HSDP), and
not with
  pure BF16 AdamW on ZeRO-3, nor beside offloaded model states with another optimizer than Adam;
  offloaded activations unpipelined, experts whole;
- experts are split over ranks by Megatron, and on FSDP by torchtitan; never on DeepSpeed;
- DPO is searched on the PyTorch stacks that train it, not on Megatron. Stated, each is refused
naming the field (a stated value is never swapped for another); searched, it is never enumerated."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.gpu import GPU
from plan.models.loading import load_scenario
from plan.models.model_card import ModelCard
from plan.planner.candidates import build_problem
from plan.planner.estimate import Cluster, Layout, LayoutSpec, estimate, search_layout
from plan.planner.estimate.factors import COLLECTIVE_BANDWIDTH_EFFICIENCY
from plan.planner.export import ExportError, build_layout, render_stack
from plan.planner.solve import solve_session
from tests.conftest import generous_session


def _layout(pp: int, zero: int) -> Layout:
    return Layout(
        tp=8,
        pp=pp,
        dp=64 // (8 * pp),
        zero=zero,
        recompute="full",
        micro_batch=1,
        global_batch=64,
        seq_len=4096,
        precision="bf16",
        sequence_parallel=True,
        lora_rank=None,
        framework="deepspeed",
    )


@pytest.mark.parametrize("zero", [2, 3])
def test_a_stated_pipelined_zero_2_or_3_is_refused_naming_the_field(llama70b: ModelCard, h100: GPU,
                                                                  zero: int) -> None:
    with pytest.raises(ValueError, match=r"^zero: deepspeed runs ZeRO stage 0 or 1 under pipeline "
                                         r"parallelism"):
        estimate(llama70b, "pretrain", Cluster.of(h100, 64), _layout(2, zero))
    # without a pipeline the same stage runs
    assert estimate(llama70b, "pretrain", Cluster.of(h100, 64), _layout(1, zero)).tokens_per_s > 0


def test_zero_1_pipelines(llama70b: ModelCard, h100: GPU) -> None:
    assert estimate(llama70b, "pretrain", Cluster.of(h100, 64), _layout(2, 1)).tokens_per_s > 0


@pytest.mark.parametrize("spec", [
    # the default global batch (1024 sequences at 70B)
    LayoutSpec(seq_len=4096, framework="deepspeed"),
    LayoutSpec(seq_len=4096, global_batch=64, framework="deepspeed", pp=2),
    LayoutSpec(seq_len=4096, global_batch=64, framework="deepspeed", zero=3),
], ids=["all-searched", "pp-stated", "zero-3-stated"])
def test_the_search_never_pipelines_deepspeed_at_zero_2_or_3(llama70b: ModelCard, h100: GPU,
                                                             spec: LayoutSpec) -> None:
    result = search_layout(llama70b, "pretrain", Cluster.of(h100, 64), spec)
    assert result.best is not None
    # chosen, and each kind set aside
    layouts = [result.best.layout, *(lay for lay, _ in result.rejected)]
    for lay in layouts:
        assert lay.framework == "deepspeed"
        assert lay.pp == 1 or lay.zero <= 1, lay.short()
    if spec.pp == 2:  # the stated pipeline keeps the distributed optimizer's stage
        assert result.best.layout.pp == 2 and result.best.layout.zero == 1
    if spec.zero == 3:  # the stated stage keeps the model unpipelined
        assert result.best.layout.pp == 1


def test_a_deepspeed_job_is_planned_with_layouts_deepspeed_runs_and_exports(
    base_scenario, write_scenario
) -> None:
    base_scenario.update(
        owned=[], sites=[], budget="10M", deadline="60d", ops_skill="expert", policy={}
    )
    base_scenario["jobs"] = [
        {
            "id": "pt",
            "model": "llama3.1-70b",
            "method": "pretrain",
            "tokens": "2B",
            "seq_len": 4096,
            "framework": "deepspeed",
            "min_gpus": 64,
            "max_gpus": 64,
            "data": {"sensitivity": "public"},
        }
    ]
    path = write_scenario(base_scenario)
    layouts = [c.layout for c in build_problem(load_scenario(path)).candidates["pt"]]
    assert layouts and any(lay.pp > 1 for lay in layouts)  # pipelining is in play on 64 GPUs
    assert all(lay.pp == 1 or lay.zero <= 1 for lay in layouts)
    loaded = load_scenario(path)
    result = solve_session(generous_session(path))
    assert result.status == "optimal"
    job = loaded.scenario.jobs[0]
    for plan in result.plans:
        layout = build_layout(plan.jobs[0], job, loaded.models["pt"])
        try:
            render_stack(layout, "deepspeed")
        # only what DeepSpeed's JSON cannot say, never the ZeRO/pipeline clash
        except ExportError as exc:
            assert "ZeRO stage 0 or 1" not in str(exc)


def _cp_layout(framework: str, seq_len: int) -> Layout:
    return Layout(
        tp=1,
        pp=1,
        dp=4,
        cp=2,
        zero=1 if framework == "megatron" else 3,
        recompute="none",
        micro_batch=1,
        global_batch=4,
        seq_len=seq_len,
        precision="bf16",
        sequence_parallel=False,
        lora_rank=None,
        framework=framework,
    )


def test_megatron_context_parallelism_needs_the_sequence_in_2cp_chunks(
    llama8b: ModelCard, h100: GPU
) -> None:
    cluster = Cluster.of(h100, 8)
    with pytest.raises(ValueError, match=r"^cp: Megatron's context parallelism needs a sequence "
                                         r"length that is a "
                                         r"multiple of 2 x cp, not 8194"):
        estimate(llama8b, "pretrain", cluster, _cp_layout("megatron", 8194))
    assert estimate(llama8b, "pretrain", cluster, _cp_layout("megatron", 8192)).tokens_per_s > 0
    # halves suffice
    assert estimate(llama8b, "pretrain", cluster, _cp_layout("fsdp", 8194)).tokens_per_s > 0
    # a stated cp with the stack searched goes to the stack that splits the sequence so
    best = search_layout(llama8b, "pretrain", cluster, LayoutSpec(seq_len=8194, cp=2)).best
    assert best is not None and best.layout.framework == "fsdp" and best.layout.cp == 2
    with pytest.raises(ValueError, match=r"^cp: Megatron's context parallelism"):
        search_layout(
            llama8b, "pretrain", cluster, LayoutSpec(seq_len=8194, cp=2, framework="megatron")
        )


def test_ring_attention_runs_through_flash_kernels_on_megatron_and_fsdp(
    llama8b: ModelCard, h100: GPU
) -> None:
    cluster = Cluster.of(h100, 8)
    for framework in ("megatron", "fsdp"):
        with pytest.raises(ValueError, match=r"^attention: context parallelism runs ring attention "
                                             r"through flash"):
            estimate(
                llama8b,
                "pretrain",
                cluster,
                replace(_cp_layout(framework, 16384), flash_attention=False),
            )
        assert estimate(llama8b, "pretrain", cluster, _cp_layout(framework, 16384)).tokens_per_s > 0
        with pytest.raises(ValueError, match=rf"^attention: .*; {framework} cannot run eager "
                                             r"attention at cp=2"):
            search_layout(
                llama8b,
                "pretrain",
                cluster,
                LayoutSpec(seq_len=16384, cp=2, framework=framework, flash_attention=False),
            )
    # DeepSpeed's Ulysses splits the heads and runs any attention
    eager_ulysses = replace(_cp_layout("deepspeed", 16384), flash_attention=False, zero=1)
    assert estimate(llama8b, "pretrain", cluster, eager_ulysses).tokens_per_s > 0
    # searched with eager attention, no layout splits the sequence on Megatron or FSDP
    result = search_layout(
        llama8b, "pretrain", cluster, LayoutSpec(seq_len=16384, flash_attention=False)
    )
    assert result.best is not None
    for lay in [result.best.layout, *(lay for lay, _ in result.rejected)]:
        assert lay.cp == 1 or lay.framework == "deepspeed", lay.short()


@pytest.mark.parametrize("seq_len", [16386, 32770])
def test_searched_context_parallelism_divides_the_sequence_as_its_stack_needs(
    llama70b: ModelCard, h100: GPU, seq_len: int
) -> None:
    result = search_layout(
        llama70b, "pretrain", Cluster.of(h100, 64), LayoutSpec(seq_len=seq_len, global_batch=64)
    )
    assert result.best is not None
    for lay in [result.best.layout, *(lay for lay, _ in result.rejected)]:
        assert seq_len % lay.cp == 0, lay.short()
        assert lay.framework != "megatron" or lay.cp == 1 or seq_len % (2 * lay.cp) == 0, (
            lay.short()
        )


def test_dpo_is_never_pipelined_on_fsdp(llama70b: ModelCard, h100: GPU) -> None:
    # TRL and LLaMA-Factory do not pipeline; torchtitan, which does, has no DPO loss (its exporter
    # says so)
    cluster = Cluster.of(h100, 16)
    result = search_layout(
        llama70b, "dpo", cluster, LayoutSpec(seq_len=4096, framework="fsdp", global_batch=64)
    )
    assert result.reasons.get("no FSDP-family stack pipelines DPO (torchtitan, the one that "
                              "pipelines, has no "
                              "DPO loss)", 0) > 0
    laid = [
        lay
        for lay in ([result.best.layout] if result.best else [])
        + [lay for lay, _ in result.rejected]
    ]
    assert laid and all(lay.pp == 1 for lay in laid)
    with pytest.raises(ValueError, match=r"^pp: no FSDP-family stack pipelines DPO"):
        search_layout(llama70b, "dpo", cluster, LayoutSpec(seq_len=4096, framework="fsdp", pp=2))


def test_a_stated_pipeline_that_only_pytorch_optimizers_rule_out_names_why(
    llama70b: ModelCard, h100: GPU
) -> None:
    cluster = Cluster.of(h100, 16)
    with pytest.raises(ValueError, match=r"^pp: the one PyTorch stack that pipelines "
                                         r"\(torchtitan\) runs AdamW or Adam only; no stack runs "
                                         r"lora at pp=2 \(Megatron has no "
                                         r"adamw-8bit\)$"):
        search_layout(
            llama70b, "lora", cluster, LayoutSpec(seq_len=4096, pp=2, optimizer="adam_8bit")
        )
    # with AdamW the same pipeline runs on Megatron (Megatron-Bridge's LoRA)
    best = search_layout(llama70b, "lora", cluster, LayoutSpec(seq_len=4096, pp=2)).best
    assert best is not None and best.layout.framework == "megatron" and best.layout.pp == 2


def test_a_qlora_job_with_a_stated_pipeline_is_an_infeasible_answer_naming_the_stack_gap(
    base_scenario, write_scenario
) -> None:
    base_scenario.update(
        owned=[], sites=[], budget="1M", deadline="30d", ops_skill="expert", policy={}
    )
    base_scenario["jobs"] = [
        {
            "id": "q",
            "model": "llama3.1-70b",
            "method": "qlora",
            "lora_rank": 16,
            "tokens": "50M",
            "seq_len": 4096,
            "layout": {"pp": 2},
            "data": {"sensitivity": "public"},
        }
    ]
    result = solve_session(generous_session(write_scenario(base_scenario)))
    assert result.status == "infeasible"
    assert any("no FSDP-family stack pipelines LoRA/QLoRA" in c.detail for c in result.conflicts), (
        result.conflicts
    )


def test_fp16_is_not_pipelined_on_fsdp(llama8b: ModelCard, h100: GPU) -> None:
    # torchtitan, the one PyTorch stack that pipelines, takes mixed_precision_param bfloat16 or
    # float32
    cluster = Cluster.of(h100, 8)
    with pytest.raises(ValueError, match=r"^pp: the one PyTorch stack that pipelines "
                                         r"\(torchtitan\) trains in bf16"):
        search_layout(
            llama8b,
            "pretrain",
            cluster,
            LayoutSpec(seq_len=4096, pp=2, precision="fp16", framework="fsdp"),
        )
    best = search_layout(
        llama8b, "pretrain", cluster, LayoutSpec(seq_len=4096, pp=2, precision="fp16")
    ).best
    assert best is not None and best.layout.framework == "megatron"


@pytest.mark.parametrize(
    ("recompute", "split"),
    [("full_offload", {"tp": 2}), ("full_offload", {"pp": 2}), ("offload", {"pp": 2})],
)
def test_offload_policies_are_refused_beside_a_split_their_stacks_lack(
    llama8b: ModelCard, h100: GPU, recompute: str, split: dict[str, int]
) -> None:
    # offloaded checkpoints: LLaMA-Factory's Hugging Face path (data parallel only); offloaded
    # activations: torchtune, which does not pipeline
    with pytest.raises(ValueError, match=r"^recompute: "):
        search_layout(
            llama8b,
            "pretrain",
            Cluster.of(h100, 8),
            LayoutSpec(seq_len=4096, recompute=recompute, **split),
        )


@pytest.mark.parametrize("method", ["dpo", "lora_dpo"])
def test_dpo_is_searched_on_the_pytorch_stacks_that_train_it(
    llama8b: ModelCard, h100: GPU, method: str
) -> None:
    # TRL, LLaMA-Factory's stage dpo and OpenRLHF run on FSDP/DeepSpeed; no Megatron stack of the
    # reference (Megatron-Bridge, mcore_adapter: pt and sft) has a DPO loss, and the megatron export
    # refuses it
    result = search_layout(
        llama8b, method, Cluster.of(h100, 8), LayoutSpec(seq_len=2048, lora_rank=16)
    )
    assert result.best is not None and result.best.layout.framework == "fsdp"
    assert all(lay.framework == "fsdp" for lay, _ in result.rejected)
    with pytest.raises(ValueError, match=r"^pp: no FSDP-family stack pipelines .*; no stack runs "
                                         r".* at pp=2 \(Megatron-Bridge and mcore_adapter train pt "
                                         r"and sft, "
                                         r"not DPO\)$"):
        search_layout(
            llama8b, method, Cluster.of(h100, 8), LayoutSpec(seq_len=2048, lora_rank=16, pp=2)
        )
    # named, Megatron is still estimated (a team running its own Megatron DPO)
    named = search_layout(llama8b, method, Cluster.of(h100, 8),
                          LayoutSpec(seq_len=2048, lora_rank=16, framework="megatron")).best
    assert named is not None and named.layout.framework == "megatron"


def test_adapters_with_a_split_beside_unsharded_replicas_have_no_pytorch_stack(
    llama8b: ModelCard, h100: GPU
) -> None:
    # accelerate's parallelism_config refuses tp or cp with dp_replicate > 1 and dp_shard == 1;
    # torchtitan runs it (DDP + TP) but has no adapters
    cluster = Cluster.of(h100, 4)
    lora = search_layout(
        llama8b,
        "lora",
        cluster,
        LayoutSpec(seq_len=4096, lora_rank=16, zero=0, tp=2, framework="fsdp"),
    )
    assert lora.best is None and any(reason.startswith("tensor or context parallelism beside "
                                                       "replicated")
                                     for reason in lora.reasons)
    full = search_layout(
        llama8b, "full_finetune", cluster, LayoutSpec(seq_len=4096, zero=0, tp=2, framework="fsdp")
    )
    assert full.best is not None and (full.best.layout.zero, full.best.layout.tp) == (0, 2)


def test_a_stated_zero_stage_is_kept_when_only_offloading_would_fit(
    llama8b: ModelCard, rtx4090: GPU
) -> None:
    # the CPU-offload pass runs ZeRO-3; it must not replace a ZeRO stage the user stated
    result = search_layout(
        llama8b, "full_finetune", Cluster.of(rtx4090, 2), LayoutSpec(seq_len=2048, zero=0)
    )
    laid = [est.layout for est in (result.best, result.closest) if est is not None]
    assert laid and all(lay.zero == 0 and not lay.state_offload for lay in laid)
    # left to the search, offloading is what fits there
    free = search_layout(
        llama8b, "full_finetune", Cluster.of(rtx4090, 2), LayoutSpec(seq_len=2048)
    ).best
    assert free is not None and free.layout.state_offload and free.layout.zero == 3


def test_deepspeed_context_parallelism_is_ulysses(llama8b: ModelCard, h100: GPU) -> None:
    """DeepSpeed's cp is Ulysses (its export says so): all-to-alls of q, k, v and the output around
    each attention, on the critical path, where ring attention hides its K/V exchange behind the
    kernels; and each rank takes whole heads, so the heads must divide by cp."""
    cluster = Cluster.of(h100, 8)
    seq = 65536
    ulysses = replace(_cp_layout("deepspeed", seq), cp=4, dp=2, global_batch=2, zero=1)
    ring = replace(ulysses, framework="fsdp", zero=3)
    u, r = (
        estimate(llama8b, "pretrain", cluster, ulysses),
        estimate(llama8b, "pretrain", cluster, ring),
    )
    # at 16k tokens a rank, the ring hides behind attention
    assert r.time.cp_comm_s == 0.0 < u.time.cp_comm_s
    # forward q, k, v in and the output back, the same on the gradients: 2 q_dim + 2 kv_dim 16-bit
    # values a token, 3/4 of them to the other three ranks, per layer per pass, over NVLink
    q_dim, kv_dim = 32 * 128, 8 * 128
    sent = seq / 4 * (2 * q_dim + 2 * kv_dim) * 2.0 * 3 / 4
    # (NVLink's 900 GB/s is both ways together)
    per_direction = h100.intra_node_link.bandwidth_gb_per_s / 2
    seconds = 2 * 32 * sent / (per_direction * 1e9 * COLLECTIVE_BANDWIDTH_EFFICIENCY)
    # (plus one link latency per all-to-all)
    assert u.time.cp_comm_s == pytest.approx(seconds, rel=0.02)
    with pytest.raises(ValueError, match=r"^cp: DeepSpeed's cp is Ulysses, which hands each rank "
                                         r"whole attention heads: the 32 heads per tensor-parallel "
                                         r"rank do not "
                                         r"divide by cp = 3"):
        estimate(
            llama8b, "pretrain", Cluster.of(h100, 24), replace(ulysses, cp=3, dp=8, global_batch=8)
        )
    with pytest.raises(ValueError, match=r"^cp: DeepSpeed's cp is Ulysses"):
        search_layout(
            llama8b,
            "pretrain",
            Cluster.of(h100, 24),
            LayoutSpec(seq_len=seq, cp=3, framework="deepspeed"),
        )


def test_deepspeed_splits_no_sequence_of_an_fp8_run(llama8b: ModelCard, h100: GPU) -> None:
    """DeepSpeed's cp (Ulysses) is written by the deepspeed export, whose JSON has no FP8 setting,
    and accelerate runs FP8 on DeepSpeed but splits no sequence there: stated, cp is refused naming
    the field; searched, the FP8 run keeps whole sequences where the BF16 one splits them (a plan no
    stack could run, explained_answers seed 78)."""
    cluster = Cluster.of(h100, 8)
    fp8 = replace(_cp_layout("deepspeed", 65536), precision="fp8", zero=1)
    refused = (
        r"^cp: DeepSpeed's context parallelism \(Ulysses, `sequence_parallel_size` in its JSON\)"
    )
    with pytest.raises(ValueError, match=refused):
        estimate(llama8b, "pretrain", cluster, fp8)
    assert estimate(llama8b, "pretrain", cluster, replace(fp8, precision="bf16")).tokens_per_s > 0
    with pytest.raises(ValueError, match=refused):
        search_layout(llama8b, "pretrain", cluster,
                      LayoutSpec(seq_len=65536, cp=2, framework="deepspeed", precision="fp8"))
    searched = {
        precision: search_layout(
            llama8b,
            "pretrain",
            cluster,
            LayoutSpec(seq_len=65536, framework="deepspeed", precision=precision),
        ).best
        for precision in ("bf16", "fp8")
    }
    assert searched["bf16"] is not None and searched["bf16"].layout.cp > 1
    assert searched["fp8"] is not None and searched["fp8"].layout.cp == 1


def test_experts_are_split_only_on_the_stacks_that_export_a_split() -> None:
    """Megatron, torchtitan and LLaMA-Factory's Megatron-Bridge split experts over ranks; DeepSpeed
    does only through DeepSpeed-MoE layers no export writes, and on FSDP only torchtitan does (no
    DPO, Adam, not fp16). Searched, no other split is enumerated; stated, it is refused naming
    ep."""
    catalog = builtin_catalog()
    mixtral, cluster = catalog.model("mixtral-8x7b"), Cluster.of(catalog.gpu("h100-sxm"), 64)
    spec = LayoutSpec(seq_len=4096, global_batch=256)
    megatron = search_layout(mixtral, "pretrain", cluster, replace(spec, framework="megatron")).best
    # splitting the experts is what Megatron picks here
    assert megatron is not None and megatron.layout.ep > 1
    for framework, method, optimizer in (("deepspeed", "pretrain", "adam"), ("fsdp", "dpo", "adam"),
                                         ("fsdp", "pretrain", "adafactor")):
        stated = replace(spec, framework=framework, optimizer=optimizer)
        found = search_layout(mixtral, method, cluster, stated)
        laid = [est.layout for est in (found.best, found.closest) if est is not None]
        assert laid and all(lay.ep == 1 for lay in laid), (framework, method, optimizer)
        with pytest.raises(ValueError, match=r"^ep: .*no stack runs .* at ep=8"):
            search_layout(mixtral, method, cluster, replace(stated, ep=8))
    torchtitan = search_layout(
        mixtral, "pretrain", cluster, replace(spec, framework="fsdp", ep=8)
    ).best
    assert torchtitan is not None and torchtitan.layout.ep == 8
    with pytest.raises(ValueError, match=r"^ep: DeepSpeed splits experts over ranks only through "
                                         r"DeepSpeed-MoE"):
        estimate(
            mixtral,
            "pretrain",
            cluster,
            replace(
                megatron.layout,
                framework="deepspeed",
                ep=8,
                virtual_pipeline=1,
                pp=1,
                tp=8,
                dp=8,
                zero=1,
            ),
        )


def test_splits_only_torchtitan_runs_need_a_job_torchtitan_trains() -> None:
    """tp or cp beside replicated (ZeRO-0) data parallelism runs on torchtitan alone (accelerate
    refuses it), which trains with AdamW or Adam: pure BF16 AdamW there was planned, and no export
    wrote it."""
    catalog = builtin_catalog()
    card, cluster = catalog.model("qwen2.5-7b"), Cluster.of(catalog.gpu("h100-sxm"), 16)
    spec = LayoutSpec(seq_len=8192, global_batch=16, framework="fsdp", zero=0, tp=2)
    # AdamW: torchtitan runs it
    assert search_layout(card, "full_finetune", cluster, spec).best is not None
    refused = search_layout(card, "full_finetune", cluster, replace(spec, optimizer="adam_bf16"))
    assert refused.best is None and any(why.startswith("tensor or context parallelism beside "
                                                       "replicated")
                                        for why in refused.reasons)


def test_offloaded_checkpoints_neither_shard_hybrid_nor_keep_pure_bf16_on_zero_3() -> None:
    """Offloaded checkpoints are LLaMA-Factory's (use_unsloth_gc), whose multi-GPU sharding is
    DeepSpeed's: no hybrid sharding, and no pure BF16 AdamW at ZeRO-3 (LLaMA-Factory refuses
    pure_bf16 there)."""
    catalog = builtin_catalog()
    card, cluster = catalog.model("qwen2.5-7b"), Cluster.of(catalog.gpu("h100-sxm"), 16)
    spec = LayoutSpec(seq_len=8192, global_batch=16, recompute="full_offload")
    free = search_layout(card, "full_finetune", cluster, replace(spec, framework="fsdp")).best
    assert free is not None and free.layout.shard_group is None
    hybrid = search_layout(
        card, "full_finetune", cluster, replace(spec, framework="fsdp", hybrid_shard=True)
    )
    assert hybrid.best is None and any("no hybrid sharding" in why for why in hybrid.reasons)
    pure = replace(spec, framework="deepspeed", optimizer="adam_bf16")
    assert search_layout(card, "full_finetune", cluster, replace(pure, zero=3)).best is None
    kept = search_layout(card, "full_finetune", cluster, pure).best
    assert kept is not None and kept.layout.zero in (1, 2)
    # nor split experts: the Hugging Face path keeps each layer's experts whole
    moe = catalog.model("qwen3-moe-30b")
    whole = search_layout(
        moe, "full_finetune", cluster, replace(spec, framework="fsdp", global_batch=32)
    ).best
    assert whole is not None and whole.layout.ep == 1
    with pytest.raises(ValueError, match=r"^recompute: offloaded checkpoints .* no tensor, "
                                         r"pipeline, context or expert parallelism; the job fixes "
                                         r"full_offload with "
                                         r"tp=1 pp=1 cp=1 ep=8"):
        search_layout(
            moe, "full_finetune", cluster, replace(spec, framework="fsdp", global_batch=32, ep=8)
        )


def test_offloaded_checkpoints_with_offloaded_states_step_with_cpu_adam_only() -> None:
    """Offloaded checkpoints beside model states in host memory are LLaMA-Factory's path, whose
    state offload is DeepSpeed's ZeRO-Offload, stepped by its CPU Adam: with SGD the search
    offloaded both, and no export ran it."""
    catalog = builtin_catalog()
    card, cluster = catalog.model("qwen2.5-7b"), Cluster.of(catalog.gpu("h100-sxm"), 16)
    spec = LayoutSpec(
        seq_len=8192,
        global_batch=16,
        framework="fsdp",
        recompute="full_offload",
        state_offload=True,
        zero=3,
    )
    # AdamW: DeepSpeed's CPU Adam steps it
    assert search_layout(card, "lora", cluster, spec).best is not None
    refused = search_layout(card, "lora", cluster, replace(spec, optimizer="sgd"))
    assert refused.best is None and any(
        "stepped by its CPU Adam only" in why for why in refused.reasons
    )


@pytest.mark.parametrize(("method", "stated", "refused"), [
    ("qlora", {"recompute_layers": 2}, r"^recompute_layers: block recomputation is Megatron's, and "
                                       r"Megatron has no 4-bit QLoRA path"),
    ("lora", {"optimizer": "adam_precision_aware"}, r"^optimizer: the precision-aware optimizer is "
                                                    r"Megatron's, and the one stack written for "
                                                    r"lora on Megatron"),
    ("dpo", {"optimizer": "adam_precision_aware"}, r"^optimizer: the precision-aware optimizer is "
                                                   r"Megatron's"),
    ("lora_dpo", {"recompute_layers": 1}, r"^recompute_layers: block recomputation is Megatron's, "
                                          r"and no exported Megatron stack trains DPO"),
])
def test_a_megatron_only_field_is_refused_for_a_job_no_megatron_stack_writes(
    method: str, stated: dict[str, Any], refused: str
) -> None:
    """Block recomputation and the precision-aware optimizer run on Megatron only; stated for QLoRA
    (no Megatron path), block recomputation for DPO (LLaMA-Factory's Megatron-Bridge backend, which
    runs it, trains pt and sft; named, Megatron is kept for a team's own DPO), or the
    precision-aware optimizer for LoRA or DPO (the Bridge backend has none), the search planned on
    Megatron what no export wrote (bench/stack_coverage.py)."""
    catalog = builtin_catalog()
    with pytest.raises(ValueError, match=refused):
        search_layout(catalog.model("qwen2.5-7b"), method, Cluster.of(catalog.gpu("h100-sxm"), 16),
                      LayoutSpec(seq_len=8192, global_batch=16, **stated))


def test_deepspeed_pipelines_no_fp8_run() -> None:
    """DeepSpeed's pipeline engine is the deepspeed export's, whose JSON has no FP8, and accelerate
    runs FP8 on DeepSpeed without pipelining: stated, pp is refused naming the field; searched, no
    FP8 DeepSpeed layout pipelines (bench/stack_coverage.py found a LoRA-DPO of Qwen3 32B there)."""
    catalog = builtin_catalog()
    card, cluster = catalog.model("qwen3-32b"), Cluster.of(catalog.gpu("h100-sxm"), 16)
    spec = LayoutSpec(seq_len=8192, global_batch=16, framework="deepspeed", precision="fp8", zero=0)
    with pytest.raises(ValueError, match=r"^pp: DeepSpeed's pipeline engine is written by the "
                                         r"deepspeed export"):
        search_layout(card, "full_finetune", cluster, replace(spec, pp=2))
    piped = search_layout(
        card, "full_finetune", cluster, replace(spec, precision="bf16", pp=2)
    ).best
    assert piped is not None and piped.layout.pp == 2  # in BF16 the same pipeline runs
    found = search_layout(card, "full_finetune", cluster, spec)
    laid = [est.layout for est in (found.best, found.closest) if est is not None]
    assert laid and all(lay.pp == 1 for lay in laid)
