"""Golden exports: one fixed layout per stack, written once and checked by hand against
docs/sources/launch-configs.md (the running example of its skeletons: 2 nodes x 8 GPUs, tp 2, pp 2,
vpp 2, dp 4, micro-batch 1, 8 micro-batches, global batch 32, sequence 4096, bf16). Regenerate with
PLAN_UPDATE_GOLDEN=1 after a deliberate change, and check the diff by hand again.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.layout import Layout
from plan.models.scenario import Job
from plan.planner.export import build_layout, render_stack
from plan.planner.plan import JobPlan
from tests.export.helpers import check_identities

GOLDEN = Path(__file__).parent / "golden"


def _plan(job: str, gpus: int, nodes: int, **layout) -> JobPlan:
    lay = {"tp": 1, "pp": 1, "dp": gpus, "zero": 0, "recompute": "none", "micro_batch": 1, "cp": 1,
           "virtual_pipeline": 1, "precision": "bf16", "optimizer": "adam", "framework": "megatron",
           "sequence_parallel": False, "lora_rank": None, **layout}
    return JobPlan(
        job=job,
        platform="lab-cluster",
        gpu="h100-sxm",
        gpus=gpus,
        nodes=nodes,
        layout=Layout(**lay),
        billing="owned",
        start_h=0.0,
        end_h=10.0,
        cost=0.0,
        memory_gib_per_gpu=60.0,
        gpu_memory_gib=80.0,
        tokens_per_s=1.0,
        mfu=0.4,
        gpu_hours=1.0,
    )


# stack -> (job plan, job spec): each the shape of the reference file's skeleton for that stack
CASES = {
    "megatron": (
        _plan(
            "pretrain",
            16,
            2,
            tp=2,
            pp=2,
            dp=4,
            zero=1,
            recompute="selective",
            virtual_pipeline=2,
            global_batch=32,
            seq_len=4096,
        ),
        Job(
            id="pretrain",
            model="llama3-8b",
            method="pretrain",
            tokens=32 * 4096 * 1000,
            seq_len=4096,
            global_batch=32,
        ),
    ),
    "torchtitan": (
        _plan(
            "pretrain",
            16,
            2,
            tp=2,
            pp=2,
            dp=4,
            zero=3,
            recompute="selective",
            virtual_pipeline=2,
            global_batch=32,
            seq_len=4096,
            framework="fsdp",
        ),
        Job(
            id="pretrain",
            model="llama3-8b",
            method="pretrain",
            tokens=32 * 4096 * 1000,
            seq_len=4096,
            global_batch=32,
        ),
    ),
    "deepspeed": (
        _plan(
            "sft",
            16,
            2,
            dp=16,
            zero=3,
            micro_batch=2,
            global_batch=128,
            seq_len=4096,
            framework="deepspeed",
        ),
        Job(
            id="sft",
            model="llama3-8b",
            method="full_finetune",
            tokens=128 * 4096 * 100,
            seq_len=4096,
            global_batch=128,
        ),
    ),
    "accelerate": (
        _plan(
            "sft",
            16,
            2,
            tp=2,
            dp=8,
            zero=3,
            recompute="full",
            global_batch=32,
            seq_len=4096,
            framework="fsdp",
        ),
        Job(
            id="sft",
            model="llama3-8b",
            method="full_finetune",
            tokens=32 * 4096 * 100,
            seq_len=4096,
            global_batch=32,
        ),
    ),
    "torchrun-fsdp": (
        _plan(
            "sft",
            16,
            2,
            tp=2,
            dp=8,
            zero=3,
            recompute="full",
            global_batch=32,
            seq_len=4096,
            framework="fsdp",
        ),
        Job(
            id="sft",
            model="llama3-8b",
            method="full_finetune",
            tokens=32 * 4096 * 100,
            seq_len=4096,
            global_batch=32,
        ),
    ),
    "llamafactory": (
        _plan(
            "qlora",
            8,
            1,
            dp=8,
            recompute="full",
            global_batch=32,
            seq_len=4096,
            optimizer="paged_adam_8bit",
            framework="fsdp",
        ),
        Job(
            id="qlora",
            model="qwen2.5-7b",
            method="qlora",
            lora_rank=16,
            tokens=32 * 4096 * 50,
            seq_len=4096,
            global_batch=32,
        ),
    ),
}


@pytest.mark.parametrize("stack", sorted(CASES))
def test_export_matches_its_hand_checked_golden(stack):
    job_plan, job = CASES[stack]
    layout = build_layout(job_plan, job, builtin_catalog().model(job.model))
    files, _ = render_stack(layout, stack)
    check_identities(stack, layout, files)
    folder = GOLDEN / stack
    if os.environ.get("PLAN_UPDATE_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
    assert sorted(p.name for p in folder.iterdir()) == sorted(files)
    for name, text in files.items():
        assert (folder / name).read_text(encoding="utf-8") == text, (
            f"{stack}/{name} differs from its golden"
        )
