"""Throughput, FLOPs, topology and invalid layouts."""

from __future__ import annotations

import math

import pytest

from plan.models.gpu import GPU
from plan.models.model_card import ModelCard
from plan.planner.estimate import Cluster, Layout, LayoutSpec, estimate, search_layout, shape_of
from plan.planner.estimate.topology import group_link


def make(gpus: int, **kw: object) -> Layout:
    base: dict[str, object] = dict(
        tp=1,
        pp=1,
        zero=1,
        recompute="none",
        micro_batch=1,
        seq_len=2048,
        precision="bf16",
        sequence_parallel=False,
        lora_rank=None,
    )
    base.update(kw)
    tp, pp = int(base["tp"]), int(base["pp"])  # type: ignore[call-overload]
    dp = gpus // (tp * pp)
    gb = base.pop("global_batch", dp * int(base["micro_batch"]) * 8)  # type: ignore[call-overload]
    return Layout(dp=dp, global_batch=gb, **base)  # type: ignore[arg-type]


def test_flops_per_token_is_6n_plus_attention_for_gpt(gpt7b: ModelCard) -> None:
    shape = shape_of(gpt7b)
    n_linear = shape.layer_linear_active * shape.layers
    expected = 6 * n_linear + 12 * 36 * 4096 * 2048 + 6 * 51200 * 4096
    assert shape.flops_per_token(2048, "pretrain") == pytest.approx(expected)
    # LoRA: the frozen base has no weight gradients, ~4N instead of 6N (plus attention and adapters)
    lora = shape.flops_per_token(2048, "lora", lora_rank=8)
    assert lora < shape.flops_per_token(2048, "pretrain")
    assert lora == pytest.approx(4 * n_linear + 12 * 36 * 4096 * 2048 + 4 * 51200 * 4096
                                 + 6 * shape.adapter_params(8, active_only=True))


def test_moe_counts_all_experts_in_memory_and_active_in_flops(a100: GPU) -> None:
    from plan.models.model_card import MoE

    mixtral = ModelCard(
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
        source="test",
    )
    shape = shape_of(mixtral)
    assert shape.flops_per_token(4096, "pretrain") < 6 * 14e9 + 12 * 32 * 4096 * 4096
    est = estimate(mixtral, "pretrain", Cluster.of(a100, 8), make(8, tp=8, sequence_parallel=True))
    assert est.memory.weights_gib == pytest.approx(46.7e9 * 2 / 8 / 2**30, rel=1e-6)


def test_more_gpus_never_lower_total_throughput(llama8b: ModelCard, h100: GPU) -> None:
    rates = []
    for gpus in (8, 16, 32, 64, 128):
        best = search_layout(
            llama8b, "pretrain", Cluster.of(h100, gpus), LayoutSpec(seq_len=4096)
        ).best
        assert best is not None and best.fits
        rates.append(best.tokens_per_s)
    assert rates == sorted(rates)
    assert rates[-1] > 10 * rates[0]


def test_fp8_rejected_on_ampere(llama8b: ModelCard, a100: GPU) -> None:
    with pytest.raises(ValueError, match=r"precision: .*no fp8 peak"):
        estimate(llama8b, "pretrain", Cluster.of(a100, 8), make(8, precision="fp8"))
    with pytest.raises(ValueError, match="precision"):
        search_layout(llama8b, "pretrain", Cluster.of(a100, 8), LayoutSpec(precision="fp8"))


def test_fp8_faster_than_bf16_on_hopper(llama8b: ModelCard, h100: GPU) -> None:
    cluster = Cluster.of(h100, 8)
    # Transformer Engine's FP8
    bf16 = estimate(llama8b, "pretrain", cluster, make(8, framework="megatron"))
    fp8 = estimate(llama8b, "pretrain", cluster, make(8, precision="fp8", framework="megatron"))
    assert 1.2 < bf16.step_time_s / fp8.step_time_s < 2.0


