"""Step time: compute at an achieved rate, exposed communication, pipeline bubble, recomputation.

Per micro-batch on the slowest pipeline stage (its layers plus the output layer):
    forward FLOPs F = (2 N_linear + 4 s d_q L_stage) / tp x tokens + 2 V h / tp x tokens
    backward = 2F for full methods; LoRA/QLoRA: 1x for the frozen linear layers, 2x for attention
    recompute: full adds one forward of the layers, selective the attention core forward
Achieved rate = peak(precision) x GEMM_FRACTION_OF_PEAK[arch] x TRAINING_KERNEL_EFFICIENCY x g(w) x
g(tokens), with g(x) = x / (x + x_half) for the GEMM width w = hidden / tp and the micro-batch's
tokens; FP8 applies to the linear layers only (attention stays BF16). Memory-bound kernels (norms,
activations, residuals) add bytes / (memory bandwidth x efficiency).

Tensor parallelism: 4 all-reduces of s b h 16-bit values per layer per micro-batch (2 forward,
2 backward; 6 with full recompute; Shoeybi et al. 2019), or the same volume as reduce-scatter +
all-gather with sequence parallelism (Korthikanti et al. 2022), of which TP_COMM_EXPOSED_FRACTION
is exposed. Pipeline (Narayanan et al. 2021): bubble (p-1)/v micro-batch times over m micro-batches,
i.e. a fraction (p-1)/(v m + p - 1) of the step, plus point-to-point activation transfers.
Data parallelism: gradient all-reduce (ZeRO-1/2: reduce-scatter + all-gather, same volume) after
the last micro-batch, partly hidden behind its backward pass; ZeRO-3 gathers weights forward and
backward and reduce-scatters gradients every micro-batch (1.5x the all-reduce volume each), hidden
behind that micro-batch's compute where bandwidth allows.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.estimate.cluster import Cluster
from planner.estimate.factors import (
    ATTENTION_RELATIVE_EFFICIENCY,
    DEFAULT_MEMORY_BANDWIDTH_GB_PER_S,
    DP_OVERLAP_FRACTION,
    ELEMENTWISE_PASSES_PER_FFN,
    ELEMENTWISE_PASSES_PER_HIDDEN,
    FP8_GEMM_RELATIVE_EFFICIENCY,
    GEMM_FRACTION_OF_PEAK,
    GEMM_HALF_TOKENS,
    GEMM_HALF_WIDTH,
    MEMORY_BANDWIDTH_EFFICIENCY,
    PCIE_GB_PER_S_PER_DIRECTION,
    QLORA_DEQUANT_BYTES_PER_PARAM,
    TP_COMM_EXPOSED_FRACTION,
    TRAINING_KERNEL_EFFICIENCY,
    UNFUSED_SCORE_BYTES,
)
from planner.estimate.flops import ModelShape
from planner.estimate.memory import ADAM_8BIT_STATE_BYTES
from planner.estimate.topology import GroupLink
from planner.estimate.types import ADAPTER_METHODS, Layout, TimeBreakdown

OPTIMIZER_STEP_BYTES_PER_PARAM = {"adam": 28.0, "adam_8bit": 10.0, "paged_adam_8bit": 10.0}
"""Bytes streamed per parameter by the optimizer step: Adam reads fp32 master/m/v (12) + gradient (2),
writes them (12) + the 16-bit weight (2); 8-bit Adam: states 2+2, weight 2+2, gradient 2."""


@dataclass(frozen=True)
class Rates:
    """Achieved rates of one GPU for a layout, FLOP/s and bytes/s."""

    linear_flops_per_s: float
    attention_flops_per_s: float
    memory_bytes_per_s: float


def gemm_efficiency(shape: ModelShape, layout: Layout, architecture: str) -> float:
    width = shape.hidden / layout.tp
    tokens = layout.micro_batch * layout.seq_len
    return (GEMM_FRACTION_OF_PEAK.get(architecture, 0.6) * TRAINING_KERNEL_EFFICIENCY
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
    attn = peak16 * 1e12 * eff * (ATTENTION_RELATIVE_EFFICIENCY / 0.5 if layout.flash_attention else 1.0)
    return Rates(peak_lin * 1e12 * eff, attn, mem_bw * MEMORY_BANDWIDTH_EFFICIENCY)


@dataclass(frozen=True)
class MicroBatchCompute:
    """Seconds of one micro-batch on the slowest pipeline stage, before communication."""

    compute_s: float
    linear_fwd_flops: float
    attention_fwd_flops: float
    elementwise_s: float
    score_fwd_s: float


def micro_batch_compute(shape: ModelShape, method: str, layout: Layout, r: Rates) -> MicroBatchCompute:
    """Forward and backward of one micro-batch on one GPU of the slowest stage (module docstring)."""
    t, s = layout.tp, layout.seq_len
    tokens = layout.micro_batch * s
    layers = -(-shape.layers // layout.pp)
    lin_fwd = 2.0 * shape.layer_linear_active * layers / t * tokens
    attn_fwd = 4.0 * s * shape.q_dim * layers / t * tokens
    head_fwd = 2.0 * shape.vocab * shape.hidden / t * tokens
    lin_bwd_factor = 1.0 if method in ADAPTER_METHODS else 2.0
    t_lin = (lin_fwd + head_fwd) * (1 + lin_bwd_factor) / r.linear_flops_per_s
    t_attn = attn_fwd * 3 / r.attention_flops_per_s
    sp_div = t if (layout.sequence_parallel or t == 1) else 1
    elem_bytes = 2.0 * layers * tokens * (ELEMENTWISE_PASSES_PER_HIDDEN * shape.hidden / sp_div
                                          + ELEMENTWISE_PASSES_PER_FFN * shape.ffn_width_active / t)
    if method in ADAPTER_METHODS and layout.lora_rank:
        # each adapter re-reads its layer input and adds into its output, forward and backward
        dims = shape.adapter_attn_dims + (shape.adapter_mlp_dims * max(1, shape.moe_active)
                                          if layout.lora_targets == "all" else 0)
        elem_bytes += 2.0 * 3 * dims / t * layers * tokens
        t_lin += 6.0 * layout.lora_rank * dims * layers / t * tokens / r.linear_flops_per_s
    score_fwd = 0.0
    if not layout.flash_attention:
        score_fwd = UNFUSED_SCORE_BYTES * shape.heads * s / t * layers * tokens / r.memory_bytes_per_s
    t_elem = elem_bytes / r.memory_bytes_per_s
    return MicroBatchCompute(t_lin + t_attn + t_elem + 3 * score_fwd, lin_fwd, attn_fwd, t_elem, score_fwd)


def tp_exposed_s(shape: ModelShape, layout: Layout, tp_link: GroupLink, collectives: int) -> float:
    """Exposed tensor-parallel traffic per micro-batch: `collectives` all-reduces per layer."""
    if layout.tp <= 1:
        return 0.0
    ar_bytes = layout.micro_batch * layout.seq_len * shape.hidden * 2.0
    return TP_COMM_EXPOSED_FRACTION * collectives * -(-shape.layers // layout.pp) * tp_link.all_reduce_s(ar_bytes)


def p2p_s(shape: ModelShape, layout: Layout, pp_link: GroupLink) -> float:
    """Pipeline point-to-point seconds per micro-batch per virtual stage (forward and backward): each
    tensor-parallel rank sends its 1/tp slice (Narayanan et al. 2021, scatter/gather)."""
    if layout.pp <= 1:
        return 0.0
    return 2 * pp_link.p2p_s(layout.micro_batch * layout.seq_len * shape.hidden * 2.0 / layout.tp)


def stage_lower_bound_s(shape: ModelShape, method: str, layout: Layout, cluster: Cluster,
                        tp_link: GroupLink) -> float:
    """Seconds per micro-batch on the slowest stage that no layout with this tp, pp and micro-batch can
    beat, whatever its ZeRO stage and recomputation: compute and tensor-parallel traffic without
    recomputation. A step takes at least (micro-batches + (pp - 1) / v) times this, plus the
    non-negative data-parallel, pipeline-transfer and optimizer terms of `step_time`."""
    mb = micro_batch_compute(shape, method, layout, rates(shape, layout, cluster))
    return (mb.compute_s + tp_exposed_s(shape, layout, tp_link, 4)) / cluster.speedup


def recompute_s(mbc: MicroBatchCompute, r: Rates, recompute: str) -> float:
    """Seconds of recomputation per micro-batch: one forward of the layers (full) or of attention."""
    if recompute == "full":
        return (mbc.linear_fwd_flops / r.linear_flops_per_s + mbc.attention_fwd_flops / r.attention_flops_per_s
                + mbc.elementwise_s / 3 + mbc.score_fwd_s)
    if recompute == "selective":
        return mbc.attention_fwd_flops / r.attention_flops_per_s + mbc.score_fwd_s
    return 0.0


def dp_exposed_s(shape: ModelShape, method: str, layout: Layout, dp_link: GroupLink, zero: int,
                 compute_mb: float, recompute_mb: float) -> float:
    """Data-parallel traffic per step not hidden behind compute (module docstring)."""
    t, p, d = layout.tp, layout.pp, layout.dp
    if d <= 1:
        return 0.0
    layers = -(-shape.layers // p)
    stage_params = shape.layer_params * layers / t + (shape.embed_params + shape.head_params) / t / p
    adapters = method in ADAPTER_METHODS
    if adapters:
        grad_params = shape.adapter_params(layout.lora_rank or 0, layout.lora_targets) / p / t
    else:
        grad_params = stage_params
    grad_bytes = grad_params * 2.0
    if zero == 3:
        per_mb = 2 * dp_link.reduce_scatter_s(stage_params * 2.0) + dp_link.reduce_scatter_s(grad_bytes)
        return layout.micro_batches * max(0.0, per_mb - DP_OVERLAP_FRACTION * (compute_mb + recompute_mb))
    lin_bwd_factor = 1.0 if adapters else 2.0
    backward_mb = compute_mb * (lin_bwd_factor / (1 + lin_bwd_factor))
    return max(0.0, dp_link.all_reduce_s(grad_bytes) - DP_OVERLAP_FRACTION * backward_mb)


def dp_lower_bound_s(shape: ModelShape, method: str, layout: Layout, cluster: Cluster, dp_link: GroupLink,
                     zeros: tuple[int, ...]) -> float:
    """Data-parallel seconds per step no layout with this tp, pp, dp and micro-batch can avoid, over
    the ZeRO stages open to it (with ZeRO-3 hidden behind the most recomputation possible). Added to
    `step_time_lower_bound`, it still bounds `step_time` from below."""
    r = rates(shape, layout, cluster)
    mbc = micro_batch_compute(shape, method, layout, r)
    most = recompute_s(mbc, r, "full")
    return min(dp_exposed_s(shape, method, layout, dp_link, z, mbc.compute_s, most) for z in zeros) / cluster.speedup


def step_time(shape: ModelShape, method: str, layout: Layout, cluster: Cluster, tp_link: GroupLink,
              dp_link: GroupLink, pp_link: GroupLink, paged_offload_params: float) -> TimeBreakdown:
    """Seconds per optimizer step, broken down (see module docstring)."""
    t, p, d, z, v = layout.tp, layout.pp, layout.dp, layout.zero, layout.virtual_pipeline
    m = layout.micro_batches
    adapters = method in ADAPTER_METHODS
    r = rates(shape, layout, cluster)
    layers = -(-shape.layers // p)
    mbc = micro_batch_compute(shape, method, layout, r)
    compute_mb = mbc.compute_s
    recompute_mb = recompute_s(mbc, r, layout.recompute)

    tp_mb = tp_exposed_s(shape, layout, tp_link, 6 if layout.recompute == "full" else 4)

    stage_mb = compute_mb + recompute_mb + tp_mb
    bubble = (p - 1) / v * stage_mb if p > 1 else 0.0
    p2p = m * v * p2p_s(shape, layout, pp_link)

    dp_exposed = dp_exposed_s(shape, method, layout, dp_link, z, compute_mb, recompute_mb)
    stage_params = shape.layer_params * layers / t + (shape.embed_params + shape.head_params) / t / p

    # optimizer step, paging, QLoRA dequantization
    if adapters:
        opt_params = shape.adapter_params(layout.lora_rank or 0, layout.lora_targets) / p / t
    else:
        opt_params = stage_params
    if z >= 1:
        opt_params /= d
    other = opt_params * OPTIMIZER_STEP_BYTES_PER_PARAM.get(layout.optimizer, 28.0) / r.memory_bytes_per_s
    if paged_offload_params > 0:
        pcie = PCIE_GB_PER_S_PER_DIRECTION["pcie"] * 1e9
        other += paged_offload_params * 2 * ADAM_8BIT_STATE_BYTES / pcie
    if method == "qlora":
        passes = 3 if layout.recompute == "full" else 2
        linear = shape.layer_linear_total * layers / t
        other += m * passes * linear * QLORA_DEQUANT_BYTES_PER_PARAM / r.memory_bytes_per_s

    speed = cluster.speedup
    return TimeBreakdown(
        compute_s=m * compute_mb / speed,
        tp_comm_s=m * tp_mb / speed,
        dp_comm_s=dp_exposed / speed,
        pp_bubble_s=(bubble + p2p) / speed,
        recompute_s=m * recompute_mb / speed,
        other_s=other / speed,
    )
