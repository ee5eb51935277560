"""A plan with pure BF16 AdamW (`adamw-bf16`) exports as each stack spells it: DeepSpeed's bf16
master weights and optimizer states (ZeRO 1-3 only), LLaMA-Factory's pure_bf16 (not with ZeRO-3),
accelerate without autocast; torchtitan and Megatron refuse it in one line."""

from __future__ import annotations

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.scenario import Job
from plan.planner.export import ExportError, build_layout, render_stack, write_export
from tests.export.helpers import render_checked
from tests.export.test_export_golden import _plan


def _layout(framework: str = "fsdp", zero: int = 2, gpus: int = 8):
    job = Job(
        id="j",
        model="llama3-8b",
        method="full_finetune",
        tokens=32 * 4096 * 100,
        seq_len=4096,
        global_batch=32,
        optimizer="adamw-bf16",
    )
    plan = _plan("j", gpus, 1, dp=gpus, zero=zero, recompute="full", global_batch=32, seq_len=4096,
                 framework=framework, optimizer="adam_bf16")
    return build_layout(plan, job, builtin_catalog().model("llama3-8b"))


def test_deepspeed_keeps_master_weights_gradients_and_moments_in_bf16():
    parsed, _, notes = render_checked(_layout("deepspeed"), "deepspeed")
    assert parsed["ds_config.json"]["bf16"] == {
        "enabled": True,
        "bf16_master_weights_and_grads": True,
        "bf16_optimizer_states": True,
    }
    assert any("adamw-bf16" in note and "8 bytes per parameter" in note for note in notes)
    with pytest.raises(ExportError) as refused:  # DeepSpeed takes the two flags with ZeRO 1-3 only
        render_stack(_layout("deepspeed", zero=0), "deepspeed")
    assert "\n" not in str(refused.value) and "needs ZeRO stage 1-3" in str(refused.value)


def test_llamafactory_sets_pure_bf16_and_its_deepspeed_json_agrees():
    parsed, _, _ = render_checked(_layout(), "llamafactory")
    train = parsed["train.yaml"]
    assert train["pure_bf16"] is True and train["optim"] == "adamw_torch"
    assert parsed["ds_config.json"]["bf16"]["bf16_optimizer_states"] is True
    single, _, _ = render_checked(_layout(zero=0, gpus=1), "llamafactory")
    assert single["train.yaml"]["pure_bf16"] is True and "ds_config.json" not in single
    with pytest.raises(ExportError) as refused:  # LLaMA-Factory refuses pure_bf16 with ZeRO-3
        render_stack(_layout(zero=3), "llamafactory")
    assert "\n" not in str(refused.value) and "ZeRO-3" in str(refused.value)


def test_accelerate_runs_the_bf16_weights_without_autocast():
    parsed, _, notes = render_checked(_layout(zero=3), "accelerate")
    config = next(v for k, v in parsed.items() if k.endswith(".yaml"))
    assert config["mixed_precision"] == "no"
    assert any("torch_dtype=torch.bfloat16" in note for note in notes)


@pytest.mark.parametrize("stack", ["torchtitan", "megatron"])
def test_stacks_without_it_refuse_in_one_line(stack):
    with pytest.raises(ExportError) as refused:
        render_stack(_layout(), stack)
    assert "\n" not in str(refused.value) and str(refused.value).startswith(f"{stack}:")


def test_the_export_readme_names_the_optimizer_as_the_scenario_does(tmp_path):
    write_export(tmp_path, "deepspeed", [_layout("deepspeed")], "plan line", [])
    assert "optimizer adamw-bf16" in (tmp_path / "README.md").read_text()
