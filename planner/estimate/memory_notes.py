"""The notes `memory_per_gpu` attaches to an estimate, written from a record of its numbers.

The numbers come from the memory terms (memory.py); this module only words them, in the order the
notes appear: activations in host memory, the loss phase, the outputs torch pipelining keeps, the
paged optimizer, pure BF16 AdamW, LoRA, CPU offload of the model states.
"""

from __future__ import annotations

from dataclasses import dataclass

from plan.models.stacks import stack_of
from plan.planner.estimate.factors import LOSS_CHUNK_GRAD_BYTES, LOSS_CHUNKS
from plan.planner.estimate.model_states import WEIGHT_BYTES
from plan.planner.estimate.types import Layout
from plan.planner.i18n.said import phrase, say, say_as

HOST_SHORTFALL_NOTE = "CPU offload: the "
"""How the note begins where an offloaded layout's model states exceed the host memory per GPU (and
so stay on the GPU): plan.planner.estimate.advice reads it."""


@dataclass(frozen=True, slots=True)
class MemoryFacts:
    """What the notes say, in GiB per GPU on the peak stage unless stated."""

    layout: Layout
    adapters: bool  # LoRA or QLoRA: the base weights are frozen
    host_cap: float  # host memory per GPU that offloading may fill
    host_said: str  # "assumed" or "declared": where host_cap comes from
    offloaded_gib: float | None  # activations an offloading policy sends to the host; None: none
    loss_gib: float  # the loss phase's logits and buffers (with the kept outputs)
    kept_gib: float  # the outputs torch pipelining's last stage keeps until the step ends
    allocator_gib: float  # the upcast logits' block the caching allocator holds at the loss
    logit_bytes: float  # bytes per logit element at the loss's peak
    recomputes: bool  # a layer is re-materialised or fetched back (the loss phase is freed first)
    paged_out_gib: float | None  # 8-bit Adam states paged to host memory; None: no eviction
    gpu_memory_gib: float  # what the layout may use
    host_states_gib: float  # the model states CPU offload sends to the host (the largest stage's)
    # QLoRA prepared by peft under autocast: the unquantized weights and residual stream in fp32
    kbit_upcast: bool = False


def memory_notes(facts: MemoryFacts) -> tuple[str, ...]:
    """The notes, in the order above."""
    notes = [_host_activations_note(facts), *_loss_notes(facts), _paged_note(facts)]
    layout = facts.layout
    if layout.optimizer == "adam_bf16":
        notes.append(say_as(
            "memory.adam_bf16", "optimizer adamw-bf16: weights, gradients and AdamW's moments in "
            "BF16 with no fp32 master copy (torchtune's default): 8 bytes per trained parameter, "
            "not 16; updates below BF16's resolution are lost"))
    if facts.adapters:
        notes.append(say_as("memory.lora", "LoRA: base weights frozen (no gradients or optimizer "
                            "states for them)"))
    if facts.kbit_upcast:
        notes.append(say_as(
            "memory.kbit_upcast", "QLoRA on Hugging Face modules: peft's "
            "prepare_model_for_kbit_training casts the embeddings, output layer and norms to fp32, "
            "so the residual stream and each checkpointed layer input are fp32 too; fused kernels "
            "(--kernels fused: Unsloth, Liger) or pure BF16 training (--optimizer adamw-bf16, "
            "torchtune) keep them 16-bit"))
    notes.append(_state_offload_note(facts))
    return tuple(note for note in notes if note)


def _source(said: str) -> str:
    """Where the host memory per GPU comes from, in the reader's language."""
    if said == "declared":
        return say_as("phrase.declared", "declared")
    return say_as("phrase.assumed", "assumed") if said == "assumed" else said


