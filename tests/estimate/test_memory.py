"""Memory: exact model-state values and monotone properties."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plan.models.gpu import GPU, IntraNodeLink, PeakTflops
from plan.models.model_card import ModelCard
from plan.planner.estimate import Cluster, Layout, estimate
from plan.planner.estimate.factors import GIB


def layout(
    gpus: int,
    *,
    tp: int = 1,
    pp: int = 1,
    zero: int = 0,
    recompute: str = "none",
    mb: int = 1,
    seq: int = 2048,
    rank: int | None = None,
    precision: str = "bf16",
) -> Layout:
    dp = gpus // (tp * pp)
    return Layout(tp=tp, pp=pp, dp=dp, zero=zero, recompute=recompute, micro_batch=mb,
                  global_batch=dp * mb * 4,
                  seq_len=seq, precision=precision, sequence_parallel=tp > 1, lora_rank=rank)


def states_gb(model: ModelCard, gpu: GPU, gpus: int, zero: int) -> float:
    est = estimate(model, "pretrain", Cluster.of(gpu, gpus), layout(gpus, zero=zero))
    m = est.memory
    return (m.weights_gib + m.gradients_gib + m.optimizer_gib) * GIB / 1e9


def test_mixed_precision_adam_is_16_bytes_per_parameter(gpt7b: ModelCard, a100: GPU) -> None:
    assert states_gb(gpt7b, a100, 1, 0) == pytest.approx(7.5e9 * 16 / 1e9, rel=1e-9)


@pytest.mark.parametrize("gpus", [1, 64])
def test_precision_aware_adam_keeps_bf16_gradients_and_16_bit_master_remainders(
    gpt7b: ModelCard, a100: GPU, gpus: int
) -> None:
    # bf16 weights 2 + bf16 main grads 2, then remainders 2 + fp32 moments 8 sharded by the
    # distributed
    # optimizer: 14 bytes/param on one GPU against mixed-precision Adam's 16 (18 with Megatron's
    # fp32 grads)
    lay = replace(
        layout(gpus, zero=1 if gpus > 1 else 0),
        framework="megatron",
        optimizer="adam_precision_aware",
    )
    est = estimate(gpt7b, "pretrain", Cluster.of(a100, gpus), lay)
    m = est.memory
    assert (m.weights_gib + m.gradients_gib) * GIB == pytest.approx(7.5e9 * 4, rel=1e-9)
    assert m.optimizer_gib * GIB == pytest.approx(7.5e9 * 10 / gpus, rel=1e-9)
    plain = estimate(
        gpt7b, "pretrain", Cluster.of(a100, gpus), replace(lay, optimizer="adam")
    ).memory
    assert plain.total_gib - m.total_gib == pytest.approx(7.5e9 * (2 + 2 / gpus) / GIB, rel=1e-9)
    assert any("16-bit remainders" in note for note in est.notes)


def test_precision_aware_adam_is_refused_outside_megatron(gpt7b: ModelCard, a100: GPU) -> None:
    lay = replace(layout(8, zero=3), framework="fsdp", optimizer="adam_precision_aware")
    with pytest.raises(ValueError, match="framework megatron"):
        estimate(gpt7b, "pretrain", Cluster.of(a100, 8), lay)


@pytest.mark.parametrize(("zero", "published_gb"), [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_paper_7_5b_on_64_gpus(
    gpt7b: ModelCard, a100: GPU, zero: int, published_gb: float
) -> None:
    # Rajbhandari et al. 2020, figure 1: (2 + 2 + 12) psi with stages sharding 12, 2 and 2 over 64
    expected = {0: 120.0, 1: 30 + 90 / 64, 2: 15 + 105 / 64, 3: 120 / 64}[zero]
    got = states_gb(gpt7b, a100, 64, zero)
    assert got == pytest.approx(expected, rel=1e-9)
    assert got == pytest.approx(published_gb, abs=0.05)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([2, 4, 8, 16, 32, 64, 128]))
def test_zero3_memory_per_gpu_falls_with_more_gpus(gpus: int) -> None:
    gpu = GPU(id="a100", name="a100", architecture="ampere", memory_gib=80.0,
              peak_tflops=PeakTflops(bf16=312.0),
              intra_node_link=IntraNodeLink(kind="nvlink", bandwidth_gb_per_s=600.0),
              gpus_per_node=8, form_factor="SXM", source="test")
    model = ModelCard(
        id="m",
        params=13e9,
        layers=40,
        hidden_size=5120,
        ffn_hidden_size=13824,
        num_heads=40,
        num_kv_heads=40,
        vocab_size=32000,
        max_positions=4096,
        source="test",
    )
    small = estimate(model, "pretrain", Cluster.of(gpu, gpus), layout(gpus, zero=3))
    large = estimate(model, "pretrain", Cluster.of(gpu, 2 * gpus), layout(2 * gpus, zero=3))
    assert large.memory.total_gib < small.memory.total_gib
    assert large.memory.weights_gib == pytest.approx(small.memory.weights_gib / 2)


def test_recompute_lowers_activation_memory_and_raises_step_time(
    llama8b: ModelCard, a100: GPU
) -> None:
    cluster = Cluster.of(a100, 8)
    none = estimate(llama8b, "pretrain", cluster, layout(8, zero=1, recompute="none"))
    full = estimate(llama8b, "pretrain", cluster, layout(8, zero=1, recompute="full"))
    assert full.memory.activations_gib < none.memory.activations_gib / 4
    assert full.step_time_s > none.step_time_s
    assert full.time.recompute_s > 0 == none.time.recompute_s


def test_qlora_below_lora_below_full_finetune(llama8b: ModelCard, a100: GPU) -> None:
    cluster = Cluster.of(a100, 1)
    full = estimate(llama8b, "full_finetune", cluster, layout(1, recompute="full"))
    lora = estimate(llama8b, "lora", cluster, layout(1, recompute="full", rank=16))
    qlora = estimate(llama8b, "qlora", cluster, layout(1, recompute="full", rank=16))
    assert qlora.memory.total_gib < lora.memory.total_gib < full.memory.total_gib
    # LoRA: no gradients or optimizer states for the frozen base
    assert lora.memory.gradients_gib < 0.1 and lora.memory.optimizer_gib < 1.0
    # QLoRA base: NF4 4.127 bits on the linear layers; the embeddings, output layer and norms fp32
    # on eager Hugging Face modules under autocast, which peft's prepare_model_for_kbit_training
    # upcasts (model_states.py KBIT_UPCAST_BYTES)
    linear = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336)
    embed = 2 * 128256 * 4096
    expected = (linear * 4.127 / 8 + (8.03e9 - linear) * 4) / GIB
    adapters = lora.memory.weights_gib - 8.03e9 * 2 / GIB
    assert qlora.memory.weights_gib - adapters == pytest.approx(expected, rel=0.01)
    assert embed < 8.03e9 - linear


def test_tensor_parallel_divides_weights(llama70b: ModelCard, h100: GPU) -> None:
    cluster = Cluster.of(h100, 8)
    tp1 = estimate(llama70b, "pretrain", cluster, layout(8, tp=1, zero=1))
    tp8 = estimate(llama70b, "pretrain", cluster, layout(8, tp=8, zero=1))
    assert tp8.memory.weights_gib == pytest.approx(tp1.memory.weights_gib / 8)
    assert not tp1.fits and tp8.margin_gib == pytest.approx(80.0 - tp8.memory.total_gib)


def test_activations_match_korthikanti_for_gpt_without_dropout(gpt7b: ModelCard, a100: GPU) -> None:
    # sbh x 32 per layer (Korthikanti's 34 minus the two 1-byte dropout masks), no recompute, tp = 1
    est = estimate(gpt7b, "pretrain", Cluster.of(a100, 1), layout(1, seq=2048, mb=1))
    expected = 2048 * 1 * 4096 * 32 * 36 / GIB
    assert est.memory.activations_gib == pytest.approx(expected, rel=1e-6)


@settings(max_examples=200, deadline=None)
@given(
    model=st.sampled_from(["llama8b", "llama70b", "gpt7b"]),
    method=st.sampled_from(["pretrain", "full_finetune", "lora", "qlora", "dpo"]),
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2, 4, 8]),
    zero=st.integers(0, 3),
    recompute=st.sampled_from(["none", "selective", "full", "offload"]),
    mb=st.integers(1, 8),
    micro_batches=st.integers(1, 8),
    framework=st.sampled_from(["megatron", "deepspeed", "fsdp"]),
    virtual=st.sampled_from([1, 2]),
    optimizer=st.sampled_from(
        ["adam", "adam_8bit", "paged_adam_8bit", "adafactor", "sgd", "adam_precision_aware"]
    ),
)
def test_the_model_states_floor_never_exceeds_the_peak(
    request: pytest.FixtureRequest,
    model: str,
    method: str,
    tp: int,
    pp: int,
    zero: int,
    recompute: str,
    mb: int,
    micro_batches: int,
    framework: str,
    virtual: int,
    optimizer: str,
) -> None:
    """The search rejects a combination whose states alone overflow the card without computing its
    memory: that is exact only if the states floor is a lower bound on the peak, on every stage."""
    from plan.planner.estimate.flops import shape_of
    from plan.planner.estimate.memory import memory_per_gpu, states_floor_gib

    card: ModelCard = request.getfixturevalue(model)
    dp = 2
    lay = Layout(
        tp=tp,
        pp=pp,
        dp=dp,
        zero=zero,
        recompute=recompute,
        micro_batch=mb,
        global_batch=dp * mb * micro_batches,
        seq_len=2048,
        precision="bf16",
        sequence_parallel=tp > 1,
        lora_rank=16 if method in ("lora", "qlora") else None,
        optimizer=optimizer,
        framework=framework,
        virtual_pipeline=virtual if pp > 1 else 1,
    )
    shape = shape_of(card)
    peak = memory_per_gpu(shape, method, lay, 80.0).breakdown.total_gib
    assert 0 < states_floor_gib(shape, method, lay) <= peak
