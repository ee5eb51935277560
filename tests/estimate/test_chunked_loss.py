"""A chunked cross-entropy (`loss: chunked`, `--loss chunked`): Liger's fused linear cross-entropy, Unsloth's,
flash-attn's or torchtune's compiled chunked loss never hold the whole fp32 logits. On the PyTorch stacks it
saves what the logits' fp32 copies took and is never slower; Megatron's vocab-parallel loss has no such mode,
so its layouts ignore it."""

from __future__ import annotations

import pytest

from plan.models.catalog import builtin_catalog
from plan.planner.estimate import Cluster, LayoutSpec, search_layout
from plan.planner.estimate.factors import (
    ALLOCATOR_FRAGMENTATION,
    GIB,
    LOGIT_BYTES_FP32_LOSS,
    LOSS_CHUNK_GRAD_BYTES,
    LOSS_CHUNKS,
)
from plan.planner.estimate.memory import WEIGHT_BYTES


def _estimate(model: str, framework: str, chunked: bool, **fixed: object):
    catalog = builtin_catalog()
    spec = LayoutSpec(tp=1, pp=1, cp=1, seq_len=4096, micro_batch=2, global_batch=16, recompute="full",
                      framework=framework, chunked_loss=chunked, **fixed)  # type: ignore[arg-type]
    found = search_layout(catalog.model(model), "full_finetune", Cluster.of(catalog.gpu("h100-sxm"), 8), spec)
    assert found.best is not None
    return found.best


def test_chunked_loss_saves_the_fp32_logits_on_a_pytorch_stack():
    # Qwen2.5 1.5B: a 151,936-token vocabulary against a 1,536-wide model, so the loss sets the peak
    plain = _estimate("qwen2.5-1.5b", "fsdp", False, zero=3)
    chunked = _estimate("qwen2.5-1.5b", "fsdp", True, zero=3)
    assert plain.layout.loss == "plain" and chunked.layout.loss == "chunked"
    assert plain.to_dict()["layout"]["loss"] == "plain" and chunked.to_dict()["layout"]["loss"] == "chunked"
    logits = 2 * 4096 * 151_936  # one micro-batch's logits on one GPU
    saved_gib = logits * (LOGIT_BYTES_FP32_LOSS - (WEIGHT_BYTES + LOSS_CHUNK_GRAD_BYTES / LOSS_CHUNKS)) / GIB
    saving = plain.memory.total_gib - chunked.memory.total_gib
    # the loss phase is the peak both ways, so the saving is the logits' bytes (plus their fragmentation)
    assert saved_gib <= saving <= saved_gib * (1 + ALLOCATOR_FRAGMENTATION) + 0.01
    assert chunked.step_time_s <= plain.step_time_s  # it reads the logits fewer times, never more
    assert any(note.startswith("loss chunked:") for note in chunked.notes)
    assert any("--loss chunked" in note for note in plain.notes)  # the plain estimate says what it would save


def test_megatron_layouts_ignore_it():
    plain = _estimate("qwen2.5-1.5b", "megatron", False)
    asked = _estimate("qwen2.5-1.5b", "megatron", True)
    assert asked.layout.loss == "plain" and not asked.layout.chunked_loss
    assert asked.memory.total_gib == pytest.approx(plain.memory.total_gib)
    assert asked.step_time_s == pytest.approx(plain.step_time_s)
    assert not any("--loss chunked" in note for note in plain.notes)  # no advice Megatron cannot follow


def test_a_searched_framework_is_a_pytorch_one():
    catalog = builtin_catalog()
    spec = LayoutSpec(seq_len=4096, global_batch=64, chunked_loss=True)
    found = search_layout(catalog.model("qwen2.5-7b"), "full_finetune", Cluster.of(catalog.gpu("h100-sxm"), 8),
                          spec)
    assert found.best is not None
    lay = found.best.layout  # a chunked loss is a PyTorch stack's: the search keeps to FSDP
    assert lay.framework == "fsdp" and lay.chunked_loss
