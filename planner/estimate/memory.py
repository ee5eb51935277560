"""Peak memory per GPU: weights, gradients, optimizer states, activations, other.

Model states (Rajbhandari et al. 2020, ZeRO): mixed-precision Adam keeps 2 B of 16-bit weights,
2 B of 16-bit gradients and 12 B of fp32 master weights, momentum and variance per parameter
(16 B/param). ZeRO-1 shards the 12 B over the data-parallel ranks, ZeRO-2 also the gradients,
ZeRO-3 also the weights. Tensor and pipeline parallelism split the parameters first.

LoRA (Hu et al. 2021): frozen 16-bit base, adapters rank x (in + out) per targeted linear layer with
their own gradients and Adam states. QLoRA (Dettmers et al. 2023): base linear weights in NF4 with
double quantization, 4.127 bits/param; embeddings, output layer and norms stay 16-bit.

Activations per layer and micro-batch (Korthikanti et al. 2022, "Reducing Activation Recomputation",
eq. 1-5: s b h (34 + 5 a s / h) bytes for GPT with dropout, 16-bit), generalised to grouped KV heads
and gated FFNs, assuming no dropout and FlashAttention (no s x s score matrix is stored, which is
what the 5as/h term was and what selective recomputation removes; without flash attention and
without recomputation the 5as bytes per token come back):
    bytes/token = 2 x [2h (norm inputs) + 2h (QKV and FFN inputs) + (d_q + 2 d_kv) + d_q
                       + (3 if gated else 2) x ffn_active]
Tensor parallelism with sequence parallelism divides all of it by tp; without sequence parallelism
the 4h norm/input terms stay replicated (Korthikanti's 10 + 24/t). Full recomputation keeps only
each layer's 2h-byte input plus one re-materialised layer. With 1F1B pipelining the first stage holds
min(pp, m) micro-batches in flight (x (1 + (pp-1)/(pp v)) when interleaved with v virtual stages).

Other: logits (s b V / tp x LOGIT_BYTES) on the last stage, CUDA context, NCCL buffers, ZeRO-3
prefetch buffers and allocator fragmentation (factors.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.estimate.factors import (
    ALLOCATOR_FRAGMENTATION,
    CUDA_CONTEXT_GIB,
    GIB,
    LOGIT_BYTES,
    LOSS_CHUNKS,
    NCCL_BUFFERS_GIB,
)
from planner.estimate.flops import QLORA_BITS_PER_PARAM, ModelShape
from planner.estimate.types import ADAPTER_METHODS, Layout, MemoryBreakdown

WEIGHT_BYTES = 2.0
"""16-bit weights (bf16/fp16; FP8 training keeps bf16 weights and transient fp8 copies)."""
GRAD_BYTES = 2.0
"""16-bit gradients, as in the ZeRO paper's 2 + 2 + 12 accounting."""
ADAM_STATE_BYTES = 12.0
"""fp32 master weights, momentum, variance."""
ADAM_8BIT_STATE_BYTES = 2.0
"""bitsandbytes 8-bit momentum and variance (block-wise constants negligible); no fp32 master."""


@dataclass(frozen=True)
class MemoryResult:
    breakdown: MemoryBreakdown
    paged_offload_params: float  # optimizer parameters whose states were paged to host memory
    notes: tuple[str, ...]


def activation_bytes_per_token_layer(shape: ModelShape, layout: Layout) -> float:
    """Stored activation bytes per token per layer on one GPU, no recomputation (docstring above)."""
    h, t = shape.hidden, layout.tp
    replicated = 4.0 * h
    ffn = (3.0 if shape.gated else 2.0) * shape.ffn_width_active
    split = (shape.q_dim + 2 * shape.kv_dim) + shape.q_dim + ffn
    elements = (replicated + split) / t if layout.sequence_parallel or t == 1 else replicated + split / t
    scores = 0.0
    if not layout.flash_attention and layout.recompute == "none":
        scores = 5.0 * shape.heads * layout.seq_len / t  # Korthikanti's 5as: softmax, dropout mask/output
    return 2.0 * elements + scores


