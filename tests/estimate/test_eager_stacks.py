"""Eager PyTorch stacks (Hugging Face, torchtune, peft) against fused ones: the activations they
keep, the loss's bytes, peft's adapter traffic and the host's kernel-issue floor; and the estimator
against this project's own measurements on an H200 (bench/data/measured_h200.csv)."""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.gpu import GPU
from plan.models.model_card import ModelCard
from plan.planner.estimate import Cluster, estimate, shape_of
from plan.planner.estimate.factors import (
    HOST_SECONDS_PER_LAYER_PASS,
    LOGIT_BYTES,
    LOGIT_BYTES_FP32_LOSS,
)
from plan.planner.estimate.memory import _logit_bytes, activation_bytes_per_token_layer
from plan.planner.estimate.types import Layout
from tests.bench_modules import load_bench

# bytes per token and layer that autograd kept in an eager Hugging Face Llama layer on the H200
# (bench/device/runs/run2.jsonl, `saved` records: decoder-only forward, no recomputation)
MEASURED_LAYER_BYTES = {"llama3.2-1b": 109708.4, "llama3.2-3b": 131843.7, "llama3.1-8b": 201624.4,
                        "qwen2.5-1.5b": 103814.0}
# the same layers with each under torch.compile (bench/device/runs/run6.jsonl, `compiled` records)
MEASURED_COMPILED_LAYER_BYTES = {"llama3.2-1b": 76684.4, "llama3.1-8b": 140184.4}


