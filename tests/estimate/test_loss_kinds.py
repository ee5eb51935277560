"""How the cross-entropy holds the logits (`loss`, `--loss`). A chunked one (flash-attn's
cross-entropy, torchtune's compiled chunked loss) keeps the bf16 logits but never their fp32 copies;
a fused linear one (Liger's, Unsloth's Cut Cross-Entropy) never holds the whole logits, only a chunk
of tokens' at a time and the gradient of its input. On the PyTorch stacks each saves what it does
not hold and is never slower; Megatron's vocab-parallel loss has neither mode, so its layouts ignore
them."""

from __future__ import annotations

import math

import pytest

from plan.models.catalog import builtin_catalog
from plan.planner.estimate import Cluster, LayoutSpec, search_layout
from plan.planner.estimate.factors import (
    ALLOCATOR_FRAGMENTATION,
    FUSED_LOSS_BYTES_PER_TOKEN,
    GIB,
    LOGIT_BYTES_FP32_LOSS,
    LOSS_CHUNK_GRAD_BYTES,
    LOSS_CHUNKS,
    UPCAST_LOGIT_RESERVED_BYTES,
)
from plan.planner.estimate.memory import WEIGHT_BYTES, fused_loss_chunk_rows

CHUNKED_BYTES = WEIGHT_BYTES + LOSS_CHUNK_GRAD_BYTES / LOSS_CHUNKS
QWEN_VOCAB, QWEN_HIDDEN = 151_936, 1_536  # Qwen2.5 1.5B: the loss sets the peak
TOKENS = 2 * 4096  # one micro-batch on one GPU


def _estimate(
    model: str,
    framework: str,
    loss: str,
    method: str = "full_finetune",
    recompute: str = "full",
    **fixed: object,
):
    catalog = builtin_catalog()
    spec = LayoutSpec(
        tp=1,
        pp=1,
        cp=1,
        seq_len=4096,
        micro_batch=2,
        global_batch=16,
        recompute=recompute,
        framework=framework,
        loss=loss,
        **fixed,
    )  # type: ignore[arg-type]
    found = search_layout(
        catalog.model(model), method, Cluster.of(catalog.gpu("h100-sxm"), 8), spec
    )
    assert found.best is not None
    return found.best


def _within_fragmentation(saving_gib: float, expected_bytes: float) -> bool:
    expected_gib = expected_bytes / GIB
    return expected_gib - 0.01 <= saving_gib <= expected_gib * (1 + ALLOCATOR_FRAGMENTATION) + 0.01


def test_chunked_loss_saves_the_fp32_logits_on_a_pytorch_stack():
    plain = _estimate("qwen2.5-1.5b", "fsdp", "plain", zero=3)
    chunked = _estimate("qwen2.5-1.5b", "fsdp", "chunked", zero=3)
    assert plain.layout.loss == "plain" and chunked.layout.loss == "chunked"
    assert (
        plain.to_dict()["layout"]["loss"] == "plain"
        and chunked.to_dict()["layout"]["loss"] == "chunked"
    )
    logits = TOKENS * QWEN_VOCAB
    # the loss phase is the peak both ways, so the saving is the logits' bytes (plus their
    # fragmentation), and the fp32 logit-sized block the caching allocator holds beside the plain
    # loss's (whose share its fragmentation, on the plain loss phase with the output layer's input,
    # already counts)
    plain_phase = logits * LOGIT_BYTES_FP32_LOSS + TOKENS * 2.0 * QWEN_HIDDEN
    reserved = logits * UPCAST_LOGIT_RESERVED_BYTES - ALLOCATOR_FRAGMENTATION * plain_phase
    assert reserved > 0
    expected = (1 + ALLOCATOR_FRAGMENTATION) * logits * (
        LOGIT_BYTES_FP32_LOSS - CHUNKED_BYTES
    ) + reserved
    assert plain.memory.total_gib - chunked.memory.total_gib == pytest.approx(
        expected / GIB, abs=0.01
    )
    (said,) = [n for n in plain.notes if "caching allocator holds beside the upcast logits" in n]
    assert f"and {reserved / GIB:.1f} GiB more" in said
    assert not any("caching allocator holds" in n for n in chunked.notes)
    assert chunked.step_time_s <= plain.step_time_s  # it reads the logits fewer times, never more
    assert any(note.startswith("loss chunked:") for note in chunked.notes)
    # the plain estimate says what each would save
    assert any("--loss chunked" in note and "--loss fused" in note for note in plain.notes)


