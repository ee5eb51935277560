"""Layout search, whole-run hours with failures, and the cluster defaults."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from plan.models.gpu import GPU
from plan.models.model_card import ModelCard
from plan.planner.estimate import Cluster, LayoutSpec, search_layout
from plan.planner.estimate.band import WHOLE_RUN_OVERHEAD
from plan.planner.estimate.cluster import (
    DEFAULT_CHECKPOINT_WRITE_MIN,
    DEFAULT_GPU_MTBF_H,
    DEFAULT_RESTART_MIN,
    EFFECTIVE_TRAINING_TIME,
)
from plan.planner.estimate.reliability import checkpoint_interval_h, failure_overhead_fraction
from plan.planner.estimate.search_space import (
    Combination,
    batch_for_replicas,
    default_global_batch,
)


def test_search_returns_fastest_fitting_layout_and_explains(llama70b: ModelCard, h100: GPU) -> None:
    result = search_layout(llama70b, "pretrain", Cluster.of(h100, 64), LayoutSpec())
    best = result.best
    assert best is not None and best.fits
    assert best.layout.tp * best.layout.pp * best.layout.dp == 64
    assert result.considered > 10 and result.reasons.get("tp spans nodes", 0) >= 1
    assert any("spans" in reason for _, reason in result.rejected)
    assert result.searched == (
        "tp",
        "pp",
        "cp",
        "zero",
        "recompute",
        "micro_batch",
        "virtual_pipeline",
        "framework",
    )
    assert "tp=1" in result.why(tp=1) and (
        "slower" in result.why(tp=1) or "does not fit" in result.why(tp=1)
    )
    assert "invalid" in result.why(tp=3)
    assert result.why(tp=best.layout.tp, pp=best.layout.pp) == (
        f"tp={best.layout.tp} pp={best.layout.pp} is the chosen layout")


def test_fixed_fields_are_kept(llama8b: ModelCard, h100: GPU) -> None:
    spec = LayoutSpec(tp=2, zero=3, recompute="full", micro_batch=2, global_batch=64)
    best = search_layout(llama8b, "pretrain", Cluster.of(h100, 8), spec).best
    assert best is not None
    lay = best.layout
    assert (lay.tp, lay.zero, lay.recompute, lay.micro_batch, lay.global_batch) == (
        2,
        3,
        "full",
        2,
        64,
    )


def test_a_fixed_pp_searches_only_the_tp_that_leave_a_data_parallel_group(
    llama8b: ModelCard, h100: GPU
) -> None:
    # pp = 8 on 8 GPUs leaves room for tp = 1 only; the searched tp = 2, 4, 8 leave no whole
    # data-parallel group and are skipped (they divided by a zero dp:
    # bench/estimate_flag_combinations.py)
    for spec in (LayoutSpec(pp=8, seq_len=2048), LayoutSpec(pp=8, seq_len=2048, global_batch=64)):
        result = search_layout(llama8b, "pretrain", Cluster.of(h100, 8), spec)
        found = result.best or result.closest
        assert found is not None and (found.layout.tp, found.layout.pp, found.layout.dp) == (
            1,
            8,
            1,
        )


def test_virtual_stages_without_pp_search_the_pipelines_they_need(
    llama8b: ModelCard, h100: GPU
) -> None:
    """`--vpp 4` alone interleaves: the search tries the pp > 1 that split the layers into 4 chunks
    per stage (it refused "interleaving needs pp > 1", as if pp 1 had been stated); where no pp
    splits them, and nothing else fits either, the answer names the split, not the CPU offload it
    tried last (which needs pp 1)."""
    cluster = Cluster.of(h100, 16)
    best = search_layout(
        llama8b, "pretrain", cluster, LayoutSpec(virtual_pipeline=4, seq_len=8192)
    ).best
    assert best is not None and best.layout.virtual_pipeline == 4 and best.layout.pp > 1
    assert llama8b.layers % (best.layout.pp * 4) == 0
    # 32 layers: no pp of 16 GPUs makes 5 chunks each
    none = search_layout(llama8b, "pretrain", cluster, LayoutSpec(virtual_pipeline=5, seq_len=8192))
    assert none.best is None and none.closest is None
    assert any("splits the layers" in kind for kind in none.reasons)
    # one GPU has no stages
    with pytest.raises(ValueError, match="virtual_pipeline: interleaving needs pp > 1"):
        search_layout(
            llama8b, "pretrain", Cluster.of(h100, 1), LayoutSpec(virtual_pipeline=4, seq_len=8192)
        )


def test_nothing_fits_gives_the_closest_layout(llama70b: ModelCard, rtx4090: GPU) -> None:
    result = search_layout(llama70b, "full_finetune", Cluster.of(rtx4090, 1), LayoutSpec())
    assert result.best is None
    assert result.closest is not None and not result.closest.fits
    assert result.closest.memory.total_gib > 24
    assert "does not fit" in result.why(recompute="full")


@pytest.mark.parametrize(
    ("gpus", "method"), [(1, "full_finetune"), (2, "pretrain"), (8, "full_finetune")]
)
def test_least_memory_layout_is_the_least_of_every_combination(
    llama70b: ModelCard, rtx4090: GPU, gpus: int, method: str
) -> None:
    """Nothing fits: `closest` walks the combinations by their model states and stops early; it must
    still find what computing every combination's memory finds."""
    from plan.planner.estimate.flops import shape_of
    from plan.planner.estimate.memory import memory_per_gpu
    from plan.planner.estimate.search_space import search_space

    spec = LayoutSpec()
    cluster = Cluster.of(rtx4090, gpus)
    result = search_layout(llama70b, method, cluster, spec)
    assert result.best is None and result.closest is not None
    shape = shape_of(llama70b)
    space = search_space(shape, method, cluster, spec, None)
    every = [memory_per_gpu(shape, method, c.layout(space.splits[c.split], spec, None, 1),
                            spec.usable_gib(24.0)).breakdown.total_gib
             for c in map(Combination._make, space.rows)]
    assert len(every) > 3
    assert result.closest.memory.total_gib == pytest.approx(min(every))


