"""Peak memory per GPU: weights, gradients, optimizer states, activations, other.

One function per term: the model states (`stage_states`, model_states.py), the activations a
pipeline stage holds (`_micro_batch`, `_stages`; bytes per token and layer in activations.py), the
loss phase (`loss_phase_bytes`, `kept_output_bytes`, `upcast_reserve_bytes`) and what `other`
counts besides (`cuda_context_gib`, `nccl_buffers_gib`, `zero3_prefetch_gib`, `fsdp_root_gib`,
`qlora_dequantized_bytes`, `recompute_overlap_gib`, `fragmentation_gib`, `upcast_reserve_gib`), with
the paged optimizer's eviction (`paged_optimizer`). `memory_per_gpu` sums them per stage and keeps
the stage with the highest total; memory_notes.py words the result.

Pipelines: stages hold ceil(L/pp) layers; where pp does not divide L the first and last stages take
the shortfall (one layer fewer each, as Llama 3 405B did for its embedding and output layer). With
1F1B the first stage holds min(pp, m) micro-batches in flight; interleaved with v virtual stages its
warm-up holds pp(v+1) - 1 chunks of 1/v stage (Narayanan et al. 2021; Megatron-LM schedules.py),
i.e. pp + (pp - 1)/v micro-batches' worth, and the last stage (v - 1) pp + 1 chunks (one micro-batch
with 1F1B). The embedding and the loss stand in for the missing layer in the first chunk of the
first stage and the last chunk of the last one, so what a stage holds is summed chunk by chunk over
its schedule (schedule.py): Llama 3 405B's first stage, 8 chunks of which the first holds only the
embedding, keeps 112 layers of 32 micro-batches at its peak, not 125.

The loss phase (last stage): the logits at the bytes per element that the stack's cross-entropy
holds (factors.py: Megatron's fused vocab-parallel loss, PyTorch's eager `loss_parallel` under tp >
1, the fused single-GPU kernel, or a chunked loss; a fused linear cross-entropy holds one chunk of
tokens' logits and the gradient of its input instead, `_loss_bytes`) and the final norm's output
that the output layer saves. Under full recomputation (and either offload) it and the
re-materialised layer are never alive together: the logits are freed once the backward pass has gone
through the output layer, before the first layer is recomputed, so the stage peaks at its
checkpoints plus the larger of the two.

What the PyTorch stacks ("fsdp") hold besides: DTensor tensor parallelism saves the all-gathered
(sequence-parallel) norm outputs for the QKV and FFN-in projections, where Megatron saves its shard
and re-gathers; FSDP keeps the root module (embedding, output layer) gathered from forward to
backward; torch.distributed.pipelining caches each in-flight micro-batch's stage output for its
backward, and its last stage keeps every micro-batch's output (torchtitan: fp32 logits) for step()'s
merged return until the step ends (KEPT_OUTPUT_LOGIT_BYTES).

At the edges (long contexts, QLoRA): a re-materialised or fetched-back layer holds, beside what it
saved, the gradients its backward pass computes (`backward_gradient_bytes_per_token`); a QLoRA model
prepared by peft under autocast holds its unquantized weights, its residual stream (each checkpoint)
and the final norm's output in fp32 and a 16-bit autocast copy of its output layer at the loss
(model_states.py `upcasts_unquantized`, `autocast_head_copy_bytes`).

Other: the loss phase, CUDA context, NCCL buffers, ZeRO-3 prefetch buffers (two layers), QLoRA's
dequantized matrix and allocator fragmentation (factors.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from plan.models.stacks import stack_of
from plan.planner.estimate.activations import (
    EAGER_LORA_EXTRA_PER_HIDDEN,
    EAGER_NORM_EXTRA_PER_HIDDEN,
    activation_bytes_per_token_layer,
    backward_gradient_bytes_per_token,
    checkpoint_bytes_per_token_layer,
    chunk_layers,
    host_bytes_per_token_layer,
    in_flight_micro_batches,
    recomputed_layers,
)
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
from plan.planner.estimate.memory_notes import HOST_SHORTFALL_NOTE, MemoryFacts, memory_notes
from plan.planner.estimate.model_states import (
    ADAM_8BIT_STATE_BYTES,
    FSDP_ACCUMULATED_GRAD_BYTES,
    FUSED_STEP_OPTIMIZERS,
    GRAD_BYTES,
    MEGATRON_GRAD_BYTES,
    OPTIMIZER_STATE_BYTES,
    PRECISION_AWARE_GRAD_BYTES,
    WEIGHT_BYTES,
    grad_buffer_bytes,
    stage_states,
    unquantized_weight_bytes,
)
from plan.planner.estimate.schedule import held_chunks, held_peak, stage_chunk_layers
from plan.planner.estimate.types import ADAPTER_METHODS, QLORA_METHODS, Layout, MemoryBreakdown
from plan.planner.i18n.said import say

__all__ = [  # (what other modules import from here, activations.py's and model_states.py's too)
    "ADAM_8BIT_STATE_BYTES", "EAGER_LORA_EXTRA_PER_HIDDEN", "EAGER_NORM_EXTRA_PER_HIDDEN",
    "FSDP_ACCUMULATED_GRAD_BYTES", "FUSED_STEP_OPTIMIZERS", "GRAD_BYTES", "HOST_MEMORY_GIB_PER_GPU",
    "HOST_SHORTFALL_NOTE", "MEGATRON_GRAD_BYTES", "OFFLOAD_RESIDENT_LAYERS",
    "OPTIMIZER_STATE_BYTES",
    "PRECISION_AWARE_GRAD_BYTES", "WEIGHT_BYTES", "MemoryResult", "_logit_bytes",
    "activation_bytes_per_token_layer", "checkpoint_bytes_per_token_layer", "chunk_layers",
    "fused_loss_chunk_rows", "grad_buffer_bytes", "host_bytes_per_token_layer",
    "in_flight_micro_batches", "memory_per_gpu", "pipeline_peak_note", "recomputed_layers",
    "stage_layers", "states_floor_gib",
]

HOST_MEMORY_GIB_PER_GPU = 128.0
"""Host memory per GPU that activation offloading may fill: a DGX A100 has 1 TB for 8 GPUs, a DGX
H100 2 TB (NVIDIA datasheets); rental and consumer nodes often less. 128 GiB per GPU is assumed;
what the host cannot take stays on the GPU."""

OFFLOAD_RESIDENT_LAYERS = 2
"""Layers of activations on the GPU under activation offloading: the one computing and the one being
copied out (forward) or prefetched back (backward)."""


@dataclass(frozen=True, slots=True)
class MemoryResult:
    breakdown: MemoryBreakdown
    paged_offload_params: float  # optimizer parameters whose states were paged to host memory
    # what the notes are written from: only the chosen layout's are read, so a search's thousands of
    # memory estimates do not write them (`notes`)
    facts: MemoryFacts
    # (rank, layers) of the pipeline stage that peaks; None without pp
    peak_stage: tuple[int, int] | None = None
    # the least the run needs, its caching allocator squeezed at the card's limit
    # (ALLOCATOR_FRAGMENTATION_AT_LIMIT)
    floor_gib: float = 0.0

    @property
    def notes(self) -> tuple[str, ...]:
        """What the estimate should say about its memory (memory_notes.py)."""
        return memory_notes(self.facts)


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


class _MicroBatch(NamedTuple):
    """One micro-batch's activation bytes on one GPU (`_micro_batch`)."""

    tokens: float  # tokens per micro-batch on this GPU (divided by cp)
    per_token_layer: float  # what a layer stores per token without full recomputation
    per_layer: float  # what a stored layer keeps on the GPU for this micro-batch
    working: float  # the layer re-materialised (or in flight over PCIe); 0 without recomputation
    checkpoint: float  # one layer's input (a stage's output under torch pipelining)
    offloaded: float | None  # bytes an offloading policy sends to the host; None without offloading

    def chunk(self, layout: Layout, layers: float) -> float:
        """One micro-batch's stored activations on a model chunk of `layers` layers: under block
        recomputation `recompute_layers` of them keep only their inputs, the others everything."""
        if layout.recompute != "full":
            return self.per_layer * layers
        k = layers if layout.recompute_layers is None else min(layers, layout.recompute_layers)
        return k * self.per_layer + (layers - k) * self.per_token_layer * self.tokens


