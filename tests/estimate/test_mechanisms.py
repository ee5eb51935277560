"""The execution mechanisms behind the estimates: frameworks, FP8, pipelines, context and expert
parallelism, offloading, the network and the error band. Each test checks a property that follows
from how the stacks run, not a calibrated number."""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import replace
from typing import Any

import pytest

from plan.models.gpu import GPU
from plan.models.model_card import ModelCard, MoE
from plan.planner.estimate import Cluster, Layout, LayoutSpec, estimate, search_layout
from plan.planner.estimate.band import (
    MEMORY_BAND,
    THROUGHPUT_BAND,
    UNCALIBRATED_SPREAD,
    band_class,
    quantile_factor,
)
from plan.planner.estimate.factors import ALLOCATOR_FRAGMENTATION, GIB, KEPT_OUTPUT_LOGIT_BYTES
from plan.planner.estimate.flops import shape_of
from plan.planner.estimate.memory import memory_per_gpu


def lay(gpus: int, **kw: object) -> Layout:
    base: dict[str, object] = dict(
        tp=1,
        pp=1,
        cp=1,
        zero=3,
        recompute="none",
        micro_batch=1,
        seq_len=4096,
        precision="bf16",
        sequence_parallel=False,
        lora_rank=None,
        framework="fsdp",
    )
    base.update(kw)
    tp, pp, cp = (int(base[k]) for k in ("tp", "pp", "cp"))  # type: ignore[call-overload]
    dp = gpus // (tp * pp * cp)
    gb = base.pop("global_batch", dp * int(base["micro_batch"]) * 4)  # type: ignore[call-overload]
    return Layout(dp=dp, global_batch=gb, **base)  # type: ignore[arg-type]


@pytest.mark.parametrize(("framework", "zero", "tp", "pp", "recompute"), [
    ("fsdp", 3, 1, 1, "none"), ("fsdp", 2, 2, 2, "selective"), ("megatron", 1, 4, 2, "none"),
    ("megatron", 1, 8, 1, "selective"), ("deepspeed", 3, 1, 1, "full")])
def test_fp8_never_needs_more_memory_than_bf16(
    llama70b: ModelCard, h100: GPU, framework: str, zero: int, tp: int, pp: int, recompute: str
) -> None:
    cluster = Cluster.of(h100, 16)
    kw = dict(
        framework=framework, zero=zero, tp=tp, pp=pp, recompute=recompute, sequence_parallel=tp > 1
    )
    bf16 = estimate(llama70b, "pretrain", cluster, lay(16, **kw))
    fp8 = estimate(llama70b, "pretrain", cluster, lay(16, precision="fp8", **kw))
    assert fp8.memory.total_gib <= bf16.memory.total_gib + 1e-9
    assert fp8.tokens_per_s > bf16.tokens_per_s


def test_fp8_gains_less_on_small_models(h100: GPU, llama8b: ModelCard) -> None:
    # casts are memory-bound, so a 1B model's short matmuls gain far less than a 70B model's
    small = ModelCard(
        id="llama-1b",
        params=1.24e9,
        layers=16,
        hidden_size=2048,
        ffn_hidden_size=8192,
        num_heads=32,
        num_kv_heads=8,
        vocab_size=128256,
        max_positions=8192,
        tied_embeddings=True,
        source="test: Llama 3.2 1B config",
    )

    def gain(card: ModelCard) -> float:
        cluster = Cluster.of(h100, 8)
        fp8 = estimate(
            card, "pretrain", cluster, lay(8, precision="fp8", micro_batch=2)
        ).tokens_per_s
        return fp8 / estimate(card, "pretrain", cluster, lay(8, micro_batch=2)).tokens_per_s

    assert 1.0 < gain(small) < 1.5  # llm-foundry's FP8 rows run 1.2-1.4x their BF16 ones
    assert gain(small) < gain(llama8b) < 2.0