def memory_per_gpu(shape: ModelShape, method: str, layout: Layout, gpu_memory_gib: float) -> MemoryResult:
    """Peak memory per GPU in GiB on the pipeline stage with the highest total."""
    t, p, d, z = layout.tp, layout.pp, layout.dp, layout.zero
    adapters = method in ADAPTER_METHODS
    layers_stage = -(-shape.layers // p)
    notes: list[str] = []

    # Parameters held by the two candidate peak stages (first: embedding, last: output layer).
    layer_params = shape.layer_params * layers_stage / t
    first_params = layer_params + shape.embed_params / t + (shape.head_params / t if p == 1 else 0.0)
    last_params = layer_params + (shape.head_params / t if p > 1 else 0.0)
    if p > 1 and shape.tied:
        last_params += shape.embed_params / t  # tied output layer is a copy on the last stage

    tokens_mb = layout.micro_batch * layout.seq_len
    act_token_layer = activation_bytes_per_token_layer(shape, layout)
    if layout.recompute == "full":
        checkpoint = 2.0 * shape.hidden / (t if (layout.sequence_parallel or t == 1) else 1)
        per_mb_stage = checkpoint * tokens_mb * layers_stage
        working = act_token_layer * tokens_mb  # one layer re-materialised at a time
    else:
        per_mb_stage = act_token_layer * tokens_mb * layers_stage
        working = 0.0
    m = layout.micro_batches
    in_flight = float(min(p, m))
    if p > 1 and layout.virtual_pipeline > 1:
        in_flight *= 1.0 + (p - 1) / (p * layout.virtual_pipeline)
    logit_bytes = LOGIT_BYTES if not layout.chunked_loss else 2.0 + (LOGIT_BYTES - 2.0) / LOSS_CHUNKS
    logits = tokens_mb * shape.vocab / t * logit_bytes

    first_act = per_mb_stage * in_flight + working + (logits if p == 1 else 0.0)
    last_act = per_mb_stage + working + (logits if p > 1 else 0.0)

    results = []
    stages = ((first_params, first_act, p == 1), (last_params, last_act, True))
    for params_stage, act_bytes, is_last in stages:
        weights, grads, optim, offload = _states(shape, method, layout, params_stage, layers_stage)
        act_gib = (act_bytes - (logits if is_last else 0.0)) / GIB
        logits_gib = logits / GIB if is_last else 0.0
        other = CUDA_CONTEXT_GIB + (NCCL_BUFFERS_GIB if layout.gpus > 1 else 0.0)
        if z == 3 and d > 1:
            other += 2 * shape.layer_params / t * WEIGHT_BYTES / GIB  # prefetched full layers
        other += logits_gib + ALLOCATOR_FRAGMENTATION * (act_gib + logits_gib)
        results.append([weights, grads, optim, act_gib, other, offload])
        if p == 1:
            break
    weights, grads, optim, act_gib, other, offload = max(results, key=lambda r: sum(r[:5]))

    paged_params = 0.0
    if layout.optimizer == "paged_adam_8bit" and offload > 0:
        # Unified-memory pages stay on the GPU while there is room; under pressure they live in host
        # memory and only the tensor being stepped is paged in (about one layer's states).
        resident = weights + grads + act_gib + other
        if resident + offload <= gpu_memory_gib:
            optim += offload
        else:
            one_layer = min(offload, shape.layer_params / t * ADAM_8BIT_STATE_BYTES / GIB)
            optim += one_layer
            paged_params = (offload - one_layer) * GIB / ADAM_8BIT_STATE_BYTES
            notes.append(f"paged optimizer: {offload - one_layer:.1f} GiB of 8-bit Adam states live in "
                         "host memory and cross PCIe every step")
    if adapters:
        notes.append("LoRA: base weights frozen (no gradients or optimizer states for them)")
    total = weights + grads + optim + act_gib + other
    return MemoryResult(MemoryBreakdown(weights, grads, optim, act_gib, other, total), paged_params,
                        tuple(notes))


def _states(shape: ModelShape, method: str, layout: Layout, params_stage: float,
            layers_stage: int) -> tuple[float, float, float, float]:
    """(weights, gradients, optimizer, pageable optimizer) GiB for one stage's parameters."""
    t, d, z = layout.tp, layout.dp, layout.zero
    if method in ADAPTER_METHODS:
        if method == "qlora":
            linear = shape.layer_linear_total * layers_stage / t
            base = linear * QLORA_BITS_PER_PARAM / 8 + (params_stage - linear) * WEIGHT_BYTES
        else:
            base = params_stage * WEIGHT_BYTES
        trainable = (shape.adapter_params(layout.lora_rank or 0, layout.lora_targets)
                     * layers_stage / shape.layers / t)
        weights = base / (d if z == 3 else 1) + trainable * WEIGHT_BYTES / (d if z == 3 else 1)
    else:
        trainable = params_stage
        weights = trainable * WEIGHT_BYTES / (d if z == 3 else 1)
    if layout.optimizer == "adam":
        grads = trainable * GRAD_BYTES / (d if z >= 2 else 1)
        optim = trainable * ADAM_STATE_BYTES / (d if z >= 1 else 1)
        pageable = 0.0
    else:
        # 8-bit Adam as in torchtune's low-memory recipe: the step runs inside the backward pass,
        # so only about one layer's gradients exist at a time.
        grads = min(trainable, shape.layer_params / t) * GRAD_BYTES
        optim = trainable * ADAM_8BIT_STATE_BYTES / (d if z >= 1 else 1)
        pageable = optim if layout.optimizer == "paged_adam_8bit" else 0.0
        if pageable:
            optim = 0.0
    return weights / GIB, grads / GIB, optim / GIB, pageable / GIB
