"""Megatron-FSDP (`--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads |
optim_grads_params`): Megatron's kernels and parallelism with ZeRO-2/3 sharding. Its sharded
gradients leave nothing to accumulate into locally, so every micro-batch reduce-scatters
(megatron-core 0.16 megatron_fsdp.py, `grad_reduce_every_bprop`). Estimated where a job states it;
never searched."""

from __future__ import annotations

from dataclasses import replace

import pytest

from plan.models.catalog import builtin_catalog
from plan.planner.estimate import Cluster, Layout, LayoutSpec, estimate, search_layout
from plan.planner.estimate.factors import GIB

# Llama 3.1 405B as the Llama 3 paper ran it (section 3.3.2): TP 8 x PP 16 at 8k tokens, no
# recomputation, 16 sequences per data-parallel replica (Table 4), on 16,384 H100s
LLAMA3_405B = Layout(
    tp=8,
    pp=16,
    dp=128,
    zero=1,
    recompute="none",
    micro_batch=1,
    global_batch=2048,
    seq_len=8192,
    precision="bf16",
    sequence_parallel=True,
    lora_rank=None,
    framework="megatron",
)


def _estimate(zero: int, **change: object):
    catalog = builtin_catalog()
    cluster = Cluster.of(catalog.gpu("h100-sxm"), 16384)
    return estimate(
        catalog.model("llama3.1-405b"),
        "pretrain",
        cluster,
        replace(LLAMA3_405B, zero=zero, **change),
    )


def test_sharded_gradients_and_weights_leave_the_activations_unchanged():
    one, two, three = _estimate(1), _estimate(2), _estimate(3)
    params_per_gpu = one.memory.weights_gib * GIB / 2.0  # 16-bit weights of the peak stage
    # ZeRO-1 keeps the fp32 main_grad whole; optim_grads shards it over the 128 data-parallel ranks
    assert one.memory.gradients_gib == pytest.approx(params_per_gpu * 4.0 / GIB)
    assert two.memory.gradients_gib == pytest.approx(one.memory.gradients_gib / 128)
    assert two.memory.weights_gib == pytest.approx(one.memory.weights_gib)
    # optim_grads_params shards the weights too (two gathered layers come back in `other`)
    assert three.memory.weights_gib == pytest.approx(one.memory.weights_gib / 128)
    assert three.memory.other_gib > two.memory.other_gib
    for est in (two, three):
        assert est.memory.activations_gib == pytest.approx(one.memory.activations_gib)
        assert est.memory.optimizer_gib == pytest.approx(one.memory.optimizer_gib)
    # the paper's layout does not fit the card with Megatron's whole fp32 gradient buffer; sharded,
    # it does
    assert not one.fits and two.fits and three.fits


def test_llama3_405b_as_meta_ran_it_runs_at_the_card_limit():
    """Interleaved over 8 virtual stages as the paper ran it, gradients and optimizer states sharded
    ("we could pre-train Llama 3 on sequences of 8K tokens without activation checkpointing"): the
    16M-token batch puts every micro-batch in flight at once, which runs on the 80 GB card only at
    its limit, the caching allocator's cache squeezed; with Megatron's whole fp32 gradient buffers
    it does not."""
    sharded = _estimate(2, virtual_pipeline=8)
    assert sharded.fits_card and not sharded.fits
    assert not _estimate(1, virtual_pipeline=8).fits_card


def test_every_micro_batch_pays_its_reduction():
    one, two, three = _estimate(1), _estimate(2), _estimate(3)
    # 16 micro-batches per step: sixteen fp32 reduce-scatters where the distributed optimizer runs
    # one
    assert two.time.dp_comm_s > 5 * one.time.dp_comm_s
    # ZeRO-3 gathers every layer twice per micro-batch besides
    assert three.time.dp_comm_s > two.time.dp_comm_s
    assert one.time.compute_s == two.time.compute_s == three.time.compute_s
    assert "Megatron-FSDP (optim_grads)" in " ".join(two.notes)


def test_the_search_states_it_never_chooses_it():
    """A row or job that names only ZeRO 2 or 3 ran FSDP or DeepSpeed; a Megatron job that names no
    stage gets the distributed optimizer, even where only Megatron-FSDP would fit."""
    catalog = builtin_catalog()
    model, cluster = catalog.model("llama3.1-405b"), Cluster.of(catalog.gpu("h100-sxm"), 16384)
    fixed = dict(
        tp=8, pp=16, cp=1, recompute="none", micro_batch=1, global_batch=2048, seq_len=8192
    )
    stated = search_layout(
        model, "pretrain", cluster, LayoutSpec(framework="megatron", zero=2, **fixed)
    ).best
    assert stated is not None and stated.layout.zero == 2 and stated.layout.framework == "megatron"
    assert (
        search_layout(model, "pretrain", cluster, LayoutSpec(framework="megatron", **fixed)).best
        is None
    )
    unnamed = search_layout(model, "pretrain", cluster, LayoutSpec(zero=2, **fixed))
    assert all(layout.framework != "megatron" for layout, _ in unnamed.rejected)
    assert unnamed.best is None or unnamed.best.layout.framework == "fsdp"


def test_its_band_says_no_row_measures_it():
    from plan.planner.estimate.band import MEGATRON_FSDP_EXECUTION

    assert MEGATRON_FSDP_EXECUTION in _estimate(2).uncalibrated
    assert MEGATRON_FSDP_EXECUTION not in _estimate(1).uncalibrated


@pytest.mark.parametrize("zero, strategy", [(2, "optim_grads"), (3, "optim_grads_params")])
def test_the_megatron_export_runs_it(zero, strategy):
    """A Megatron plan at ZeRO 2/3 exports Megatron-FSDP's flags, without the distributed
    optimizer's, and without CUDA_DEVICE_MAX_CONNECTIONS=1, which Megatron-FSDP refuses
    (launch-configs.md section 2)."""
    from plan.models.scenario import Job
    from plan.planner.export import build_layout, render_stack
    from tests.export.test_export_golden import _plan

    job = Job(
        id="pt",
        model="llama3-8b",
        method="pretrain",
        tokens=64 * 4096 * 100,
        seq_len=4096,
        global_batch=64,
    )
    plan = _plan(
        "pt",
        16,
        2,
        dp=16,
        zero=zero,
        recompute="none",
        global_batch=64,
        seq_len=4096,
        framework="megatron",
    )
    files, notes = render_stack(
        build_layout(plan, job, builtin_catalog().model("llama3-8b")), "megatron"
    )
    script = files["train.sh"]
    assert f"--use-megatron-fsdp --data-parallel-sharding-strategy {strategy}" in script
    assert (
        "--use-distributed-optimizer" not in script and "CUDA_DEVICE_MAX_CONNECTIONS" not in script
    )
    assert any(f"Megatron-FSDP ({strategy})" in note and "fsdp_dtensor" in note for note in notes)