def test_llama3_405b_published_layout_fits(h100: GPU) -> None:
    # Llama 3 405B trained with TP 8, PP 16, 8k sequences on 80 GB H100s (Dubey et al. 2024, section
    # 3.3)
    card = ModelCard(
        id="llama3.1-405b",
        params=405.8e9,
        layers=126,
        hidden_size=16384,
        ffn_hidden_size=53248,
        num_heads=128,
        num_kv_heads=8,
        vocab_size=128256,
        max_positions=131072,
        source="test: Llama 3.1 405B config",
    )
    spec = LayoutSpec(tp=8, pp=16, seq_len=8192, global_batch=2048, framework="megatron")
    best = search_layout(card, "pretrain", Cluster.of(h100, 16384), spec).best
    assert best is not None and best.fits
    assert best.layout.virtual_pipeline > 1  # interleaving is searched although pp was given
    assert 0.25 < best.mfu < 0.55


def test_a_run_at_the_card_limit_runs_with_the_allocator_cache_squeezed() -> None:
    """At the card's limit PyTorch's caching allocator frees its cached blocks before failing: a
    layout whose reserved peak (what it shows with room) is over the card may still run. This
    project's H200 runs (bench/data/measured_h200.csv): Qwen3 4B LoRA at 4k x 4 ran with 139.2 of
    139.8 GiB in use (H200-13); Llama 3.1 8B LoRA at 4k x 4 ran out of memory needing 145.7 GiB
    allocated (H200-02)."""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    h200 = Cluster.of(catalog.gpu("h200"), 1)

    def run(model: str) -> Any:
        spec = LayoutSpec(
            tp=1,
            pp=1,
            cp=1,
            zero=0,
            recompute="none",
            micro_batch=4,
            global_batch=4,
            seq_len=4096,
            lora_rank=16,
            framework="fsdp",
        )
        found = search_layout(catalog.model(model), "lora", h200, spec)
        return found.best or found.closest

    ran, ran_out = run("qwen3-4b"), run("llama3.1-8b")
    # reserved as with room: over the card
    assert ran.memory.total_gib > ran.gpu_memory_gib and not ran.fits
    assert ran.fits_card and ran.memory_floor_gib <= 139.8
    states = ran.memory.weights_gib + ran.memory.gradients_gib + ran.memory.optimizer_gib
    assert states < ran.memory_floor_gib < ran.memory.total_gib
    # (within this estimate's band)
    assert not ran_out.fits_card and ran_out.memory_floor_gib > 145.7 - 1


def test_uneven_stages_take_the_shortfall_from_the_ends() -> None:
    from plan.planner.estimate.memory import stage_layers

    # Llama 3 405B: one layer fewer on the first and last stage
    assert stage_layers(126, 16) == (7, 8, 7)
    assert stage_layers(80, 4) == (20, 20, 20)
    assert stage_layers(81, 4) == (20, 21, 20)  # (the slowest middle stage has 21)


def test_interleaving_shortens_the_bubble_and_holds_more_in_flight(
    llama70b: ModelCard, h100: GPU
) -> None:
    cluster = Cluster.of(h100, 64)
    kw = dict(tp=8, pp=4, zero=1, framework="megatron", sequence_parallel=True, global_batch=64)
    plain = estimate(llama70b, "pretrain", cluster, lay(64, **kw))
    inter = estimate(llama70b, "pretrain", cluster, lay(64, virtual_pipeline=5, **kw))
    assert inter.time.pp_bubble_s < plain.time.pp_bubble_s
    assert inter.memory.activations_gib > plain.memory.activations_gib


def test_zero3_traffic_is_hidden_behind_compute_only_where_bandwidth_allows(
    llama8b: ModelCard, h100: GPU, rtx4090: GPU
) -> None:
    nvlink = estimate(llama8b, "full_finetune", Cluster.of(h100, 8), lay(8, micro_batch=4))
    pcie = estimate(
        llama8b, "full_finetune", Cluster.of(rtx4090, 8), lay(8, micro_batch=1, recompute="full")
    )
    # prefetched layer by layer behind compute on NVLink; over PCIe the gathers outrun the compute
    assert nvlink.time.dp_comm_s < 0.02 * nvlink.step_time_s
    assert pcie.time.dp_comm_s > 3 * 0.02 * pcie.step_time_s


def test_fsdp_regathers_every_micro_batch(llama8b: ModelCard, h100: GPU) -> None:
    cluster = dataclasses.replace(
        Cluster.of(h100, 16), fabric_gbps_per_gpu=25.0, fabric_kind="ethernet"
    )
    one = estimate(llama8b, "pretrain", cluster, lay(16, micro_batch=4, global_batch=64))
    four = estimate(llama8b, "pretrain", cluster, lay(16, micro_batch=1, global_batch=64))
    assert four.layout.micro_batches == 4 * one.layout.micro_batches
    assert four.time.dp_comm_s > 2 * one.time.dp_comm_s


