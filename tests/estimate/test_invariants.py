"""Directions a planner relies on when it compares layouts: more GPU work never shortens a step, no time
window hides a collective twice, FSDP's gradient accumulation costs what it costs at every ZeRO stage,
and a size that fits is found. Each case here broke on the code before it was fixed; bench/
estimate_invariants.py draws thousands more (a small draw of it runs below)."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from plan.models.catalog import builtin_catalog
from plan.planner.estimate import Cluster, LayoutSpec, estimate, search_layout
from plan.planner.estimate.types import Layout

REPO = Path(__file__).resolve().parents[2]
CATALOG = builtin_catalog()


def _estimate(model: str, method: str, gpu: str, gpus: int, **fields: Any) -> Any:
    layout = Layout(**{"sequence_parallel": False, "lora_rank": None, "precision": "bf16", **fields})
    return estimate(CATALOG.model(model), method, Cluster.of(CATALOG.gpu(gpu), gpus), layout)


def test_recomputation_never_shortens_a_host_bound_step() -> None:
    """An eager stack's host issues kernels while the GPU computes and while it waits on a collective: the
    step is the longer of the two. Before, the host's excess was taken over the compute alone and the
    data-parallel wait added on top, so recomputation (more GPU work) hid both and the step got shorter."""
    base = dict(tp=8, pp=2, cp=2, dp=2, zero=0, recompute="none", micro_batch=1, global_batch=4, seq_len=4096,
                optimizer="adam", framework="deepspeed", fused_modules=False, loss="fused")
    plain = _estimate("llama3.1-8b", "dpo", "a100-40gb", 64, **base)
    redone = _estimate("llama3.1-8b", "dpo", "a100-40gb", 64, **{**base, "recompute": "selective"})
    assert plain.time.host_s > 0  # the case is host-bound
    assert redone.step_time_s >= plain.step_time_s


def test_a_dpo_reference_forward_hides_data_parallel_traffic_once() -> None:
    """The passes' windows for hiding ZeRO-3's gathers add up to the micro-batch's compute. Before, each of
    DPO's two forward passes got a third of a compute that already held the reference forward, so slower
    attention (eager, more compute) hid more traffic than it added and made the step shorter."""
    base = dict(tp=8, pp=1, cp=4, dp=4, zero=3, recompute="full", micro_batch=1, global_batch=16, seq_len=8192,
                sequence_parallel=True, optimizer="adam", framework="deepspeed", fused_modules=True, loss="fused")
    flash = _estimate("llama2-7b", "dpo", "a100-80gb", 128, **base)
    eager = _estimate("llama2-7b", "dpo", "a100-80gb", 128, **{**base, "flash_attention": False})
    assert flash.time.dp_comm_s > 0
    assert eager.step_time_s >= flash.step_time_s


def test_fsdp_no_shard_accumulates_the_same_unsharded_fp32_gradients_as_shard_grad_op() -> None:
    """With gradient accumulation FSDP holds unsharded fp32 gradients at ZeRO-0 (NO_SHARD) as at ZeRO-2
    (SHARD_GRAD_OP), so ZeRO-2, which also shards the optimizer states, never takes more memory."""
    base = dict(tp=1, pp=8, dp=1, zero=0, recompute="selective", micro_batch=1, global_batch=8, seq_len=2048,
                optimizer="adam", framework="fsdp", fused_modules=True, loss="fused")
    no_shard = _estimate("qwen3-32b", "dpo", "a100-40gb", 8, **base)
    grad_op = _estimate("qwen3-32b", "dpo", "a100-40gb", 8, **{**base, "zero": 2})
    assert no_shard.memory.gradients_gib == pytest.approx(grad_op.memory.gradients_gib)
    assert grad_op.memory.total_gib <= no_shard.memory.total_gib
    one_step = _estimate("qwen3-32b", "dpo", "a100-40gb", 8, **{**base, "pp": 1, "dp": 8, "global_batch": 8})
    assert one_step.layout.micro_batches == 1  # no accumulation: 16-bit gradients
    params = CATALOG.model("qwen3-32b").params
    assert one_step.memory.gradients_gib == pytest.approx(params * 2.0 / 2**30, rel=0.01)


def test_an_optimizer_in_the_backward_pass_holds_one_layer_of_adapter_gradients() -> None:
    """8-bit AdamW stepping inside the backward pass keeps about one layer's gradients: under LoRA one layer's
    adapters, never more than AdamW's whole set of adapter gradients."""
    base = dict(tp=8, pp=1, dp=8, zero=3, recompute="none", micro_batch=8, global_batch=64, seq_len=1024,
                lora_rank=64, framework="deepspeed", fused_modules=False, loss="chunked")
    adam = _estimate("qwen3-14b", "qlora", "rtx-4090", 64, **{**base, "optimizer": "adam"})
    eight_bit = _estimate("qwen3-14b", "qlora", "rtx-4090", 64, **{**base, "optimizer": "adam_8bit"})
    layers = CATALOG.model("qwen3-14b").layers
    assert eight_bit.memory.gradients_gib == pytest.approx(adam.memory.gradients_gib * 8 / layers, rel=0.01)
    assert eight_bit.memory.total_gib <= adam.memory.total_gib


def test_the_search_finds_the_whole_replica_batch_where_only_it_fits() -> None:
    """FSDP SHARD_GRAD_OP at one micro-batch per step holds no unsharded fp32 gradient buffer, so the whole
    replica batch can fit where one sequence per micro-batch does not. The search used to try one sequence
    first, and with it failing, gave up."""
    spec = LayoutSpec(tp=1, pp=1, framework="fsdp", zero=2, global_batch=4, seq_len=1024, memory_headroom=0.08)
    cluster = Cluster.of(CATALOG.gpu("h20"), 2)
    result = search_layout(CATALOG.model("llama3.1-8b"), "full_finetune", cluster, spec)
    assert result.best is not None
    assert result.best.layout.micro_batch == 2 and result.best.fits
    one = search_layout(CATALOG.model("llama3.1-8b"), "full_finetune", cluster, replace(spec, micro_batch=1))
    assert one.best is None  # (one sequence per micro-batch does not fit: the case is the one meant)


def test_megatron_interleaving_needs_pp_micro_batches_in_a_stated_layout() -> None:
    with pytest.raises(ValueError, match="virtual_pipeline: Megatron's interleaved schedule needs at least pp = 2"):
        _estimate("qwen3-32b", "pretrain", "a100-40gb", 32, tp=2, pp=2, cp=4, dp=2, zero=1, recompute="none",
                  micro_batch=1, global_batch=2, seq_len=1024, virtual_pipeline=4, framework="megatron")


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("estimate_invariants", REPO / "bench" / "estimate_invariants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while built
    spec.loader.exec_module(module)
    return module


def test_random_layouts_keep_every_direction(capsys: pytest.CaptureFixture[str]) -> None:
    """A small draw of the invariant bench: every invariant is exercised and none breaks."""
    bench = _bench()
    assert bench.main(["--seed", "7", "--count", "300"]) == 0
    table = capsys.readouterr().out.split("broken\n", 1)[1]
    pairs = {line[:40].strip(): int(line[40:47]) for line in table.splitlines() if line.strip()}
    assert set(pairs) == {name for name, *_ in bench.CHECKS}
    assert all(count > 0 for count in pairs.values()), pairs
