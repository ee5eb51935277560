"""Activation bytes per token and layer on one GPU, and the layer counts a pipeline schedule holds.

Activations per layer and micro-batch (Korthikanti et al. 2022, "Reducing Activation Recomputation",
eq. 1-5: s b h (34 + 5 a s / h) bytes for GPT with dropout, 16-bit), generalised to grouped KV heads
and gated FFNs, assuming no dropout and FlashAttention (no s x s score matrix is stored, which is
what the 5as/h term was and what selective recomputation removes; without flash attention and
without recomputation the 5as bytes per token come back):
    bytes/token = 2 x [2h (norm inputs) + 2h (QKV and FFN inputs) + (d_q + 2 d_kv) + d_q
                       + (3 if gated else 2) x ffn_active]
Tensor parallelism with sequence parallelism divides all of it by tp; without sequence parallelism
the 4h norm/input terms stay replicated (Korthikanti's 10 + 24/t). Context parallelism divides the
tokens by cp. Recomputation policies:
- full: each layer keeps its 2h-byte input, plus one layer re-materialised at a time;
- full_offload: the same with those inputs in host memory (Unsloth's gradient checkpointing copies
each
  to the CPU after its layer's forward and back before its recomputation); two are in flight;
- offload: everything is kept, in host memory; two layers' worth stay on the GPU in flight;
- selective, Megatron/DeepSpeed: the attention core is recomputed (with FlashAttention this stores
  what "none" stores; without it the s x s scores are dropped);
- selective, FSDP (torchtitan's op-level SAC): the layer input, the attention output and every
  other matmul output are kept, the rest (norms, activation functions, the other matmuls)
  recomputed.
Eager modules (the PyTorch stacks running Hugging Face, torchtune or peft code op by op, without
torch.compile or fused kernels such as Liger; `Layout.fused_modules` False) save more in the
Llama-family layer (RMSNorm, SwiGLU, SDPA: the gated-FFN models), in 16-bit elements per token: each
RMSNorm's fp32 input upcast and normalised output (3h more per layer), the SwiGLU's gate and up
outputs and their product separately (ffn more), and the attention output's contiguous (b, s, h, d)
copy that the output projection saves (d_q more); peft's LoRA layers add about 2h
(EAGER_LORA_EXTRA_PER_HIDDEN). Measured on an H200 (`Layout.eager_modules`): 14h + 6d_q + 4d_kv +
8ffn bytes for a Llama layer, 1.4x the fused one. LayerNorm/GELU models (MPT under llm-foundry, GPT)
run one `F.layer_norm` kernel, an unfused GELU that saves what the fused formula counts, and
flash-attn's (b, s, h, d) output that the projection reuses. FP8 weight copies are transient per
layer and torchao float8 (FSDP stacks) keeps saved activations in BF16, so FP8 never adds memory
over the same BF16 layout; Transformer Engine (Megatron, NeMo) saves the FP8 copy of each linear
layer's input, which halves those four tensors.
"""

from __future__ import annotations

import math

from plan.models.stacks import stack_of
from plan.planner.estimate.flops import ModelShape
from plan.planner.estimate.schedule import held_chunks
from plan.planner.estimate.types import FULL_RECOMPUTE, Layout


def checkpoint_bytes_per_token_layer(shape: ModelShape, layout: Layout) -> float:
    """A layer's 16-bit input per token on one GPU (what full recomputation keeps, and a stage's
    output): sharded over tp under sequence parallelism, whole without it."""
    sp = layout.sequence_parallel or layout.tp == 1
    return 2.0 * shape.hidden / (layout.tp if sp else 1)


def host_bytes_per_token_layer(shape: ModelShape, layout: Layout) -> float:
    """What an offloading policy (`Layout.host_activations`) sends to host memory per token and
    layer: each layer's checkpointed input (full_offload) or everything it saves (offload)."""
    if layout.recompute == "full_offload":
        return checkpoint_bytes_per_token_layer(shape, layout)
    return activation_bytes_per_token_layer(shape, layout)