@pytest.mark.parametrize("method", ["full_finetune", "lora"])
def test_fused_loss_holds_a_chunk_of_logits_and_the_gradient_of_its_input(method: str):
    # without recomputation the loss phase is the peak both ways (with it, a re-materialised layer
    # can be)
    chunked = _estimate("qwen2.5-1.5b", "fsdp", "chunked", method, "none", zero=3)
    fused = _estimate("qwen2.5-1.5b", "fsdp", "fused", method, "none", zero=3)
    assert fused.layout.loss == "fused" and fused.to_dict()["layout"]["loss"] == "fused"
    rows = fused_loss_chunk_rows(TOKENS, QWEN_VOCAB, QWEN_HIDDEN)
    held = (rows * QWEN_VOCAB * WEIGHT_BYTES + TOKENS * QWEN_HIDDEN * WEIGHT_BYTES
            + TOKENS * FUSED_LOSS_BYTES_PER_TOKEN)
    # Qwen2.5 1.5B ties its output layer to the embedding: one V x h gradient
    if method == "full_finetune":
        held += QWEN_VOCAB * QWEN_HIDDEN * WEIGHT_BYTES
    assert _within_fragmentation(chunked.memory.total_gib - fused.memory.total_gib,
                                 TOKENS * QWEN_VOCAB * CHUNKED_BYTES - held)
    # the same passes over the logits
    assert fused.step_time_s == pytest.approx(chunked.step_time_s)
    assert any(note.startswith("loss fused:") for note in fused.notes)
    assert not any("--loss" in note for note in fused.notes)  # nothing leaner to advise


@pytest.mark.parametrize(
    ("tokens", "vocab", "hidden"),
    [(8192, 151_936, 1_536), (4096, 128_256, 4_096), (2048, 32_000, 8_192), (1, 50_368, 7_168)],
)
def test_fused_loss_chunks_are_as_large_as_the_hidden_states(tokens: int, vocab: int, hidden: int):
    # Liger's rule: the power of two at or above tokens / ceil(vocab / hidden) tokens per chunk
    rows = fused_loss_chunk_rows(tokens, vocab, hidden)
    factor = math.ceil(vocab / hidden)
    assert rows & (rows - 1) == 0 and rows * factor >= tokens
    assert rows == 1 or rows // 2 * factor < tokens


@pytest.mark.parametrize("loss", ["chunked", "fused"])
def test_megatron_layouts_ignore_it(loss: str):
    plain = _estimate("qwen2.5-1.5b", "megatron", "plain")
    asked = _estimate("qwen2.5-1.5b", "megatron", loss)
    assert asked.layout.loss == "plain"
    assert asked.memory.total_gib == pytest.approx(plain.memory.total_gib)
    assert asked.step_time_s == pytest.approx(plain.step_time_s)
    assert not any("--loss" in note for note in plain.notes)  # no advice Megatron cannot follow


@pytest.mark.parametrize("loss", ["chunked", "fused"])
def test_a_searched_framework_is_a_pytorch_one(loss: str):
    catalog = builtin_catalog()
    spec = LayoutSpec(seq_len=4096, global_batch=64, loss=loss)
    found = search_layout(
        catalog.model("qwen2.5-7b"), "full_finetune", Cluster.of(catalog.gpu("h100-sxm"), 8), spec
    )
    assert found.best is not None
    lay = found.best.layout  # these losses are a PyTorch stack's: the search keeps to FSDP
    assert lay.framework == "fsdp" and lay.loss == loss