def test_search_is_cached(llama70b: ModelCard, h100: GPU) -> None:
    # speed is measured in bench/estimate_speed.py; here only that an equal cluster hits the cache
    from plan.planner.estimate import search

    search._search.cache_clear()
    first = search_layout(llama70b, "pretrain", Cluster.of(h100, 512), LayoutSpec())
    again = search_layout(llama70b, "pretrain", Cluster.of(h100, 512), LayoutSpec())
    assert again is first and search._search.cache_info().hits == 1


def test_default_global_batch_rule() -> None:
    assert default_global_batch("pretrain", 4096, 8e9) == 1024  # 4M tokens from 7B up
    assert default_global_batch("pretrain", 8192, 70.6e9) == 512  # 4M to 200B (Llama 3 70B)
    assert default_global_batch("pretrain", 8192, 405.9e9) == 2048  # 16M from 200B (Llama 3.1 405B)
    # 16M (DeepSeek-V3 ramps past it)
    assert default_global_batch("continued_pretrain", 4096, 671e9) == 4096
    assert default_global_batch("pretrain", 2048, 1.3e9) == 512  # 1M tokens (GPT-3 1.3B)
    assert default_global_batch("pretrain", 2048, 350e6) == 256  # 0.5M tokens
    assert default_global_batch("lora", 2048) == 128
    assert batch_for_replicas(128, 48) == 144  # the nearest multiple of the replicas
    assert batch_for_replicas(128, 256) is None  # more replicas than sequences: not a layout


