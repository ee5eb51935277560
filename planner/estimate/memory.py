"""Peak memory per GPU: weights, gradients, optimizer states, activations, other.

Model states (Rajbhandari et al. 2020, ZeRO): mixed-precision Adam keeps 2 B of 16-bit weights,
2 B of 16-bit gradients and 12 B of fp32 master weights, momentum and variance per parameter
(16 B/param); pure BF16 training (torchtune's, `adam_bf16`) keeps no fp32 master and BF16 moments
(2 + 2 + 4 B/param). ZeRO-1 shards the 12 B over the data-parallel ranks, ZeRO-2 also the gradients,
ZeRO-3 also the weights; context-parallel ranks shard them too (Megatron and torchtitan shard over
dp x cp). Megatron-LM accumulates gradients in fp32 (`main_grad`), so it keeps 4 B of gradients:
6 + 12/d B/param with its distributed optimizer (Megatron-LM docs/source/distrib_optimizer.md).
Tensor and pipeline parallelism split the parameters first.

LoRA (Hu et al. 2021): frozen 16-bit base, adapters rank x (in + out) per targeted linear layer with
their own gradients and optimizer states. QLoRA (Dettmers et al. 2023): base linear weights in NF4 with
double quantization, 4.127 bits/param; embeddings, output layer and norms stay 16-bit; each linear
layer is dequantized to a transient 16-bit copy for its matmul. Sharded (FSDP/ZeRO-3) QLoRA gathers
the 4-bit layers, so its prefetch buffers are 4-bit too (Answer.AI FSDP+QLoRA, 2024).

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
- full_offload: the same with those inputs in host memory (Unsloth's gradient checkpointing copies each
  to the CPU after its layer's forward and back before its recomputation); two are in flight;
- offload: everything is kept, in host memory; two layers' worth stay on the GPU in flight;
- selective, Megatron/DeepSpeed: the attention core is recomputed (with FlashAttention this stores
  what "none" stores; without it the s x s scores are dropped);
- selective, FSDP (torchtitan's op-level SAC): the layer input, the attention output and every
  other matmul output are kept, the rest (norms, activation functions, the other matmuls) recomputed.
Eager modules (the PyTorch stacks running Hugging Face, torchtune or peft code op by op, without
torch.compile or fused kernels such as Liger; `Layout.fused_modules` False) save more in the
Llama-family layer (RMSNorm, SwiGLU, SDPA: the gated-FFN models), in 16-bit elements per token: each
RMSNorm's fp32 input upcast and normalised output (3h more per layer), the SwiGLU's gate and up
outputs and their product separately (ffn more), and the attention output's contiguous (b, s, h, d)
copy that the output projection saves (d_q more); peft's LoRA layers add about 2h
(EAGER_LORA_EXTRA_PER_HIDDEN). Measured on an H200 (`Layout.eager_modules`): 14h + 6d_q + 4d_kv + 8ffn
bytes for a Llama layer, 1.4x the fused one.
LayerNorm/GELU models (MPT under llm-foundry, GPT) run one `F.layer_norm` kernel, an unfused GELU that
saves what the fused formula counts, and flash-attn's (b, s, h, d) output that the projection reuses.
FP8 weight copies are transient per layer and torchao float8 (FSDP stacks) keeps saved activations in
BF16, so FP8 never adds memory over the same BF16 layout; Transformer Engine (Megatron, NeMo) saves
the FP8 copy of each linear layer's input, which halves those four tensors.

Pipelines: stages hold ceil(L/pp) layers; where pp does not divide L the first and last stages take
the shortfall (one layer fewer each, as Llama 3 405B did for its embedding and output layer). With
1F1B the first stage holds min(pp, m) micro-batches in flight; interleaved with v virtual stages its
warm-up holds pp(v+1) - 1 chunks of 1/v stage (Narayanan et al. 2021; Megatron-LM schedules.py),
i.e. pp + (pp - 1)/v micro-batches' worth, and the last stage (v - 1) pp + 1 chunks (one micro-batch
with 1F1B). The embedding and the loss stand in for the missing layer in the first chunk of the first
stage and the last chunk of the last one, so what a stage holds is summed chunk by chunk over its
schedule (schedule.py): Llama 3 405B's first stage, 8 chunks of which the first holds only the
embedding, keeps 112 layers of 32 micro-batches at its peak, not 125.

DPO (models/methods.py): full DPO holds a frozen 16-bit reference copy of the weights next to the
policy (2 B/param, sharded like the weights under ZeRO-3, no gradients or optimizer states); its
forward runs without autograd, so it keeps no activations beyond the layer being computed, and its
log-probabilities are reduced to one number per sequence. LoRA/QLoRA-DPO reuse the base with the
adapters switched off: no extra weights.

The loss phase (last stage): the logits at the bytes per element that the stack's cross-entropy holds
(factors.py: Megatron's fused vocab-parallel loss, PyTorch's eager `loss_parallel` under tp > 1, the
fused single-GPU kernel, or a chunked loss; a fused linear cross-entropy holds one chunk of tokens'
logits and the gradient of its input instead, `_loss_bytes`) and the final norm's output that the output
layer saves.
Under full recomputation (and either offload) it and the re-materialised layer are never alive together: the
logits are freed once the backward pass has gone through the output layer, before the first layer is
recomputed, so the stage peaks at its checkpoints plus the larger of the two.

What the PyTorch stacks ("fsdp") hold besides: DTensor tensor parallelism saves the all-gathered
(sequence-parallel) norm outputs for the QKV and FFN-in projections, where Megatron saves its shard and
re-gathers; FSDP keeps the root module (embedding, output layer) gathered from forward to backward;
torch.distributed.pipelining caches each in-flight micro-batch's stage output for its backward, and its
last stage keeps every micro-batch's output (torchtitan: fp32 logits) for step()'s merged return until
the step ends (KEPT_OUTPUT_LOGIT_BYTES).

Other: the loss phase, CUDA context, NCCL buffers, ZeRO-3 prefetch buffers (two layers), QLoRA's
dequantized matrix and allocator fragmentation (factors.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from plan.models.methods import reference_weight_copies
from plan.planner.estimate.factors import (
    ALLOCATOR_FRAGMENTATION,
    ALLOCATOR_FRAGMENTATION_AT_LIMIT,
    CUDA_CONTEXT_GIB,
    FUSED_LOSS_BYTES_PER_TOKEN,
    GIB,
    KEPT_OUTPUT_LOGIT_BYTES,
    LOGIT_BYTES,
    LOGIT_BYTES_FP32_LOSS,
    LOGIT_BYTES_VOCAB_PARALLEL_EAGER,
    LOSS_CHUNK_GRAD_BYTES,
    LOSS_CHUNKS,
    NCCL_BUFFERS_GIB,
    UPCAST_LOGIT_RESERVED_BYTES,
)
from plan.planner.estimate.flops import QLORA_BITS_PER_PARAM, ModelShape
from plan.planner.estimate.schedule import held_chunks, held_peak, stage_chunk_layers
from plan.planner.estimate.types import ADAPTER_METHODS, FULL_RECOMPUTE, QLORA_METHODS, Layout, MemoryBreakdown

WEIGHT_BYTES = 2.0
"""16-bit weights (bf16/fp16; FP8 training keeps bf16 weights and transient fp8 copies)."""
GRAD_BYTES = 2.0
"""16-bit gradients, as in the ZeRO paper's 2 + 2 + 12 accounting (DeepSpeed, FSDP)."""
HOST_MEMORY_GIB_PER_GPU = 128.0
"""Host memory per GPU that activation offloading may fill: a DGX A100 has 1 TB for 8 GPUs, a DGX H100
2 TB (NVIDIA datasheets); rental and consumer nodes often less. 128 GiB per GPU is assumed; what the
host cannot take stays on the GPU."""

