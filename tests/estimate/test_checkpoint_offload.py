"""Full recomputation with the checkpoints in host memory (`recompute: full_offload`; Unsloth's
gradient checkpointing, LLaMA-Factory's `use_unsloth_gc`): each layer's input goes to the CPU after
its forward and comes back for its recomputation. The GPU keeps the re-materialised layer and the
two checkpoints in flight, not one per layer; the copies hide behind compute. Searched only where
nothing else fits, on the PyTorch stacks; Megatron's activation offloading cannot be combined with
recomputation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from plan.models.catalog import builtin_catalog
from plan.planner.estimate import Cluster, LayoutSpec, search_layout
from plan.planner.estimate.factors import ALLOCATOR_FRAGMENTATION, GIB
from plan.planner.estimate.memory import OFFLOAD_RESIDENT_LAYERS
from tests.estimate.test_cli import run

SEQ = 131_072  # Llama 3.1 8B's context, one sequence per step


def _best(gpu: str, **fixed: object):
    catalog = builtin_catalog()
    spec = LayoutSpec(
        seq_len=SEQ,
        micro_batch=1,
        global_batch=1,
        lora_rank=32,
        loss="fused",
        fused_modules=True,
        state_offload=False,
        memory_headroom=0.08,
        **fixed,
    )  # type: ignore[arg-type]
    return search_layout(
        catalog.model("llama3.1-8b"), "qlora", Cluster.of(catalog.gpu(gpu), 1), spec
    )


def test_the_checkpoints_leave_the_gpu_and_the_copies_hide_behind_compute():
    full = _best("h100-sxm", recompute="full").best
    offloaded = _best("h100-sxm", recompute="full_offload").best
    assert (
        full is not None and offloaded is not None and offloaded.layout.recompute == "full_offload"
    )
    hidden, layers = 4096, 32
    checkpoint_gib = 2.0 * hidden * SEQ / GIB  # one layer's 16-bit input
    saved = full.memory.total_gib - offloaded.memory.total_gib
    # every layer's checkpoint but the two in flight (the re-materialised layer outweighs the fused
    # loss)
    expected = (layers - OFFLOAD_RESIDENT_LAYERS) * checkpoint_gib * (1 + ALLOCATOR_FRAGMENTATION)
    assert saved == pytest.approx(expected, rel=1e-6)
    # 32 GiB each way over PCIe against minutes of compute: nothing is exposed
    assert offloaded.step_time_s == pytest.approx(full.step_time_s)
    assert any("use_unsloth_gc" in note for note in offloaded.notes)
    # the host holds every layer's checkpoint: the plan says how much free RAM that takes
    (host,) = [note for note in offloaded.notes if note.startswith("activations in host memory:")]
    assert f"{layers * checkpoint_gib:.1f} GiB of checkpointed layer inputs per GPU" in host


def test_it_is_searched_only_where_nothing_else_fits():
    # one 48 GB L40S: full recomputation leaves 63.6 GiB of 44 usable; with the checkpoints on the
    # host it fits
    found = _best("l40s")
    assert found.best is not None and found.best.layout.recompute == "full_offload"
    assert found.best.memory.total_gib <= 0.92 * 48
    # an 80 GB card holds full recomputation, which is no slower: nothing is offloaded
    roomy = _best("a100-80gb")
    assert roomy.best is not None and roomy.best.layout.recompute == "full"
    # a team on the one-click path has it too (LLaMA-Factory's use_unsloth_gc)
    one_click = _best("l40s", pytorch_stacks_only=True)
    assert one_click.best is not None and one_click.best.layout.recompute == "full_offload"


def test_megatron_cannot_run_it():
    code, _, err = run(
        "--model",
        "llama3.1-8b",
        "--method",
        "pretrain",
        "--gpu",
        "h100-sxm",
        "--gpus",
        "8",
        "--recompute",
        "full_offload",
        "--framework",
        "megatron",
    )
    assert code == 2 and "full_offload" in err and "Megatron" in err, err
    # left to the search, the stack is a PyTorch one
    code, out, _ = run(
        "--model",
        "llama3.1-8b",
        "--method",
        "pretrain",
        "--gpu",
        "h100-sxm",
        "--gpus",
        "8",
        "--recompute",
        "full_offload",
        "--format",
        "json",
    )
    assert code == 0 and '"framework": "fsdp"' in out and '"recompute": "full_offload"' in out


def test_it_is_not_searched_beside_tensor_pipeline_or_context_parallelism():
    """The one stack with offloaded checkpoints (LLaMA-Factory's Hugging Face path, use_unsloth_gc)
    is data-parallel only; its pipeline and context parallelism need the Megatron-Bridge backend,
    which has no such policy. On two 24 GB cards one 131k-token sequence fits only split over both
    (cp = 2) with its checkpoints on the host: no stack runs that, so nothing is planned and the
    reason is named."""
    catalog = builtin_catalog()
    spec = LayoutSpec(
        seq_len=SEQ,
        micro_batch=1,
        global_batch=2,
        lora_rank=32,
        loss="fused",
        fused_modules=True,
        state_offload=False,
        memory_headroom=0.08,
    )
    found = search_layout(
        catalog.model("llama3.1-8b"), "qlora", Cluster.of(catalog.gpu("rtx4090"), 2), spec
    )
    assert found.best is None
    assert any(
        "use_unsloth_gc" in reason and "context or expert parallelism" in reason
        for reason in found.reasons
    )
    # stated by the user, the combination is refused naming the field, not planned for a stack that
    # lacks it
    with pytest.raises(ValueError, match=r"^recompute: offloaded checkpoints run on "
                                         r"LLaMA-Factory's Hugging Face "
                                         r"path \(use_unsloth_gc\).*cp=2$"):
        search_layout(catalog.model("llama3.1-8b"), "qlora", Cluster.of(catalog.gpu("rtx4090"), 2),
                      replace(spec, cp=2, recompute="full_offload"))