def test_global_batch_is_not_a_search_variable(llama70b: ModelCard, h100: GPU) -> None:
    # 405B-class pre-training on many GPUs must not grow the batch to keep every GPU data-parallel
    result = search_layout(llama70b, "pretrain", Cluster.of(h100, 2048), LayoutSpec(seq_len=8192))
    assert result.best is not None
    assert result.best.layout.global_batch == 512  # 4M tokens of 8k
    assert result.best.layout.dp <= 512 and result.best.layout.tp * result.best.layout.pp >= 4
    assert result.reasons.get("global batch too small for dp", 0) > 0


def test_micro_batch_search_goes_beyond_powers_of_two(h100: GPU) -> None:
    # llm-foundry's MPT-30B on 16 H100s (LLMF-P03) ran micro-batch 10 of a 30-sequence replica batch
    mpt30b = ModelCard(
        id="mpt-30b",
        params=29.98e9,
        layers=48,
        hidden_size=7168,
        ffn_hidden_size=28672,
        ffn_type="gelu",
        num_heads=64,
        num_kv_heads=64,
        vocab_size=50368,
        max_positions=8192,
        tied_embeddings=True,
        source="test: llm-foundry MPT-30B",
    )
    spec = LayoutSpec(
        tp=1, pp=1, zero=3, recompute="full", seq_len=2048, global_batch=480, framework="fsdp"
    )
    best = search_layout(mpt30b, "pretrain", Cluster.of(h100, 16), spec).best
    assert best is not None
    assert best.layout.micro_batch not in (1, 2, 4, 8, 16)  # a balanced size up to the memory limit
    assert best.layout.micro_batch >= 5 and best.memory.total_gib <= 80
    assert best.time.dp_comm_s < 0.2 * best.step_time_s


def test_young_daly_interval_and_overhead() -> None:
    delta_h, mtbf_h = 2 / 60, 50_700 / 1024
    tau = checkpoint_interval_h(delta_h, mtbf_h)
    assert tau == pytest.approx(math.sqrt(2 * delta_h * mtbf_h) - delta_h)
    f = failure_overhead_fraction(delta_h, 0.5, mtbf_h)
    assert f == pytest.approx(delta_h / tau + (tau / 2 + 0.5) / mtbf_h)


def test_default_reliability_reproduces_llama3_effective_training_time() -> None:
    """The derived default restart keeps the 16,384-GPU Llama 3 run at its published >90% effective
    training time, and a restart a minute longer would not (6 min is the bound, not a round
    guess)."""
    mtbf = DEFAULT_GPU_MTBF_H / 16_384
    delta = DEFAULT_CHECKPOINT_WRITE_MIN / 60

    def effective(restart_min: float) -> float:
        return 1 / (1 + failure_overhead_fraction(delta, restart_min / 60, mtbf))

    assert (
        effective(DEFAULT_RESTART_MIN)
        >= EFFECTIVE_TRAINING_TIME
        > effective(DEFAULT_RESTART_MIN + 1)
    )
    assert 2.9 < mtbf < 3.2  # "about one interruption every 3 hours"


def test_run_hours_include_failures_and_spot(llama8b: ModelCard, h100: GPU) -> None:
    spec = LayoutSpec()
    on_demand = search_layout(llama8b, "pretrain", Cluster.of(h100, 64), spec).best
    spot = search_layout(llama8b, "pretrain", Cluster.of(h100, 64, spot=True), spec).best
    assert on_demand is not None and spot is not None
    run = on_demand.run(10e9)
    assert run.failure_free_hours == pytest.approx(
        10e9 / on_demand.tokens_per_s / 3600 * WHOLE_RUN_OVERHEAD
    )
    assert run.hours_range[0] < run.hours < run.hours_range[1]
    # fine-tuning runs are not charged the pre-training runs' whole-run overhead
    tune = search_layout(llama8b, "full_finetune", Cluster.of(h100, 64), spec).best
    assert tune is not None
    assert tune.run(1e9).failure_free_hours == pytest.approx(1e9 / tune.tokens_per_s / 3600)
    assert run.hours > run.failure_free_hours
    assert run.gpu_hours == pytest.approx(run.hours * 64)
    assert spot.run(10e9).hours > run.hours
    assert spot.run(10e9).expected_interruptions > run.expected_interruptions > 0


