"""DPO and SFT: what the reference model costs in memory and FLOPs, and sft = full fine-tune."""

from __future__ import annotations

import pytest

from plan.models.gpu import GPU
from plan.models.methods import ADAPTER_METHODS, DPO_METHODS, METHODS
from plan.models.model_card import ModelCard
from plan.planner.estimate import Cluster, Layout, LayoutSpec, estimate, search_layout
from plan.planner.estimate.factors import GIB
from plan.planner.estimate.flops import shape_of


def layout(
    gpus: int,
    *,
    tp: int = 1,
    zero: int = 0,
    recompute: str = "full",
    rank: int | None = None,
    framework: str = "deepspeed",
) -> Layout:
    dp = gpus // tp
    return Layout(
        tp=tp,
        pp=1,
        dp=dp,
        zero=zero,
        recompute=recompute,
        micro_batch=1,
        global_batch=dp * 4,
        seq_len=2048,
        precision="bf16",
        sequence_parallel=tp > 1,
        lora_rank=rank,
        framework=framework,
    )


def test_method_vocabulary_is_consistent() -> None:
    assert set(DPO_METHODS) <= set(METHODS) and set(ADAPTER_METHODS) <= set(METHODS)
    assert "sft" in METHODS and "dpo" in METHODS


@pytest.mark.parametrize(("gpus", "tp", "zero"), [(1, 1, 0), (8, 2, 1), (8, 1, 3)])
def test_full_dpo_holds_a_frozen_reference_copy(llama8b: ModelCard, a100: GPU, gpus: int, tp: int,
                                                zero: int) -> None:
    """Full DPO: exactly one more 16-bit copy of the weights (split by tp, sharded by ZeRO-3), and
    nothing else in the model states."""
    cluster = Cluster.of(a100, gpus)
    sft = estimate(llama8b, "full_finetune", cluster, layout(gpus, tp=tp, zero=zero))
    dpo = estimate(llama8b, "dpo", cluster, layout(gpus, tp=tp, zero=zero))
    assert dpo.memory.total_gib > sft.memory.total_gib
    shard = (gpus // tp) if zero == 3 else 1
    extra = dpo.memory.weights_gib - sft.memory.weights_gib
    assert extra == pytest.approx(8.03e9 * 2 / tp / shard / GIB, rel=0.02)
    assert dpo.memory.gradients_gib == pytest.approx(sft.memory.gradients_gib)
    assert dpo.memory.optimizer_gib == pytest.approx(sft.memory.optimizer_gib)


@pytest.mark.parametrize("base", ["lora", "qlora"])
def test_lora_dpo_reuses_the_base_as_reference(llama8b: ModelCard, a100: GPU, base: str) -> None:
    """LoRA-DPO's reference is the base with the adapters off: no second copy of the weights."""
    cluster = Cluster.of(a100, 1)
    plain = estimate(llama8b, base, cluster, layout(1, rank=16, framework="fsdp"))
    dpo = estimate(llama8b, f"{base}_dpo", cluster, layout(1, rank=16, framework="fsdp"))
    assert dpo.memory.weights_gib == pytest.approx(plain.memory.weights_gib)
    assert dpo.memory.total_gib == pytest.approx(plain.memory.total_gib)
    assert dpo.step_time_s > plain.step_time_s  # the reference forward pass


def test_dpo_flops_are_policy_training_plus_reference_forward(llama8b: ModelCard) -> None:
    """Per token: the policy's forward and backward on chosen and rejected answers (6N-class) plus
    one reference forward (2N-class): 4/3 of SFT for full DPO; LoRA-DPO adds the same forward to
    ~4N."""
    shape = shape_of(llama8b)
    s = 2048
    lin, attn, head = shape.forward_flops_per_token(s)
    forward = lin + attn + head
    sft = shape.flops_per_token(s, "full_finetune")
    assert shape.flops_per_token(s, "dpo") == pytest.approx(sft + forward)
    assert shape.flops_per_token(s, "dpo") / sft == pytest.approx(4 / 3, rel=0.01)
    lora = shape.flops_per_token(s, "lora", 16)
    assert shape.flops_per_token(s, "lora_dpo", 16) == pytest.approx(lora + forward)
    assert shape.flops_per_token(s, "qlora_dpo", 16) == pytest.approx(lora + forward)


def test_dpo_step_time_grows_about_as_its_flops(llama8b: ModelCard, a100: GPU) -> None:
    cluster = Cluster.of(a100, 8)
    sft = estimate(llama8b, "full_finetune", cluster, layout(8, tp=2, zero=1))
    dpo = estimate(llama8b, "dpo", cluster, layout(8, tp=2, zero=1))
    ratio = dpo.time.compute_s / sft.time.compute_s
    assert 1.25 < ratio < 1.40
    assert dpo.tokens_per_s < sft.tokens_per_s


def test_sft_is_full_finetune(llama8b: ModelCard, a100: GPU) -> None:
    cluster = Cluster.of(a100, 8)
    sft = estimate(llama8b, "sft", cluster, layout(8, tp=2, zero=1))
    ft = estimate(llama8b, "full_finetune", cluster, layout(8, tp=2, zero=1))
    assert sft.memory.total_gib == pytest.approx(ft.memory.total_gib)
    assert sft.step_time_s == pytest.approx(ft.step_time_s)
    assert any("packed" in note for note in sft.notes)


def test_dpo_search_says_what_it_assumed(llama8b: ModelCard, a100: GPU) -> None:
    spec = LayoutSpec(seq_len=2048, precision="bf16")
    result = search_layout(llama8b, "dpo", Cluster.of(a100, 8), spec)
    assert result.best is not None and result.best.fits
    assert any("reference" in note for note in result.best.notes)


def test_lora_rank_only_for_adapter_methods(llama8b: ModelCard, a100: GPU) -> None:
    with pytest.raises(ValueError, match="lora_rank"):
        estimate(llama8b, "dpo", Cluster.of(a100, 1), layout(1, rank=16))
    with pytest.raises(ValueError, match="lora_rank"):
        estimate(llama8b, "lora_dpo", Cluster.of(a100, 1), layout(1, rank=None))