HOST_SHORTFALL_NOTE = "CPU offload: the "
"""How the note begins where an offloaded layout's model states exceed the host memory per GPU (and so stay
on the GPU): plan.planner.offload_note reads it."""

OFFLOAD_RESIDENT_LAYERS = 2
"""Layers of activations on the GPU under activation offloading: the one computing and the one being
copied out (forward) or prefetched back (backward)."""
MEGATRON_GRAD_BYTES = 4.0
"""Megatron-LM's fp32 `main_grad` buffers (accumulate-allreduce-grads-in-fp32, its default)."""
FSDP_ACCUMULATED_GRAD_BYTES = 4.0
"""Unsharded gradients FSDP accumulates across micro-batches without syncing, in its fp32 reduce dtype."""
PRECISION_AWARE_GRAD_BYTES = 2.0
"""BF16 `main_grad` buffers of the precision-aware optimizer (Megatron-Core 0.16 OptimizerConfig
`main_grads_dtype`; NeMo's `grad_reduce_in_fp32=False`, set by the performance mode of its Llama
recipes, NeMo 2.3.0 nemo/collections/llm/recipes/llama3_70b.py and 17 others)."""
OPTIMIZER_STATE_BYTES = {
    "adam": 12.0,            # fp32 master weights, momentum, variance (Rajbhandari et al. 2020)
    "adam_8bit": 2.0,        # bitsandbytes 8-bit momentum + variance, no fp32 master (Dettmers et al. 2022)
    "paged_adam_8bit": 2.0,  # the same in CUDA unified memory
    "adafactor": 4.0,        # fp32 master copy; factored second moments ~0 (Shazeer & Stern 2018)
    "sgd": 8.0,              # fp32 master copy + momentum
    # the FP32 master as the BF16 weight plus a 16-bit remainder, and fp32 moments: Megatron-Core 0.16
    # OptimizerConfig.store_param_remainders ("store the 16-bit FP32 parameter remainders ... excluding
    # the 16 bits shared with the BF16 parameters"); NeMo 2.0.0rc1 (24.07) megatron_base_model.py sets
    # the same in Apex's distributed Adam when the optimizer is FP32 and the model BF16
    "adam_precision_aware": 10.0,
    # pure BF16 training: AdamW's two moments in the parameters' dtype (torch.optim.AdamW allocates them with
    # zeros_like(param)) and the update applied to the BF16 weights, no fp32 master; torchtune's recipes
    # (dtype: bf16, no mixed precision; 0.3.1 recipes/full_finetune_distributed.py), LLaMA-Factory's
    # pure_bf16, DeepSpeed's bf16_master_weights_and_grads + bf16_optimizer_states
    "adam_bf16": 4.0,
}
"""Optimizer bytes per trainable parameter."""
ADAM_8BIT_STATE_BYTES = OPTIMIZER_STATE_BYTES["adam_8bit"]
FUSED_STEP_OPTIMIZERS = ("adam_8bit", "paged_adam_8bit")
"""Optimizers run inside the backward pass (torchtune's low-memory recipe): one layer of gradients."""