def test_cluster_defaults_are_stated(h100: GPU) -> None:
    cluster = Cluster.of(h100, 16)
    assert cluster.gpu_mtbf_h == 50_700 and cluster.nodes == 2
    assert cluster.fabric_kind == "infiniband" and cluster.fabric_gbps_per_gpu == 400
    assert any("MTBF" in note for note in cluster.assumptions)
    with pytest.raises(ValueError, match="gpus"):
        Cluster.of(h100, 0)


def test_context_parallelism_is_searched_at_8k_and_may_span_nodes() -> None:
    """NeMo's published 8k runs use context parallelism 2 (validation rows NEMO-11/12); with tp 8
    the ring spans nodes, as Llama 3's 131k stage ran it: at Meta's TP 8 x PP 16 on 16K H100s the
    search tries it, and it beats every cp = 1 layout (no recomputation: the activations split over
    the ring; more micro-batches per replica fill the pipeline), with its K/V exchange costed on the
    fabric."""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    model, cluster = catalog.model("llama3.1-405b"), Cluster.of(catalog.gpu("h100-sxm"), 16384)
    searched = search_layout(
        model, "pretrain", cluster, LayoutSpec(tp=8, pp=16, seq_len=8192, global_batch=2048)
    ).best
    plain = search_layout(model, "pretrain", cluster,
                          LayoutSpec(tp=8, pp=16, cp=1, seq_len=8192, global_batch=2048)).best
    assert searched is not None and plain is not None and searched.fits and plain.fits
    assert (
        searched.layout.cp > 1 and searched.layout.tp * searched.layout.cp > cluster.gpus_per_node
    )
    assert searched.tokens_per_s > plain.tokens_per_s
    assert searched.time.cp_comm_s >= 0.0 and plain.layout.recompute == "full"
    # shorter sequences keep cp = 1 unless it is given
    short = search_layout(
        model, "pretrain", cluster, LayoutSpec(tp=8, pp=16, seq_len=4096, global_batch=4096)
    ).best
    assert short is not None and short.layout.cp == 1


def test_activation_offload_is_searched_only_where_nothing_else_fits() -> None:
    """Offloading activations to host memory is torchtune's; none of the stacks plan export writes
    for runs it. So an 8B QLoRA on one 24 GB card gets whole-layer checkpointing, which fits, and a
    70B QLoRA with 8-bit AdamW on one 48 GB card gets offload, the one policy that fits there; asked
    for, it is kept. (The 70B with fused layers, as Unsloth runs it: eager Hugging Face modules
    prepared by peft hold fp32 embeddings and residual stream, and fit no policy on 48 GB, as
    Unsloth's table found, bench/data/memory_public.csv UNS rows.)"""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    small = search_layout(
        catalog.models["qwen3-8b"],
        "qlora",
        Cluster.of(catalog.gpus["rtx4090"], 1),
        LayoutSpec(seq_len=2048),
    )
    assert small.best is not None and small.best.layout.recompute == "full"
    big_spec = LayoutSpec(
        seq_len=2048, global_batch=1, optimizer="paged_adam_8bit", memory_headroom=0.08,
        fused_modules=True,
    )
    big = search_layout(
        catalog.models["llama3.1-70b"], "qlora", Cluster.of(catalog.gpus["rtx-a6000"], 1), big_spec
    )
    assert big.best is not None and big.best.layout.recompute == "offload"
    assert any("only where nothing else fits" in note for note in big.best.notes)
    without = search_layout(
        catalog.models["llama3.1-70b"],
        "qlora",
        Cluster.of(catalog.gpus["rtx-a6000"], 1),
        replace(big_spec, offload=False),
    )
    assert without.best is None  # nothing else fits
    asked = search_layout(
        catalog.models["qwen3-8b"],
        "qlora",
        Cluster.of(catalog.gpus["rtx4090"], 1),
        LayoutSpec(seq_len=2048, recompute="offload"),
    )
    assert asked.best is not None and asked.best.layout.recompute == "offload"


