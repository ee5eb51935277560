"""Memory: what is alive at the peak (loss phase vs re-materialised layer), and what the PyTorch
stacks hold that Megatron does not (DTensor's gathered inputs, the FSDP root, pipelining's stage
outputs)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from plan.models.model_card import ModelCard
from plan.planner.estimate import Cluster, Layout, LayoutSpec, search_layout
from plan.planner.estimate.activations import backward_gradient_bytes_per_token
from plan.planner.estimate.factors import (
    ALLOCATOR_FRAGMENTATION,
    CUDA_CONTEXT_GIB,
    GIB,
    LOGIT_BYTES,
    LOGIT_BYTES_FP32_LOSS,
    LOGIT_BYTES_VOCAB_PARALLEL_EAGER,
    UPCAST_LOGIT_RESERVED_BYTES,
)
from plan.planner.estimate.flops import shape_of
from plan.planner.estimate.memory import (
    _logit_bytes,
    activation_bytes_per_token_layer,
    in_flight_micro_batches,
    memory_per_gpu,
)
from tests.estimate.conftest import make_gpu


def one_gpu(*, mb: int = 2, seq: int = 2048, framework: str = "fsdp", recompute: str = "full",
            tp: int = 1, pp: int = 1, dp: int = 1, zero: int = 0, gb: int | None = None) -> Layout:
    return Layout(
        tp=tp,
        pp=pp,
        dp=dp,
        zero=zero,
        recompute=recompute,
        micro_batch=mb,
        global_batch=gb or mb * dp,
        seq_len=seq,
        precision="bf16",
        sequence_parallel=tp > 1,
        lora_rank=None,
        framework=framework,
    )


@pytest.mark.parametrize("vocab", [128256, 1000])
def test_full_recompute_peaks_at_the_larger_of_loss_and_layer(
    llama8b: ModelCard, vocab: int
) -> None:
    # One GPU, full recomputation: the checkpoints are alive throughout; the logits and the loss
    # buffers are freed before the first layer is re-materialised, so only the larger phase counts.
    card = llama8b.model_copy(update={"vocab_size": vocab})
    shape, lay = shape_of(card), one_gpu()
    tokens = lay.micro_batch * lay.seq_len
    checkpoints = 2.0 * shape.hidden * tokens * shape.layers
    # the layer re-materialised and the gradients its backward pass computes beside it
    working = (activation_bytes_per_token_layer(shape, lay)
               + backward_gradient_bytes_per_token(shape, lay)) * tokens
    loss = tokens * shape.vocab * LOGIT_BYTES_FP32_LOSS + 2.0 * shape.hidden * tokens
    mem = memory_per_gpu(shape, "pretrain", lay, 80.0).breakdown
    dynamic = mem.activations_gib + mem.other_gib - CUDA_CONTEXT_GIB
    # at the loss the caching allocator also holds one fp32 logit-sized block, of which the
    # fragmentation already counts its share and the re-materialised layer's larger phase the rest
    upcast = tokens * shape.vocab * UPCAST_LOGIT_RESERVED_BYTES
    reserved = max(0.0, upcast - ALLOCATOR_FRAGMENTATION * loss - max(0.0, working - loss))
    expected = (1 + ALLOCATOR_FRAGMENTATION) * (checkpoints + max(loss, working)) + reserved
    assert dynamic == pytest.approx(expected / GIB)
    assert (loss > working) == (vocab > 100_000)  # both regimes are exercised
    # where the layer's phase is the larger, it holds the block
    assert (reserved > 0) == (vocab > 100_000)


def test_dtensor_tensor_parallel_keeps_the_gathered_norm_outputs(llama70b: ModelCard) -> None:
    # torchtitan's sequence parallelism saves the all-gathered inputs of the QKV and FFN-in
    # projections; Megatron saves its local shard: 2 tensors of h per token, 16-bit, less the shard
    # already counted. (torchtitan compiled: fused modules, so the eager terms stay out of the
    # difference)
    shape = shape_of(llama70b)
    fsdp = activation_bytes_per_token_layer(
        shape, replace(one_gpu(tp=8, recompute="none"), fused_modules=True)
    )
    megatron = activation_bytes_per_token_layer(
        shape, one_gpu(tp=8, recompute="none", framework="megatron")
    )
    assert fsdp - megatron == pytest.approx(2.0 * 2 * shape.hidden * (1 - 1 / 8))
    # without tensor parallelism there is nothing to gather
    assert activation_bytes_per_token_layer(
        shape, replace(one_gpu(), fused_modules=True)
    ) == pytest.approx(activation_bytes_per_token_layer(shape, one_gpu(framework="megatron")))


def test_loss_bytes_per_logit_follow_the_stack() -> None:
    fsdp_tp = one_gpu(tp=2)
    assert _logit_bytes(fsdp_tp) == LOGIT_BYTES_VOCAB_PARALLEL_EAGER
    assert _logit_bytes(one_gpu()) == LOGIT_BYTES_FP32_LOSS
    assert _logit_bytes(one_gpu(tp=2, framework="megatron")) == LOGIT_BYTES
    assert LOGIT_BYTES < LOGIT_BYTES_FP32_LOSS < LOGIT_BYTES_VOCAB_PARALLEL_EAGER
    for lay in (fsdp_tp, one_gpu(), one_gpu(framework="megatron")):
        chunked = replace(lay, loss="chunked")
        assert 2.0 < _logit_bytes(chunked) < _logit_bytes(lay)  # the bf16 logits stay whole


def test_fsdp_root_module_stays_gathered(llama8b: ModelCard) -> None:
    # FULL_SHARD against SHARD_GRAD_OP on one layout: besides the sharded states, ZeRO-3 holds the
    # current and the prefetched block and the root's embedding and output layer, all 16-bit.
    shape = shape_of(llama8b)
    z3 = memory_per_gpu(shape, "pretrain", one_gpu(dp=8, zero=3, recompute="none"), 80.0).breakdown
    z2 = memory_per_gpu(shape, "pretrain", one_gpu(dp=8, zero=2, recompute="none"), 80.0).breakdown
    gathered = 2 * shape.layer_params_per_gpu(1, 1) + shape.embed_params + shape.head_params
    assert z3.other_gib - z2.other_gib == pytest.approx(gathered * 2.0 / GIB)


def test_torch_pipelining_keeps_each_in_flight_stage_output(llama70b: ModelCard) -> None:
    # torch.distributed.pipelining caches every in-flight micro-batch's stage output for its
    # backward; Megatron frees the data once sent. Same layout, tp = 1 (no DTensor term), the first
    # stage peaks.
    shape = shape_of(llama70b)
    # fused modules: no eager terms; a chunked loss on both and no recomputation: the last stage's
    # loss and the logits torch pipelining keeps there stay below the first stage's peak
    lay = replace(one_gpu(mb=1, seq=4096, pp=4, dp=1, gb=16, recompute="none"), fused_modules=True,
                  loss="chunked")
    fsdp = memory_per_gpu(shape, "pretrain", lay, 80.0).breakdown
    mega = memory_per_gpu(shape, "pretrain", replace(lay, framework="megatron"), 80.0).breakdown
    stage_output = 2.0 * shape.hidden * lay.seq_len * lay.micro_batch / GIB
    assert fsdp.activations_gib - mega.activations_gib == pytest.approx(
        stage_output * in_flight_micro_batches(lay))



def test_lora_is_never_pipelined_on_fsdp(llama70b: ModelCard) -> None:
    # No PyTorch stack that trains adapters pipelines (torchtune, PEFT/accelerate, LLaMA-Factory's
    # FSDP path); torchtitan pipelines but has no adapters. A pp the user fixes goes to Megatron
    # (Megatron-Bridge pipelines LoRA); for QLoRA, which Megatron has no path for, or on a stated
    # fsdp, it is refused.
    cluster = Cluster.of(make_gpu("h100-sxm", arch="hopper", bf16=989.0, link_gb_per_s=900.0), 16)
    for method, framework in (("lora", None), ("qlora", None), ("lora", "fsdp")):
        result = search_layout(
            llama70b, method, cluster, LayoutSpec(seq_len=4096, lora_rank=16, framework=framework)
        )
        assert result.reasons.get("no FSDP-family stack pipelines LoRA/QLoRA", 0) > 0
        assert result.best is not None
        assert not any(lay.framework == "fsdp" and lay.pp > 1
                       for lay in [result.best.layout, *(r[0] for r in result.rejected)])
    fixed = search_layout(
        llama70b, "lora", cluster, LayoutSpec(seq_len=4096, lora_rank=16, pp=2)
    ).best
    assert fixed is not None and fixed.layout.pp == 2 and fixed.layout.framework == "megatron"
    for method, framework in (("qlora", None), ("lora", "fsdp")):
        with pytest.raises(ValueError, match=r"^pp: no FSDP-family stack pipelines LoRA/QLoRA; no "
                                             r"stack runs"):
            search_layout(
                llama70b,
                method,
                cluster,
                LayoutSpec(seq_len=4096, lora_rank=16, pp=2, framework=framework),
            )


def test_qlora_base_is_sharded_not_tensor_parallel_unless_asked(llama70b: ModelCard) -> None:
    # bitsandbytes' packed 4-bit layers are sharded by FSDP/ZeRO-3, never sliced by tensor
    # parallelism (the llamafactory export refuses AutoTP over a 4-bit base); a tp the user fixes is
    # refused
    cluster = Cluster.of(make_gpu("h100-sxm", arch="hopper", bf16=989.0, link_gb_per_s=900.0), 8)
    result = search_layout(llama70b, "qlora", cluster, LayoutSpec(seq_len=4096, lora_rank=16))
    assert result.reasons.get("no stack tensor-parallelizes a 4-bit QLoRA base", 0) > 0
    assert result.best is not None and result.best.layout.tp == 1
    assert all(lay.tp == 1 for lay in (r[0] for r in result.rejected))
    # plain LoRA may still be tensor-parallel (DeepSpeed AutoTP, Megatron-Bridge)
    lora = search_layout(llama70b, "lora", cluster, LayoutSpec(seq_len=4096, lora_rank=16))
    assert "no stack tensor-parallelizes a 4-bit QLoRA base" not in lora.reasons
    with pytest.raises(ValueError, match=r"^tp: no stack tensor-parallelizes a 4-bit QLoRA base"):
        search_layout(llama70b, "qlora", cluster, LayoutSpec(seq_len=4096, lora_rank=16, tp=2))


@pytest.mark.parametrize("vpp", [1, 2, 4])
def test_each_pipeline_stage_holds_its_warm_up_but_no_more_than_the_step_has(vpp: int) -> None:
    # Megatron-LM's schedules: stage r runs p - r - 1 warm-up forwards with 1F1B, 2(p - r - 1) + (v
    # - 1)p chunks when interleaved, then one more before its first backward; all of them when the
    # step has fewer. With as many micro-batches as stages, every interleaved stage holds them all.
    p = 8
    def lay(m: int) -> Layout:
        return replace(one_gpu(mb=1, pp=p, gb=m, framework="megatron"), virtual_pipeline=vpp)
    for m in (2, p, 4 * p):
        for rank in range(p):
            held = in_flight_micro_batches(lay(m), rank)
            warm = 2 * (p - rank - 1) + (vpp - 1) * p if vpp > 1 else p - rank - 1
            assert held == pytest.approx(min(m * vpp, warm + 1) / vpp)
            assert held <= m
    assert in_flight_micro_batches(lay(4 * p), 0) == pytest.approx(
        p + (p - 1) / vpp if vpp > 1 else p
    )
    # m = p: interleaved stages 0 and 1 both hold all p micro-batches; 1F1B's stage 1 one fewer
    assert in_flight_micro_batches(lay(p), 1) == (p if vpp > 1 else p - 1)


def test_the_second_stage_counts_its_capped_micro_batches(llama70b: ModelCard) -> None:
    # 78 layers on pp 8 (9 on the first stage, 10 on the middle ones) with 8 micro-batches,
    # interleaved: stage 1 holds all 8 micro-batches of its 10 layers, the peak (not 7, as "two
    # chunks fewer than the first stage" would say once the step caps the warm-up; the first stage's
    # 8 x 9 would then be the peak).
    shape = shape_of(llama70b.model_copy(update={"layers": 78}))
    lay = replace(one_gpu(mb=1, seq=4096, pp=8, gb=8, framework="megatron", recompute="none"),
                  virtual_pipeline=2, fused_modules=True)
    mem = memory_per_gpu(shape, "pretrain", lay, 80.0).breakdown
    per_layer = activation_bytes_per_token_layer(shape, lay) * lay.seq_len / GIB
    assert mem.activations_gib == pytest.approx(8 * 10 * per_layer)