@dataclass(frozen=True, slots=True)
class MemoryResult:
    breakdown: MemoryBreakdown
    paged_offload_params: float  # optimizer parameters whose states were paged to host memory
    notes: tuple[str, ...]
    peak_stage: tuple[int, int] | None = None  # (rank, layers) of the pipeline stage that peaks; None without pp
    # the least the run needs, its caching allocator squeezed at the card's limit (ALLOCATOR_FRAGMENTATION_AT_LIMIT)
    floor_gib: float = 0.0


def stage_layers(layers: int, pp: int) -> tuple[int, int, int]:
    """(first, middle, last) stage layer counts: ceil(L/pp) each, the shortfall taken from the first
    and the last stage (they also hold the embedding and the output layer)."""
    per = -(-layers // pp)
    if pp == 1:
        return layers, layers, layers
    short = per * pp - layers
    first = per - (1 if short >= 1 else 0)
    last = per - (1 if short >= 2 else 0)
    return max(1, first), per, max(1, last)


def checkpoint_bytes_per_token_layer(shape: ModelShape, layout: Layout) -> float:
    """A layer's 16-bit input per token on one GPU (what full recomputation keeps, and a stage's output):
    sharded over tp under sequence parallelism, whole without it."""
    sp = layout.sequence_parallel or layout.tp == 1
    return 2.0 * shape.hidden / (layout.tp if sp else 1)


def host_bytes_per_token_layer(shape: ModelShape, layout: Layout) -> float:
    """What an offloading policy (`Layout.host_activations`) sends to host memory per token and layer: each
    layer's checkpointed input (full_offload) or everything it saves (offload)."""
    if layout.recompute == "full_offload":
        return checkpoint_bytes_per_token_layer(shape, layout)
    return activation_bytes_per_token_layer(shape, layout)


def activation_bytes_per_token_layer(shape: ModelShape, layout: Layout) -> float:
    """Stored activation bytes per token per layer on one GPU without full recomputation
    (module docstring; FSDP's "selective" is the op-level policy)."""
    h, t = shape.hidden, layout.tp
    ffn_mult = 3.0 if shape.gated else 2.0
    ffn_width = shape.ffn_width(layout.capacity_factor)  # the routed experts' padded to their capacity
    sp = layout.sequence_parallel or t == 1
    if layout.recompute == "selective" and layout.framework == "fsdp":
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
    if sp and t > 1 and layout.framework == "fsdp" and layout.recompute != "selective":
        # DTensor tensor parallelism (torchtitan) all-gathers the sequence-sharded norm outputs before
        # the column-parallel QKV and FFN-in projections, and autograd saves the gathered tensor for their
        # weight gradients; Megatron saves its local shard and re-gathers it in the backward pass.
        elements += 2.0 * h * (1.0 - 1.0 / t)
    if layout.precision == "fp8" and layout.framework == "megatron" and layout.recompute != "full":
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


def chunk_layers(layers: int, layout: Layout) -> int:
    """Layers of the largest model chunk: a pipeline stage, or one of its virtual stages."""
    stage = math.ceil(layers / layout.pp)
    return math.ceil(stage / layout.virtual_pipeline)


def recomputed_layers(layout: Layout, stage_layers: int) -> int:
    """Layers of a stage whose activations are recomputed: all of them under full recomputation, or
    `recompute_layers` of each of the stage's `virtual_pipeline` chunks under Megatron's block method."""
    if layout.recompute not in FULL_RECOMPUTE:
        return 0
    if layout.recompute_layers is None:
        return stage_layers
    return min(stage_layers, layout.recompute_layers * layout.virtual_pipeline)


def in_flight_micro_batches(layout: Layout, rank: int = 0) -> float:
    """Micro-batches' worth of activations pipeline stage `rank` holds at its peak: its warm-up forwards
    and the one before its first backward, never more than the step has (Megatron-LM schedules.py:
    2(p - rank - 1) + (v - 1) p warm-up chunks when interleaved, p - rank - 1 micro-batches with 1F1B,
    capped at m v)."""
    if layout.pp == 1:
        return 1.0
    return held_chunks(layout.pp, layout.virtual_pipeline, layout.micro_batches, rank) / layout.virtual_pipeline


def memory_per_gpu(shape: ModelShape, method: str, layout: Layout, gpu_memory_gib: float,
                   host_gib_per_gpu: float | None = None) -> MemoryResult:
    """Peak memory per GPU in GiB on the pipeline stage with the highest total. `gpu_memory_gib`: what the
    layout may use, above which a paged optimizer's states are evicted to the host (a search passes its usable
    memory, so the layout it times is the one it reports). `host_gib_per_gpu`: host memory free for offloading
    per GPU as declared (an owned pool's), else HOST_MEMORY_GIB_PER_GPU assumed."""
    host_cap = HOST_MEMORY_GIB_PER_GPU if host_gib_per_gpu is None else host_gib_per_gpu
    host_said = "assumed" if host_gib_per_gpu is None else "declared"
    t, p, z = layout.tp, layout.pp, layout.zero
    d = layout.state_shards
    adapters = method in ADAPTER_METHODS
    first_layers, mid_layers, last_layers = stage_layers(shape.layers, p)
    notes: list[str] = []

    tokens_mb = layout.micro_batch * layout.seq_len / layout.cp
    act_token_layer = activation_bytes_per_token_layer(shape, layout)
    sp = layout.sequence_parallel or t == 1
    checkpoint = checkpoint_bytes_per_token_layer(shape, layout) * tokens_mb
    working = 0.0
    if layout.recompute == "full":
        per_layer_mb = checkpoint
        working = act_token_layer * tokens_mb  # one layer re-materialised at a time
    elif layout.host_activations:
        # every saved tensor (offload) or each layer's checkpoint (full_offload, which re-materialises one
        # layer at a time as well) goes to host memory once its layer's forward is done, as far as the host
        # has room, and comes back for the backward pass; two layers' worth are in flight over PCIe
        to_host = host_bytes_per_token_layer(shape, layout) * tokens_mb
        working = OFFLOAD_RESIDENT_LAYERS * to_host + (act_token_layer * tokens_mb
                                                       if layout.recompute == "full_offload" else 0.0)
        offloaded = to_host * shape.layers / layout.pp * in_flight_micro_batches(layout)
        per_layer_mb = max(0.0, offloaded - host_cap * GIB) / max(1, shape.layers // layout.pp)
        offloaded_gib = offloaded / GIB
        what = "checkpointed layer inputs" if layout.recompute == "full_offload" else "saved activations"
        left = f"; the other {offloaded_gib - host_cap:.1f} GiB stay on the GPU" if offloaded_gib > host_cap else ""
        notes.append(f"activations in host memory: {min(offloaded_gib, host_cap):.1f} GiB of {what} per GPU (each "
                     f"server needs that much free RAM per GPU; at most {host_cap:g} GiB per GPU {host_said}{left})")
    else:
        per_layer_mb = act_token_layer * tokens_mb

    def chunk_act(layers: float) -> float:
        """One micro-batch's stored activations on a model chunk of `layers` layers: under block
        recomputation `recompute_layers` of them keep only their inputs, the others everything."""
        if layout.recompute != "full":
            return per_layer_mb * layers
        k = layers if layout.recompute_layers is None else min(layers, layout.recompute_layers)
        return k * per_layer_mb + (layers - k) * act_token_layer * tokens_mb

    # The loss phase: the logits and the loss's buffers, and the final norm's output that the output
    # projection saves (Megatron keeps its sequence-parallel shard; DTensor and tp = 1 keep it whole).
    head_input_div = t if sp and layout.framework != "fsdp" else 1
    loss_phase = (_loss_bytes(shape, adapters, layout, tokens_mb)
                  + tokens_mb * 2.0 * shape.hidden / head_input_div)
    # With re-materialised layers the logits and the loss buffers are freed once the backward pass has
    # gone through the output layer (torchtitan `del pred`, torchtune `del logits`, Megatron's loss
    # scope), before the first layer is recomputed: the last stage peaks at its checkpoints plus the
    # larger of the two phases (its working layer counted as activations only where it is larger).
    logits = loss_phase
    working_last = max(0.0, working - loss_phase)
    # PyTorch's cross-entropy on upcast logits: the caching allocator holds one fp32 logit-sized block more
    # than is allocated at the loss (UPCAST_LOGIT_RESERVED_BYTES)
    upcast_reserved = (tokens_mb * shape.vocab / t * UPCAST_LOGIT_RESERVED_BYTES
                       if layout.loss == "plain"
                       and _logit_bytes(layout) in (LOGIT_BYTES_FP32_LOSS, LOGIT_BYTES_VOCAB_PARALLEL_EAGER) else 0.0)
    # torch.distributed.pipelining's last stage keeps every micro-batch's output for the merged return of
    # `schedule.step()` (`stage.output_chunks`, cleared only when the next step starts), and torchtitan's
    # model returns its logits in fp32: the other micro-batches' logits are held beside this one's loss.
    # (A fused linear loss runs outside the model, which then returns its 16-bit final hidden states.)
    output_bytes = (shape.hidden * WEIGHT_BYTES if layout.loss == "fused"
                    else shape.vocab * KEPT_OUTPUT_LOGIT_BYTES)
    kept_outputs = (max(0, layout.micro_batches - 1) * tokens_mb * output_bytes / t
                    if layout.framework == "fsdp" and p > 1 else 0.0)
    logits += kept_outputs
    # torch.distributed.pipelining caches each in-flight micro-batch's stage output for its backward
    # (`fwd_cache`); Megatron frees the output's data once sent (`deallocate_output_tensor`).
    stage_output = checkpoint if layout.framework == "fsdp" and p > 1 else 0.0

    def held(layers: int, rank: int, edge: str) -> float:
        """What stage `rank` of `layers` layers holds at its peak: its schedule's chunk-forwards not yet
        run backward (schedule.py), each with its own layers and (torch pipelining) its output."""
        chunks = stage_chunk_layers(layers, mid_layers, layout.virtual_pipeline, edge)
        outputs = [stage_output] * len(chunks)
        if edge == "last":
            outputs[-1] = 0.0  # the model's last chunk outputs the loss
        return held_peak(tuple(chunk_act(c) + out for c, out in zip(chunks, outputs, strict=True)), p,
                         layout.micro_batches, rank)

    # (layers, parameters, activation bytes, holds the output layer) per candidate peak stage
    embed, head = shape.embed_params / t, shape.head_params / t
    per_layer = shape.layer_params_per_gpu(t, layout.ep)
    stages: list[tuple[int, float, float, bool]] = []
    if p == 1:
        stages.append((shape.layers, per_layer * shape.layers + embed + head,
                       chunk_act(shape.layers) + working_last + logits, True))
    else:
        stages.append((first_layers, per_layer * first_layers + embed, held(first_layers, 0, "first") + working,
                       False))
        if p > 2:  # the second stage: one micro-batch (two chunks when interleaved) fewer, unless capped
            stages.append((mid_layers, per_layer * mid_layers, held(mid_layers, 1, "middle") + working, False))
        # the last stage: one micro-batch with 1F1B, (v - 1) pp + 1 chunks when interleaved; the logits of one
        last_params = per_layer * last_layers + head + (embed if shape.tied else 0.0)
        stages.append((last_layers, last_params, held(last_layers, p - 1, "last") + working_last + logits, True))

    results = []
    host_gib = 0.0
    for layers_stage, params_stage, act_bytes, is_last in stages:
        weights, grads, optim, offload = _states(shape, method, layout, params_stage, layers_stage)
        if layout.state_offload:  # the shards live in host memory; only the gathered layers below are here.
            # FSDP offloads all or nothing: states the host cannot hold (host_cap) stay whole
            states = weights + grads + optim + offload
            host_gib = max(host_gib, states)
            if states <= host_cap:
                weights = grads = optim = offload = 0.0
        logits_gib = logits / GIB if is_last else 0.0
        act_gib = act_bytes / GIB - logits_gib
        other = CUDA_CONTEXT_GIB + (NCCL_BUFFERS_GIB if layout.gpus > 1 else 0.0)
        gathered = 0.0
        if z == 3 and (d > 1 or layout.state_offload):
            gathered = _gathered_layer_bytes(shape, method, layout)
            other += 2 * gathered / GIB  # current + prefetched layer
            if layout.framework == "fsdp":
                # FSDP keeps the root module's own parameters (embedding, output layer) gathered from
                # forward to backward: the root does not reshard after forward (FSDP2 `fully_shard`
                # docs; torchtitan and llm-foundry wrap each block, then the root).
                other += (params_stage - per_layer * layers_stage) * WEIGHT_BYTES / GIB
        dequantized = _largest_linear(shape) / t * WEIGHT_BYTES if method in QLORA_METHODS else 0.0
        other += dequantized / GIB  # QLoRA: the dequantized copy of the weight a matmul is using
        if is_last and working > 0:
            # Re-materialised layers: the layer phase (the layer being recomputed and run backward, the one
            # prefetched, QLoRA's dequantized copy) and the loss phase never coincide; at the loss at most
            # one layer is gathered (torchtitan keeps the last block gathered, the backward prefetches it).
            layer_side = 2 * gathered + dequantized
            summed = max(loss_phase, working) + layer_side
            other -= (summed - max(loss_phase + gathered, working + layer_side)) / GIB
        other += logits_gib + ALLOCATOR_FRAGMENTATION * (act_gib + logits_gib)
        # the upcast logits' block the allocator holds at the loss, where the working layer does not
        held_gib = (max(0.0, upcast_reserved - ALLOCATOR_FRAGMENTATION * loss_phase - working_last) / GIB
                    if is_last else 0.0)
        other += held_gib
        results.append([weights, grads, optim, act_gib, other, offload, logits_gib, held_gib])
    totals = [sum(r[:5]) for r in results]
    peak = max(range(len(results)), key=totals.__getitem__)
    # what the allocator gives back at the card's limit: its cached share of the changing tensors
    squeezed = [(ALLOCATOR_FRAGMENTATION - ALLOCATOR_FRAGMENTATION_AT_LIMIT) * (r[3] + r[6]) for r in results]
    floors = [stage_total - cut for stage_total, cut in zip(totals, squeezed, strict=True)]
    weights, grads, optim, act_gib, other, offload, loss_gib, allocator_gib = results[peak]
    peak_stage = (0 if peak == 0 else p - 1 if stages[peak][3] else 1, stages[peak][0]) if p > 1 else None
    kept_gib = kept_outputs / GIB if peak_stage and peak_stage[0] == p - 1 else 0.0  # held by the last stage
    if loss_gib - kept_gib >= 0.5:
        freed = (" (freed before the backward pass reaches the layers: the peak holds the larger of the loss and "
                 "the layer being recomputed or fetched back, with its gathered weights)" if working > 0 else "")
        holds = ("a chunk of tokens' logits at a time, the gradient of its input" if layout.loss == "fused" else
                 f"the logits at {_logit_bytes(layout):g} B per element")
        leaner = ("" if layout.loss == "fused" or layout.framework == "megatron" else
                  "; a fused linear cross-entropy (--loss fused, a job's loss: fused) never holds the whole logits"
                  + ("" if layout.loss == "chunked" else
                     f", a chunked one (--loss chunked) holds {WEIGHT_BYTES + LOSS_CHUNK_GRAD_BYTES / LOSS_CHUNKS:g} B "
                     "per element"))
        allocator = (f" (and {allocator_gib:.1f} GiB more that PyTorch's caching allocator holds beside the upcast "
                     "logits: an fp32 logit-sized block)" if allocator_gib >= 0.05 else "")
        notes.append(f"memory: 'other' includes {loss_gib - kept_gib:.1f} GiB for the loss{allocator}, {holds} and the "
                     f"output layer's input{freed}{leaner}")
    if kept_gib >= 0.05:
        kept = "final hidden states" if layout.loss == "fused" else "logits"
        notes.append(f"memory: 'other' includes {kept_gib:.1f} GiB of {kept} that torch pipelining keeps on the "
                     f"last stage, {layout.micro_batches - 1} micro-batches' outputs held for step()'s merged "
                     "return until the step ends")

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
                         f"host memory (keeping them all would pass the {gpu_memory_gib:.1f} GiB this layout may use) "
                         "and cross PCIe every step")
    if layout.optimizer == "adam_bf16":
        notes.append("optimizer adamw-bf16: weights, gradients and AdamW's moments in BF16 with no fp32 master copy "
                     "(torchtune's default): 8 bytes per trained parameter, not 16; updates below BF16's "
                     "resolution are lost")
    if adapters:
        notes.append("LoRA: base weights frozen (no gradients or optimizer states for them)")
    if layout.state_offload:
        if host_gib > host_cap:
            notes.append(f"{HOST_SHORTFALL_NOTE}{host_gib:.1f} GiB of model states per GPU exceed the "
                         f"{host_cap:g} GiB of host memory per GPU {host_said} free; they stay on the GPU")
        else:
            notes.append(f"CPU offload: {host_gib:.1f} GiB of sharded parameters, gradients and optimizer states per "
                         f"GPU live in host memory (each server needs that much free RAM per GPU; at most "
                         f"{host_cap:g} GiB per GPU {host_said}); each layer's shard crosses PCIe "
                         "before its gather, its gradient shard after its reduction, and the optimizer steps on the "
                         "CPU")
    total = weights + grads + optim + act_gib + other
    floors[peak] = total - squeezed[peak]  # (the paged optimizer's resident states included)
    return MemoryResult(MemoryBreakdown(weights, grads, optim, act_gib, other, total), paged_params,
                        tuple(notes), peak_stage, max(floors))


def pipeline_peak_note(layers: int, layout: Layout, peak_stage: tuple[int, int]) -> str:
    """Which pipeline stage peaks (`MemoryResult.peak_stage`) and how many micro-batches' activations its
    schedule holds there."""
    p, v = layout.pp, layout.virtual_pipeline
    rank, peak_layers = peak_stage
    edge = "first" if rank == 0 else "last" if rank == p - 1 else "middle"
    chunks = stage_chunk_layers(peak_layers, stage_layers(layers, p)[1], v, edge)
    held_layers = held_peak(chunks, p, layout.micro_batches, rank)
    schedule = f"interleaved 1F1B, {v} chunks per stage" if v > 1 else "1F1B"
    return (f"pipeline ({schedule}, {layout.micro_batches} micro-batches per step): stage {rank + 1} of {p} "
            f"peaks, {peak_layers} of the {layers} layers, holding the activations of "
            f"{held_layers / peak_layers:.3g} micro-batches at once")


def grad_buffer_bytes(layout: Layout) -> float:
    """Bytes per parameter of the gradient buffers a stack accumulates into and reduces: Megatron-LM's
    fp32 `main_grad` under bf16 and FP8 (megatron/training/arguments.py turns
    accumulate_allreduce_grads_in_fp32 on for bf16; fp16 runs keep fp16 buffers), the precision-aware
    optimizer's bf16 ones, 16-bit gradients in the other stacks."""
    if layout.optimizer == "adam_precision_aware":
        return PRECISION_AWARE_GRAD_BYTES
    if layout.framework == "megatron" and layout.precision != "fp16":
        return MEGATRON_GRAD_BYTES
    return GRAD_BYTES


def states_floor_gib(shape: ModelShape, method: str, layout: Layout) -> float:
    """A lower bound on `memory_per_gpu(...).breakdown.total_gib` from the model states alone: the
    first stage's weights, gradients and resident optimizer states (every stage's peak holds at least
    its own). Neither recomputation nor virtual stages change it; the micro-batch size only through
    the number of micro-batches (FSDP SHARD_GRAD_OP's unsharded accumulation)."""
    if layout.state_offload:  # (the states may all be on the host)
        return 0.0
    first_layers = stage_layers(shape.layers, layout.pp)[0]
    params = shape.layer_params_per_gpu(layout.tp, layout.ep) * first_layers + shape.embed_params / layout.tp
    if layout.pp == 1:
        params += shape.head_params / layout.tp
    weights, grads, optim, _ = _states(shape, method, layout, params, first_layers)
    return weights + grads + optim


def _loss_bytes(shape: ModelShape, adapters: bool, layout: Layout, tokens: float) -> float:
    """What the cross-entropy holds at its peak for one micro-batch of `tokens` tokens, beyond the output
    layer's input: the logits at `_logit_bytes`, or a fused linear cross-entropy's buffers.

    A fused linear cross-entropy (`loss` "fused"; Liger-Kernel's src/liger_kernel/ops/
    fused_linear_cross_entropy.py `fused_linear_cross_entropy_forward`, read, not measured) runs the whole
    loss in the forward pass: it allocates the gradient of its input (tokens x hidden, 16-bit), an fp32 loss
    per token and, where the output layer is trained, the gradient of its weight (vocab x hidden, 16-bit),
    then takes chunks of `fused_loss_chunk_rows` tokens, computes their logits (16-bit), writes the
    cross-entropy's gradient over them in place and adds its products into the two gradients. Only one
    chunk's logits exist at a time. Apple's Cut Cross-Entropy (Unsloth) holds less: no chunk of logits
    outside on-chip memory; Liger's figure is the one counted."""
    if layout.loss != "fused":
        return tokens * shape.vocab / layout.tp * _logit_bytes(layout)
    rows = min(tokens, fused_loss_chunk_rows(tokens, shape.vocab, shape.hidden))
    held = (rows * shape.vocab / layout.tp * WEIGHT_BYTES  # one chunk's logits, then their gradient
            + tokens * shape.hidden * WEIGHT_BYTES  # the gradient of the output layer's input
            + tokens * FUSED_LOSS_BYTES_PER_TOKEN)
    if not adapters:  # the output layer's weight gradient, computed in the forward pass (tied: the embedding's)
        held += (shape.embed_params if shape.tied else shape.head_params) / layout.tp * WEIGHT_BYTES
    return held


def fused_loss_chunk_rows(tokens: float, vocab: int, hidden: int) -> int:
    """Tokens per chunk of Liger's fused linear cross-entropy: the power of two at or above
    tokens / ceil(vocab / hidden), so that a chunk's logits are about as large as the hidden states of the
    whole micro-batch (`fused_linear_cross_entropy_forward`: inc_factor, chunk_size)."""
    per_chunk = math.ceil(tokens / math.ceil(vocab / hidden))
    return 1 << max(0, math.ceil(math.log2(max(1, per_chunk))))


def _logit_bytes(layout: Layout) -> float:
    """Bytes per logit element at the loss's peak (factors.py): Megatron's fused vocab-parallel cross
    entropy (Megatron, and Megatron-DeepSpeed under tp > 1), PyTorch's eager `loss_parallel` under
    FSDP with tp > 1, PyTorch's cross-entropy on upcast logits otherwise (Hugging Face models under
    DeepSpeed or FSDP, torchtitan); a fused or compiled chunked loss keeps the bf16 logits and one
    chunk's gradient."""
    if layout.loss == "chunked":
        return WEIGHT_BYTES + LOSS_CHUNK_GRAD_BYTES / LOSS_CHUNKS
    if layout.framework == "megatron" or (layout.framework == "deepspeed" and layout.tp > 1):
        return LOGIT_BYTES
    return LOGIT_BYTES_VOCAB_PARALLEL_EAGER if layout.tp > 1 else LOGIT_BYTES_FP32_LOSS


def _largest_linear(shape: ModelShape) -> float:
    """Parameters of the largest single weight matrix of a layer (one expert's for MoE)."""
    ffn = shape.ffn_width_active / max(1, shape.moe_active) if shape.is_moe else shape.ffn
    return float(max(shape.hidden * shape.q_dim, shape.hidden * ffn))


def _gathered_layer_bytes(shape: ModelShape, method: str, layout: Layout) -> float:
    """Bytes of one layer as ZeRO-3/FSDP gathers it (4-bit base weights for QLoRA)."""
    params = shape.layer_params_per_gpu(layout.tp, layout.ep)
    if method in QLORA_METHODS:
        linear = shape.layer_linear_total / layout.tp
        return linear * QLORA_BITS_PER_PARAM / 8 + (params - linear) * WEIGHT_BYTES
    return params * WEIGHT_BYTES


def _states(shape: ModelShape, method: str, layout: Layout, params_stage: float,
            layers_stage: int) -> tuple[float, float, float, float]:
    """(weights, gradients, optimizer, pageable optimizer) GiB for one stage's parameters. Routed
    experts split over ep ranks are sharded by ZeRO over the remaining dp x cp / ep ranks; under hybrid
    sharding everything over the shard group (`Layout.state_shards`)."""
    if layout.ep > 1 and method not in ADAPTER_METHODS:
        experts = shape.layer_expert_params / layout.tp / layout.ep * layers_stage
        dense = _states_group(shape, method, layout, params_stage - experts, layers_stage, layout.state_shards,
                              (shape.layer_params - shape.layer_expert_params) / layout.tp)
        routed = _states_group(shape, method, layout, experts, layers_stage,
                               max(1, layout.state_shards // layout.ep), experts / max(1, layers_stage))
        return (dense[0] + routed[0], dense[1] + routed[1], dense[2] + routed[2], dense[3] + routed[3])
    return _states_group(shape, method, layout, params_stage, layers_stage, layout.state_shards,
                         shape.layer_params / layout.tp)


def _states_group(shape: ModelShape, method: str, layout: Layout, params_stage: float,
                  layers_stage: int, d: int, layer_params: float) -> tuple[float, float, float, float]:
    """`_states` for one group of parameters sharded over `d` ranks; `layer_params`: one layer's of them on
    this GPU (what an optimizer stepped inside the backward pass holds gradients for)."""
    t, z = layout.tp, layout.zero
    if method in ADAPTER_METHODS:
        if method in QLORA_METHODS:
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
        # full DPO: a frozen 16-bit reference copy, sharded like the weights (no gradients or states)
        weights += reference_weight_copies(method) * params_stage * WEIGHT_BYTES / (d if z == 3 else 1)
    state_bytes = OPTIMIZER_STATE_BYTES.get(layout.optimizer, OPTIMIZER_STATE_BYTES["adam"])
    pageable = 0.0
    if layout.optimizer in FUSED_STEP_OPTIMIZERS:
        # The step runs inside the backward pass, so only about one layer's gradients exist at a time
        # (one layer's adapters under LoRA).
        # (under ZeRO-2/3 each layer's gradients are reduce-scattered before its step: its shard is held)
        one_layer = trainable / max(1, layers_stage) if method in ADAPTER_METHODS else layer_params
        grads = min(trainable, one_layer) * GRAD_BYTES / (d if z >= 2 else 1)
        optim = trainable * state_bytes / (d if z >= 1 else 1)
        if layout.optimizer == "paged_adam_8bit":
            pageable, optim = optim, 0.0
    else:
        grad_bytes = grad_buffer_bytes(layout)
        # FSDP SHARD_GRAD_OP reduce-scatters once per step (no_sync), so with gradient accumulation
        # the gradients are held unsharded until the last micro-batch, in the fp32 reduce dtype of
        # FSDP2's usual mixed-precision policy (torchtitan: reduce_dtype float32). Over one rank there is
        # nothing to shard or defer, and SHARD_GRAD_OP holds what NO_SHARD holds.
        unsharded = layout.framework == "fsdp" and z == 2 and layout.micro_batches > 1 and d > 1
        if unsharded and layout.optimizer != "adam_bf16":  # (pure BF16 reduces in BF16)
            grad_bytes = FSDP_ACCUMULATED_GRAD_BYTES
        grads = trainable * grad_bytes / (d if z >= 2 and not unsharded else 1)
        optim = trainable * state_bytes / (d if z >= 1 else 1)
    return weights / GIB, grads / GIB, optim / GIB, pageable / GIB