def _host_activations_note(facts: MemoryFacts) -> str:
    if facts.offloaded_gib is None:
        return ""
    offloaded_gib, host_cap = facts.offloaded_gib, facts.host_cap
    what = (say_as("memory.what_inputs", "checkpointed layer inputs")
            if facts.layout.recompute == "full_offload"
            else say_as("memory.what_saved", "saved activations"))
    left = (say_as("memory.left_on_gpu", "; the other {gib:.1f} GiB stay on the GPU",
                   gib=offloaded_gib - host_cap) if offloaded_gib > host_cap else "")
    return say_as("memory.host_activations", "activations in host memory: {gib:.1f} GiB of {what} "
                  "per GPU (each server needs that much free RAM per GPU; at most {host_cap:g} GiB "
                  "per GPU {said}{left})", gib=min(offloaded_gib, host_cap), what=what,
                  host_cap=host_cap, said=_source(facts.host_said), left=left)


def _loss_notes(facts: MemoryFacts) -> list[str]:
    layout, loss_gib, kept_gib = facts.layout, facts.loss_gib, facts.kept_gib
    notes: list[str] = []
    if loss_gib - kept_gib >= 0.5:
        freed = say_as("memory.freed", " (freed before the backward pass reaches the layers: the "
                       "peak holds the larger of the loss and the layer being recomputed or "
                       "fetched back, with its gathered weights)") if facts.recomputes else ""
        holds = (say_as("memory.holds_chunk", "a chunk of tokens' logits at a time, the gradient "
                        "of its input") if layout.loss == "fused"
                 else say_as("memory.holds_logits", "the logits at {bytes:g} B per element",
                             bytes=facts.logit_bytes))
        allocator = (say_as("memory.allocator", " (and {gib:.1f} GiB more that PyTorch's caching "
                            "allocator holds beside the upcast logits: an fp32 logit-sized block)",
                            gib=facts.allocator_gib) if facts.allocator_gib >= 0.05 else "")
        notes.append(say_as("memory.loss", "memory: 'other' includes {gib:.1f} GiB for the "
                            "loss{allocator}, {holds} and the output layer's input{freed}{leaner}",
                            gib=loss_gib - kept_gib, allocator=allocator, holds=holds,
                            freed=freed, leaner=_leaner_loss(layout)))
    if kept_gib >= 0.05:
        kept = (say_as("memory.kept_hidden", "final hidden states") if layout.loss == "fused"
                else say_as("memory.kept_logits", "logits"))
        notes.append(say_as("memory.kept", "memory: 'other' includes {gib:.1f} GiB of {kept} that "
                            "torch pipelining keeps on the last stage, {n} micro-batches' outputs "
                            "held for step()'s merged return until the step ends", gib=kept_gib,
                            kept=kept, n=layout.micro_batches - 1))
    return notes


def _leaner_loss(layout: Layout) -> str:
    """The leaner losses the layout's stack offers ('': none, or the layout's is the leanest)."""
    if layout.loss == "fused" or not stack_of(layout.framework).leaner_losses:
        return ""
    chunked = ("" if layout.loss == "chunked" else
               say_as("memory.leaner_chunked", ", a chunked one (--loss chunked) holds {bytes:g} B "
                      "per element", bytes=WEIGHT_BYTES + LOSS_CHUNK_GRAD_BYTES / LOSS_CHUNKS))
    return say_as("memory.leaner", "; a fused linear cross-entropy (--loss fused, a job's loss: "
                  "fused) never holds the whole logits{chunked}", chunked=chunked)


def _paged_note(facts: MemoryFacts) -> str:
    if facts.paged_out_gib is None:
        return ""
    return say("memory.paged", paged=facts.paged_out_gib, usable=facts.gpu_memory_gib)


def _state_offload_note(facts: MemoryFacts) -> str:
    if not facts.layout.state_offload:
        return ""
    host_gib, host_cap, said = facts.host_states_gib, facts.host_cap, facts.host_said
    if host_gib > host_cap:
        return say("memory.shortfall", host_gib=host_gib, host_cap=host_cap, said=phrase(said))
    return say("memory.offload", host_gib=host_gib, host_cap=host_cap, said=phrase(said))
