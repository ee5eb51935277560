"""The layout search's shortcuts answer as the work they skip would.

The search remembers `split_gap` (asked for every split and combination of every search), works
out a split's all-to-all seconds once per expert-parallel size (they read no framework, ZeRO stage
or recomputation) and writes a memory estimate's notes only when they are read. Each is checked
against the plain computation it replaces, over random jobs, GPUs and counts.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from plan.models.catalog import builtin_catalog
from plan.planner.estimate import Cluster, Layout, LayoutSpec
from plan.planner.estimate.flops import shape_of
from plan.planner.estimate.memory import memory_per_gpu
from plan.planner.estimate.memory_notes import memory_notes
from plan.planner.estimate.search_space import _work_s, combinations, splits
from plan.planner.estimate.stack_rules import split_gap
from plan.planner.estimate.types import ADAPTER_METHODS

CATALOG = builtin_catalog()
MODELS = ("llama3.1-8b", "qwen2.5-14b", "mixtral-8x7b", "deepseek-v3", "llama3.1-70b")
METHODS = ("pretrain", "full_finetune", "lora", "qlora")
GPUS = ("h100-sxm", "a100-80gb", "l40s", "h800", "rtx4090")
COUNTS = (1, 2, 8, 16, 64, 256)


def _search_inputs(model_id: str, method: str, gpu_id: str, gpus: int, seq_len: int
                   ) -> tuple[object, Cluster, LayoutSpec, int | None]:
    shape = shape_of(CATALOG.model(model_id))
    spec = LayoutSpec(seq_len=seq_len)
    rank = spec.lora_rank if method in ADAPTER_METHODS else None
    return shape, Cluster.of(CATALOG.gpu(gpu_id), gpus), spec, rank


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODELS), st.sampled_from(METHODS), st.sampled_from(GPUS),
       st.sampled_from(COUNTS), st.sampled_from((2048, 4096, 16384)))
def test_remembered_split_gap_and_all_to_all_match_the_plain_computation(
        model_id: str, method: str, gpu_id: str, gpus: int, seq_len: int) -> None:
    shape, cluster, spec, rank = _search_inputs(model_id, method, gpu_id, gpus, seq_len)
    found, _ = splits(shape, method, cluster, spec, rank)
    combos, _ = combinations(shape, method, cluster, spec, rank, found)
    for split in found:
        for fw in ("megatron", "deepspeed", "fsdp"):
            assert split_gap(method, spec, fw, split.tp, split.pp, split.cp, shape.heads) == (
                split_gap.__wrapped__(method, spec, fw, split.tp, split.pp, split.cp,
                                      shape.heads))
    for combo in combos:
        split = found[combo.split]
        # from scratch: an empty memo of the split's all-to-all seconds
        base_s, redone_s = _work_s(shape, cluster, spec, rank, split, combo.framework, combo.zero,
                                   combo.recompute, combo.ep, combo.shard_group, {})
        memo: dict[int, tuple[float, float]] = {}
        for other in combos:  # the memo filled by another combination of the split first
            if other.split == combo.split and other.ep == combo.ep and other is not combo:
                _work_s(shape, cluster, spec, rank, split, other.framework, other.zero,
                        other.recompute, other.ep, other.shard_group, memo)
                break
        assert _work_s(shape, cluster, spec, rank, split, combo.framework, combo.zero,
                       combo.recompute, combo.ep, combo.shard_group, memo) == (base_s, redone_s)


def test_moe_searches_exercise_the_all_to_all_memo() -> None:
    """The property above covers expert parallelism: an MoE pre-training split search has
    combinations with ep > 1 and their all-to-all seconds in the bound."""
    shape, cluster, spec, rank = _search_inputs("mixtral-8x7b", "pretrain", "h100-sxm", 64, 4096)
    found, _ = splits(shape, "pretrain", cluster, spec, rank)
    combos, _ = combinations(shape, "pretrain", cluster, spec, rank, found)
    moe = [c for c in combos if c.ep > 1]
    assert moe
    assert all(c.work_s > found[c.split].stage_s[c.framework] for c in moe)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODELS), st.sampled_from(("pretrain", "lora")), st.sampled_from(GPUS),
       st.sampled_from((1, 2, 4, 8)), st.sampled_from(("none", "full", "offload")),
       st.sampled_from(("adam", "paged_adam_8bit")))
def test_memory_notes_written_on_reading_are_the_notes_of_the_facts(
        model_id: str, method: str, gpu_id: str, micro_batch: int, recompute: str,
        optimizer: str) -> None:
    shape = shape_of(CATALOG.model(model_id))
    gpu = CATALOG.gpu(gpu_id)
    layout = Layout(tp=1, pp=2, dp=4, zero=1, recompute=recompute, micro_batch=micro_batch,
                    global_batch=64, seq_len=4096, precision="bf16", sequence_parallel=False,
                    lora_rank=16 if method == "lora" else None, optimizer=optimizer)
    for case in (layout, replace(layout, pp=1)):
        result = memory_per_gpu(shape, method, case, gpu.memory_gib)
        assert result.notes == memory_notes(result.facts)
        assert all(isinstance(note, str) and note for note in result.notes)