def _micro_batch(shape: ModelShape, layout: Layout, host_cap: float,
                 residual_bytes: float = WEIGHT_BYTES) -> _MicroBatch:
    """Activations per micro-batch (activations.py) under the recomputation policy:
    - full: each layer keeps its input (`checkpoint_bytes_per_token_layer`), one layer
      re-materialised;
    - offload / full_offload (`Layout.host_activations`): every saved tensor or each layer's
      checkpoint goes to host memory once its layer's forward is done, as far as `host_cap` GiB has
      room, and comes back for the backward pass; OFFLOAD_RESIDENT_LAYERS layers' worth are in
      flight over PCIe (full_offload re-materialises one layer at a time as well);
    - otherwise every layer keeps `activation_bytes_per_token_layer`.
    Where a layer is re-materialised or fetched back, its backward pass's gradients
    (`backward_gradient_bytes_per_token`) are part of the working layer. `residual_bytes`: bytes per
    element of the residual stream, what each checkpoint holds (fp32 where
    `upcasts_unquantized`)."""
    tokens_mb = layout.micro_batch * layout.seq_len / layout.cp
    act_token_layer = activation_bytes_per_token_layer(shape, layout)
    residual_scale = residual_bytes / WEIGHT_BYTES
    checkpoint = checkpoint_bytes_per_token_layer(shape, layout) * tokens_mb * residual_scale
    backward = backward_gradient_bytes_per_token(shape, layout, residual_bytes) * tokens_mb
    working = 0.0
    offloaded = None
    if layout.recompute == "full":
        per_layer_mb = checkpoint
        working = act_token_layer * tokens_mb + backward  # one layer re-materialised at a time
    elif layout.host_activations:
        to_host = host_bytes_per_token_layer(shape, layout) * tokens_mb
        if layout.recompute == "full_offload":
            to_host *= residual_scale
        recomputed = act_token_layer * tokens_mb if layout.recompute == "full_offload" else 0.0
        working = OFFLOAD_RESIDENT_LAYERS * to_host + recomputed + backward
        offloaded = to_host * shape.layers / layout.pp * in_flight_micro_batches(layout)
        per_layer_mb = max(0.0, offloaded - host_cap * GIB) / max(1, shape.layers // layout.pp)
    else:
        per_layer_mb = act_token_layer * tokens_mb
    return _MicroBatch(tokens_mb, act_token_layer, per_layer_mb, working, checkpoint, offloaded)


def loss_phase_bytes(shape: ModelShape, adapters: bool, layout: Layout, tokens: float,
                     residual_bytes: float = WEIGHT_BYTES) -> float:
    """The loss phase of one micro-batch: the logits and the loss's buffers (`_loss_bytes`) and the
    final norm's output that the output projection saves (Megatron keeps its sequence-parallel
    shard; DTensor and tp = 1 keep it whole), at `residual_bytes` per element. Where the residual
    stream is fp32 (`upcasts_unquantized`) the output layer's weight is fp32 too, and autocast's
    16-bit copy of it, saved by the matmul for the input gradient, is held until the backward pass
    has gone through the output layer (`autocast_head_copy_bytes`)."""
    sp = layout.sequence_parallel or layout.tp == 1
    whole = stack_of(layout.framework).tensor_parallel_gathers_saved
    head_input_div = layout.tp if sp and not whole else 1
    head_copy = 0.0 if residual_bytes == WEIGHT_BYTES else autocast_head_copy_bytes(shape, layout)
    return (_loss_bytes(shape, adapters, layout, tokens) + head_copy
            + tokens * residual_bytes * shape.hidden / head_input_div)


def autocast_head_copy_bytes(shape: ModelShape, layout: Layout) -> float:
    """The 16-bit copy of an fp32 output layer that autocast makes for its matmul: a frozen weight's
    cast is not cached, and the matmul saves the copy for its input gradient (PyTorch autocast;
    the tied embedding where the model ties them)."""
    head = shape.embed_params if shape.tied else shape.head_params
    return head / layout.tp * WEIGHT_BYTES


def upcast_reserve_bytes(shape: ModelShape, layout: Layout, tokens: float) -> float:
    """PyTorch's cross-entropy on upcast logits: the caching allocator holds one fp32 logit-sized
    block more than is allocated at the loss (UPCAST_LOGIT_RESERVED_BYTES, factors.py)."""
    upcast = _logit_bytes(layout) in (LOGIT_BYTES_FP32_LOSS, LOGIT_BYTES_VOCAB_PARALLEL_EAGER)
    if layout.loss == "plain" and upcast:
        return tokens * shape.vocab / layout.tp * UPCAST_LOGIT_RESERVED_BYTES
    return 0.0


def kept_output_bytes(shape: ModelShape, layout: Layout, tokens: float) -> float:
    """What torch.distributed.pipelining's last stage keeps of the other micro-batches: every
    micro-batch's output for the merged return of `schedule.step()` (`stage.output_chunks`, cleared
    only when the next step starts); torchtitan's model returns its logits in fp32
    (KEPT_OUTPUT_LOGIT_BYTES), or with a fused linear loss, run outside the model, its 16-bit final
    hidden states. Megatron and pp = 1 keep none."""
    output_bytes = (shape.hidden * WEIGHT_BYTES if layout.loss == "fused"
                    else shape.vocab * KEPT_OUTPUT_LOGIT_BYTES)
    if stack_of(layout.framework).pipeline_caches_stage_outputs and layout.pp > 1:
        return max(0, layout.micro_batches - 1) * tokens * output_bytes / layout.tp
    return 0.0


def stage_output_bytes(layout: Layout, checkpoint: float) -> float:
    """torch.distributed.pipelining caches each in-flight micro-batch's stage output for its
    backward (`fwd_cache`): one layer input, `checkpoint` bytes; Megatron frees the output's data
    once sent (`deallocate_output_tensor`)."""
    caches = stack_of(layout.framework).pipeline_caches_stage_outputs
    return checkpoint if caches and layout.pp > 1 else 0.0


class _LossPhase(NamedTuple):
    """The last stage's loss phase, bytes per GPU (`_loss_phase`)."""

    loss: float  # loss_phase_bytes
    logits: float  # the loss phase and the kept outputs: counted in `other`, not activations
    kept: float  # kept_output_bytes
    working_last: float  # the working layer beyond the loss phase (counted only where it is larger)
    upcast: float  # upcast_reserve_bytes


def _loss_phase(shape: ModelShape, adapters: bool, layout: Layout, mb: _MicroBatch,
                residual_bytes: float = WEIGHT_BYTES) -> _LossPhase:
    """The loss phase terms. With re-materialised layers the logits and the loss buffers are freed
    once the backward pass has gone through the output layer (torchtitan `del pred`, torchtune `del
    logits`, Megatron's loss scope), before the first layer is recomputed: the last stage peaks at
    its checkpoints plus the larger of the two phases."""
    loss = loss_phase_bytes(shape, adapters, layout, mb.tokens, residual_bytes)
    kept = kept_output_bytes(shape, layout, mb.tokens)
    return _LossPhase(loss, loss + kept, kept, max(0.0, mb.working - loss),
                      upcast_reserve_bytes(shape, layout, mb.tokens))


class _Stage(NamedTuple):
    """A candidate peak stage."""

    layers: int
    params: float  # its parameters on this GPU
    activations: float  # bytes at its peak, the loss phase included on the last stage
    last: bool  # holds the output layer and the loss


def _stages(shape: ModelShape, layout: Layout, mb: _MicroBatch, loss: _LossPhase) -> list[_Stage]:
    """The stages that may peak: the only one without pp, else the first, the second (one
    micro-batch, two chunks when interleaved, fewer in flight unless capped) where pp > 2, and the
    last (one micro-batch with 1F1B, (v - 1) pp + 1 chunks when interleaved; the logits of one)."""
    t, p = layout.tp, layout.pp
    first_layers, mid_layers, last_layers = stage_layers(shape.layers, p)
    stage_output = stage_output_bytes(layout, mb.checkpoint)

    def held(layers: int, rank: int, edge: str) -> float:
        """What stage `rank` of `layers` layers holds at its peak: its schedule's chunk-forwards not
        yet run backward (schedule.py), each with its own layers and (torch pipelining) its output.
        """
        if layout.virtual_pipeline == 1:  # (one chunk: held_peak's closed form, without the sets)
            one = mb.chunk(layout, float(layers)) + (0.0 if edge == "last" else stage_output)
            return one * held_chunks(p, 1, layout.micro_batches, rank)
        chunks = stage_chunk_layers(layers, mid_layers, layout.virtual_pipeline, edge)
        stored = {c: mb.chunk(layout, c) for c in set(chunks)}  # (at most two sizes: once each)
        held = [stored[c] + stage_output for c in chunks]
        if edge == "last":
            held[-1] = stored[chunks[-1]] + 0.0  # the model's last chunk outputs the loss
        return held_peak(tuple(held), p, layout.micro_batches, rank)

    embed, head = shape.embed_params / t, shape.head_params / t
    per_layer = shape.layer_params_per_gpu(t, layout.ep)
    if p == 1:
        return [_Stage(shape.layers, per_layer * shape.layers + embed + head,
                       mb.chunk(layout, shape.layers) + loss.working_last + loss.logits, True)]
    stages = [_Stage(first_layers, per_layer * first_layers + embed,
                     held(first_layers, 0, "first") + mb.working, False)]
    if p > 2:
        stages.append(_Stage(mid_layers, per_layer * mid_layers,
                             held(mid_layers, 1, "middle") + mb.working, False))
    last_params = per_layer * last_layers + head + (embed if shape.tied else 0.0)
    stages.append(_Stage(last_layers, last_params,
                         held(last_layers, p - 1, "last") + loss.working_last + loss.logits, True))
    return stages


def cuda_context_gib() -> float:
    """CUDA context, cuBLAS/cuDNN workspaces and kernels (CUDA_CONTEXT_GIB, factors.py)."""
    return CUDA_CONTEXT_GIB


def nccl_buffers_gib(layout: Layout) -> float:
    """NCCL communicator buffers and DDP/ZeRO buckets where gpus > 1 (NCCL_BUFFERS_GIB, factors.py).
    """
    return NCCL_BUFFERS_GIB if layout.gpus > 1 else 0.0


def gathers_layers(layout: Layout) -> bool:
    """ZeRO-3/FSDP gathers each layer before use: its weights are sharded over more than one rank,
    or offloaded to the host."""
    return layout.zero == 3 and (layout.state_shards > 1 or layout.state_offload)


def gathered_layer_bytes(shape: ModelShape, method: str, layout: Layout) -> float:
    """One layer as ZeRO-3/FSDP gathers it where the weights are sharded (over more than one rank,
    or to the host): 16-bit weights, 4-bit base linear weights for QLoRA (Answer.AI FSDP+QLoRA,
    2024); 0 without ZeRO-3."""
    if not gathers_layers(layout):
        return 0.0
    params = shape.layer_params_per_gpu(layout.tp, layout.ep)
    if method in QLORA_METHODS:
        linear = shape.layer_linear_total / layout.tp
        return linear * QLORA_BITS_PER_PARAM / 8 + (params - linear) * WEIGHT_BYTES
    return params * WEIGHT_BYTES


def zero3_prefetch_gib(gathered: float) -> float:
    """ZeRO-3/FSDP's gathered layers: the current one and the one prefetched."""
    return 2 * gathered / GIB


def fsdp_root_gib(layout: Layout, stage: _Stage, per_layer: float) -> float:
    """FSDP keeps the root module's own parameters (embedding, output layer) gathered from forward
    to backward: the root does not reshard after forward (FSDP2 `fully_shard` docs; torchtitan and
    llm-foundry wrap each block, then the root). 0 unless the layers are gathered under FSDP."""
    if not gathers_layers(layout) or not stack_of(layout.framework).gathers_root_module:
        return 0.0
    return (stage.params - per_layer * stage.layers) * WEIGHT_BYTES / GIB


def qlora_dequantized_bytes(shape: ModelShape, method: str, layout: Layout) -> float:
    """QLoRA: the transient 16-bit copy of the weight a matmul is using, the largest single weight
    matrix of a layer (one expert's for MoE; Dettmers et al. 2023); 0 for other methods."""
    if method not in QLORA_METHODS:
        return 0.0
    ffn = shape.ffn_width_active / max(1, shape.moe_active) if shape.is_moe else shape.ffn
    return float(max(shape.hidden * shape.q_dim, shape.hidden * ffn)) / layout.tp * WEIGHT_BYTES


def recompute_overlap_gib(loss: _LossPhase, working: float, gathered: float,
                          dequantized: float) -> float:
    """What the last stage does not hold at once under re-materialised layers: the layer phase (the
    layer being recomputed and run backward, the one prefetched, QLoRA's dequantized copy) and the
    loss phase never coincide; at the loss at most one layer is gathered (torchtitan keeps the last
    block gathered, the backward prefetches it). Subtracted from `other`."""
    layer_side = 2 * gathered + dequantized
    summed = max(loss.loss, working) + layer_side
    return (summed - max(loss.loss + gathered, working + layer_side)) / GIB


def fragmentation_gib(act_gib: float, logits_gib: float) -> float:
    """The caching allocator's overhead on what changes size during a step, the activations and the
    logits (ALLOCATOR_FRAGMENTATION, factors.py)."""
    return ALLOCATOR_FRAGMENTATION * (act_gib + logits_gib)


def upcast_reserve_gib(loss: _LossPhase) -> float:
    """The upcast logits' block the allocator holds at the loss (`upcast_reserve_bytes`) beyond the
    fragmentation already counted on the loss phase, where the working layer does not cover it."""
    return max(0.0, loss.upcast - ALLOCATOR_FRAGMENTATION * loss.loss - loss.working_last) / GIB


class _StageMemory(NamedTuple):
    """One stage's memory in GiB: the breakdown's five parts, then what the peak's notes read."""

    weights: float
    grads: float
    optim: float
    act: float
    other: float
    pageable: float  # 8-bit Adam states a paged optimizer may evict (not in `optim`)
    logits: float  # the loss phase and kept outputs (in `other`)
    upcast: float  # upcast_reserve_gib (in `other`)


def resident_states(layout: Layout, states: tuple[float, float, float, float],
                    host_cap: float) -> tuple[tuple[float, float, float, float], float]:
    """(weights, gradients, optimizer, pageable) GiB left on the GPU, and what CPU offload sends to
    the host (0 without it): the shards live in host memory, only the gathered layers on the GPU;
    FSDP offloads all or nothing, so states the host cannot hold (`host_cap` GiB) stay whole."""
    if not layout.state_offload:
        return states, 0.0
    weights, grads, optim, offload = states
    total = weights + grads + optim + offload
    if total <= host_cap:
        return (0.0, 0.0, 0.0, 0.0), total
    return states, total


def _stage_memories(shape: ModelShape, method: str, layout: Layout, stages: list[_Stage],
                    mb: _MicroBatch, loss: _LossPhase, host_cap: float
                    ) -> list[tuple[_StageMemory, float]]:
    """Each stage's terms, summed in this order, and the model states CPU offload sends to the host
    (what every stage reads the same worked out once: a search asks this of many layouts)."""
    gathered = gathered_layer_bytes(shape, method, layout)
    per_layer = shape.layer_params_per_gpu(layout.tp, layout.ep)
    dequantized = qlora_dequantized_bytes(shape, method, layout)
    fixed_gib = cuda_context_gib() + nccl_buffers_gib(layout) + zero3_prefetch_gib(gathered)
    found = []
    for stage in stages:
        states = stage_states(shape, method, layout, stage.params, stage.layers)
        (weights, grads, optim, pageable), host_gib = resident_states(layout, states, host_cap)
        logits_gib = loss.logits / GIB if stage.last else 0.0
        act_gib = stage.activations / GIB - logits_gib
        overlap = (recompute_overlap_gib(loss, mb.working, gathered, dequantized)
                   if stage.last and mb.working > 0 else 0.0)
        upcast = upcast_reserve_gib(loss) if stage.last else 0.0
        other = (fixed_gib + fsdp_root_gib(layout, stage, per_layer) + dequantized / GIB - overlap
                 + (logits_gib + fragmentation_gib(act_gib, logits_gib)) + upcast)
        found.append((_StageMemory(weights, grads, optim, act_gib, other, pageable, logits_gib,
                                   upcast), host_gib))
    return found


class _Paged(NamedTuple):
    resident_gib: float  # added to the optimizer states on the GPU
    params: float  # parameters whose states live in host memory
    out_gib: float | None  # GiB of states in host memory; None where all stay on the GPU


def paged_optimizer(shape: ModelShape, layout: Layout, peak: _StageMemory,
                    gpu_memory_gib: float) -> _Paged | None:
    """paged 8-bit AdamW (bitsandbytes): unified-memory pages stay on the GPU while there is room
    (`gpu_memory_gib`); under pressure they live in host memory and only the tensor being stepped is
    paged in (about one layer's states). None for other optimizers."""
    offload = peak.pageable
    if layout.optimizer != "paged_adam_8bit" or offload <= 0:
        return None
    resident = peak.weights + peak.grads + peak.act + peak.other
    if resident + offload <= gpu_memory_gib:
        return _Paged(offload, 0.0, None)
    one_layer = min(offload, shape.layer_params / layout.tp * ADAM_8BIT_STATE_BYTES / GIB)
    paged_out = offload - one_layer
    return _Paged(one_layer, paged_out * GIB / ADAM_8BIT_STATE_BYTES, paged_out)


def memory_per_gpu(shape: ModelShape, method: str, layout: Layout, gpu_memory_gib: float,
                   host_gib_per_gpu: float | None = None) -> MemoryResult:
    """Peak memory per GPU in GiB on the pipeline stage with the highest total. `gpu_memory_gib`:
    what the layout may use, above which a paged optimizer's states are evicted to the host (a
    search passes its usable memory, so the layout it times is the one it reports).
    `host_gib_per_gpu`: host memory free for offloading per GPU as declared (an owned pool's), else
    HOST_MEMORY_GIB_PER_GPU assumed."""
    host_cap = HOST_MEMORY_GIB_PER_GPU if host_gib_per_gpu is None else host_gib_per_gpu
    p = layout.pp
    adapters = method in ADAPTER_METHODS
    residual_bytes = unquantized_weight_bytes(method, layout)  # (fp32 where peft upcast them)
    mb = _micro_batch(shape, layout, host_cap, residual_bytes)
    loss = _loss_phase(shape, adapters, layout, mb, residual_bytes)
    stages = _stages(shape, layout, mb, loss)
    per_stage = _stage_memories(shape, method, layout, stages, mb, loss, host_cap)
    results = [memory for memory, _ in per_stage]
    host_gib = max(0.0, *(host_states for _, host_states in per_stage))
    totals = [sum(r[:5]) for r in results]
    peak = max(range(len(results)), key=totals.__getitem__)
    # what the allocator gives back at the card's limit: its cached share of the changing tensors
    squeezed = [(ALLOCATOR_FRAGMENTATION - ALLOCATOR_FRAGMENTATION_AT_LIMIT) * (r.act + r.logits)
                for r in results]
    floors = [stage_total - cut for stage_total, cut in zip(totals, squeezed, strict=True)]
    top = results[peak]
    peak_rank = 0 if peak == 0 else p - 1 if stages[peak].last else 1
    peak_stage = (peak_rank, stages[peak].layers) if p > 1 else None
    # the kept outputs are held by the last stage
    kept_gib = loss.kept / GIB if peak_stage and peak_stage[0] == p - 1 else 0.0
    paged = paged_optimizer(shape, layout, top, gpu_memory_gib)
    optim = top.optim
    if paged is not None:
        optim += paged.resident_gib
    facts = MemoryFacts(
        layout, adapters, host_cap, "assumed" if host_gib_per_gpu is None else "declared",
        None if mb.offloaded is None else mb.offloaded / GIB, top.logits, kept_gib, top.upcast,
        _logit_bytes(layout), mb.working > 0, None if paged is None else paged.out_gib,
        gpu_memory_gib, host_gib, residual_bytes != WEIGHT_BYTES)
    total = top.weights + top.grads + optim + top.act + top.other
    floors[peak] = total - squeezed[peak]  # (the paged optimizer's resident states included)
    return MemoryResult(MemoryBreakdown(top.weights, top.grads, optim, top.act, top.other, total),
                        0.0 if paged is None else paged.params, facts, peak_stage, max(floors))


def pipeline_peak_note(layers: int, layout: Layout, peak_stage: tuple[int, int]) -> str:
    """Which pipeline stage peaks (`MemoryResult.peak_stage`) and how many micro-batches'
    activations its schedule holds there."""
    p, v = layout.pp, layout.virtual_pipeline
    rank, peak_layers = peak_stage
    edge = "first" if rank == 0 else "last" if rank == p - 1 else "middle"
    chunks = stage_chunk_layers(peak_layers, stage_layers(layers, p)[1], v, edge)
    held_layers = held_peak(chunks, p, layout.micro_batches, rank)
    schedule = say("enote.interleaved", v=v) if v > 1 else say("enote.1f1b")
    return say("enote.pipeline", schedule=schedule, mb=layout.micro_batches, stage=rank + 1, p=p,
               layers=peak_layers, total=layers, held=held_layers / peak_layers)



def states_floor_gib(shape: ModelShape, method: str, layout: Layout) -> float:
    """A lower bound on `memory_per_gpu(...).breakdown.total_gib` from the model states alone: the
    first stage's weights, gradients and resident optimizer states (every stage's peak holds at
    least its own). Neither recomputation nor virtual stages change it; the micro-batch size only
    through the number of micro-batches (FSDP SHARD_GRAD_OP's unsharded accumulation)."""
    if layout.state_offload:  # (the states may all be on the host)
        return 0.0
    first_layers = stage_layers(shape.layers, layout.pp)[0]
    params = (
        shape.layer_params_per_gpu(layout.tp, layout.ep) * first_layers
        + shape.embed_params / layout.tp
    )
    if layout.pp == 1:
        params += shape.head_params / layout.tp
    weights, grads, optim, _ = stage_states(shape, method, layout, params, first_layers)
    return weights + grads + optim


def _loss_bytes(shape: ModelShape, adapters: bool, layout: Layout, tokens: float) -> float:
    """What the cross-entropy holds at its peak for one micro-batch of `tokens` tokens, beyond the
    output layer's input: the logits at `_logit_bytes`, or a fused linear cross-entropy's buffers.

    A fused linear cross-entropy (`loss` "fused"; Liger-Kernel's src/liger_kernel/ops/
    fused_linear_cross_entropy.py `fused_linear_cross_entropy_forward`, read, not measured) runs the
    whole loss in the forward pass: it allocates the gradient of its input (tokens x hidden,
    16-bit), an fp32 loss per token and, where the output layer is trained, the gradient of its
    weight (vocab x hidden, 16-bit), then takes chunks of `fused_loss_chunk_rows` tokens, computes
    their logits (16-bit), writes the cross-entropy's gradient over them in place and adds its
    products into the two gradients. Only one chunk's logits exist at a time. Apple's Cut
    Cross-Entropy (Unsloth) holds less: no chunk of logits outside on-chip memory; Liger's figure is
    the one counted."""
    if layout.loss != "fused":
        return tokens * shape.vocab / layout.tp * _logit_bytes(layout)
    rows = min(tokens, fused_loss_chunk_rows(tokens, shape.vocab, shape.hidden))
    held = (rows * shape.vocab / layout.tp * WEIGHT_BYTES  # one chunk's logits, then their gradient
            + tokens * shape.hidden * WEIGHT_BYTES  # the gradient of the output layer's input
            + tokens * FUSED_LOSS_BYTES_PER_TOKEN)
    # the output layer's weight gradient, computed in the forward pass (tied: the embedding's)
    if not adapters:
        held += (shape.embed_params if shape.tied else shape.head_params) / layout.tp * WEIGHT_BYTES
    return held


def fused_loss_chunk_rows(tokens: float, vocab: int, hidden: int) -> int:
    """Tokens per chunk of Liger's fused linear cross-entropy: the power of two at or above tokens /
    ceil(vocab / hidden), so that a chunk's logits are about as large as the hidden states of the
    whole micro-batch (`fused_linear_cross_entropy_forward`: inc_factor, chunk_size)."""
    per_chunk = math.ceil(tokens / math.ceil(vocab / hidden))
    return 1 << max(0, math.ceil(math.log2(max(1, per_chunk))))


def _logit_bytes(layout: Layout) -> float:
    """Bytes per logit element at the loss's peak (factors.py): Megatron's fused vocab-parallel
    cross entropy (Megatron, and Megatron-DeepSpeed under tp > 1), PyTorch's eager `loss_parallel`
    under FSDP with tp > 1, PyTorch's cross-entropy on upcast logits otherwise (Hugging Face models
    under DeepSpeed or FSDP, torchtitan); a fused or compiled chunked loss keeps the bf16 logits and
    one chunk's gradient."""
    if layout.loss == "chunked":
        return WEIGHT_BYTES + LOSS_CHUNK_GRAD_BYTES / LOSS_CHUNKS
    logits_16bit = stack_of(layout.framework).loss_logits_16bit
    if logits_16bit == "always" or (logits_16bit == "with_tp" and layout.tp > 1):
        return LOGIT_BYTES
    return LOGIT_BYTES_VOCAB_PARALLEL_EAGER if layout.tp > 1 else LOGIT_BYTES_FP32_LOSS
