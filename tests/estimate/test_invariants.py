"""Directions a planner relies on when it compares layouts: more GPU work never shortens a step, no
time window hides a collective twice, a ZeRO stage that only adds traffic is not faster,
SHARD_GRAD_OP over one rank holds what NO_SHARD holds, a micro-batch size that fits is found, the
free search is never beaten by a field fixed within it, and a fixed field no stack runs is refused.
Each case here broke on the code before it was fixed; bench/estimate_invariants.py draws thousands
more (a small draw of it runs below)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from plan.models.catalog import builtin_catalog
from plan.planner.estimate import Cluster, LayoutSpec, estimate, search_layout
from plan.planner.estimate.types import Layout
from tests.bench_modules import load_bench

CATALOG = builtin_catalog()


def _estimate(model: str, method: str, gpu: str, gpus: int, **fields: Any) -> Any:
    layout = Layout(
        **{"sequence_parallel": False, "lora_rank": None, "precision": "bf16", **fields}
    )
    return estimate(CATALOG.model(model), method, Cluster.of(CATALOG.gpu(gpu), gpus), layout)


def test_recomputation_never_shortens_a_host_bound_step() -> None:
    """An eager stack's host issues kernels while the GPU computes and while it waits on a
    collective: the step is the longer of the two. Before, the host's excess was taken over the
    compute alone and the data-parallel wait added on top, so recomputation (more GPU work) hid both
    and the step got shorter."""
    base = dict(
        tp=8,
        pp=2,
        cp=2,
        dp=2,
        zero=0,
        recompute="none",
        micro_batch=1,
        global_batch=4,
        seq_len=4096,
        optimizer="adam",
        framework="deepspeed",
        fused_modules=False,
        loss="fused",
    )
    plain = _estimate("llama3.1-8b", "dpo", "a100-40gb", 64, **base)
    redone = _estimate("llama3.1-8b", "dpo", "a100-40gb", 64, **{**base, "recompute": "selective"})
    assert plain.time.host_s > 0  # the case is host-bound
    assert redone.step_time_s >= plain.step_time_s


def test_a_dpo_reference_forward_hides_data_parallel_traffic_once() -> None:
    """The passes' windows for hiding ZeRO-3's gathers add up to the micro-batch's compute. Before,
    each of DPO's two forward passes got a third of a compute that already held the reference
    forward, so slower attention (eager, more compute) hid more traffic than it added and made the
    step shorter."""
    base = dict(
        tp=8,
        pp=1,
        cp=4,
        dp=4,
        zero=3,
        recompute="full",
        micro_batch=1,
        global_batch=16,
        seq_len=8192,
        sequence_parallel=True,
        optimizer="adam",
        framework="deepspeed",
        fused_modules=True,
        loss="fused",
    )
    flash = _estimate("llama2-7b", "dpo", "a100-80gb", 128, **base)
    eager = _estimate("llama2-7b", "dpo", "a100-80gb", 128, **{**base, "flash_attention": False})
    assert flash.time.dp_comm_s > 0
    assert eager.step_time_s >= flash.step_time_s


def test_deepspeed_zero2_gathers_the_updated_parameters_as_zero1_does() -> None:
    """DeepSpeed's stages 1 and 2 both all-gather the updated 16-bit parameters after the step;
    stage 2 also reduce-scatters every micro-batch's gradients. Stage 2's gather was missing, and it
    came out faster than stage 1 (a 9B DPO on 16 RTX 4090s, 5.53 -> 5.28 s)."""
    base = dict(
        tp=4,
        pp=1,
        dp=4,
        zero=1,
        recompute="none",
        micro_batch=1,
        global_batch=8,
        seq_len=8192,
        sequence_parallel=True,
        optimizer="adafactor",
        framework="deepspeed",
        fused_modules=True,
        loss="chunked",
    )
    one = _estimate("glm-4-9b", "dpo", "rtx-4090", 16, **base)
    two = _estimate("glm-4-9b", "dpo", "rtx-4090", 16, **{**base, "zero": 2})
    assert two.time.dp_comm_s >= one.time.dp_comm_s
    assert two.step_time_s >= one.step_time_s


def test_shard_grad_op_over_one_rank_holds_what_no_shard_holds() -> None:
    """FSDP SHARD_GRAD_OP defers its reduce-scatter to the step's last micro-batch and so holds
    unsharded fp32 gradients while it accumulates; over one data-parallel rank (a pipeline of 8
    stages) there is nothing to shard or defer, and ZeRO-2 held 8.6 GiB more than ZeRO-0."""
    base = dict(
        tp=1,
        pp=8,
        dp=1,
        zero=0,
        recompute="selective",
        micro_batch=1,
        global_batch=8,
        seq_len=2048,
        optimizer="adam",
        framework="fsdp",
        fused_modules=True,
        loss="fused",
    )
    no_shard = _estimate("qwen3-32b", "dpo", "a100-40gb", 8, **base)
    grad_op = _estimate("qwen3-32b", "dpo", "a100-40gb", 8, **{**base, "zero": 2})
    assert no_shard.memory.gradients_gib == pytest.approx(grad_op.memory.gradients_gib)
    assert grad_op.memory.total_gib <= no_shard.memory.total_gib
    # over 8 ranks, accumulating over 2 micro-batches, it holds the whole model's gradients in fp32
    sharded = {**base, "pp": 1, "dp": 8, "global_batch": 16}
    deferred = _estimate("qwen3-32b", "dpo", "a100-40gb", 8, **{**sharded, "zero": 2})
    params = CATALOG.model("qwen3-32b").params
    assert deferred.layout.micro_batches == 2
    assert deferred.memory.gradients_gib == pytest.approx(params * 4.0 / 2**30, rel=0.01)
    assert (
        deferred.memory.total_gib
        <= _estimate("qwen3-32b", "dpo", "a100-40gb", 8, **sharded).memory.total_gib
    )


def test_adapters_under_8bit_adamw_hold_every_gradient_in_fp32() -> None:
    """8-bit AdamW on adapters steps after the backward pass (the in-backward step is torchtune's
    full fine-tuning recipe's only, torchtune 0.3.1), so every adapter's gradient is held; on
    PyTorch's stacks in fp32 as peft's adapters are where no optimizer state keeps an fp32 copy
    (ADAPTER_FP32_BYTES): twice AdamW's 16-bit ones, sharded alike under ZeRO-3; DeepSpeed casts
    the adapters to 16-bit (its gradients as AdamW's). Never more memory than AdamW."""
    base = dict(
        tp=8,
        pp=1,
        dp=8,
        zero=3,
        recompute="none",
        micro_batch=8,
        global_batch=64,
        seq_len=1024,
        lora_rank=64,
        fused_modules=False,
        loss="chunked",
    )
    for framework, fp32_factor in (("fsdp", 2), ("deepspeed", 1)):
        adam, eight_bit = (
            _estimate("qwen3-14b", "qlora", "rtx-4090", 64,
                      **{**base, "framework": framework, "optimizer": optimizer})
            for optimizer in ("adam", "adam_8bit")
        )
        assert adam.memory.gradients_gib > 0
        assert eight_bit.memory.gradients_gib == pytest.approx(
            adam.memory.gradients_gib * fp32_factor, rel=0.01
        )
        assert eight_bit.memory.total_gib <= adam.memory.total_gib


def test_the_search_finds_the_whole_replica_batch_where_only_it_fits() -> None:
    """FSDP SHARD_GRAD_OP at one micro-batch per step holds no unsharded fp32 gradient buffer, so
    the whole replica batch can fit where one sequence per micro-batch does not. The search used to
    try one sequence first, and with it failing, gave up."""
    spec = LayoutSpec(
        tp=1, pp=1, framework="fsdp", zero=2, global_batch=4, seq_len=1024, memory_headroom=0.08
    )
    cluster = Cluster.of(CATALOG.gpu("h20"), 2)
    result = search_layout(CATALOG.model("llama3.1-8b"), "full_finetune", cluster, spec)
    assert result.best is not None
    assert result.best.layout.micro_batch == 2 and result.best.fits
    one = search_layout(
        CATALOG.model("llama3.1-8b"), "full_finetune", cluster, replace(spec, micro_batch=1)
    )
    # (one sequence per micro-batch does not fit: the case is the one meant)
    assert one.best is None


def test_megatron_interleaving_needs_pp_micro_batches_in_a_stated_layout() -> None:
    with pytest.raises(ValueError, match="virtual_pipeline: Megatron's interleaved schedule needs "
                                         "at least pp = 2"):
        _estimate(
            "qwen3-32b",
            "pretrain",
            "a100-40gb",
            32,
            tp=2,
            pp=2,
            cp=4,
            dp=2,
            zero=1,
            recompute="none",
            micro_batch=1,
            global_batch=2,
            seq_len=1024,
            virtual_pipeline=4,
            framework="megatron",
        )


def _bench() -> Any:
    return load_bench("estimate_invariants")


def test_random_layouts_keep_every_direction(capsys: pytest.CaptureFixture[str]) -> None:
    """A small draw of the invariant bench: every invariant is exercised and none breaks."""
    bench = _bench()
    assert bench.main(["--seed", "7", "--count", "300", "--searches", "60"]) == 0
    table = capsys.readouterr().out.split("broken\n", 1)[1]
    pairs = {line[:40].strip(): int(line[40:47]) for line in table.splitlines() if line.strip()
             and not line.startswith("  (")}
    assert set(pairs) == {name for name, *_ in bench.CHECKS} | {"search: fixing a field never "
                                                                "beats it",
                                                                "search: more memory never slower"}
    assert all(count > 0 for count in pairs.values()), pairs


def _search(model: str, method: str, gpu: str, gpus: int, **fields: Any) -> Any:
    spec = LayoutSpec(**{"memory_headroom": 0.08, **fields})
    return search_layout(CATALOG.model(model), method, Cluster.of(CATALOG.gpu(gpu), gpus), spec)


@pytest.mark.parametrize(("method", "fields", "why"), [
    ("qlora", {}, "torchtitan has no LoRA/QLoRA"),
    ("dpo", {"framework": "fsdp"}, "torchtitan has no DPO loss"),
    ("pretrain", {"framework": "fsdp", "precision": "fp16"}, "trains in bf16, not fp16"),
    ("pretrain", {"framework": "deepspeed"}, "DeepSpeed checkpoints whole layers only"),
])
def test_selective_recomputation_that_no_stack_runs_is_refused(method: str, fields: dict[str, Any],
                                                                why: str) -> None:
    """Selective recomputation on FSDP is torchtitan's op-level policy; the other PyTorch stacks
    checkpoint whole layers (their exports refuse it). Stated where only those could run the job, it
    is refused naming the field; before, it was estimated on a layout no stack runs."""
    with pytest.raises(ValueError, match=f"recompute: .*{why}"):
        _search(
            "llama3.1-8b", method, "a100-80gb", 8, recompute="selective", seq_len=2048, **fields
        )


def test_selective_recomputation_is_searched_only_where_torchtitan_runs_the_job() -> None:
    from plan.planner.estimate.stack_rules import recompute_options

    assert "selective" in recompute_options(LayoutSpec(), "fsdp", "pretrain")
    assert "selective" not in recompute_options(LayoutSpec(), "fsdp", "dpo")
    assert "selective" not in recompute_options(LayoutSpec(precision="fp16"), "fsdp", "pretrain")
    # stated with the model states offloaded, it stays where torchtitan offloads: FSDP2 sharding
    # over several ranks (a 9B pretraining run on 4 x A100-40GB), not on one
    found = _search(
        "glm-4-9b", "pretrain", "a100-40gb", 4, seq_len=2048, global_batch=64, recompute="selective"
    ).best
    assert found.layout.state_offload and found.layout.recompute == "selective"
    assert found.layout.dp * found.layout.cp > 1
    alone = _search(
        "glm-4-9b", "pretrain", "a100-40gb", 1, seq_len=2048, global_batch=64, recompute="selective"
    )
    assert alone.best is None or not alone.best.layout.state_offload


def test_a_stated_micro_batch_megatron_cannot_take_goes_to_a_stack_that_takes_it() -> None:
    """Megatron and DeepSpeed need micro-batch x accumulation steps = the replica batch: a stated 3
    over a replica batch of 8 is not Megatron's (it asserts at start-up), however fast the
    estimate."""
    found = _search("qwen2.5-7b", "full_finetune", "a100-40gb", 16, seq_len=1024, global_batch=64,
                    micro_batch=3).best
    assert found is not None
    assert (
        found.layout.framework == "fsdp" or (found.layout.global_batch // found.layout.dp) % 3 == 0
    )
    with pytest.raises(ValueError, match="micro_batch: megatron needs micro-batch x accumulation "
                                         "steps"):
        _estimate(
            "qwen2.5-7b",
            "full_finetune",
            "a100-40gb",
            16,
            tp=2,
            pp=1,
            dp=8,
            zero=1,
            recompute="none",
            micro_batch=3,
            global_batch=64,
            seq_len=1024,
            framework="megatron",
        )
    # stated on Megatron where no data-parallel size makes it divide, it is refused naming the field
    # (it was answered with an "uneven" layout as the least-memory one, "nothing fits" beside
    # fits=True)
    with pytest.raises(ValueError, match=r"micro_batch: megatron .* \(64 over dp = 1, .*3 divides "
                                         r"none"):
        _search(
            "llama3.1-8b",
            "pretrain",
            "h100-sxm",
            8,
            framework="megatron",
            micro_batch=3,
            global_batch=64,
        )
    divides = _search("llama3.1-8b", "pretrain", "h100-sxm", 8, framework="megatron", micro_batch=3,
                      global_batch=48).best
    assert divides.layout.framework == "megatron" and (48 // divides.layout.dp) % 3 == 0


def test_adapters_over_several_gpus_are_searched_with_replicated_data_parallelism() -> None:
    """LoRA and QLoRA over several GPUs usually run DDP (ZeRO-0): nothing is gathered, the adapters'
    all-reduce is small. FSDP's ZeRO-0 was not searched, and QLoRA of a 7B model on 8 RTX 4090s came
    out 19% slower (ZeRO-2, gathering the frozen base every micro-batch)."""
    free = _search("qwen2.5-7b", "qlora", "rtx-4090", 8, seq_len=1024, global_batch=256).best
    ddp = _search("qwen2.5-7b", "qlora", "rtx-4090", 8, seq_len=1024, global_batch=256, zero=0).best
    assert free.tokens_per_s >= ddp.tokens_per_s * (1 - 1e-9)
    assert free.layout.zero == 0


def test_block_recomputation_is_tried_wherever_it_could_win() -> None:
    """The search tries Megatron's block recomputation on a layout only where it could beat the
    fastest found; that bound left out the tensor-parallel collectives and the bubble that fewer
    recomputed layers also save, and a 32B LoRA on 8 RTX 4090s missed tp 4 x pp 2 with 7 layers a
    chunk."""
    free = _search("qwen3-32b", "lora", "rtx-4090", 8, seq_len=4096, global_batch=256).best
    fixed = _search("qwen3-32b", "lora", "rtx-4090", 8, seq_len=4096, global_batch=256, pp=2).best
    assert fixed.layout.recompute_layers is not None
    assert free.tokens_per_s >= fixed.tokens_per_s * (1 - 1e-9)