def test_rail_optimised_nodes_spread_data_parallel_traffic(llama8b: ModelCard, h100: GPU) -> None:
    spread = estimate(
        llama8b, "pretrain", Cluster.of(h100, 64), lay(64, zero=1, framework="megatron")
    )
    assert any("8 NICs per node" in note for note in spread.notes)


def test_context_parallelism_splits_activations_and_pays_kv_traffic(
    llama8b: ModelCard, h100: GPU
) -> None:
    cluster = Cluster.of(h100, 8)
    kw = dict(seq_len=65536, recompute="full", global_batch=8)
    no_cp = estimate(llama8b, "pretrain", cluster, lay(8, **kw))
    cp4 = estimate(llama8b, "pretrain", cluster, lay(8, cp=4, **{**kw, "global_batch": 2}))
    assert cp4.memory.activations_gib < 0.3 * no_cp.memory.activations_gib
    assert cp4.time.cp_comm_s >= 0.0 and cp4.layout.gpus == 8
    long_spec = LayoutSpec(seq_len=131072, global_batch=4, recompute="full")
    found = search_layout(llama8b, "pretrain", cluster, long_spec)
    assert found.best is not None and found.best.layout.cp > 1  # 128k tokens fit only when split


def test_activation_offload_trades_memory_for_pcie_time(llama8b: ModelCard, a100: GPU) -> None:
    cluster = Cluster.of(a100, 1)
    keep = estimate(llama8b, "lora", cluster, lay(1, zero=0, micro_batch=4, lora_rank=16))
    off = estimate(
        llama8b, "lora", cluster, lay(1, zero=0, micro_batch=4, lora_rank=16, recompute="offload")
    )
    assert off.memory.activations_gib < 0.2 * keep.memory.activations_gib
    assert off.step_time_s >= keep.step_time_s


def test_qlora_shards_four_bit_weights(a100: GPU) -> None:
    card = ModelCard(
        id="llama-70b",
        params=70.6e9,
        layers=80,
        hidden_size=8192,
        ffn_hidden_size=28672,
        num_heads=64,
        num_kv_heads=8,
        vocab_size=128256,
        max_positions=8192,
        source="test",
    )
    cluster = Cluster.of(a100, 8)
    sharded = estimate(card, "qlora", cluster, lay(8, lora_rank=16, recompute="full"))
    lora = estimate(card, "lora", cluster, lay(8, lora_rank=16, recompute="full"))
    # 4-bit base over 8 GPUs: about a quarter of the 16-bit weights, prefetch buffers included
    assert sharded.memory.weights_gib < 0.3 * lora.memory.weights_gib
    assert sharded.memory.other_gib < lora.memory.other_gib + 1.0
    with pytest.raises(ValueError, match="megatron has no 4-bit QLoRA"):
        estimate(card, "qlora", cluster, lay(8, lora_rank=16, zero=1, framework="megatron"))


def test_low_memory_optimizers_cut_optimizer_states(llama8b: ModelCard, a100: GPU) -> None:
    cluster = Cluster.of(a100, 1)
    states = {opt: estimate(llama8b, "full_finetune", cluster,
                            lay(1, zero=0, optimizer=opt, recompute="full")).memory.optimizer_gib
              for opt in ("adam", "adafactor", "adam_8bit", "sgd")}
    assert states["adam_8bit"] < states["adafactor"] < states["sgd"] < states["adam"]


