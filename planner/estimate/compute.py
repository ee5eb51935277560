"""Compute of one micro-batch: FLOPs per stage at an achieved rate, memory-bound traffic,
recomputation.

Per micro-batch on each pipeline stage (its layers, plus the output layer on the last stage):
    forward FLOPs F = (2 N_linear + 4 s d_q L_stage) / tp x tokens + 2 V h / tp x tokens
    backward = 2F for full methods; LoRA/QLoRA: 1x for the frozen linear layers, 2x for attention;
    DPO variants add one reference forward F (element-wise traffic +1/3)
    recompute: full adds one forward of the layers (Megatron's block method: of the recomputed share
    of them); selective the attention core (Megatron) or, for FSDP's op-level policy, the non-saved
    half of the matmuls and the element-wise kernels
with tokens = micro_batch x seq_len / cp (context parallelism splits the sequence; each token still
attends to the whole sequence, so attention FLOPs per GPU fall by cp like the rest). Achieved rate =
peak(precision) x GEMM_FRACTION_OF_PEAK[arch] x training_kernel_efficiency(arch) x g(w) x g(tokens),
with g(x) = x / (x + x_half) for the GEMM width w = hidden / tp and the micro-batch's tokens per
GPU; FP8 applies to the linear layers only (attention stays BF16) and pays its casts
(FP8_CAST_BYTES_PER_ELEMENT per cast element, inputs and output-gradients of every linear layer, and
the weights twice per micro-batch, once per step under Megatron: `Stack.fp8_weight_cast_cached`) as
memory-bound traffic. Memory-bound kernels (norms, activations, residuals) add bytes / (memory
bandwidth x efficiency). Flash attention runs at ATTENTION_UTILIZATION of the BF16 peak, on the head
size its kernel is compiled for (FlashAttention-2 pads MPT-30B's 112 to 128: FA2_HEAD_DIMS).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from plan.models.methods import reference_forward_passes
from plan.models.stacks import stack_of
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.factors import (
    ADAPTER_BYTES_PER_DIM,
    ATTENTION_KERNEL_OF_FRAMEWORK,
    ATTENTION_UTILIZATION,
    DEFAULT_MEMORY_BANDWIDTH_GB_PER_S,
    ELEMENTWISE_PASSES_PER_FFN,
    ELEMENTWISE_PASSES_PER_HIDDEN,
    ELEMENTWISE_TRAFFIC_OF_FRAMEWORK,
    FLASH_ATTENTION_BACKWARD_PASSES,
    FP8_CAST_BYTES_PER_ELEMENT,
    FP8_GEMM_RELATIVE_EFFICIENCY,
    GEMM_FRACTION_OF_PEAK,
    GEMM_HALF_TOKENS,
    GEMM_HALF_WIDTH,
    LOSS_TRAFFIC_BYTES_PER_LOGIT,
    MEMORY_BANDWIDTH_EFFICIENCY,
    PCIE_GB_PER_S_PER_DIRECTION,
    UNFUSED_SCORE_BYTES,
    kernel_head_dim,
    training_kernel_efficiency,
)
from plan.planner.estimate.flops import ModelShape
from plan.planner.estimate.memory import host_bytes_per_token_layer, recomputed_layers, stage_layers
from plan.planner.estimate.types import ADAPTER_METHODS, FULL_RECOMPUTE, Layout


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
        # the kernel computes its own head size
        padded = shape.head_dim / kernel_head_dim(shape.head_dim, name)
        attn = (
            peak16
            * 1e12
            * kernel.get(gpu.architecture, 0.35)
            * tokens
            / (tokens + GEMM_HALF_TOKENS)
            / 0.5
            * padded
        )
    else:
        attn = peak16 * 1e12 * eff
    return Rates(peak_lin * 1e12 * eff, attn, mem_bw * MEMORY_BANDWIDTH_EFFICIENCY)


@dataclass(frozen=True, slots=True)
class MicroBatchCompute:
    """Seconds of one micro-batch on the slowest pipeline stage, before communication.

    linear_fwd_s / attention_fwd_s / elementwise_s split the work so recomputation policies can
    charge the part they repeat; `layers` is the stage's layer count. `other_stage`: with pipeline
    stages of different make-up (the last holds the output layer and the loss, the others more
    layers), the other one, which `step_time` also times: a stage of more layers issues more kernels
    and carries more tensor-parallel traffic, so it can be the slower one on a fast GPU."""

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
    elem_bytes = (
        2.0
        * fusion
        * layers
        * tokens
        * (
            ELEMENTWISE_PASSES_PER_HIDDEN * shape.hidden / sp_div
            + ELEMENTWISE_PASSES_PER_FFN * shape.ffn_width(layout.capacity_factor) / t
        )
    )
    elem_bytes *= 1.0 + ref / 3.0  # the reference forward is a third of forward + backward traffic
    if layout.precision == "fp8":
        ffn_mult = 3.0 if shape.gated else 2.0
        fwd_in = 2.0 * shape.hidden + shape.q_dim + shape.ffn_width_active
        bwd_out = (
            shape.q_dim
            + 2 * shape.kv_dim
            + 2.0 * shape.hidden
            + (ffn_mult - 1) * shape.ffn_width_active
        )
        # cast twice per micro-batch (forward copy, transposed copy for the backward); Transformer
        # Engine under Megatron caches both on a step's first micro-batch
        # (`Stack.fp8_weight_cast_cached`)
        cached = stack_of(layout.framework).fp8_weight_cast_cached
        casts = 2.0 / layout.micro_batches if cached else 2.0
        weights = casts * shape.layer_linear_active / tokens  # per token
        elem_bytes += (
            FP8_CAST_BYTES_PER_ELEMENT * layers * tokens * ((fwd_in + bwd_out) / t + weights / t)
        )
    if method in ADAPTER_METHODS and layout.lora_rank:
        # each adapter re-reads its layer input and adds into its output, forward and backward;
        # peft's eager layers also cast the input to fp32 and back (ADAPTER_BYTES_PER_DIM)
        dims = shape.adapter_attn_dims + (shape.adapter_mlp_dims * max(1, shape.moe_active)
                                          if layout.lora_targets == "all" else 0)
        elem_bytes += ADAPTER_BYTES_PER_DIM[layout.kernels] * dims / t * layers * tokens
        t_lin += 6.0 * layout.lora_rank * dims * layers / t * tokens / r.linear_flops_per_s
    # the loss: memory-bound passes over the logits, outside the layers that recomputation repeats
    loss_bytes = (
        tokens
        * shape.vocab
        / t
        * LOSS_TRAFFIC_BYTES_PER_LOGIT["unfused" if layout.loss == "plain" else "chunked"]
        * (1.0 + ref / 3.0)
        if with_head
        else 0.0
    )
    score_fwd = 0.0
    if not layout.flash_attention:
        score_fwd = (
            UNFUSED_SCORE_BYTES * shape.heads * s / t * layers * tokens / r.memory_bytes_per_s
        )
    t_elem = elem_bytes / r.memory_bytes_per_s
    t_loss = loss_bytes / r.memory_bytes_per_s
    return MicroBatchCompute(
        t_lin + t_attn + t_elem + t_loss + 3 * score_fwd,
        lin_fwd,
        attn_fwd,
        t_elem,
        score_fwd,
        layers,
        lin_fwd / r.linear_flops_per_s,
        attn_fwd / r.attention_flops_per_s,
    )


def micro_batch_compute(
    shape: ModelShape, method: str, layout: Layout, r: Rates
) -> MicroBatchCompute:
    """Forward and backward of one micro-batch on one GPU of the slowest stage (module
    docstring)."""
    if layout.pp == 1:
        return _stage_compute(shape, method, layout, r, shape.layers, True)
    _, mid, last = stage_layers(shape.layers, layout.pp)
    inner = _stage_compute(shape, method, layout, r, mid, False)
    final = _stage_compute(shape, method, layout, r, last, True)
    slower, other = (final, inner) if final.compute_s >= inner.compute_s else (inner, final)
    return replace(slower, other_stage=other)


def recompute_s(
    mbc: MicroBatchCompute, r: Rates, recompute: str, framework: str = "megatron"
) -> float:
    """Seconds of recomputation per micro-batch: one forward of the layers (full), of the attention
    core (Megatron selective) or of half the matmuls and the element-wise kernels (FSDP
    op-level)."""
    if recompute in FULL_RECOMPUTE:
        return mbc.linear_fwd_s + mbc.attention_fwd_s + mbc.elementwise_s / 3 + mbc.score_fwd_s
    if recompute == "selective":
        if stack_of(framework).selective_recompute == "op_level":
            return 0.5 * mbc.linear_fwd_s + mbc.elementwise_s / 3
        return mbc.attention_fwd_s + mbc.score_fwd_s
    return 0.0


def offload_exposed_s(shape: ModelShape, layout: Layout, mbc: MicroBatchCompute) -> float:
    """Activation offloading per micro-batch: the saved activations (or, under full_offload, the
    layers' checkpointed inputs) cross PCIe to the host during the forward pass and back during the
    backward pass, each overlapped with that pass's compute."""
    if not layout.host_activations:
        return 0.0
    nbytes = (
        host_bytes_per_token_layer(shape, layout) * tokens_per_gpu_micro_batch(layout) * mbc.layers
    )
    pcie_s = nbytes / (PCIE_GB_PER_S_PER_DIRECTION["pcie"] * 1e9)
    forward = mbc.linear_fwd_s + mbc.attention_fwd_s
    return max(0.0, pcie_s - forward) + max(0.0, pcie_s - (mbc.compute_s - forward))


def recomputed_share(layout: Layout, layers: int) -> float:
    """The share of the stage's layers re-run forward: all under full recomputation, some under
    Megatron's block method, none otherwise (selective and offload policies are charged by
    recompute_s alone)."""
    return recomputed_layers(layout, layers) / layers


def stage_recompute_s(shape: ModelShape, layout: Layout, r: Rates, mbc: MicroBatchCompute) -> float:
    """Seconds per micro-batch on the slowest stage that recomputation (and activation offloading)
    adds before communication."""
    share = recomputed_share(layout, mbc.layers) if layout.recompute in FULL_RECOMPUTE else 1.0
    return recompute_s(mbc, r, layout.recompute, layout.framework) * share + offload_exposed_s(
        shape, layout, mbc
    )
