"""Memory at the edges (issue 49 item 3): long contexts, the loss kinds, the 4-bit base with its
quantization constants, peft's fp32 upcast of a QLoRA model's unquantized part, and the gradients a
re-materialised layer's backward pass holds."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from plan.models.model_card import ModelCard
from plan.planner.estimate import Layout
from plan.planner.estimate.activations import (
    activation_bytes_per_token_layer,
    backward_gradient_bytes_per_token,
)
from plan.planner.estimate.factors import GIB
from plan.planner.estimate.flops import QLORA_BITS_PER_PARAM, shape_of
from plan.planner.estimate.memory import loss_phase_bytes, memory_per_gpu
from plan.planner.estimate.model_states import (
    ADAPTER_FP32_BYTES,
    GRAD_BYTES,
    KBIT_UPCAST_BYTES,
    OPTIMIZER_STATE_BYTES,
    WEIGHT_BYTES,
    stage_states,
    upcasts_unquantized,
)

CONTEXTS = (16_384, 32_768, 65_536, 131_072)


def single(seq: int, *, recompute: str = "full", loss: str = "plain", fused: bool = False,
           rank: int | None = 32, optimizer: str = "adam_8bit") -> Layout:
    """One GPU, one sequence of `seq` tokens, as the fine-tuning tables run it."""
    return Layout(tp=1, pp=1, dp=1, zero=0, recompute=recompute, micro_batch=1, global_batch=1,
                  seq_len=seq, precision="bf16", sequence_parallel=False, lora_rank=rank,
                  framework="fsdp", loss=loss, fused_modules=fused, optimizer=optimizer)


def total(card: ModelCard, method: str, lay: Layout) -> float:
    return memory_per_gpu(shape_of(card), method, lay, 1e6).breakdown.total_gib


@pytest.mark.parametrize("method", ["lora", "qlora", "full_finetune"])
@pytest.mark.parametrize("recompute", ["none", "full", "full_offload", "offload"])
@pytest.mark.parametrize("loss", ["plain", "chunked", "fused"])
def test_memory_grows_with_context(llama8b: ModelCard, method: str, recompute: str,
                                   loss: str) -> None:
    rank = None if method == "full_finetune" else 32
    peaks = [total(llama8b, method, single(s, recompute=recompute, loss=loss, rank=rank))
             for s in CONTEXTS]
    assert all(a < b for a, b in itertools.pairwise(peaks))
    # what grows is per token: doubling the context at least doubles the part above 16k's peak's
    # fixed share, never less than what the 16k context added over nothing
    fixed = total(llama8b, method, single(1, recompute=recompute, loss=loss, rank=rank))
    assert peaks[-1] - fixed >= 7.9 * (peaks[0] - fixed)


@pytest.mark.parametrize("seq", CONTEXTS)
def test_chunked_and_fused_losses_hold_less_than_the_plain_one(llama8b: ModelCard,
                                                               seq: int) -> None:
    shape = shape_of(llama8b)
    held = {kind: loss_phase_bytes(shape, True, single(seq, loss=kind), seq)
            for kind in ("plain", "chunked", "fused")}
    assert held["fused"] < held["chunked"] < held["plain"]
    # the plain loss's logits alone: 128k fp32-upcast logits per token dwarf the fused loss's
    # chunk of them
    assert held["plain"] > 10 * held["fused"]
    peaks = {kind: total(llama8b, "qlora", single(seq, loss=kind)) for kind in held}
    assert peaks["fused"] < peaks["chunked"] < peaks["plain"]


def test_qlora_base_includes_quantization_constants(llama8b: ModelCard) -> None:
    shape = shape_of(llama8b)
    lay = single(4096, optimizer="adam_bf16")  # pure BF16: no upcast, the 16-bit part stays so
    params = shape.layer_params * shape.layers + shape.embed_params + shape.head_params
    weights = stage_states(shape, "qlora", lay, params, shape.layers)[0] * GIB
    linear = shape.layer_linear_total * shape.layers
    adapters = shape.adapter_params(32, "all") * WEIGHT_BYTES
    sixteen_bit = (params - linear) * WEIGHT_BYTES
    base_4bit = weights - adapters - sixteen_bit
    assert QLORA_BITS_PER_PARAM > 4.0  # NF4 and its double-quantized block constants
    assert base_4bit == pytest.approx(linear * QLORA_BITS_PER_PARAM / 8)
    assert base_4bit > linear * 4.0 / 8


def test_peft_upcasts_a_qlora_models_unquantized_part_under_autocast(llama8b: ModelCard) -> None:
    shape = shape_of(llama8b)
    mixed, pure = single(8192), single(8192, optimizer="adam_bf16")
    compiled = replace(mixed, fused_modules=True)
    assert upcasts_unquantized("qlora", mixed)
    assert not upcasts_unquantized("qlora", pure)  # torchtune: pure BF16, no peft
    assert not upcasts_unquantized("qlora", compiled)  # Unsloth, Liger: their own loading
    assert not upcasts_unquantized("lora", mixed)  # a 16-bit base is not prepared for k-bit
    params = shape.layer_params * shape.layers + shape.embed_params + shape.head_params
    unquantized = params - shape.layer_linear_total * shape.layers
    w_mixed = stage_states(shape, "qlora", mixed, params, shape.layers)[0]
    w_pure = stage_states(shape, "qlora", pure, params, shape.layers)[0]
    # (and 8-bit AdamW, which keeps no fp32 master, has fp32 adapters: ADAPTER_FP32_BYTES)
    adapters = shape.adapter_params(32, "all")
    assert (w_mixed - w_pure) * GIB == pytest.approx(
        unquantized * (KBIT_UPCAST_BYTES - WEIGHT_BYTES)
        + adapters * (ADAPTER_FP32_BYTES - WEIGHT_BYTES))
    # the fp32 residual stream doubles what each checkpoint holds
    act_mixed = memory_per_gpu(shape, "qlora", mixed, 1e6).breakdown.activations_gib
    act_pure = memory_per_gpu(shape, "qlora", pure, 1e6).breakdown.activations_gib
    checkpoints = 2.0 * shape.hidden * 8192 * shape.layers
    assert act_mixed > act_pure + 0.9 * checkpoints / GIB


@pytest.mark.parametrize("recompute", ["full", "full_offload"])
def test_a_rematerialised_layer_holds_its_backward_gradients(llama8b: ModelCard,
                                                             recompute: str) -> None:
    # At a long context the re-materialised layer, not the fused loss, peaks: its saved tensors and
    # the gradients its backward pass computes from them are alive together.
    shape = shape_of(llama8b)
    seq = 131_072
    lay = single(seq, recompute=recompute, loss="fused", fused=True)
    grads = backward_gradient_bytes_per_token(shape, lay)
    assert grads == pytest.approx(2.0 * (shape.ffn + 2 * shape.hidden))
    layer = activation_bytes_per_token_layer(shape, lay)
    mem = memory_per_gpu(shape, "qlora", lay, 1e6).breakdown
    # (the loss phase's share of `other` overlaps the layer's: only the larger counts)
    dynamic = (mem.activations_gib + mem.other_gib) * GIB
    assert dynamic >= (layer + grads) * seq
    without = backward_gradient_bytes_per_token(shape, replace(lay, tp=2, sequence_parallel=True))
    assert without == pytest.approx(grads / 2)  # split over tp with sequence parallelism


@pytest.mark.parametrize("method", ["lora", "qlora"])
def test_adapters_hold_every_gradient_and_an_fp32_copy(llama8b: ModelCard, method: str) -> None:
    """Adapters step after the backward pass (no in-backward step outside torchtune's full
    fine-tuning), so every adapter's gradient is held; and each has one fp32 copy: peft's fp32
    adapter under 8-bit AdamW, the fp32 master the AdamW states count otherwise. So per adapter
    parameter 8-bit AdamW holds 4 + 4 + 2 B, AdamW 2 + 2 + 12 B."""
    shape = shape_of(llama8b)
    params = shape.layer_params * shape.layers + shape.embed_params + shape.head_params
    adapters = shape.adapter_params(32, "all")

    def states(optimizer: str, rank: int | None = 32) -> tuple[float, float, float, float]:
        lay = single(4096, optimizer=optimizer, rank=rank)
        return stage_states(shape, method, lay, params, shape.layers)

    def per_adapter(optimizer: str) -> float:
        return (sum(states(optimizer)) - sum(states(optimizer, None))) * GIB / adapters

    eight_bit, adamw = states("adam_8bit"), states("adam")
    assert eight_bit[1] * GIB == pytest.approx(adapters * ADAPTER_FP32_BYTES)
    assert adamw[1] * GIB == pytest.approx(adapters * GRAD_BYTES)
    assert per_adapter("adam_8bit") == pytest.approx(
        2 * ADAPTER_FP32_BYTES + OPTIMIZER_STATE_BYTES["adam_8bit"])
    assert per_adapter("paged_adam_8bit") == pytest.approx(per_adapter("adam_8bit"))
    assert per_adapter("adam") == pytest.approx(
        WEIGHT_BYTES + GRAD_BYTES + OPTIMIZER_STATE_BYTES["adam"])