@pytest.mark.parametrize(("framework", "cached"), [("megatron", True), ("fsdp", False)])
def test_fp8_weights_are_cast_once_per_step_under_transformer_engine(
    llama70b: ModelCard, h100: GPU, framework: str, cached: bool
) -> None:
    """Megatron's TE layers cache a step's FP8 weight copies on its first micro-batch; torchao under
    FSDP casts every micro-batch. With 32 micro-batches instead of one, the memory-bound work of
    each micro-batch falls by the weight casts (2 x 4 B per weight, amortized) under Megatron and
    not at all under FSDP."""
    from plan.planner.estimate.compute import micro_batch_compute, rates
    from plan.planner.estimate.factors import FP8_CAST_BYTES_PER_ELEMENT

    cluster = Cluster.of(h100, 8)
    shape = shape_of(llama70b)
    kw = dict(tp=8, precision="fp8", framework=framework, zero=1 if framework == "megatron" else 3)
    one, many = make(8, global_batch=1, **kw), make(8, global_batch=32, **kw)
    assert (one.micro_batches, many.micro_batches) == (1, 32)
    saved = (
        micro_batch_compute(shape, "pretrain", one, rates(shape, one, cluster)).elementwise_s
        - micro_batch_compute(shape, "pretrain", many, rates(shape, many, cluster)).elementwise_s
    )
    weight_casts = (2 * FP8_CAST_BYTES_PER_ELEMENT * shape.layer_linear_active * shape.layers / 8
                    / rates(shape, one, cluster).memory_bytes_per_s)
    expected = weight_casts * (1 - 1 / 32) if cached else 0.0
    assert saved == pytest.approx(expected, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize(("fields", "message"), [
    (dict(tp=3), "tp"),
    (dict(tp=2, pp=2, global_batch=5), "global_batch"),
    (dict(zero=4), "zero"),
    (dict(recompute="some"), "recompute"),
    (dict(lora_rank=8), "lora_rank"),
    (dict(precision="int4"), "precision"),
    (dict(micro_batch=0), "micro_batch"),
])
def test_invalid_layouts_name_the_field(llama8b: ModelCard, a100: GPU, fields: dict[str, object],
                                        message: str) -> None:
    base: dict[str, object] = dict(
        tp=1,
        pp=1,
        dp=8,
        zero=1,
        recompute="none",
        micro_batch=1,
        global_batch=8,
        seq_len=2048,
        precision="bf16",
        sequence_parallel=False,
        lora_rank=None,
    )
    base.update(fields)
    if base["tp"] == 3:
        base["dp"] = 1
    if fields.get("tp") == 2:
        base["dp"] = 2
    with pytest.raises(ValueError, match=message):
        estimate(
            llama8b,
            "pretrain",
            Cluster.of(a100, int(base["tp"]) * int(base["pp"]) * int(base["dp"])),  # type: ignore[call-overload]
            Layout(**base),
        )  # type: ignore[arg-type]


def test_lora_needs_a_rank(llama8b: ModelCard, a100: GPU) -> None:
    with pytest.raises(ValueError, match="lora_rank"):
        estimate(llama8b, "lora", Cluster.of(a100, 1), make(1))


def test_group_bandwidth_is_the_bottleneck_of_its_paths(h100: GPU, rtx4090: GPU) -> None:
    cluster = Cluster.of(h100, 16)  # two nodes, default InfiniBand 400 Gb/s per GPU
    inside = group_link(cluster, 8, 1)
    across = group_link(cluster, 16, 1)
    one_per_node = group_link(cluster, 2, 8)
    assert inside.bandwidth_gb_per_s == pytest.approx(450.0) and not inside.spans_nodes
    # NCCL spreads rings over every NIC: eight members per node cross at eight 50 GB/s cards, capped
    # by NVLink; a group with one member per node has one card
    assert across.bandwidth_gb_per_s == pytest.approx(400.0) and across.spans_nodes
    assert across.nics_per_node == 8
    assert (
        one_per_node.bandwidth_gb_per_s == pytest.approx(50.0) and one_per_node.nics_per_node == 1
    )
    assert group_link(Cluster.of(rtx4090, 4), 4, 1).bandwidth_gb_per_s == pytest.approx(25.0)


def _slowest_group_by_brute_force(gpus: int, per_node: int, size: int, stride: int, nvlink: float,
                                  nic: float) -> tuple[float, bool]:
    """Every group of `size` ranks `stride` apart laid out on nodes of `per_node` GPUs, one by one:
    a group inside a node runs at NVLink's bandwidth, one across nodes at the NICs of its members on
    the node that holds the fewest of them (capped by NVLink)."""
    slowest, spans = float("inf"), False
    for base in range(gpus):
        if (base // stride) % size:
            continue
        members = [base + k * stride for k in range(size)]
        counts: dict[int, int] = {}
        for rank in members:
            counts[rank // per_node] = counts.get(rank // per_node, 0) + 1
        across = len(counts) > 1
        slowest = min(slowest, min(nvlink, nic * min(counts.values())) if across else nvlink)
        spans = spans or across
    return slowest, spans


@pytest.mark.parametrize(("gpus", "size", "stride"), [
    (96, 3, 1),    # tensor parallelism over 3 on 8-GPU nodes: ranks 6-8 cross a node boundary
    (96, 6, 1),
    (24, 2, 3),    # context or data parallelism beside tp = 3
    (48, 2, 6),    # pipeline neighbours six ranks apart: 2 and 8 sit on different nodes
    (96, 32, 3),   # data parallelism beside tp = 3: two or three members per node
    (16, 8, 1), (16, 16, 1), (64, 8, 8), (24, 3, 1), (6, 3, 1),
])
def test_a_kind_of_group_is_as_slow_as_its_slowest_member_group(
    h100: GPU, gpus: int, size: int, stride: int
) -> None:
    link = group_link(Cluster.of(h100, gpus), size, stride)
    slowest, spans = _slowest_group_by_brute_force(gpus, 8, size, stride, nvlink=450.0, nic=50.0)
    assert link.bandwidth_gb_per_s == pytest.approx(slowest)
    assert link.spans_nodes == spans


def test_a_tensor_parallel_group_that_straddles_nodes_is_costed_on_the_network(h100: GPU) -> None:
    """tp = 3 fits in an 8-GPU node but does not divide it: on 48 GPUs every fourth group (ranks
    6-8, ...) crosses a node boundary, and its all-reduces run on one network card, not on
    NVLink."""
    card = ModelCard(
        id="gpt-24-heads",
        params=2.7e9,
        layers=24,
        hidden_size=3072,
        ffn_hidden_size=12288,
        ffn_type="gelu",
        num_heads=24,
        num_kv_heads=24,
        vocab_size=51200,
        max_positions=2048,
        tied_embeddings=True,
        source="test fixture",
    )
    # the same work per replica (4 sequences of 2,048 tokens) on one node and on six
    inside = search_layout(
        card, "pretrain", Cluster.of(h100, 6), LayoutSpec(tp=3, pp=1, seq_len=2048, global_batch=8)
    )
    across = search_layout(
        card,
        "pretrain",
        Cluster.of(h100, 48),
        LayoutSpec(tp=3, pp=1, seq_len=2048, global_batch=64),
    )
    assert inside.best is not None and across.best is not None
    assert inside.best.layout.micro_batches == across.best.layout.micro_batches
    assert not any("spans nodes" in note for note in inside.best.notes)
    assert any("tp=3 spans nodes" in note for note in across.best.notes)
    assert across.best.time.tp_comm_s > 3 * inside.best.time.tp_comm_s


US = 1e-6


@pytest.mark.parametrize(("gpus", "size", "stride", "inter_hops", "intra_us"), [
    (8, 8, 1, 0, 3.4),           # one node: 7 NVLink hops
    (2048, 2048, 1, 255, 3.4),   # 256 nodes of 8: 255 network hops, 1,792 NVLink hops
    (128, 16, 8, 15, 3.4),       # one member per node: every hop crosses the network
])
def test_ring_latency_is_nccls_sum_of_hops(
    h100: GPU, gpus: int, size: int, stride: int, inter_hops: int, intra_us: float
) -> None:
    # NCCL 2.29.7 src/graph/tuning.cc, Ring/Simple: base 8.4 us, NVLink hop 3.4, network hop 14
    link = group_link(Cluster.of(h100, gpus), size, stride)
    expected = (8.4 + inter_hops * 14.0 + (size - 1 - inter_hops) * intra_us) * US
    assert link.ring_latency_s == pytest.approx(expected)
    # an all-reduce: NCCL's ring (2 (n - 1) steps, one base) or its tree (Tree/Simple: hop 4.0
    # inside a node, 14 between nodes, log2(nodes) of them each way), whichever is faster
    ring = (8.4 + 2 * inter_hops * 14.0 + 2 * (size - 1 - inter_hops) * intra_us) * US
    nodes = inter_hops + 1
    tree = (8.4 + 2 * ((size // nodes - 1) * 4.0 + int(math.log2(nodes)) * 14.0)) * US
    assert link.all_reduce_s(1.0) == pytest.approx(min(ring, tree), rel=1e-3)


def test_ring_latency_over_pcie_uses_the_pcie_hop(rtx4090: GPU) -> None:
    link = group_link(Cluster.of(rtx4090, 4), 4, 1)
    assert link.ring_latency_s == pytest.approx((8.4 + 3 * 5.7) * US)


def test_layer_by_layer_sharding_pays_the_ring_latency_for_every_layer(
    llama70b: ModelCard, h100: GPU
) -> None:
    """ZeRO-3 gathers each layer before its forward and its backward and reduce-scatters its
    gradient: 80 layers x 3 collectives per micro-batch, each with the whole ring's latency (at
    2,048 ranks, about 9.7 ms, more than a layer's bytes take), even where no compute hides them."""
    from plan.planner.estimate.timing import dp_exposed_s

    cluster = Cluster.of(h100, 2048)
    layout = make(2048, zero=3, framework="fsdp", global_batch=2048)
    link = group_link(cluster, 2048, 1)
    shape = shape_of(llama70b)
    exposed = dp_exposed_s(shape, "pretrain", layout, link, 3, compute_mb=0.0, recompute_mb=0.0)
    assert exposed >= 3 * shape.layers * link.ring_latency_s
    # the bytes alone (no latency) would be far less than that at this scale
    assert link.reduce_scatter_s(2.0 * llama70b.params / shape.layers) < 2 * link.ring_latency_s


@pytest.mark.parametrize(
    "framework, zero",
    [("megatron", 1), ("fsdp", 3), ("deepspeed", 3), ("megatron", 2), ("megatron", 3)],
)
def test_the_embedding_is_the_data_parallel_bucket_nothing_hides(
    h100: GPU, framework: str, zero: int
) -> None:
    """The forward gathers the embedding first and the backward finishes its gradient last, so with
    compute long enough to hide every layer's collective, what stays exposed is the embedding's own
    bucket (a 128k-token vocabulary is several layers of a 1B model), not an average layer's
    share."""
    from plan.planner.estimate.memory import grad_buffer_bytes
    from plan.planner.estimate.timing import dp_exposed_s

    card = ModelCard(
        id="small-big-vocab",
        params=1.24e9,
        layers=16,
        hidden_size=2048,
        ffn_hidden_size=8192,
        ffn_type="swiglu",
        num_heads=32,
        num_kv_heads=8,
        vocab_size=128256,
        max_positions=8192,
        tied_embeddings=True,
        source="test fixture",
    )
    shape = shape_of(card)
    link = group_link(Cluster.of(h100, 16), 16, 1)
    layout = make(16, zero=zero, framework=framework, micro_batch=4, global_batch=64)
    gather = link.reduce_scatter_s(shape.embed_params * 2.0)
    reduce = link.reduce_scatter_s(shape.embed_params * grad_buffer_bytes(layout))  # Megatron: fp32
    layer = link.reduce_scatter_s(shape.layer_params_per_gpu(1, 1) * 2.0)
    assert gather > 3 * layer
    exposed = dp_exposed_s(
        shape, "pretrain", layout, link, zero, compute_mb=100.0, recompute_mb=0.0
    )
    # per step: the gradient's reduction once (ZeRO-1), or per micro-batch (ZeRO-2/3), plus the
    # gathers: once per step after the optimizer (ZeRO-1 and Megatron-FSDP's optim_grads, which
    # shard the optimizer but not the parameters), every micro-batch under ZeRO-3 (DeepSpeed's
    # stages below 3 overlap nothing: test_deepspeed_below_stage_3_exposes_every_collective)
    reductions = 1 if zero == 1 else layout.micro_batches
    gathers = 1 if zero in (1, 2) else layout.micro_batches
    assert exposed == pytest.approx(reductions * reduce + gathers * gather)
    # with no compute to hide behind, every layer's collectives add to it
    assert (
        dp_exposed_s(shape, "pretrain", layout, link, zero, compute_mb=0.0, recompute_mb=0.0)
        > exposed + layer
    )


@pytest.mark.parametrize("zero", [0, 1, 2])
def test_deepspeed_below_stage_3_exposes_every_collective(
    llama70b: ModelCard, h100: GPU, zero: int
) -> None:
    """DeepSpeed's `overlap_comm` is off below stage 3, so its gradient all-reduces (buckets of 5e8
    elements) and the optimizer step's all-gather of the updated parameters run on the compute
    stream: however long the compute, all of them are exposed, the all-reduce on every
    micro-batch under ZeRO-2. A stack that overlaps them (FSDP's ZeRO-2, Megatron's ZeRO-0/1)
    hides most of the same traffic behind the same compute."""
    from plan.planner.estimate.timing import DEEPSPEED_REDUCE_BUCKET_ELEMENTS, dp_exposed_s

    shape = shape_of(llama70b)
    cluster = Cluster.of(h100, 64)
    layout = make(64, tp=8, zero=zero, framework="deepspeed", micro_batch=1, global_batch=32)
    link = group_link(cluster, layout.dp, 8)
    assert link.spans_nodes and layout.micro_batches == 4
    exposed = [
        dp_exposed_s(shape, "pretrain", layout, link, zero, compute_mb=c, recompute_mb=0.0)
        for c in (0.0, 1e3)
    ]
    assert exposed[0] == exposed[1] > 0
    trained = shape.layer_params_per_gpu(8, 1) * shape.layers + (
        shape.embed_params + shape.head_params) / 8
    full, rest = divmod(trained, DEEPSPEED_REDUCE_BUCKET_ELEMENTS)
    assert full >= 1  # a 70B model over tp 8 fills more than one bucket
    all_reduce = (full * link.all_reduce_s(DEEPSPEED_REDUCE_BUCKET_ELEMENTS * 2.0)
                  + link.all_reduce_s(rest * 2.0))
    reductions = layout.micro_batches if zero == 2 else 1
    gather = link.reduce_scatter_s(trained * 2.0) if zero else 0.0
    assert exposed[0] == pytest.approx(reductions * all_reduce + gather)
    overlapping = make(64, tp=8, zero=zero, framework="fsdp" if zero == 2 else "megatron",
                       micro_batch=1, global_batch=32)
    assert dp_exposed_s(shape, "pretrain", overlapping, link, zero, compute_mb=1e3,
                        recompute_mb=0.0) < exposed[1] / 2


def test_interleaved_stages_leave_only_the_last_chunks_reduction_uncovered(
    llama70b: ModelCard, h100: GPU
) -> None:
    """Megatron reduces each model chunk's gradients once they are final; with v chunks per stage
    all but the chunk that ends the step are final a round of pp stages earlier, with compute still
    running, so only that chunk's layer-by-layer chain is exposed (and its gradients are fp32
    main_grad, 4 B)."""
    from plan.planner.estimate.memory import grad_buffer_bytes
    from plan.planner.estimate.timing import dp_exposed_s

    shape = shape_of(llama70b)
    cluster = Cluster.of(h100, 256)
    link = group_link(cluster, 8, 32)  # one rank per node: every hop crosses the network
    one = make(256, tp=8, pp=4, zero=1, framework="megatron", micro_batch=1, global_batch=64)
    assert grad_buffer_bytes(one) == 4.0 and grad_buffer_bytes(make(8, precision="fp16")) == 2.0
    backward_s = 0.05  # short compute: no layer's collective hides behind its own layer
    plain = dp_exposed_s(
        shape, "pretrain", one, link, 1, compute_mb=1.5 * backward_s, recompute_mb=0.0
    )
    four = make(
        256,
        tp=8,
        pp=4,
        zero=1,
        framework="megatron",
        micro_batch=1,
        global_batch=64,
        virtual_pipeline=4,
    )
    interleaved = dp_exposed_s(
        shape, "pretrain", four, link, 1, compute_mb=1.5 * backward_s, recompute_mb=0.0
    )
    layers = shape.layers // 4
    layer_reduce = link.reduce_scatter_s(shape.layer_params_per_gpu(8, 1) * 4.0)
    assert interleaved < plain
    # at least the first chunk's own layers (a quarter of the stage) stay exposed
    assert interleaved > (layers // 4) * (layer_reduce - 0.8 * backward_s / layers)


def test_tensor_parallel_across_nodes_costs_what_it_costs(llama70b: ModelCard, h100: GPU) -> None:
    cluster = Cluster.of(h100, 16)
    inside = estimate(llama70b, "pretrain", cluster, make(16, tp=8, zero=1, sequence_parallel=True))
    across = estimate(
        llama70b, "pretrain", cluster, make(16, tp=16, zero=0, sequence_parallel=True)
    )
    # per-layer collectives cross the fabric (eight 50 GB/s NICs per node: 400 GB/s, below NVLink's
    # 450) and span 16 ranks: at least the bandwidth ratio slower, plus the network hops' latency
    bandwidth_ratio = (450.0 / 400.0) * (15 / 16) / (7 / 8)
    assert across.time.tp_comm_s > bandwidth_ratio * inside.time.tp_comm_s
    assert any("spans nodes" in note for note in across.notes)


def test_pipeline_bubble_matches_narayanan(llama70b: ModelCard, h100: GPU) -> None:
    est = estimate(
        llama70b,
        "pretrain",
        Cluster.of(h100, 16),
        make(
            16,
            tp=8,
            pp=2,
            zero=1,
            sequence_parallel=True,
            micro_batch=1,
            global_batch=8,
            framework="megatron",
        ),
    )
    t = est.time
    per_mb = (t.compute_s + t.recompute_s + t.tp_comm_s) / 8
    # bubble (p - 1) micro-batch times; the rest of pp_bubble_s is point-to-point transfers
    assert per_mb <= t.pp_bubble_s < 1.1 * per_mb


@pytest.mark.parametrize("flash, backward_passes", [(True, 2.5), (False, 2.0)])
def test_attention_backward_is_two_and_a_half_forwards_with_flash(
    gpt7b: ModelCard, h100: GPU, flash: bool, backward_passes: float
) -> None:
    """Flash attention recomputes the scores in the backward pass (5 matmuls against the forward's
    2), which is how its published utilization is counted; eager attention stores them (backward
    2x)."""
    from plan.planner.estimate.compute import _stage_compute, rates

    shape = shape_of(gpt7b)
    layout = make(8, seq_len=16384, flash_attention=flash)
    cluster = Cluster.of(h100, 8)
    r = rates(shape, layout, cluster)
    mbc = _stage_compute(shape, "pretrain", layout, r, shape.layers, with_head=False)
    attention_s = mbc.compute_s - 3 * mbc.linear_fwd_s - mbc.elementwise_s - 3 * mbc.score_fwd_s
    assert attention_s == pytest.approx((1 + backward_passes) * mbc.attention_fwd_s, rel=1e-9)


def test_assumed_gpu_efficiency_is_named_in_estimates_and_not_for_measured_ones(
    gpt7b: ModelCard, a100: GPU, h100: GPU
) -> None:
    from tests.estimate.conftest import make_gpu

    blackwell = make_gpu("b200", arch="blackwell", memory_gib=180.0, bf16=2250.0, fp8=4500.0)
    spec = LayoutSpec(seq_len=2048)
    assumed = search_layout(gpt7b, "pretrain", Cluster.of(blackwell, 8), spec).best
    assert assumed is not None and any(
        "compute efficiency of blackwell GPUs assumed" in n for n in assumed.notes
    )
    for gpu in (a100, h100):
        measured = search_layout(gpt7b, "pretrain", Cluster.of(gpu, 8), spec).best
        assert measured is not None and not any("compute efficiency" in n for n in measured.notes)


@pytest.mark.parametrize(
    "head_dim, kernel_dim", [(64, 64), (80, 96), (112, 128), (128, 128), (200, 256)]
)
def test_flash_attention_computes_its_compiled_head_size(gpt7b: ModelCard, h100: GPU, head_dim: int,
                                                         kernel_dim: int) -> None:
    """FlashAttention-2 runs a head dimension in the smallest compiled kernel that holds it: the
    attention of MPT-30B's 112-wide heads takes as long as 128-wide ones would, at the same counted
    FLOPs. Transformer Engine's attention ("fa3", Megatron) is charged without padding."""
    from plan.planner.estimate.compute import rates

    heads = 32
    card = gpt7b.model_copy(
        update={"head_dim": head_dim, "num_heads": heads, "num_kv_heads": heads}
    )
    padded = card.model_copy(update={"head_dim": kernel_dim})
    cluster = Cluster.of(h100, 8)
    for framework, charged in (("fsdp", kernel_dim), ("megatron", head_dim)):
        layout = make(8, seq_len=8192, framework=framework)
        r, r_padded = (
            rates(shape_of(card), layout, cluster),
            rates(shape_of(padded), layout, cluster),
        )
        # seconds per counted attention FLOP scale with the kernel's head size over the model's
        assert r.attention_flops_per_s / r_padded.attention_flops_per_s == pytest.approx(
            head_dim / charged
        )


@pytest.mark.parametrize("seq_len", [2048, 32768])
def test_causal_mfu_counts_half_the_attention_core(
    gpt7b: ModelCard, h100: GPU, seq_len: int
) -> None:
    """The conventional MFU counts the attention core as full (4 s d per token and layer,
    Megatron/PaLM); flash attention computes the causal half. The causal MFU takes half of that
    share out, so the two are close at 2k tokens and far apart at 32k."""
    est = estimate(
        gpt7b,
        "pretrain",
        Cluster.of(h100, 8),
        make(8, seq_len=seq_len, recompute="full", global_batch=8),
    )
    attention = 3 * shape_of(gpt7b).forward_flops_per_token(seq_len)[1]
    assert est.mfu_causal == pytest.approx(
        est.mfu * (est.flops_per_token - attention / 2) / est.flops_per_token
    )
    assert (est.mfu - est.mfu_causal > 0.05) == (seq_len > 8192)
    assert est.to_dict()["mfu_causal"] == est.mfu_causal


def test_context_parallel_and_zero_traffic_on_one_link_queue_for_it() -> None:
    """Llama 2 7B at 16k tokens over 4 RTX 4090s on one PCIe host, cp 4 and ZeRO-3 over the same
    four: the K/V ring and the layer gathers share the PCIe links. Counted apart, each hidden behind
    the same compute, a card twice as fast came out slower (2.41 -> 2.55 s: its shorter compute
    exposed each twice; bench/estimate_invariants.py seed 31). The links carry their sum: both steps
    wait for it, the same."""
    from dataclasses import replace

    from plan.models.catalog import builtin_catalog
    from plan.planner.estimate.timing import shared_link_excess_s

    catalog = builtin_catalog()
    card, gpu = catalog.model("llama2-7b"), catalog.gpu("rtx4090")
    layout = Layout(
        tp=1,
        pp=1,
        dp=1,
        cp=4,
        zero=3,
        recompute="none",
        micro_batch=1,
        global_batch=1,
        seq_len=16384,
        precision="fp8",
        sequence_parallel=False,
        lora_rank=None,
        optimizer="adam_8bit",
        loss="chunked",
        framework="fsdp",
    )
    doubled = gpu.peak_tflops.model_copy(
        update={
            name: value * 2
            for name, value in gpu.peak_tflops.model_dump().items()
            if isinstance(value, (int, float)) and value
        }
    )
    base = estimate(card, "pretrain", Cluster.of(gpu, 4), layout)
    fast = estimate(
        card, "pretrain", Cluster.of(gpu.model_copy(update={"peak_tflops": doubled}), 4), layout
    )
    assert fast.time.compute_s < 0.6 * base.time.compute_s
    assert fast.step_time_s <= base.step_time_s * (1 + 1e-9)
    assert base.time.cp_comm_s > 0 and base.time.dp_comm_s > 0
    # on different links (the ring inside a node, ZeRO's collectives across nodes) they do not queue
    h100 = catalog.gpu("h100-sxm")
    cluster = Cluster.of(h100, 16)
    spread = replace(layout, cp=8, dp=2, zero=3, optimizer="adam", precision="bf16")
    ring = group_link(cluster, 8, 1)
    across = group_link(cluster, 2, 8)
    assert not ring.spans_nodes and across.spans_nodes
    from plan.planner.estimate.compute import micro_batch_compute, rates

    shape = shape_of(card)
    mbc = micro_batch_compute(shape, "pretrain", spread, rates(shape, spread, cluster))
    assert shared_link_excess_s(shape, "pretrain", spread, ring, across, mbc, 0.0, 0.0, 0.0) == 0.0


def _doubled_peak(gpu: GPU) -> GPU:
    doubled = gpu.peak_tflops.model_copy(
        update={
            name: value * 2
            for name, value in gpu.peak_tflops.model_dump().items()
            if isinstance(value, (int, float)) and value
        }
    )
    return gpu.model_copy(update={"peak_tflops": doubled})


def test_context_parallel_traffic_lengthens_the_passes_the_gathers_hide_behind() -> None:
    """Qwen3 30B-A3B QLoRA on 128 RTX 4090s over 25 Gb/s: tp 8 fills a node, so cp 2 and ZeRO-3's
    gathers both cross nodes. The gathers hide behind the passes the ring's exposed traffic
    stretches; counted against the compute alone, a card twice as fast exposed both and came out
    slower (3.664 -> 3.707 s, bench/estimate_invariants.py seed 53)."""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    card, gpu = catalog.model("qwen3-30b-a3b"), catalog.gpu("rtx4090")
    layout = Layout(
        tp=8,
        pp=1,
        dp=8,
        cp=2,
        zero=3,
        recompute="selective",
        micro_batch=8,
        global_batch=64,
        seq_len=8192,
        precision="fp8",
        sequence_parallel=True,
        lora_rank=8,
        optimizer="adam_8bit",
        loss="chunked",
        framework="fsdp",
    )
    base = estimate(card, "qlora", Cluster.of(gpu, 128), layout)
    fast = estimate(card, "qlora", Cluster.of(_doubled_peak(gpu), 128), layout)
    assert base.time.cp_comm_s > 0 and base.time.dp_comm_s > 0
    # (QLoRA's dequantization is memory-bound)
    assert fast.time.compute_s < 0.75 * base.time.compute_s
    assert fast.step_time_s <= base.step_time_s * (1 + 1e-9)


def test_a_last_smaller_micro_batch_hides_only_its_share_of_the_traffic() -> None:
    """Qwen2.5 7B DPO under ZeRO-3 on 64 RTX 4090s over 25 Gb/s, 4 sequences per replica:
    micro-batches of 3 (3 + 1) and of 2 (2 + 2) compute the same and gather the layers as often
    (twice per step), but the last micro-batch of one sequence hides its gathers behind a third of
    the compute. Counted as if it were full, 3 + 1 came out 8% faster than 2 + 2
    (bench/estimate_invariants.py seed 55: fixing the micro-batch beat the search)."""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    card, cluster = catalog.model("qwen2.5-7b"), Cluster.of(catalog.gpu("rtx4090"), 64)
    even, ragged = (
        Layout(
            tp=1,
            pp=1,
            dp=64,
            zero=3,
            recompute="full",
            micro_batch=mb,
            global_batch=256,
            seq_len=2048,
            precision="bf16",
            sequence_parallel=False,
            lora_rank=None,
            framework="fsdp",
        )
        for mb in (2, 3)
    )
    assert (
        even.micro_batches == ragged.micro_batches == 2
        and ragged.last_micro_batch_share == pytest.approx(1 / 3)
    )
    a, b = estimate(card, "dpo", cluster, even), estimate(card, "dpo", cluster, ragged)
    assert b.time.compute_s == pytest.approx(a.time.compute_s, rel=0.02)
    assert b.time.dp_comm_s > a.time.dp_comm_s
    assert b.step_time_s > a.step_time_s
    # and says how its replicas split their sequences
    assert any(n.startswith("micro-batches: each replica's 4 sequences run as 1 of 3 and a last of "
                            "1") for n in b.notes)
    assert not any(n.startswith("micro-batches:") for n in a.notes)
    # and the search, which times the even size beside the fewest micro-batches, finds the faster
    found = search_layout(
        card, "dpo", cluster, LayoutSpec(seq_len=2048, global_batch=256, memory_headroom=0.08)
    ).best
    assert found is not None and found.tokens_per_s >= a.tokens_per_s * (1 - 1e-9)


def test_micro_batch_candidates_include_the_largest_even_size() -> None:
    from plan.planner.estimate.search_space import micro_batch_candidates

    # 3 x 5 + 1, or 2 x 8 with no smaller last one
    assert micro_batch_candidates(16, 3, 1) == (3, 2)
    assert micro_batch_candidates(30, 10, 1) == (10,)  # 10 divides 30: one size
    assert micro_batch_candidates(4, 3, 1) == (2,)  # the fewest micro-batches, two, are even at 2
    # under pipelining: about 1, 2, 4, 8 and 6
    assert micro_batch_candidates(12, 8, 4) == (6, 4, 2, 1)


def test_a_last_smaller_micro_batch_launches_as_many_kernels() -> None:
    """Llama 3.2 1B on one H100 at 512 tokens, eager: the host's kernel issue paces each
    micro-batch, whatever its size. Three sequences as 2 + 1 take two micro-batches' issue, as 2 + 2
    do; counted pro rata, the last one's issue was half a micro-batch's."""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    card, cluster = catalog.model("llama3.2-1b"), Cluster.of(catalog.gpu("h100-sxm"), 1)
    steps = {
        gb: estimate(
            card,
            "full_finetune",
            cluster,
            Layout(
                tp=1,
                pp=1,
                dp=1,
                zero=0,
                recompute="none",
                micro_batch=2,
                global_batch=gb,
                seq_len=512,
                precision="bf16",
                sequence_parallel=False,
                lora_rank=None,
                framework="fsdp",
            ),
        )
        for gb in (2, 3, 4)
    }
    assert steps[2].time.host_s > steps[2].time.compute_s  # host-bound
    assert steps[3].step_time_s == pytest.approx(steps[4].step_time_s, rel=1e-9)
    assert steps[3].step_time_s > 1.8 * steps[2].step_time_s


def test_each_pipeline_stage_hides_its_own_data_parallel_traffic() -> None:
    """GLM-4 9B DPO over tp 4 x pp 4 x cp 4 on 64 A100s, eager and host-bound: the stages tie on
    their micro-batch (the host's issue) but differ in the compute their ZeRO-3 gathers hide behind.
    Timed on the stage picked by its micro-batch alone, twice the memory bandwidth came out slower,
    the pick moving to a stage with more compute (0.37141 -> 0.37146 s, bench/estimate_invariants.py
    seed 78); the step is now the slowest stage's whole step."""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    card, gpu = catalog.model("glm-4-9b"), catalog.gpu("a100-80gb")
    layout = Layout(
        tp=4,
        pp=4,
        dp=1,
        cp=4,
        zero=3,
        recompute="none",
        micro_batch=1,
        global_batch=1,
        seq_len=2048,
        precision="bf16",
        sequence_parallel=True,
        lora_rank=None,
        optimizer="adafactor",
        loss="plain",
        framework="fsdp",
    )
    wider = gpu.model_copy(update={"memory_bandwidth_gb_per_s": gpu.memory_bandwidth_gb_per_s * 2})
    base = estimate(card, "dpo", Cluster.of(gpu, 64), layout)
    fast = estimate(card, "dpo", Cluster.of(wider, 64), layout)
    assert base.time.dp_comm_s > 0 and base.time.pp_bubble_s > 0
    assert fast.step_time_s <= base.step_time_s * (1 + 1e-9)


def test_expert_parallelism_across_nodes_says_which_dispatcher_it_is_costed_as() -> None:
    """DeepSeek-V3 held to its published EP64 over 8 nodes: the all-to-alls are Megatron's default
    dispatcher's (a copy per routed expert, none hidden), which DeepSeek's own run did not pay; the
    estimate says so, and inside a node it has nothing to say."""
    from plan.models.catalog import builtin_catalog

    catalog = builtin_catalog()
    card, h800 = catalog.model("deepseek-v3"), catalog.gpu("h800")
    spans = [
        n
        for n in search_layout(
            card,
            "pretrain",
            Cluster.of(h800, 2048),
            LayoutSpec(tp=1, pp=16, ep=64, seq_len=4096, precision="fp8"),
        ).best.notes
        if "spans nodes" in n and n.startswith("MoE")
    ]
    assert len(spans) == 1 and "not modelled" in spans[0]
    inside = search_layout(
        catalog.model("mixtral-8x7b"),
        "pretrain",
        Cluster.of(catalog.gpu("h100-sxm"), 64),
        LayoutSpec(tp=1, pp=4, ep=8, seq_len=4096),
    ).best
    assert inside is not None and not any("spans nodes" in n for n in inside.notes)
