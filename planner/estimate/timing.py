"""Step time: compute at an achieved rate, exposed communication, pipeline bubble, recomputation.

Per micro-batch on each pipeline stage (its layers, plus the output layer on the last stage):
    forward FLOPs F = (2 N_linear + 4 s d_q L_stage) / tp x tokens + 2 V h / tp x tokens
    backward = 2F for full methods; LoRA/QLoRA: 1x for the frozen linear layers, 2x for attention;
    DPO variants add one reference forward F (element-wise traffic +1/3)
    recompute: full adds one forward of the layers (Megatron's block method: of the recomputed share of
    them); selective the attention core (Megatron) or, for FSDP's op-level policy, the non-saved half of
    the matmuls and the element-wise kernels
with tokens = micro_batch x seq_len / cp (context parallelism splits the sequence; each token still
attends to the whole sequence, so attention FLOPs per GPU fall by cp like the rest).
Achieved rate = peak(precision) x GEMM_FRACTION_OF_PEAK[arch] x training_kernel_efficiency(arch) x g(w) x
g(tokens), with g(x) = x / (x + x_half) for the GEMM width w = hidden / tp and the micro-batch's
tokens per GPU; FP8 applies to the linear layers only (attention stays BF16) and pays its casts
(FP8_CAST_BYTES_PER_ELEMENT per cast element, inputs and output-gradients of every linear layer,
and the weights twice per micro-batch, once per step under Megatron: FP8_WEIGHT_CAST_CACHED) as
memory-bound traffic. Memory-bound kernels (norms,
activations, residuals) add bytes / (memory bandwidth x efficiency). Flash attention runs at
ATTENTION_UTILIZATION of the BF16 peak, on the head size its kernel is compiled for (FlashAttention-2
pads MPT-30B's 112 to 128: FA2_HEAD_DIMS).

Tensor parallelism: 4 all-reduces of s b h 16-bit values per layer per micro-batch (2 forward,
2 backward; 6 with full recompute; Shoeybi et al. 2019), or the same volume as reduce-scatter +
all-gather with sequence parallelism (Korthikanti et al. 2022), of which TP_COMM_EXPOSED_FRACTION
is exposed. Context parallelism: ring attention passes K/V chunks (cp - 1) times per layer forward
and twice that backward, overlapped with the attention kernels; only the excess is exposed. DeepSpeed's
cp is Ulysses instead: all-to-alls that trade the sequence split for a head split around each attention
(q, k, v in, the output back), on the critical path.
Pipeline (Narayanan et al. 2021): bubble (p-1)/v micro-batch times of the slowest stage, plus point-to-point
transfers; each stage hides its own data-parallel traffic behind its own passes, and the step is the
slowest stage's. A last smaller micro-batch computes its share of a full one, hides that share of its
collectives' time, and launches as many kernels.

Data parallelism, layer by layer: a collective for layer i is prefetched/launched while layer i-1
(or i+1 in the backward pass) computes, so per pass only the first collective and whatever each
later one takes beyond its layer's compute are exposed:
    exposed(c, f, L) = c + (L - 1) x max(0, c - DP_OVERLAP_FRACTION x f)
for per-layer collective time c (one layer's bytes, plus the ring's latency, which every collective
pays: at thousands of ranks it outweighs the bytes of a layer) and per-layer compute f. On the stage
that holds the embedding (the first, whose backward pass ends the step), the collective nothing hides
is the embedding's own bucket, gathered first and its gradient ready last (a whole parameter is one
bucket; FSDP gathers and reduces its root module, embedding and output layer, as one unit):
    exposed = c_embedding + L x max(0, c - DP_OVERLAP_FRACTION x f) + max(0, c_head - DP_OVERLAP_FRACTION x f)
with an untied output layer's collective behind the layers; at 128k-token vocabularies the embedding is
four to five layers of a 1-3B model. Which
collectives run when depends on the framework: Megatron (ZeRO 0/1) reduces gradients once per step
behind the last micro-batch's backward and (ZeRO-1) all-gathers parameters behind the next forward
(buckets of max(40M, 1M x dp) parameters, megatron-core 0.16 distributed_data_parallel.py: about a layer
at scale), in its fp32 `main_grad` under bf16; with interleaved stages only the chunk that ends the step
lacks cover (`_once_per_step`); DeepSpeed ZeRO-2 and Megatron-FSDP `optim_grads` reduce-scatter gradients
every micro-batch, and both gather the updated parameters once per step, as ZeRO-1 does;
ZeRO-3 (DeepSpeed, FSDP FULL_SHARD, Megatron-FSDP `optim_grads_params`) gathers each layer before its
forward and again before its backward and reduce-scatters its gradient, every micro-batch; FSDP
SHARD_GRAD_OP gathers once per micro-batch forward and reduce-scatters once per step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

from plan.models.methods import reference_forward_passes
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.factors import (
    ADAPTER_BYTES_PER_DIM,
    ATTENTION_KERNEL_OF_FRAMEWORK,
    ATTENTION_UTILIZATION,
    COLLECTIVE_BANDWIDTH_EFFICIENCY,
    CPU_OPTIMIZER_BYTES_PER_S,
    DEFAULT_MEMORY_BANDWIDTH_GB_PER_S,
    DP_OVERLAP_FRACTION,
    ELEMENTWISE_PASSES_PER_FFN,
    ELEMENTWISE_PASSES_PER_HIDDEN,
    ELEMENTWISE_TRAFFIC_OF_FRAMEWORK,
    FLASH_ATTENTION_BACKWARD_PASSES,
    FP8_CAST_BYTES_PER_ELEMENT,
    FP8_GEMM_RELATIVE_EFFICIENCY,
    FP8_WEIGHT_CAST_CACHED,
    GEMM_FRACTION_OF_PEAK,
    GEMM_HALF_TOKENS,
    GEMM_HALF_WIDTH,
    HOST_SECONDS_PER_LAYER_PASS,
    LOSS_TRAFFIC_BYTES_PER_LOGIT,
    MEMORY_BANDWIDTH_EFFICIENCY,
    PCIE_GB_PER_S_PER_DIRECTION,
    QLORA_DEQUANT_BYTES_PER_PARAM,
    TP_COMM_EXPOSED_FRACTION,
    UNFUSED_SCORE_BYTES,
    kernel_head_dim,
    training_kernel_efficiency,
)
from plan.planner.estimate.flops import QLORA_BITS_PER_PARAM, ModelShape
from plan.planner.estimate.memory import (
    ADAM_8BIT_STATE_BYTES,
    grad_buffer_bytes,
    host_bytes_per_token_layer,
    recomputed_layers,
    stage_layers,
)
from plan.planner.estimate.topology import GroupLink, hybrid_links
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    FULL_RECOMPUTE,
    QLORA_METHODS,
    Layout,
    TimeBreakdown,
)

OPTIMIZER_STEP_BYTES_PER_PARAM = {"adam": 28.0, "adam_8bit": 10.0, "paged_adam_8bit": 10.0,
                                  "adafactor": 14.0, "sgd": 22.0, "adam_precision_aware": 26.0, "adam_bf16": 14.0}
"""Bytes streamed per parameter by the optimizer step: Adam reads fp32 master/m/v (12) + gradient (2),
writes them (12) + the 16-bit weight (2); 8-bit Adam: states 2+2, weight 2+2, gradient 2; Adafactor:
master 4+4, gradient 2, weight 2, factored moments ~2; SGD with momentum: master and momentum 8+8,
gradient 2, weight 2, and 2 of slack for the update; precision-aware Adam: remainder, moments and
weight 2+8+2 read and written, gradient 2 read; pure BF16 Adam: weight and moments 2+4 read and written,
gradient 2 read."""


@dataclass(frozen=True, slots=True)
class Rates:
    """Achieved rates of one GPU for a layout, FLOP/s and bytes/s."""

    linear_flops_per_s: float
    attention_flops_per_s: float
    memory_bytes_per_s: float


def tokens_per_gpu_micro_batch(layout: Layout) -> float:
    return layout.micro_batch * layout.seq_len / layout.cp


def gemm_efficiency(shape: ModelShape, layout: Layout, architecture: str) -> float:
    width = shape.hidden / layout.tp
    tokens = tokens_per_gpu_micro_batch(layout)
    return (GEMM_FRACTION_OF_PEAK.get(architecture, 0.6) * training_kernel_efficiency(architecture)
            * width / (width + GEMM_HALF_WIDTH) * tokens / (tokens + GEMM_HALF_TOKENS))


def rates(shape: ModelShape, layout: Layout, cluster: Cluster) -> Rates:
    gpu = cluster.gpu
    eff = gemm_efficiency(shape, layout, gpu.architecture)
    peak16 = gpu.peak_tflops.for_precision("bf16") or gpu.peak_tflops.for_precision("fp16") or 0.0
    if layout.precision == "fp8":
        peak_lin = (gpu.peak_tflops.for_precision("fp8") or peak16) * FP8_GEMM_RELATIVE_EFFICIENCY
    else:
        peak_lin = gpu.peak_tflops.for_precision(layout.precision) or peak16
    mem_bw = (gpu.memory_bandwidth_gb_per_s or DEFAULT_MEMORY_BANDWIDTH_GB_PER_S) * 1e9
    # counted (non-causal) attention FLOPs per second: flash attention skips the masked half
    if layout.flash_attention:
        name = ATTENTION_KERNEL_OF_FRAMEWORK.get(layout.framework, "fa2")
        kernel = ATTENTION_UTILIZATION[name]
        tokens = tokens_per_gpu_micro_batch(layout)
        padded = shape.head_dim / kernel_head_dim(shape.head_dim, name)  # the kernel computes its own head size
        attn = (peak16 * 1e12 * kernel.get(gpu.architecture, 0.35) * tokens / (tokens + GEMM_HALF_TOKENS) / 0.5
                * padded)
    else:
        attn = peak16 * 1e12 * eff
    return Rates(peak_lin * 1e12 * eff, attn, mem_bw * MEMORY_BANDWIDTH_EFFICIENCY)


@dataclass(frozen=True, slots=True)
class MicroBatchCompute:
    """Seconds of one micro-batch on the slowest pipeline stage, before communication.

    linear_fwd_s / attention_fwd_s / elementwise_s split the work so recomputation policies can
    charge the part they repeat; `layers` is the stage's layer count. `other_stage`: with pipeline
    stages of different make-up (the last holds the output layer and the loss, the others more layers), the
    other one, which `step_time` also times: a stage of more layers issues more kernels and carries more
    tensor-parallel traffic, so it can be the slower one on a fast GPU."""

    compute_s: float
    linear_fwd_flops: float
    attention_fwd_flops: float
    elementwise_s: float
    score_fwd_s: float
    layers: int
    linear_fwd_s: float = 0.0
    attention_fwd_s: float = 0.0
    other_stage: MicroBatchCompute | None = None


def _stage_compute(shape: ModelShape, method: str, layout: Layout, r: Rates, layers: int,
                   with_head: bool) -> MicroBatchCompute:
    t, s = layout.tp, layout.seq_len
    tokens = tokens_per_gpu_micro_batch(layout)
    lin_fwd = 2.0 * shape.linear_computed(layout.capacity_factor) * layers / t * tokens
    attn_fwd = 4.0 * s * shape.q_dim * layers / t * tokens
    head_fwd = 2.0 * shape.vocab * shape.hidden / t * tokens if with_head else 0.0
    lin_bwd_factor = 1.0 if method in ADAPTER_METHODS else 2.0
    ref = reference_forward_passes(method)  # DPO: the frozen reference's forward pass
    t_lin = (lin_fwd + head_fwd) * (1 + lin_bwd_factor + ref) / r.linear_flops_per_s
    attn_bwd = FLASH_ATTENTION_BACKWARD_PASSES if layout.flash_attention else 2.0
    t_attn = attn_fwd * (1 + attn_bwd + ref) / r.attention_flops_per_s
    sp_div = t if (layout.sequence_parallel or t == 1) else 1
    fusion = ELEMENTWISE_TRAFFIC_OF_FRAMEWORK.get(layout.framework, 1.0)
    elem_bytes = 2.0 * fusion * layers * tokens * (ELEMENTWISE_PASSES_PER_HIDDEN * shape.hidden / sp_div
                                                   + ELEMENTWISE_PASSES_PER_FFN
                                                   * shape.ffn_width(layout.capacity_factor) / t)
    elem_bytes *= 1.0 + ref / 3.0  # the reference forward is a third of forward + backward traffic
    if layout.precision == "fp8":
        ffn_mult = 3.0 if shape.gated else 2.0
        fwd_in = 2.0 * shape.hidden + shape.q_dim + shape.ffn_width_active
        bwd_out = shape.q_dim + 2 * shape.kv_dim + 2.0 * shape.hidden + (ffn_mult - 1) * shape.ffn_width_active
        # cast twice per micro-batch (forward copy, transposed copy for the backward); Transformer Engine
        # under Megatron caches both on a step's first micro-batch (FP8_WEIGHT_CAST_CACHED)
        casts = 2.0 / layout.micro_batches if layout.framework in FP8_WEIGHT_CAST_CACHED else 2.0
        weights = casts * shape.layer_linear_active / tokens  # per token
        elem_bytes += FP8_CAST_BYTES_PER_ELEMENT * layers * tokens * ((fwd_in + bwd_out) / t + weights / t)
    if method in ADAPTER_METHODS and layout.lora_rank:
        # each adapter re-reads its layer input and adds into its output, forward and backward; peft's
        # eager layers also cast the input to fp32 and back (ADAPTER_BYTES_PER_DIM)
        dims = shape.adapter_attn_dims + (shape.adapter_mlp_dims * max(1, shape.moe_active)
                                          if layout.lora_targets == "all" else 0)
        elem_bytes += ADAPTER_BYTES_PER_DIM[layout.kernels] * dims / t * layers * tokens
        t_lin += 6.0 * layout.lora_rank * dims * layers / t * tokens / r.linear_flops_per_s
    # the loss: memory-bound passes over the logits, outside the layers that recomputation repeats
    loss_bytes = (tokens * shape.vocab / t * LOSS_TRAFFIC_BYTES_PER_LOGIT["unfused" if layout.loss == "plain"
                                                                          else "chunked"] * (1.0 + ref / 3.0)
                  if with_head else 0.0)
    score_fwd = 0.0
    if not layout.flash_attention:
        score_fwd = UNFUSED_SCORE_BYTES * shape.heads * s / t * layers * tokens / r.memory_bytes_per_s
    t_elem = elem_bytes / r.memory_bytes_per_s
    t_loss = loss_bytes / r.memory_bytes_per_s
    return MicroBatchCompute(t_lin + t_attn + t_elem + t_loss + 3 * score_fwd, lin_fwd, attn_fwd, t_elem, score_fwd,
                             layers, lin_fwd / r.linear_flops_per_s, attn_fwd / r.attention_flops_per_s)


def micro_batch_compute(shape: ModelShape, method: str, layout: Layout, r: Rates) -> MicroBatchCompute:
    """Forward and backward of one micro-batch on one GPU of the slowest stage (module docstring)."""
    if layout.pp == 1:
        return _stage_compute(shape, method, layout, r, shape.layers, True)
    _, mid, last = stage_layers(shape.layers, layout.pp)
    inner = _stage_compute(shape, method, layout, r, mid, False)
    final = _stage_compute(shape, method, layout, r, last, True)
    slower, other = (final, inner) if final.compute_s >= inner.compute_s else (inner, final)
    return replace(slower, other_stage=other)


def tp_exposed_s(shape: ModelShape, layout: Layout, tp_link: GroupLink, collectives: float,
                 layers: int | None = None) -> float:
    """Exposed tensor-parallel traffic per micro-batch: `collectives` all-reduces per layer."""
    if layout.tp <= 1:
        return 0.0
    ar_bytes = tokens_per_gpu_micro_batch(layout) * shape.hidden * 2.0
    n = layers if layers is not None else -(-shape.layers // layout.pp)
    return TP_COMM_EXPOSED_FRACTION * collectives * n * tp_link.all_reduce_s(ar_bytes)


def cp_exposed_s(shape: ModelShape, layout: Layout, cp_link: GroupLink | None, mbc: MicroBatchCompute,
                 recompute_passes: float) -> float:
    """Ring-attention K/V traffic per micro-batch beyond what the attention kernels hide (DeepSpeed:
    Ulysses' all-to-alls, `ulysses_s`)."""
    if layout.cp <= 1 or cp_link is None:
        return 0.0
    if layout.framework == "deepspeed":
        return ulysses_s(shape, layout, cp_link, mbc.layers, recompute_passes)
    chunk = tokens_per_gpu_micro_batch(layout) * 2 * shape.kv_dim / layout.tp * 2.0
    per_layer_fwd = (layout.cp - 1) * cp_link.p2p_s(chunk)
    attn_layer_fwd = mbc.attention_fwd_s / mbc.layers
    passes = (1 + recompute_passes, 2)  # forward (and recomputed forwards), backward (K/V and their grads)
    exposed = (passes[0] * max(0.0, per_layer_fwd - attn_layer_fwd)
               + max(0.0, passes[1] * per_layer_fwd - 2 * attn_layer_fwd))
    return exposed * mbc.layers


def ulysses_s(shape: ModelShape, layout: Layout, cp_link: GroupLink, layers: int, recompute_passes: float) -> float:
    """DeepSpeed Ulysses (its `sequence_parallel_size`, the cp it runs; launch-configs.md) per micro-batch:
    around each attention an all-to-all turns the local sequence's q, k and v into the whole sequence's
    share of the heads, and another turns the output back; the backward pass runs the same four on the
    gradients, and each recomputed forward its two again. Each sends (cp - 1) / cp of the rank's 16-bit q,
    k, v and output; where the KV heads are fewer than cp, each is sent to cp / kv_heads ranks (ALST
    replicates them). Not overlapped with compute."""
    kv_copies = max(1.0, layout.cp / max(1, shape.kv_heads))
    per_token = (2 * shape.q_dim + 2 * shape.kv_dim * kv_copies) / layout.tp * 2.0
    nbytes = tokens_per_gpu_micro_batch(layout) * per_token
    return (2 + recompute_passes) * layers * all_to_all_s(cp_link, nbytes, layout.cp)


def all_to_all_s(link: GroupLink, nbytes: float, size: int) -> float:
    """An all-to-all of `nbytes` per rank over `size` ranks: (size - 1) / size of it leaves the rank; across
    nodes only what goes to other nodes, each GPU's share through its own NIC."""
    remote = nbytes * (size - 1) / size
    if not link.spans_nodes:
        return link.p2p_s(remote)
    in_node = max(1, link.nics_per_node)
    per_gpu = link.bandwidth_gb_per_s / in_node  # one NIC's worth for each GPU
    remote = remote * max(0, size - in_node) / (size - 1)
    return remote / (per_gpu * 1e9 * COLLECTIVE_BANDWIDTH_EFFICIENCY) + link.latency_s


def ep_exposed_s(shape: ModelShape, layout: Layout, ep_link: GroupLink | None, layers: int,
                 recompute_passes: float) -> float:
    """All-to-all dispatch and combine per micro-batch on one GPU: 2 per MoE layer forward (and per
    recomputed forward), 2 backward; each sends top_k x hidden 16-bit values per token, (ep - 1)/ep of
    them to other ranks, padded to the experts' capacity (`Layout.capacity_factor`: GShard-style runs use
    1.25-2.0 and move that much more). Across nodes each GPU's share leaves through its own NIC. Not overlapped
    (DeepSeek-V3's DualPipe hides it; Megatron's default schedule does not)."""
    if layout.ep <= 1 or ep_link is None or not shape.moe_layers:
        return 0.0
    moe_layers = layers * shape.moe_layers / shape.layers
    nbytes = (tokens_per_gpu_micro_batch(layout) * shape.moe_top_k * shape.hidden / layout.tp * 2.0
              * layout.capacity_factor)
    return (2 * (1 + recompute_passes) + 2) * moe_layers * all_to_all_s(ep_link, nbytes, layout.ep)


def p2p_s(shape: ModelShape, layout: Layout, pp_link: GroupLink) -> float:
    """Pipeline point-to-point seconds per micro-batch per virtual stage (forward and backward): each
    tensor-parallel rank sends its 1/tp slice (Narayanan et al. 2021, scatter/gather)."""
    if layout.pp <= 1:
        return 0.0
    return 2 * pp_link.p2p_s(tokens_per_gpu_micro_batch(layout) * shape.hidden * 2.0 / layout.tp)


def stage_lower_bound_s(shape: ModelShape, layout: Layout, cluster: Cluster, tp_link: GroupLink,
                        mb: MicroBatchCompute) -> float:
    """Seconds per micro-batch on the slowest stage that no layout with this tp, pp, cp and micro-batch
    can beat, whatever its ZeRO stage and recomputation: compute and tensor-parallel traffic without
    recomputation. A step takes at least (micro-batch equivalents + (pp - 1) / v) times this, plus
    the non-negative data-parallel, pipeline-transfer and optimizer terms of `step_time`."""
    return (mb.compute_s + tp_exposed_s(shape, layout, tp_link, 4, mb.layers)) / cluster.speedup


def recompute_s(mbc: MicroBatchCompute, r: Rates, recompute: str, framework: str = "megatron") -> float:
    """Seconds of recomputation per micro-batch: one forward of the layers (full), of the attention
    core (Megatron selective) or of half the matmuls and the element-wise kernels (FSDP op-level)."""
    if recompute in FULL_RECOMPUTE:
        return mbc.linear_fwd_s + mbc.attention_fwd_s + mbc.elementwise_s / 3 + mbc.score_fwd_s
    if recompute == "selective":
        if framework == "fsdp":
            return 0.5 * mbc.linear_fwd_s + mbc.elementwise_s / 3
        return mbc.attention_fwd_s + mbc.score_fwd_s
    return 0.0


def offload_exposed_s(shape: ModelShape, layout: Layout, mbc: MicroBatchCompute) -> float:
    """Activation offloading per micro-batch: the saved activations (or, under full_offload, the layers'
    checkpointed inputs) cross PCIe to the host during the forward pass and back during the backward pass,
    each overlapped with that pass's compute."""
    if not layout.host_activations:
        return 0.0
    nbytes = host_bytes_per_token_layer(shape, layout) * tokens_per_gpu_micro_batch(layout) * mbc.layers
    pcie_s = nbytes / (PCIE_GB_PER_S_PER_DIRECTION["pcie"] * 1e9)
    forward = mbc.linear_fwd_s + mbc.attention_fwd_s
    return max(0.0, pcie_s - forward) + max(0.0, pcie_s - (mbc.compute_s - forward))


def _layered_exposed(layer_s: float, compute_s: float, layers: int, edge_s: float = 0.0,
                     overlapped_s: float = 0.0) -> float:
    """One pass's data-parallel collectives not hidden behind its compute (module docstring): the one
    nothing hides, plus what each of the others takes beyond a layer's compute. Nothing hides the
    embedding's bucket (`edge_s`: gathered first, its gradient ready last) where the stage holds one,
    else the first layer's; `overlapped_s` is the output layer's, which runs behind the layers."""
    hide = DP_OVERLAP_FRACTION * compute_s / max(1, layers)
    behind = max(0.0, overlapped_s - hide)
    if edge_s > 0:
        return edge_s + layers * max(0.0, layer_s - hide) + behind
    if layer_s <= 0:
        return behind
    return layer_s + (layers - 1) * max(0.0, layer_s - hide) + behind


def _edge_params(shape: ModelShape, layout: Layout) -> tuple[float, float]:
    """(front, back) parameters per GPU outside the layers, on the stage whose data-parallel tail sets the
    step: the first (in a pipeline it runs the step's last backward pass). Front: what the forward gathers
    first and the backward finishes last, the input embedding (tied or not); FSDP with one stage gathers
    and reduces the whole root module (embedding, final norm, output layer) as one unit. Back: the
    output layer, gathered last and reduced first, behind the layers (one stage only)."""
    embed, head = shape.embed_params / layout.tp, shape.head_params / layout.tp
    if layout.pp > 1:
        return embed, 0.0
    if layout.framework == "fsdp":
        return embed + head, 0.0
    return embed, head


def stage_params_per_gpu(shape: ModelShape, layout: Layout) -> float:
    """Parameters per GPU on a pipeline stage of ceil(layers / pp) layers, with its share of the
    embedding and the output layer."""
    t, p = layout.tp, layout.pp
    return (shape.layer_params_per_gpu(t, layout.ep) * -(-shape.layers // p)
            + (shape.embed_params + shape.head_params) / t / p)


def trainable_stage_params(shape: ModelShape, method: str, layout: Layout) -> float:
    """Of those, the parameters that get gradients and optimizer states: the adapters' under LoRA and
    QLoRA, all of them otherwise."""
    if method in ADAPTER_METHODS:
        return shape.adapter_params(layout.lora_rank or 0, layout.lora_targets) / layout.pp / layout.tp
    return stage_params_per_gpu(shape, layout)


def sharding_links(cluster: Cluster, layout: Layout, dp_link: GroupLink) -> tuple[GroupLink, GroupLink | None]:
    """The links a layout's ZeRO/FSDP collectives run on (`dp_exposed_s`): the data-parallel group's, or under
    hybrid sharding the shard group's and the replicas' (topology.hybrid_links)."""
    if not layout.shard_group:
        return dp_link, None
    return hybrid_links(cluster, layout.tp, layout.shard_group, layout.replicas)


def dp_exposed_s(shape: ModelShape, method: str, layout: Layout, dp_link: GroupLink, zero: int,
                 compute_mb: float, recompute_mb: float, replicate_link: GroupLink | None = None) -> float:
    """Data-parallel traffic per step not hidden behind compute (module docstring). Under hybrid sharding
    `dp_link` is the shard group's and `replicate_link` the replicas': each gradient shard, once reduced in
    its node, is all-reduced across them in the same window (FSDP's post-backward)."""
    p, d = layout.pp, layout.shard_ranks
    if d <= 1 and not layout.state_offload:
        return 0.0
    layers = -(-shape.layers // p)
    t = layout.tp
    per_layer = shape.layer_params_per_gpu(t, layout.ep)
    front, back = _edge_params(shape, layout)
    if method in QLORA_METHODS:
        linear = shape.layer_linear_total / t
        layer_gather_bytes = linear * QLORA_BITS_PER_PARAM / 8 + (per_layer - linear) * 2.0
    else:
        layer_gather_bytes = per_layer * 2.0
    grad_bytes = grad_buffer_bytes(layout)  # Megatron-LM reduces its fp32 main_grad under bf16
    if method in ADAPTER_METHODS:  # the embedding and the output layer are frozen
        layer_trained, front_trained, back_trained = trainable_stage_params(shape, method, layout) / layers, 0.0, 0.0
    else:
        layer_trained, front_trained, back_trained = per_layer, front, back

    collective = dp_link.reduce_scatter_s  # one collective (an all-gather takes what a reduce-scatter takes)

    def reduced(nbytes: float) -> float:
        across = replicate_link.all_reduce_s(nbytes / layout.state_shards) if replicate_link else 0.0
        return collective(nbytes) + across

    reduce, front_reduce, back_reduce = (reduced(layer_trained * grad_bytes), reduced(front_trained * grad_bytes),
                                         reduced(back_trained * grad_bytes))
    lin_bwd_factor = 1.0 if method in ADAPTER_METHODS else 2.0
    # each forward pass (the policy's, and a DPO reference's) and the backward pass hide their own
    # collectives: the windows add up to the micro-batch's compute, none counted twice
    forward_mb = compute_mb / (1 + lin_bwd_factor + reference_forward_passes(method))
    backward_mb = forward_mb * lin_bwd_factor + recompute_mb
    m = layout.micro_batches
    # A last smaller micro-batch (its share of a full one) has that much less compute to hide its own
    # collectives behind; it is the one whose backward pass ends the step.
    last = layout.last_micro_batch_share
    last_backward = backward_mb * last

    def each_micro_batch(exposed: Callable[[float], float], window_s: float) -> float:
        """Exposure summed over the step's micro-batches, each behind its own pass of `window_s` (a full one)."""
        return (m - 1) * exposed(window_s) + exposed(window_s * last)

    def updated_parameters_gathered() -> float:
        """The updated 16-bit parameters' all-gather once per step, behind the next step's first forward
        (the distributed optimizer, ZeRO-1, and Megatron-FSDP's optim_grads)."""
        return _once_per_step(collective(layer_trained * 2.0), forward_mb, layers, layout,
                              collective(front_trained * 2.0), collective(back_trained * 2.0))

    def reduced_behind(window_s: float) -> float:
        return _layered_exposed(reduce, window_s, layers, front_reduce, back_reduce)

    if zero == 2 and layout.framework == "deepspeed":
        # stage 2 reduce-scatters every micro-batch's gradients and, as stage 1 does, all-gathers the
        # updated 16-bit parameters after the step (deepspeed/runtime/zero/stage_1_and_2.py)
        return each_micro_batch(reduced_behind, backward_mb) + updated_parameters_gathered()
    if zero == 2 and layout.framework == "megatron":
        # Megatron-FSDP optim_grads: the gradient shards are all there is to accumulate into, so every
        # micro-batch's backward reduce-scatters
        return each_micro_batch(reduced_behind, backward_mb) + updated_parameters_gathered()
    if zero >= 2:  # ZeRO-3, or FSDP's SHARD_GRAD_OP: every micro-batch gathers the layers for its forward
        gather, front_gather, back_gather = (collective(layer_gather_bytes), collective(front * 2.0),
                                             collective(back * 2.0))
        if layout.state_offload:  # each shard crosses PCIe before its gather, its gradient shard after its reduction
            pcie = PCIE_GB_PER_S_PER_DIRECTION["pcie"] * 1e9 * d
            gather, front_gather, back_gather = (gather + layer_gather_bytes / pcie, front_gather + front * 2.0 / pcie,
                                                 back_gather + back * 2.0 / pcie)
            reduce, front_reduce, back_reduce = (reduce + layer_trained * grad_bytes / pcie,
                                                 front_reduce + front_trained * grad_bytes / pcie,
                                                 back_reduce + back_trained * grad_bytes / pcie)
        def gathered_behind(window_s: float) -> float:
            return _layered_exposed(gather, window_s, layers, front_gather, back_gather)

        if zero == 2:  # (and reduces once per step, behind the last backward pass)
            return each_micro_batch(gathered_behind, forward_mb) + reduced_behind(last_backward)

        # each layer is gathered again for its backward pass (the root module stays gathered); a DPO
        # reference forward gathers every layer once more (its own copy or the base)
        def backward_behind(window_s: float) -> float:
            return _layered_exposed(gather + reduce, window_s, layers, front_reduce, back_gather + back_reduce)

        return ((1 + reference_forward_passes(method)) * each_micro_batch(gathered_behind, forward_mb)
                + each_micro_batch(backward_behind, backward_mb))
    # Once per step (Megatron, ZeRO-0/1): the reduction behind the last micro-batch's backward pass and
    # (ZeRO-1) the updated parameters' all-gather behind the next step's first forward
    if zero == 1:
        return (_once_per_step(reduce, last_backward, layers, layout, front_reduce, back_reduce)
                + updated_parameters_gathered())
    return _once_per_step(2 * reduce, last_backward, layers, layout, 2 * front_reduce, 2 * back_reduce)  # all-reduce


def _once_per_step(layer_s: float, pass_s: float, layers: int, layout: Layout, edge_s: float,
                   overlapped_s: float) -> float:
    """A once-per-step collective's exposed part (`_layered_exposed`). With interleaved stages a stage's
    layers form v chunks, and only the chunk that finishes the step (the first: its backward pass ends the
    step, its forward starts the next) lacks cover: each other chunk's final gradients are ready, and its
    parameters wanted, at least one round through the pp stages away from the step's end or start, with
    the stage's other chunks computing meanwhile (Narayanan et al. 2021 schedule; megatron-core reduces
    each chunk's buckets as soon as they are ready, `overlap_grad_reduce`, and gathers them chunk by chunk,
    `overlap_param_gather`)."""
    v = layout.virtual_pipeline
    if v <= 1 or layout.pp <= 1:
        return _layered_exposed(layer_s, pass_s, layers, edge_s, overlapped_s)
    chunk = -(-layers // v)
    cover = DP_OVERLAP_FRACTION * layout.pp * pass_s * chunk / layers  # one round: pp chunk passes
    return (_layered_exposed(layer_s, pass_s * chunk / layers, chunk, edge_s, overlapped_s)
            + (v - 1) * max(0.0, chunk * layer_s - cover))


def recomputed_share(layout: Layout, layers: int) -> float:
    """The share of the stage's layers re-run forward: all under full recomputation, some under
    Megatron's block method, none otherwise (selective and offload policies are charged by recompute_s
    alone)."""
    return recomputed_layers(layout, layers) / layers


def stage_recompute_s(shape: ModelShape, layout: Layout, r: Rates, mbc: MicroBatchCompute) -> float:
    """Seconds per micro-batch on the slowest stage that recomputation (and activation offloading)
    adds before communication."""
    share = recomputed_share(layout, mbc.layers) if layout.recompute in FULL_RECOMPUTE else 1.0
    return recompute_s(mbc, r, layout.recompute, layout.framework) * share + offload_exposed_s(shape, layout, mbc)


def optimizer_and_paging_s(shape: ModelShape, method: str, layout: Layout, r: Rates, paged_offload_params: float,
                           layers: int) -> float:
    """Seconds per step (before the cluster's speed-up) of the optimizer step, paged optimizer states
    and QLoRA dequantization."""
    t = layout.tp
    opt_params = trainable_stage_params(shape, method, layout)
    if layout.zero >= 1:
        opt_params /= layout.state_shards
    step_bytes_per_s = CPU_OPTIMIZER_BYTES_PER_S if layout.state_offload else r.memory_bytes_per_s
    other = opt_params * OPTIMIZER_STEP_BYTES_PER_PARAM.get(layout.optimizer, 28.0) / step_bytes_per_s
    if paged_offload_params > 0:
        pcie = PCIE_GB_PER_S_PER_DIRECTION["pcie"] * 1e9
        other += paged_offload_params * 2 * ADAM_8BIT_STATE_BYTES / pcie
    if method in QLORA_METHODS:
        passes = (3 if layout.recompute in FULL_RECOMPUTE else 2) + reference_forward_passes(method)
        linear = shape.layer_linear_total * layers / t
        other += layout.micro_batches * passes * linear * QLORA_DEQUANT_BYTES_PER_PARAM / r.memory_bytes_per_s
    return other


def host_issue_s(method: str, layout: Layout, layers: int) -> float:
    """Seconds the host needs to issue one micro-batch's kernels on a stage of `layers` layers in an eager
    PyTorch stack (HOST_SECONDS_PER_LAYER_PASS); 0 for fused and compiled stacks. The GPU time of a
    micro-batch cannot be shorter."""
    if not layout.eager_modules:
        return 0.0
    passes = 3.0 + (1.0 if layout.recompute in FULL_RECOMPUTE else 0.0) + reference_forward_passes(method)
    per_pass = HOST_SECONDS_PER_LAYER_PASS["adapter" if method in ADAPTER_METHODS else "full"]
    return passes * per_pass * layers


def shared_link_excess_s(shape: ModelShape, method: str, layout: Layout, cp_link: GroupLink | None,
                         shard_link: GroupLink, mbc: MicroBatchCompute, recompute_passes: float, compute_s: float,
                         exposed_s: float) -> float:
    """Seconds a step's context-parallel K/V traffic and its ZeRO/FSDP collectives wait for each other where they
    share links (both inside a node, or both across nodes): each is hidden behind the same compute, each
    counted as if it had the link alone, but the link carries their sum, of which compute hides at most the
    step's compute. The excess of that bound over the two exposures counted apart (0 where they run on
    different links or one is absent); without it a faster GPU could come out slower, its shorter compute
    exposing each twice."""
    if layout.cp <= 1 or cp_link is None or layout.shard_ranks <= 1 or cp_link.spans_nodes != shard_link.spans_nodes:
        return 0.0
    idle = replace(mbc, attention_fwd_s=0.0)  # the traffic with nothing to hide behind: the links' busy time
    cp_busy = layout.micro_batch_equivalents * cp_exposed_s(shape, layout, cp_link, idle, recompute_passes)
    dp_busy = dp_exposed_s(shape, method, layout, shard_link, layout.zero, 0.0, 0.0)
    return max(0.0, cp_busy + dp_busy - compute_s - exposed_s)


class _StageMicroBatch(NamedTuple):
    """One stage's micro-batch: its compute, the share of its layers recomputed, and seconds of
    recomputation, tensor-, context- and expert-parallel traffic exposed, and of the host's kernel issue."""

    compute: MicroBatchCompute
    redone: float
    recompute_s: float
    tp_s: float
    cp_s: float
    ep_s: float
    host_issue_s: float

    @property
    def gpu_s(self) -> float:
        return self.compute.compute_s + self.recompute_s + self.tp_s + self.cp_s + self.ep_s

    def host_excess_s(self, share: float = 1.0) -> float:
        """What the host needs beyond the GPU's work for a micro-batch of `share` of the full size: the host
        issues kernels while the GPU computes and while it waits on a collective, so a host-bound micro-batch
        takes the longer of the two (its critical path), not their sum. Counted against the recomputation
        too, more GPU work never shortens a step; a smaller micro-batch launches as many kernels."""
        return max(0.0, self.host_issue_s - self.gpu_s * share)

    @property
    def total_s(self) -> float:
        return self.gpu_s + self.host_excess_s()


def _stage_micro_batch(shape: ModelShape, method: str, layout: Layout, r: Rates, mbc: MicroBatchCompute,
                       tp_link: GroupLink, cp_link: GroupLink | None, ep_link: GroupLink | None) -> _StageMicroBatch:
    layers = mbc.layers
    redone = recomputed_share(layout, layers)
    return _StageMicroBatch(mbc, redone, stage_recompute_s(shape, layout, r, mbc),
                            tp_exposed_s(shape, layout, tp_link, 4 + 2 * redone, layers),
                            cp_exposed_s(shape, layout, cp_link, mbc, redone),
                            ep_exposed_s(shape, layout, ep_link, layers, redone),
                            host_issue_s(method, layout, layers))


def step_time(shape: ModelShape, method: str, layout: Layout, cluster: Cluster, tp_link: GroupLink,
              dp_link: GroupLink, pp_link: GroupLink, paged_offload_params: float,
              cp_link: GroupLink | None = None, ep_link: GroupLink | None = None,
              compute: tuple[Rates, MicroBatchCompute] | None = None) -> TimeBreakdown:
    """Seconds per optimizer step, broken down (see module docstring). `compute` passes the rates and
    micro-batch compute already known for this layout's framework and micro-batch."""
    p, z, v = layout.pp, layout.zero, layout.virtual_pipeline
    m = layout.micro_batches
    work = layout.micro_batch_equivalents
    if compute is None:
        r = rates(shape, layout, cluster)
        mbc = micro_batch_compute(shape, method, layout, r)
    else:
        r, mbc = compute
    stages = [_stage_micro_batch(shape, method, layout, r, stage, tp_link, cp_link, ep_link)
              for stage in (mbc, mbc.other_stage) if stage is not None]
    # the slowest stage by its whole micro-batch (compute, recomputation, exposed traffic, the host) paces the
    # pipeline's fill and drain
    bubble = (p - 1) / v * max(stage.total_s for stage in stages) if p > 1 else 0.0
    p2p = m * v * p2p_s(shape, layout, pp_link)
    shard_link, replicate_link = sharding_links(cluster, layout, dp_link)
    last = layout.last_micro_batch_share
    speed = cluster.speedup

    def stage_step(stage: _StageMicroBatch) -> TimeBreakdown:
        """The step as this stage runs it: its micro-batches, its data-parallel traffic hidden behind its own
        passes, and the bubble."""
        compute_mb, recompute_mb, cp_mb = stage.compute.compute_s, stage.recompute_s, stage.cp_s
        # Context-parallel traffic stretches the passes the gathers and reductions hide behind: counted against
        # the compute alone, a faster card would expose each twice and could come out slower. Where the two
        # share a link, the link's busy time bounds the step (shared_link_excess_s).
        dp_exposed = dp_exposed_s(shape, method, layout, shard_link, z, compute_mb + cp_mb, recompute_mb,
                                  replicate_link)
        dp_exposed += shared_link_excess_s(shape, method, layout, cp_link, shard_link, stage.compute, stage.redone,
                                           work * (compute_mb + recompute_mb), work * cp_mb + dp_exposed)
        # ... and data-parallel waits the step exposes overlap the host's issuing in the same way
        host = (m - 1) * stage.host_excess_s() + stage.host_excess_s(last)
        host_step = max(0.0, host - dp_exposed)
        other = optimizer_and_paging_s(shape, method, layout, r, paged_offload_params, stage.compute.layers)
        return TimeBreakdown(
            compute_s=work * compute_mb / speed,
            tp_comm_s=work * stage.tp_s / speed,
            cp_comm_s=work * cp_mb / speed,
            ep_comm_s=work * stage.ep_s / speed,
            dp_comm_s=dp_exposed / speed,
            pp_bubble_s=(bubble + p2p) / speed,
            recompute_s=work * recompute_mb / speed,
            other_s=other / speed,
            host_s=host_step / speed,
        )

    # Each stage hides its own layers' data-parallel traffic behind its own passes: the step is the slowest's
    # (chosen by the micro-batch alone, a stage with less compute to hide behind could be passed over)
    return max((stage_step(stage) for stage in stages), key=lambda step: step.total_s)
