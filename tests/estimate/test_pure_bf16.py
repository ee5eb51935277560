"""Pure BF16 training (`adam_bf16`, `--optimizer adamw-bf16`): torchtune's default, LLaMA-Factory's
pure_bf16, DeepSpeed's bf16 master weights and optimizer states. The weights are updated in BF16 and
AdamW's two moments are BF16, with no fp32 master: 2 + 2 + 4 bytes per trained parameter instead of
2 + 2 + 12."""

from __future__ import annotations

import pytest

from plan.models.gpu import GPU
from plan.models.model_card import ModelCard
from plan.planner.estimate import Cluster, LayoutSpec, estimate, search_layout
from plan.planner.estimate.factors import GIB
from plan.planner.estimate.memory import HOST_MEMORY_GIB_PER_GPU
from plan.planner.estimate.types import Layout


def _layout(gpus: int, **kw: object) -> Layout:
    base: dict[str, object] = dict(
        tp=1,
        pp=1,
        dp=gpus,
        zero=3,
        recompute="full",
        micro_batch=2,
        global_batch=2 * gpus,
        seq_len=2048,
        precision="bf16",
        sequence_parallel=False,
        lora_rank=None,
        framework="fsdp",
    )
    base.update(kw)
    return Layout(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_pure_bf16_keeps_eight_bytes_per_parameter_sharded_as_zero_says(
    llama8b: ModelCard, a100: GPU, zero: int
) -> None:
    gpus = 8 if zero else 1
    framework = "deepspeed" if zero == 1 else "fsdp"
    cluster = Cluster.of(a100, gpus)
    mixed = estimate(
        llama8b, "full_finetune", cluster, _layout(gpus, zero=zero, framework=framework)
    ).memory
    pure = estimate(llama8b, "full_finetune", cluster,
                    _layout(gpus, zero=zero, framework=framework, optimizer="adam_bf16")).memory
    params = llama8b.params
    # the optimizer shrinks from 12 to 4 bytes per parameter, sharded from ZeRO-1 on; weights and
    # gradients (16-bit in both) do not change
    assert pure.optimizer_gib == pytest.approx(mixed.optimizer_gib / 3, rel=1e-9)
    assert mixed.optimizer_gib - pure.optimizer_gib == pytest.approx(
        8 * params / (gpus if zero else 1) / GIB, rel=0.01
    )
    assert (
        pure.weights_gib == pytest.approx(mixed.weights_gib)
        and pure.gradients_gib == mixed.gradients_gib
    )


def test_torchtunes_70b_full_finetune_on_eight_a100s_fits_with_cpu_offload(
    llama70b: ModelCard, a100: GPU
) -> None:
    # torchtune 0.3.1 recipes/configs/llama3_1/70B_full.yaml: 8 GPUs, fsdp_cpu_offload True, batch
    # 2, activation checkpointing, dtype bf16 (README: "8x A100, 13.9 GiB, uses CPU offload with
    # fused optimizer"). Its pure-BF16 states, 8 bytes x 70.6B / 8 = 66 GiB per GPU, fit the host;
    # mixed precision's 16 bytes do not.
    cluster = Cluster.of(a100, 8)
    pure = estimate(
        llama70b, "full_finetune", cluster, _layout(8, state_offload=True, optimizer="adam_bf16")
    )
    assert pure.fits
    assert pure.memory.weights_gib == pure.memory.gradients_gib == pure.memory.optimizer_gib == 0.0
    host_gib = 8 * llama70b.params / 8 / GIB
    assert host_gib < HOST_MEMORY_GIB_PER_GPU < 2 * host_gib
    assert any(f"{host_gib:.1f} GiB" in note for note in pure.notes), pure.notes
    mixed = estimate(llama70b, "full_finetune", cluster, _layout(8, state_offload=True))
    # 131 GiB of states per GPU: more than the host holds, so they stay on the GPU
    assert not mixed.fits


def test_the_pure_bf16_step_streams_fewer_bytes(llama8b: ModelCard, a100: GPU) -> None:
    cluster = Cluster.of(a100, 1)
    one = dict(zero=0, micro_batch=1, global_batch=1)
    mixed = estimate(llama8b, "full_finetune", cluster, _layout(1, **one))
    pure = estimate(llama8b, "full_finetune", cluster, _layout(1, optimizer="adam_bf16", **one))
    # the optimizer step: 14 bytes per parameter, not 28
    assert pure.time.other_s < mixed.time.other_s
    assert pure.time.compute_s == mixed.time.compute_s


def test_megatron_fp16_and_unsharded_deepspeed_refuse_pure_bf16(
    llama8b: ModelCard, a100: GPU
) -> None:
    cluster = Cluster.of(a100, 8)
    with pytest.raises(ValueError, match="Megatron-LM does not run"):
        estimate(
            llama8b,
            "full_finetune",
            cluster,
            _layout(8, zero=1, framework="megatron", optimizer="adam_bf16"),
        )
    with pytest.raises(ValueError, match="not fp16"):
        estimate(
            llama8b, "full_finetune", cluster, _layout(8, precision="fp16", optimizer="adam_bf16")
        )
    # what its JSON can express
    with pytest.raises(ValueError, match="DeepSpeed needs ZeRO stage 1-3"):
        estimate(
            llama8b,
            "full_finetune",
            cluster,
            _layout(8, zero=0, framework="deepspeed", optimizer="adam_bf16"),
        )


def test_deepspeed_with_pure_bf16_searches_the_zero_stages_that_run_it(
    llama8b: ModelCard, a100: GPU
) -> None:
    """Named DeepSpeed with pure BF16 AdamW and the ZeRO stage left open is searched over stages
    1-3; it was refused as if zero 0 had been stated (the check of the stated fields probed
    DeepSpeed at stage 0)."""
    spec = LayoutSpec(framework="deepspeed", optimizer="adam_bf16")
    best = search_layout(llama8b, "full_finetune", Cluster.of(a100, 8), spec).best
    assert (
        best is not None and best.layout.framework == "deepspeed" and best.layout.zero in (1, 2, 3)
    )
    # stated, stage 0 is still refused
    with pytest.raises(ValueError, match="DeepSpeed needs ZeRO stage 1-3"):
        search_layout(
            llama8b,
            "full_finetune",
            Cluster.of(a100, 8),
            LayoutSpec(framework="deepspeed", zero=0, optimizer="adam_bf16"),
        )


def test_the_search_keeps_pure_bf16_off_megatron(llama8b: ModelCard, a100: GPU) -> None:
    result = search_layout(
        llama8b, "full_finetune", Cluster.of(a100, 8), LayoutSpec(optimizer="adam_bf16")
    )
    assert result.best is not None and result.best.layout.framework != "megatron"
    assert result.best.layout.optimizer == "adam_bf16"
    assert any("adamw-bf16" in note and "no fp32 master" in note for note in result.best.notes)