def test_an_optimizer_stepped_in_the_backward_pass_holds_one_layers_gradient_shard(
    a100: GPU,
) -> None:
    """8-bit AdamW steps inside the backward pass: it holds one layer's gradients, the routed
    experts' split over ep, and under ZeRO-3 each layer's shard (its gradients are reduce-scattered
    before the step). It counted a whole layer, all experts, once per expert group: Mixtral on 128
    cards at ep 4 and ZeRO-3 came out 1.3 GiB larger with 8-bit AdamW than with AdamW
    (bench/estimate_invariants.py seed 36). The memory model itself, on a layout no exported stack
    runs now (DeepSpeed splits no experts here)."""
    card = ModelCard(
        id="mixtral",
        params=46.7e9,
        active_params=12.9e9,
        layers=32,
        hidden_size=4096,
        ffn_hidden_size=14336,
        num_heads=32,
        num_kv_heads=8,
        vocab_size=32000,
        max_positions=32768,
        moe=MoE(experts=8, top_k=2, expert_ffn_hidden_size=14336),
        source="test: Mixtral 8x7B",
    )
    shape = shape_of(card)
    base = lay(128, cp=2, ep=4, zero=3, framework="deepspeed", micro_batch=1, global_batch=64)
    adam, eight = (
        memory_per_gpu(
            shape, "full_finetune", replace(base, optimizer=o), a100.memory_gib
        ).breakdown
        for o in ("adam", "adam_8bit")
    )
    assert eight.total_gib < adam.total_gib
    dense = shape.layer_params - shape.layer_expert_params
    one_layer_shards = dense / 128 + shape.layer_expert_params / 4 / (128 // 4)
    assert eight.gradients_gib * GIB == pytest.approx(one_layer_shards * 2.0, rel=1e-9)


def test_expert_parallelism_splits_experts_and_adds_all_to_all(a100: GPU) -> None:
    card = ModelCard(
        id="mixtral",
        params=46.7e9,
        active_params=12.9e9,
        layers=32,
        hidden_size=4096,
        ffn_hidden_size=14336,
        num_heads=32,
        num_kv_heads=8,
        vocab_size=32000,
        max_positions=32768,
        moe=MoE(experts=8, top_k=2, expert_ffn_hidden_size=14336),
        source="test: Mixtral 8x7B",
    )
    cluster = Cluster.of(a100, 16)
    whole = estimate(card, "pretrain", cluster, lay(16, zero=1, framework="megatron"))
    split = estimate(card, "pretrain", cluster, lay(16, zero=1, framework="megatron", ep=8))
    assert split.memory.weights_gib < 0.3 * whole.memory.weights_gib
    assert split.time.ep_comm_s > 0 and whole.time.ep_comm_s == 0
    with pytest.raises(ValueError, match="ep"):
        estimate(card, "pretrain", cluster, lay(16, zero=1, framework="megatron", ep=3))


def test_a_capacity_factor_pads_the_routed_experts_and_nothing_else(a100: GPU) -> None:
    """Each routed expert's input padded to 1.5 x an even split: the experts' FLOPs, their saved
    activations and the all-to-all bytes grow by half, the attention and the model FLOPs (the useful
    work) do not; a dense model, a factor below 1 (tokens dropped at an even load) and one past
    experts / top-k are refused."""
    card = ModelCard(
        id="mixtral",
        params=46.7e9,
        active_params=12.9e9,
        layers=32,
        hidden_size=4096,
        ffn_hidden_size=14336,
        num_heads=32,
        num_kv_heads=8,
        vocab_size=32000,
        max_positions=32768,
        moe=MoE(experts=8, top_k=2, expert_ffn_hidden_size=14336),
        source="test: Mixtral 8x7B",
    )
    shape = shape_of(card)
    cluster = Cluster.of(a100, 16)
    even = lay(16, zero=1, framework="megatron", ep=8)
    padded = replace(even, capacity_factor=1.5)
    one, more = (estimate(card, "pretrain", cluster, layout) for layout in (even, padded))
    # (each exchange's latency is not padded)
    assert 1.49 * one.time.ep_comm_s < more.time.ep_comm_s < 1.5 * one.time.ep_comm_s
    # the routed experts are 2 of 8 experts of 3 x 4096 x 14336 in 32 layers, a token's share of
    # them padded
    routed_active = 2 * 3 * 4096 * 14336 * shape.layer_linear_active / (
        4096 * (4096 + 2 * 1024) + 4096 * 4096 + 2 * 3 * 4096 * 14336 + 4096 * 8)
    assert shape.layer_routed_active == pytest.approx(routed_active, rel=1e-9)
    assert shape.linear_computed(1.5) == pytest.approx(
        shape.layer_linear_active + 0.5 * routed_active
    )
    assert more.time.compute_s > one.time.compute_s
    # one micro-batch of 4096 tokens in flight, 32 layers, each token's 2 x 14336 routed FFN units
    # padded by
    # half: 3 stored 16-bit tensors per unit (the gate and up projections' outputs, their product)
    stored = (more.memory.activations_gib - one.memory.activations_gib) * GIB
    assert stored == pytest.approx(0.5 * 3 * 2.0 * (2 * 14336) * 4096 * 32, rel=1e-9)
    assert more.flops_per_token == one.flops_per_token and more.mfu < one.mfu
    assert any("capacity factor 1.5" in note for note in more.notes)
    assert any("dropless routing" in note for note in one.notes)
    for factor, why in ((0.5, "at least 1"), (5.0, "at most 4")):
        with pytest.raises(ValueError, match=f"capacity_factor: .*{why}"):
            estimate(card, "pretrain", cluster, replace(even, capacity_factor=factor))
    dense = ModelCard(
        id="dense",
        params=8e9,
        layers=32,
        hidden_size=4096,
        ffn_hidden_size=14336,
        num_heads=32,
        num_kv_heads=8,
        vocab_size=128256,
        max_positions=8192,
        source="test: dense",
    )
    with pytest.raises(ValueError, match=r"capacity_factor: .*dense"):
        estimate(
            dense,
            "pretrain",
            Cluster.of(a100, 16),
            replace(lay(16, zero=1, framework="megatron"), capacity_factor=1.25),
        )


def test_every_searched_layout_respects_the_global_batch(llama8b: ModelCard, h100: GPU) -> None:
    for gpus, gb in itertools.product((8, 24, 64), (64, 200)):
        spec = LayoutSpec(global_batch=gb, seq_len=2048)
        try:
            best = search_layout(llama8b, "pretrain", Cluster.of(h100, gpus), spec).best
        except ValueError:
            continue
        if best is None:
            continue
        lay_ = best.layout
        assert lay_.global_batch == gb and gb % lay_.dp == 0 and lay_.micro_batch <= gb // lay_.dp


def test_bands_bracket_the_estimate(llama8b: ModelCard, h100: GPU) -> None:
    est = search_layout(llama8b, "pretrain", Cluster.of(h100, 8), LayoutSpec()).best
    assert est is not None
    lo, hi = est.tokens_per_s_range
    assert lo < est.tokens_per_s < hi
    mem_lo, mem_hi = est.memory_gib_range
    assert mem_lo < est.memory.total_gib < mem_hi
    run = est.run(1e11)
    assert run.hours_range[0] < run.hours < run.hours_range[1]
    for band in (*THROUGHPUT_BAND.values(), MEMORY_BAND):
        assert quantile_factor(band, 0.1) == pytest.approx(band[0])
        assert quantile_factor(band, 0.9) == pytest.approx(band[1])
        assert quantile_factor(band, 0.5) < quantile_factor(band, 0.8)


def test_the_band_widens_for_each_mechanism_no_row_measures(
    llama8b: ModelCard, h100: GPU, rtx4090: GPU
) -> None:
    """Hopper with a dense model is calibrated; an assumed-efficiency GPU, an MoE model and QLoRA
    each widen the throughput band around the same median, the memory band stays."""
    mixtral = ModelCard(
        id="mixtral-8x7b",
        params=46.7e9,
        layers=32,
        hidden_size=4096,
        ffn_hidden_size=14336,
        num_heads=32,
        num_kv_heads=8,
        vocab_size=32000,
        max_positions=32768,
        moe=MoE(experts=8, top_k=2, expert_ffn_hidden_size=14336),
        source="test: Mixtral 8x7B",
    )
    ada_h100 = h100.model_copy(update={"id": "h100-as-ada", "architecture": "ada"})

    def relative_band(model: ModelCard, method: str, gpu: GPU, gpus: int,
                      framework: str | None = None) -> tuple[tuple[float, float], Any]:
        spec = LayoutSpec(seq_len=2048, framework=framework)
        est = search_layout(model, method, Cluster.of(gpu, gpus), spec).best
        assert est is not None
        lo, hi = est.tokens_per_s_range
        return (lo / est.tokens_per_s, hi / est.tokens_per_s), est

    calibrated, est = relative_band(llama8b, "lora", h100, 8)
    assert est.uncalibrated == () and not any("band widened" in n for n in est.notes)
    assert calibrated == pytest.approx(THROUGHPUT_BAND[band_class(est.layout)])
    cases = {
        "GPUs' compute efficiency": (llama8b, "lora", ada_h100, 8, None),
        "MoE": (mixtral, "lora", h100, 8, None),
        "QLoRA": (llama8b, "qlora", h100, 8, None),
        "DeepSpeed": (llama8b, "lora", h100, 8, "deepspeed"),
    }
    for what, (model, method, gpu, gpus, framework) in cases.items():
        band, est = relative_band(model, method, gpu, gpus, framework)
        assert len(est.uncalibrated) == 1 and what in est.uncalibrated[0], est.uncalibrated
        assert any("band widened" in n and what in n for n in est.notes)
        base = THROUGHPUT_BAND[band_class(est.layout)]
        assert band[0] < base[0] and band[1] > base[1]  # wider on both sides ...
        # ... about the same (geometric) median
        assert band[0] * band[1] == pytest.approx(base[0] * base[1])
        assert est.memory_gib_range[1] / est.memory.total_gib == pytest.approx(MEMORY_BAND[1])
    # two mechanisms add in quadrature: ada and QLoRA on one estimate
    band, est = relative_band(llama8b, "qlora", rtx4090, 8)
    assert len(est.uncalibrated) == 2
    base = THROUGHPUT_BAND[band_class(est.layout)]
    half = math.log(base[1] / base[0]) / 2
    assert math.log(band[1] / band[0]) / 2 == pytest.approx(
        math.sqrt(half**2 + 2 * math.log(UNCALIBRATED_SPREAD) ** 2)
    )


def test_torch_pipelining_keeps_every_micro_batch_output_on_the_last_stage(
    llama8b: ModelCard, h100: GPU
) -> None:
    """torch.distributed.pipelining returns the last stage's merged outputs from step(), so it holds
    each micro-batch's fp32 logits until the step ends; Megatron returns the loss alone."""
    cluster = Cluster.of(h100, 8)

    def peak(framework: str, micro_batches: int) -> Any:
        layout = lay(
            8,
            pp=2,
            zero=2 if framework == "fsdp" else 1,
            framework=framework,
            recompute="full",
            global_batch=4 * micro_batches,
            fused_modules=True,
        )
        return estimate(llama8b, "pretrain", cluster, layout)

    one, eight = peak("fsdp", 1), peak("fsdp", 8)
    kept_gib = 7 * 4096 * llama8b.vocab_size * KEPT_OUTPUT_LOGIT_BYTES / 2**30
    assert eight.memory.other_gib - one.memory.other_gib == pytest.approx(
        kept_gib * (1 + ALLOCATOR_FRAGMENTATION)
    )
    assert any("torch pipelining keeps" in n and "7 micro-batches" in n for n in eight.notes)
    assert not any("torch pipelining keeps" in n for n in one.notes)
    megatron_growth = peak("megatron", 8).memory.total_gib - peak("megatron", 1).memory.total_gib
    assert megatron_growth < 0.2 * kept_gib


def test_with_a_fused_linear_loss_torch_pipelining_keeps_hidden_states(
    llama8b: ModelCard, h100: GPU
) -> None:
    """Under a fused linear cross-entropy the model returns its 16-bit final hidden states, not fp32
    logits, so what the last stage keeps until the step ends is hidden x 2 B per token."""
    cluster = Cluster.of(h100, 8)

    def peak(micro_batches: int) -> Any:
        layout = lay(
            8,
            pp=2,
            zero=2,
            recompute="full",
            global_batch=4 * micro_batches,
            fused_modules=True,
            loss="fused",
        )
        return estimate(llama8b, "pretrain", cluster, layout)

    one, eight = peak(1), peak(8)
    kept_gib = 7 * 4096 * llama8b.hidden_size * 2.0 / 2**30
    (note,) = [
        n for n in eight.notes if "GiB of final hidden states that torch pipelining keeps" in n
    ]
    assert float(note.split("includes ")[1].split(" GiB")[0]) == pytest.approx(kept_gib, abs=0.05)
    assert "7 micro-batches" in note and not any("torch pipelining keeps" in n for n in one.notes)
    assert not any("GiB of logits" in n for n in eight.notes)