def layout(**kw: object) -> Layout:
    base: dict[str, object] = dict(
        tp=1,
        pp=1,
        dp=1,
        zero=0,
        recompute="none",
        micro_batch=4,
        global_batch=4,
        seq_len=2048,
        precision="bf16",
        sequence_parallel=False,
        lora_rank=None,
        framework="fsdp",
    )
    base.update(kw)
    return Layout(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("model_id", sorted(MEASURED_LAYER_BYTES))
def test_eager_layer_keeps_what_was_measured(model_id: str) -> None:
    shape = shape_of(builtin_catalog().model(model_id))
    eager = activation_bytes_per_token_layer(shape, layout())
    fused = activation_bytes_per_token_layer(shape, layout(fused_modules=True))
    assert eager == pytest.approx(MEASURED_LAYER_BYTES[model_id], rel=0.02)
    # the fused formula alone under-counts the eager stack by a quarter or more
    assert fused < 0.8 * eager


@pytest.mark.parametrize("model_id", sorted(MEASURED_COMPILED_LAYER_BYTES))
def test_compiled_layer_keeps_what_the_fused_formula_counts(model_id: str) -> None:
    shape = shape_of(builtin_catalog().model(model_id))
    fused = activation_bytes_per_token_layer(shape, layout(fused_modules=True))
    assert fused == pytest.approx(MEASURED_COMPILED_LAYER_BYTES[model_id], rel=0.02)


def test_eager_terms_belong_to_the_pytorch_stacks(llama8b: ModelCard) -> None:
    shape = shape_of(llama8b)
    megatron = activation_bytes_per_token_layer(shape, layout(framework="megatron"))
    assert (
        activation_bytes_per_token_layer(shape, layout(framework="megatron", fused_modules=True))
        == megatron
    )
    assert activation_bytes_per_token_layer(shape, layout(fused_modules=True)) == pytest.approx(
        megatron
    )
    deepspeed = activation_bytes_per_token_layer(shape, layout(framework="deepspeed"))
    assert deepspeed == activation_bytes_per_token_layer(shape, layout())
    h, q, f = shape.hidden, shape.q_dim, shape.ffn_width_active
    # norms' fp32 copies, o-proj copy, SwiGLU
    assert deepspeed - megatron == pytest.approx(6 * h + 2 * q + 2 * f)


def test_layer_norm_models_keep_the_fused_formula(gpt7b: ModelCard) -> None:
    # LayerNorm + GELU layers (MPT, GPT): one F.layer_norm kernel, and flash-attn's output reused
    shape = shape_of(gpt7b)
    assert activation_bytes_per_token_layer(shape, layout()) == pytest.approx(
        activation_bytes_per_token_layer(shape, layout(fused_modules=True)))


def test_peft_lora_keeps_two_more_hidden_copies(llama8b: ModelCard) -> None:
    shape = shape_of(llama8b)
    full = activation_bytes_per_token_layer(shape, layout())
    lora = activation_bytes_per_token_layer(shape, layout(lora_rank=16))
    assert lora - full == pytest.approx(4 * shape.hidden)  # measured 3.9-4.2 h on two 8B shapes
    assert activation_bytes_per_token_layer(
        shape, layout(lora_rank=16, fused_modules=True)
    ) == pytest.approx(activation_bytes_per_token_layer(shape, layout(fused_modules=True)))


def test_loss_bytes_of_hugging_face_models_under_deepspeed() -> None:
    # DeepSpeed runs Hugging Face models (their cross-entropy on upcast logits);
    # Megatron-DeepSpeed's tensor parallelism brings Megatron's fused vocab-parallel loss
    assert _logit_bytes(layout(framework="deepspeed")) == LOGIT_BYTES_FP32_LOSS == 12.0
    assert _logit_bytes(layout(framework="deepspeed", tp=2)) == LOGIT_BYTES


def test_small_micro_batches_of_eager_stacks_are_host_bound(h100: GPU) -> None:
    card = builtin_catalog().model("llama3.2-1b")
    cluster = Cluster.of(h100, 1)
    small = estimate(
        card, "full_finetune", cluster, layout(micro_batch=1, global_batch=1, seq_len=512)
    )
    floor = 3 * HOST_SECONDS_PER_LAYER_PASS["full"] * card.layers
    assert small.time.host_s > 0
    # the estimate says why its MFU is low
    assert any(note.startswith("host-bound: ") for note in small.notes)
    assert small.time.compute_s + small.time.recompute_s + small.time.host_s == pytest.approx(floor)
    for other in (layout(micro_batch=1, global_batch=1, seq_len=512, fused_modules=True),
                  layout(micro_batch=1, global_batch=1, seq_len=512, framework="megatron")):
        fast = estimate(card, "full_finetune", cluster, other)
        assert fast.time.host_s == 0.0
        assert fast.tokens_per_s > small.tokens_per_s
    large = estimate(
        card, "full_finetune", cluster, layout(micro_batch=8, global_batch=8, seq_len=4096)
    )
    assert large.time.host_s == 0.0  # the GPU's work hides the host
    assert not any(note.startswith("host-bound: ") for note in large.notes)


def test_the_slowest_stage_is_the_one_whose_host_issues_longest(h100: GPU) -> None:
    """Uneven pipeline stages: Qwen2.5 7B's 28 layers over 8 stages put 3 layers and the output
    layer on the last, 4 on the others. With one short micro-batch the eager stack is host-bound,
    and a 4-layer stage issues a third more kernels than the last: it paces the step, on a GPU of
    any speed. The stage was once chosen by compute alone, so twice the card's peak moved the choice
    to a 4-layer stage and the step grew from 0.19 s to 0.25 s (bench/estimate_invariants.py --seed
    42)."""
    card = builtin_catalog().model("qwen2.5-7b")
    lay = layout(tp=2, pp=8, dp=2, zero=3, recompute="selective", micro_batch=1, global_batch=2,
                 sequence_parallel=True, lora_rank=16, loss="fused", flash_attention=False)
    peak = h100.peak_tflops
    doubled = h100.model_copy(
        update={
            "peak_tflops": peak.model_copy(
                update={
                    name: value * 2
                    for name, value in peak.model_dump().items()
                    if isinstance(value, (int, float)) and value
                }
            )
        }
    )
    base, faster = (estimate(card, "lora", Cluster.of(gpu, 32), lay) for gpu in (h100, doubled))
    assert base.time.host_s > 0
    assert faster.step_time_s <= base.step_time_s * (1 + 1e-9)
    # the bubble is (pp - 1) stage micro-batches, each at least a 4-layer stage's kernel issue
    four_layers = 3 * HOST_SECONDS_PER_LAYER_PASS["adapter"] * 4
    assert base.time.pp_bubble_s >= 7 * four_layers


def test_peft_adapters_move_more_bytes_than_fused_ones(llama8b: ModelCard, h100: GPU) -> None:
    cluster = Cluster.of(h100, 1)
    lay = layout(lora_rank=16, micro_batch=4, global_batch=4, seq_len=4096)
    eager = estimate(llama8b, "lora", cluster, lay)
    fused = estimate(llama8b, "lora", cluster, replace(lay, fused_modules=True))
    assert eager.time.compute_s > fused.time.compute_s
    full = estimate(llama8b, "full_finetune", cluster, replace(lay, lora_rank=None))
    # no weight gradients still outweighs the casts
    assert eager.time.compute_s < full.time.compute_s


def _validate_module(monkeypatch: pytest.MonkeyPatch) -> object:
    # what the bench sets for itself, undone after the test
    monkeypatch.setenv("PLAN_CACHE_DIR", "off")
    return load_bench("validate_estimates", monkeypatch)


def test_estimates_against_the_own_h200_measurements(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _validate_module(monkeypatch)
    rows, ooms, ran = bench.own_rows(bench.OWN_MEASUREMENTS)  # type: ignore[attr-defined]
    memory = [abs(r.error) for r in rows if r.kind == "memory"]
    speed = [abs(r.error) for r in rows if r.kind == "throughput"]
    assert len(memory) >= 8 and len(speed) >= 15
    assert statistics.median(memory) <= 0.08 and max(memory) <= 0.15
    assert statistics.median(speed) <= 0.08 and max(speed) <= 0.20
    assert ooms and all(judged for _, judged in ooms)  # what ran out of memory is judged not to fit
    # and what ran, within 0.6 GiB of the card (H200-13), is judged to run
    assert len(ran) >= 15 and all(judged for _, judged in ran)
