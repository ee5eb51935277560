"""ZeRO-3 CPU offload of the model states (`Layout.state_offload`): the states leave the GPU only as
a whole and only where the host can hold them, the PCIe traffic and the CPU optimizer step are
charged, the layouts that cannot offload are refused naming the field, and the search uses it only
where nothing fits without it."""

from __future__ import annotations

import dataclasses

import pytest

from plan.models.gpu import GPU
from plan.models.model_card import ModelCard
from plan.planner.estimate import Cluster, LayoutSpec, estimate, search_layout
from plan.planner.estimate.factors import CPU_OPTIMIZER_BYTES_PER_S
from plan.planner.estimate.memory import HOST_MEMORY_GIB_PER_GPU
from plan.planner.estimate.types import Layout


def _zero3(gpus: int, **kw: object) -> Layout:
    base: dict[str, object] = dict(
        tp=1,
        pp=1,
        dp=gpus,
        zero=3,
        recompute="full",
        micro_batch=1,
        global_batch=gpus * 4,
        seq_len=2048,
        precision="bf16",
        sequence_parallel=False,
        lora_rank=None,
        framework="fsdp",
    )
    base.update(kw)
    return Layout(**base)  # type: ignore[arg-type]


def test_the_states_move_to_the_host_and_their_traffic_is_charged(
    llama8b: ModelCard, rtx4090: GPU
) -> None:
    cluster = Cluster.of(rtx4090, 2)
    on = estimate(llama8b, "full_finetune", cluster, _zero3(2, state_offload=True))
    off = estimate(llama8b, "full_finetune", cluster, _zero3(2))
    assert on.memory.weights_gib == on.memory.gradients_gib == on.memory.optimizer_gib == 0.0
    # 16 B/param over 2
    assert off.memory.weights_gib + off.memory.gradients_gib + off.memory.optimizer_gib > 40
    # the activations and the gathered layers stay
    assert on.memory.activations_gib == pytest.approx(off.memory.activations_gib)
    assert on.memory.total_gib < off.memory.total_gib - 40
    assert any("host memory" in n for n in on.notes) and any("assumed" in n for n in on.notes)
    # the shards cross PCIe each micro-batch, and the optimizer steps on the CPU: slower, never
    # faster
    assert on.time.dp_comm_s > off.time.dp_comm_s
    params_per_gpu = llama8b.params / 2
    assert on.time.other_s >= params_per_gpu * 28.0 / CPU_OPTIMIZER_BYTES_PER_S * 0.99
    assert on.step_time_s > off.step_time_s


def test_states_the_host_cannot_hold_stay_on_the_gpu(llama70b: ModelCard, rtx4090: GPU) -> None:
    # a 70B full fine-tune on one card: ~1 TiB of states, beyond the host memory assumed per GPU
    lay = _zero3(1, state_offload=True, global_batch=1)
    est = estimate(llama70b, "full_finetune", Cluster.of(rtx4090, 1), lay)
    assert (
        est.memory.optimizer_gib + est.memory.weights_gib + est.memory.gradients_gib
        > HOST_MEMORY_GIB_PER_GPU
    )
    assert not est.fits
    assert any("exceed" in n and "stay on the GPU" in n for n in est.notes)


@pytest.mark.parametrize(("change", "field"), [
    (dict(zero=2), "zero 2"), (dict(framework="megatron", zero=1), "megatron"),
    (dict(optimizer="paged_adam_8bit"), "paged_adam_8bit"),
    # DeepSpeed steps offloaded states with its CPU Adam only (the exports refuse the rest by the
    # same rule)
    (dict(framework="deepspeed", optimizer="adafactor"), "deepspeed zero 3 .* optimizer adafactor"),
    (dict(framework="deepspeed", optimizer="sgd"), "optimizer sgd"),
])
def test_layouts_that_cannot_offload_are_refused_naming_the_field(
    llama8b: ModelCard, rtx4090: GPU, change: dict[str, object], field: str
) -> None:
    lay = dataclasses.replace(_zero3(2, state_offload=True), **change)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=rf"state_offload: .*{field}"):
        estimate(llama8b, "full_finetune", Cluster.of(rtx4090, 2), lay)


def test_fsdp_offloads_with_any_optimizer_that_steps_on_the_cpu(
    llama8b: ModelCard, rtx4090: GPU
) -> None:
    """FSDP's CPU offload steps any torch optimizer on the host's parameters; DeepSpeed's only
    its CPU Adam."""
    for optimizer in ("adafactor", "sgd", "adam"):
        est = estimate(
            llama8b,
            "full_finetune",
            Cluster.of(rtx4090, 2),
            _zero3(2, state_offload=True, optimizer=optimizer),
        )
        assert est.layout.state_offload and est.memory.optimizer_gib == 0.0
    spec = LayoutSpec(framework="deepspeed", optimizer="adafactor", seq_len=2048, global_batch=8)
    result = search_layout(llama8b, "full_finetune", Cluster.of(rtx4090, 2), spec)
    found = result.best or result.closest
    assert found is not None and not found.layout.state_offload


def test_the_search_offloads_only_where_nothing_fits_without_it(
    llama8b: ModelCard, llama70b: ModelCard, rtx4090: GPU
) -> None:
    spec = LayoutSpec(seq_len=2048)
    fits_plain = search_layout(llama8b, "qlora", Cluster.of(rtx4090, 2), spec).best
    assert fits_plain is not None and not fits_plain.layout.state_offload
    needs_it = search_layout(llama70b, "qlora", Cluster.of(rtx4090, 2), spec).best
    assert needs_it is not None and needs_it.layout.state_offload and needs_it.fits
    assert search_layout(llama70b, "qlora", Cluster.of(rtx4090, 2),
                         dataclasses.replace(spec, state_offload=False, offload=False)).best is None
    # asked for, it is kept where it applies
    forced = search_layout(
        llama8b, "qlora", Cluster.of(rtx4090, 2), dataclasses.replace(spec, state_offload=True)
    )
    assert forced.best is not None and forced.best.layout.state_offload