def test_a_paged_optimizer_is_reported_as_the_search_timed_it() -> None:
    """A paged optimizer's states stay on the GPU only while the layout is within what it may use.
    The search judges that against its usable memory (the card less headroom and the band's margin),
    so the estimate it returns must be worked out at the same limit: within that memory, and timed
    with the states it pages. Qwen3 8B DPO at 8k on two H800s: at confidence 0.8 the search once
    returned a ZeRO-0 layout at 76.8 GiB against 67.1 usable, timed without paging and faster than
    at 0.5."""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    cluster = Cluster.of(catalog.gpus["h800"], 2)
    rates = {}
    for confidence in (0.5, 0.8, 0.9):
        spec = LayoutSpec(
            seq_len=8192,
            optimizer="paged_adam_8bit",
            loss="chunked",
            memory_headroom=0.08,
            memory_confidence=confidence,
        )
        best = search_layout(catalog.models["qwen3-8b"], "dpo", cluster, spec).best
        assert best is not None
        assert best.memory.total_gib <= spec.usable_gib(best.gpu_memory_gib) + 1e-9, confidence
        rates[confidence] = best.tokens_per_s
    # a stricter limit never makes the fastest layout faster
    assert rates[0.5] >= rates[0.8] >= rates[0.9]


def test_a_paged_optimizer_is_timed_at_the_micro_batch_that_keeps_its_states() -> None:
    """Llama 2 7B fully fine-tuned on one 144 GiB card (an H20 with half as much memory again) with
    paged 8-bit
    AdamW: 8 sequences per micro-batch fit only by paging optimizer states to host memory every
    step, 4 keep them all; the search timed only the largest size and came out 1% slower than on the
    96 GiB card (bench/estimate_invariants.py seed 129: more memory came out slower)."""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    card, h20 = catalog.model("llama2-7b"), catalog.gpu("h20")
    spec = LayoutSpec(
        seq_len=2048, global_batch=64, memory_headroom=0.08, optimizer="paged_adam_8bit"
    )
    roomy = Cluster.of(h20.model_copy(update={"memory_gib": h20.memory_gib * 1.5}), 1)
    found = search_layout(card, "full_finetune", roomy, spec).best
    for mb in (4, 8):
        fixed = search_layout(card, "full_finetune", roomy, replace(spec, micro_batch=mb)).best
        assert found is not None and fixed is not None
        assert found.tokens_per_s >= fixed.tokens_per_s * (1 - 1e-9), mb
    small = search_layout(card, "full_finetune", Cluster.of(h20, 1), spec).best
    assert small is not None and found.tokens_per_s >= small.tokens_per_s * (1 - 1e-9)


def test_block_recomputation_with_expert_parallelism_is_not_pruned_as_full() -> None:
    """Qwen3 30B-A3B pre-trained on 16 H20s: tp 1 x ep 8 with one layer a chunk recomputed is the
    fastest; the search's bound charged its all-to-alls a whole recomputed forward and pruned it
    (fixing tp 1 beat the free search by 1%; bench/estimate_invariants.py seed 166)."""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    card, cluster = catalog.model("qwen3-30b-a3b"), Cluster.of(catalog.gpu("h20"), 16)
    spec = LayoutSpec(seq_len=8192, memory_headroom=0.08)
    free = search_layout(card, "pretrain", cluster, spec).best
    fixed = search_layout(card, "pretrain", cluster, replace(spec, tp=1)).best
    assert free is not None and fixed is not None
    assert free.tokens_per_s >= fixed.tokens_per_s * (1 - 1e-9)