def activation_bytes_per_token_layer(shape: ModelShape, layout: Layout) -> float:
    """Stored activation bytes per token per layer on one GPU without full recomputation
    (module docstring; FSDP's "selective" is the op-level policy)."""
    h, t = shape.hidden, layout.tp
    ffn_mult = 3.0 if shape.gated else 2.0
    # the routed experts' padded to their capacity
    ffn_width = shape.ffn_width(layout.capacity_factor)
    sp = layout.sequence_parallel or t == 1
    stack = stack_of(layout.framework)
    if layout.recompute == "selective" and stack.selective_recompute == "op_level":
        mm_out = (shape.q_dim + 2 * shape.kv_dim) + h + (ffn_mult - 1) * ffn_width + h
        replicated = float(h)
        split = 0.5 * mm_out + shape.q_dim
    else:
        replicated = 4.0 * h
        split = (shape.q_dim + 2 * shape.kv_dim) + shape.q_dim + ffn_mult * ffn_width
        if layout.eager_modules:
            if shape.gated:  # the Llama-family layer code (module docstring)
                replicated += EAGER_NORM_EXTRA_PER_HIDDEN * h
                split += shape.q_dim + ffn_width
            if layout.lora_rank is not None:
                replicated += EAGER_LORA_EXTRA_PER_HIDDEN * h
    elements = (replicated + split) / t if sp else replicated + split / t
    if sp and t > 1 and stack.tensor_parallel_gathers_saved and layout.recompute != "selective":
        # DTensor tensor parallelism (torchtitan) all-gathers the sequence-sharded norm outputs
        # before the column-parallel QKV and FFN-in projections, and autograd saves the gathered
        # tensor for their weight gradients; Megatron saves its local shard and re-gathers it in the
        # backward pass.
        elements += 2.0 * h * (1.0 - 1.0 / t)
    if layout.precision == "fp8" and stack.fp8_saves_inputs_in_fp8 and layout.recompute != "full":
        # Transformer Engine keeps the FP8 copy of each linear layer's input for the backward pass:
        # the QKV and FC1 inputs (norm outputs), the attention output and the FC2 input at 1 byte.
        fp8_saved = (2.0 * h / t if sp else 2.0 * h) + (shape.q_dim + ffn_width) / t
        elements -= 0.5 * fp8_saved
    scores = 0.0
    if not layout.flash_attention and layout.recompute == "none":
        scores = 5.0 * shape.heads * layout.seq_len / layout.cp / t  # Korthikanti's 5as
    return 2.0 * elements + scores


EAGER_NORM_EXTRA_PER_HIDDEN = 3.0
"""16-bit elements per hidden unit that a layer's two eager RMSNorms save beyond fused ones: each
keeps the fp32 upcast of its input and its normalised output for the backward pass (Hugging Face's
LlamaRMSNorm computes in fp32 op by op). Applied to gated-FFN models, which are the RMSNorm ones
(Llama, Qwen, Mistral, GLM, DeepSeek); LayerNorm models run one fused `F.layer_norm` kernel even
eagerly. Measured with the other eager terms (`Layout.eager_modules`)."""

EAGER_LORA_EXTRA_PER_HIDDEN = 2.0
"""16-bit elements per hidden unit that peft's LoRA layers (all linear layers, under bf16 autocast,
fp32 adapters) save beyond the same eager layer fully fine-tuned: measured 3.9 h on Llama 3.1 8B's
shape and 4.2 h on Qwen3 8B's (bytes), 3.7 h on a small shape on the CPU (bench/device/README.md).
Applied to attention-only targets too (not measured; the upper side)."""


def backward_gradient_bytes_per_token(shape: ModelShape, layout: Layout,
                                      residual_bytes: float = 2.0) -> float:
    """The gradients a layer's backward pass holds beside the activations it saved, per token on one
    GPU (16-bit): the gradient of the FFN's hidden state (the down projection's input gradient,
    `ffn_width` wide) while the gate and up outputs it is computed from are still saved, the
    residual stream's gradient arriving from the layer above and the one being summed for the
    layer's input (h each, at `residual_bytes`: fp32 where the residual stream is,
    `upcasts_unquantized`). Split over tp as the activations are (the residual terms only under
    sequence parallelism). Reasoning from the order autograd frees saved tensors (a node's are
    freed once it has run); checked against Unsloth's context tables (unsloth 2025.3.19 README, Mar
    2025; bench/data/memory_public.csv UNS-01): Llama 3.1 8B QLoRA with offloaded checkpoints and
    a fused loss fits 4,719 more tokens per GiB, where the estimate's peak grows by a GiB every
    5,992 tokens without this term (its 2 x (14,336 + 2 x 4,096) B = 45 kB a token) and every
    4,661 with it."""
    t = layout.tp
    sp = layout.sequence_parallel or t == 1
    residual = 2.0 * shape.hidden * residual_bytes / (t if sp else 1)
    return 2.0 * shape.ffn_width(layout.capacity_factor) / t + residual


def chunk_layers(layers: int, layout: Layout) -> int:
    """Layers of the largest model chunk: a pipeline stage, or one of its virtual stages."""
    stage = math.ceil(layers / layout.pp)
    return math.ceil(stage / layout.virtual_pipeline)


def recomputed_layers(layout: Layout, stage_layers: int) -> int:
    """Layers of a stage whose activations are recomputed: all of them under full recomputation, or
    `recompute_layers` of each of the stage's `virtual_pipeline` chunks under Megatron's block
    method."""
    if layout.recompute not in FULL_RECOMPUTE:
        return 0
    if layout.recompute_layers is None:
        return stage_layers
    return min(stage_layers, layout.recompute_layers * layout.virtual_pipeline)


def in_flight_micro_batches(layout: Layout, rank: int = 0) -> float:
    """Micro-batches' worth of activations pipeline stage `rank` holds at its peak: its warm-up
    forwards and the one before its first backward, never more than the step has (Megatron-LM
    schedules.py: 2(p - rank - 1) + (v - 1) p warm-up chunks when interleaved, p - rank - 1
    micro-batches with 1F1B, capped at m v)."""
    if layout.pp == 1:
        return 1.0
    return (
        held_chunks(layout.pp, layout.virtual_pipeline, layout.micro_batches, rank)
        / layout.virtual_pipeline
    )
