"""LoRA planned on Megatron is exported for the stack that runs Megatron's execution with adapters:
LLaMA-Factory's Megatron-Bridge backend (`USE_MEGATRON_BRIDGE=1`: stages pt and sft, full or lora;
docs/sources/launch-configs.md section 4), whatever the split; the same job planned on a PyTorch
stack keeps LLaMA-Factory's Hugging Face path (issue 50 item 4)."""

from __future__ import annotations

import pytest
import yaml

from plan.models.catalog import builtin_catalog
from plan.models.scenario import Job
from plan.models.stacks import STACKS, adapters_through_bridge, bridge_zero_gap
from plan.planner.export import ExportError, build_layout, render_stack
from plan.planner.export.versions import check_target
from plan.planner.export.writer import execution_model, exporting_stacks, stack_label
from tests.export.helpers import check_identities
from tests.export.test_export_golden import _plan

_JOB = Job(id="j", model="llama3-8b", method="lora", lora_rank=16, tokens=32 * 4096 * 100,
           seq_len=4096, global_batch=32)


def _lora(framework: str, tp: int, dp: int, zero: int):
    plan = _plan("j", tp * dp, 1, tp=tp, dp=dp, zero=zero, recompute="none", global_batch=32,
                 seq_len=4096, framework=framework)
    return build_layout(plan, _JOB, builtin_catalog().model("llama3-8b"))


def test_only_lora_on_megatron_trains_its_adapters_through_megatron_bridge():
    assert adapters_through_bridge("megatron", "lora")
    for method in ("lora_dpo", "qlora", "qlora_dpo", "sft", "pretrain"):
        assert not adapters_through_bridge("megatron", method), method
    for framework in STACKS:
        if framework != "megatron":
            assert not adapters_through_bridge(framework, "lora"), framework


@pytest.mark.parametrize(("tp", "dp", "zero"), [(1, 1, 0), (1, 2, 1), (2, 4, 1), (4, 1, 0)])
def test_lora_on_megatron_is_written_for_megatron_bridge_with_the_planned_split(tp, dp, zero):
    # (before: tp-only or data-parallel layouts went to the Hugging Face path, DeepSpeed or DDP)
    layout = _lora("megatron", tp, dp, zero)
    files, notes = render_stack(layout, "llamafactory")
    cfg = yaml.safe_load(files["train.yaml"])
    assert "USE_MEGATRON_BRIDGE=1" in files["launch.sh"] and "deepspeed" not in cfg
    assert cfg["finetuning_type"] == "lora" and cfg["lora_rank"] == 16
    assert (cfg["tensor_model_parallel_size"], cfg["pipeline_model_parallel_size"],
            cfg["context_parallel_size"]) == (tp, 1, 1)
    assert cfg["use_distributed_optimizer"] is (zero == 1)
    assert cfg["per_device_train_batch_size"] * cfg["gradient_accumulation_steps"] * dp == 32
    assert any("LoRA planned on Megatron" in n for n in notes)
    check_identities("llamafactory", layout, files)
    assert stack_label(layout, "llamafactory") == "llamafactory (Megatron-Bridge)"
    assert execution_model(layout, "llamafactory") == "megatron"
    with pytest.raises(ExportError, match=r"no Megatron-Bridge keys, which this job needs "
                                          r"\(.*LoRA planned on Megatron\)"):
        check_target(layout, "llamafactory", "0.9.5")


def test_lora_on_megatron_has_an_export_that_runs_megatrons_execution():
    layout = _lora("megatron", 2, 4, 1)
    runs = exporting_stacks(layout)
    assert "megatron" not in runs  # pretrain_gpt.py has no PEFT
    assert [s for s in runs if execution_model(layout, s) == "megatron"] == ["llamafactory"]
    with pytest.raises(ExportError, match=r"try --to llamafactory, which writes LoRA planned on "
                                          r"Megatron for its Megatron-Bridge backend"):
        render_stack(layout, "megatron")


@pytest.mark.parametrize(("framework", "zero", "path"), [("fsdp", 0, "fsdp"),
                                                          ("deepspeed", 1, "deepspeed")])
def test_lora_on_a_pytorch_stack_keeps_the_hugging_face_path(framework, zero, path):
    layout = _lora(framework, 1, 8, zero)
    files, _ = render_stack(layout, "llamafactory")
    assert "USE_MEGATRON_BRIDGE" not in files["launch.sh"]
    assert "tensor_model_parallel_size" not in yaml.safe_load(files["train.yaml"])
    assert stack_label(layout, "llamafactory") == "llamafactory"
    assert execution_model(layout, "llamafactory") == path
    check_target(layout, "llamafactory", "0.9.5")


def test_lora_on_megatron_at_zero_3_is_refused_by_megatron_bridge_in_one_line():
    # a stated Megatron-FSDP sharding: the bridge shards optimizer state only
    with pytest.raises(ExportError, match=r"^llamafactory: the Megatron-Bridge backend \(needed "
                                          r"for .*LoRA planned on Megatron\) shards optimizer "
                                          r"state only \(ZeRO-1\), the plan uses ZeRO-3$"):
        render_stack(_lora("megatron", 1, 8, 3), "llamafactory")


def test_the_planner_refuses_the_zero_stages_megatron_bridge_cannot_run_for_lora():
    # the rule the layout check states (spec_check) is the one the export refuses above with
    assert bridge_zero_gap("megatron", "lora", 3) and bridge_zero_gap("megatron", "lora", 2)
    assert bridge_zero_gap("megatron", "lora", 1) is None
    assert bridge_zero_gap("megatron", "sft", 3) is None  # Megatron-FSDP, --to megatron
    assert bridge_zero_gap("fsdp", "lora", 3) is None
