"""ZeRO-3 with the model states in host memory (`state_offload`) exports in each stack's own keys
(docs/sources/launch-configs.md), or is refused in one line naming what the stack lacks; a layout
without it writes no offload."""

from __future__ import annotations

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.scenario import Job
from plan.planner.export import ExportError, build_layout, render_stack, write_export
from tests.export.helpers import render_checked
from tests.export.test_export_golden import _plan

STACKS = ["deepspeed", "megatron", "torchtitan", "llamafactory", "accelerate", "torchrun-fsdp"]
PINNED_CPU = {"device": "cpu", "pin_memory": True}


def _layout(framework: str = "deepspeed", offload: bool = True, gpus: int = 8, **extra):
    job = Job(
        id="sft",
        model="llama3-8b",
        method="full_finetune",
        tokens=32 * 4096 * 100,
        seq_len=4096,
        global_batch=32,
    )
    lay = {
        "zero": 3,
        "recompute": "full",
        "global_batch": 32,
        "seq_len": 4096,
        "framework": framework,
        **extra,
    }
    if offload:
        lay["state_offload"] = True
    plan = _plan("sft", gpus, 1, dp=gpus, **lay)
    return build_layout(plan, job, builtin_catalog().model("llama3-8b"))


def test_the_layout_carries_it_and_the_readme_says_so(tmp_path):
    layout = _layout()
    assert layout.state_offload and layout.zero == 3 and layout.tp == layout.pp == 1
    assert "offloaded to CPU memory" in layout.paragraph()
    assert "offloaded" not in _layout(offload=False).paragraph()
    write_export(tmp_path, "deepspeed", [layout], "plan line", [])
    assert "optimizer states offloaded to CPU memory" in (tmp_path / "README.md").read_text()


def test_a_layout_that_cannot_hold_it_is_refused():
    job = Job(
        id="sft",
        model="llama3-8b",
        method="full_finetune",
        tokens=32 * 4096 * 100,
        seq_len=4096,
        global_batch=32,
    )
    plan = _plan("sft", 8, 1, dp=8, zero=2, global_batch=32, seq_len=4096, framework="deepspeed",
                 state_offload=True)
    with pytest.raises(ExportError, match=r"CPU memory.*ZeRO-3"):
        build_layout(plan, job, builtin_catalog().model("llama3-8b"))


@pytest.mark.parametrize("framework", ["deepspeed", "fsdp"])
def test_deepspeed_offloads_parameters_and_optimizer_to_pinned_cpu(framework):
    parsed, _, notes = render_checked(_layout(framework), "deepspeed")
    zero = parsed["ds_config.json"]["zero_optimization"]
    assert zero == {"stage": 3, "offload_param": PINNED_CPU, "offload_optimizer": PINNED_CPU}
    assert any("DeepSpeedCPUAdam" in note for note in notes)


def test_accelerate_fsdp_offloads_params():
    parsed, _, _ = render_checked(_layout("fsdp"), "accelerate")
    fsdp = parsed["accelerate_config.yaml"]["fsdp_config"]
    assert fsdp["fsdp_offload_params"] is True and fsdp["fsdp_reshard_after_forward"] is True


def test_accelerate_deepspeed_offloads_in_its_json_not_its_yaml():
    parsed, _, notes = render_checked(_layout("deepspeed"), "accelerate")
    cfg = parsed["accelerate_config.yaml"]
    assert cfg["distributed_type"] == "DEEPSPEED"
    # beside deepspeed_config_file accelerate refuses offload_optimizer_device /
    # offload_param_device
    assert cfg["deepspeed_config"] == {"deepspeed_config_file": "ds_config.json",
                                       "deepspeed_multinode_launcher": "standard"}
    zero = parsed["ds_config.json"]["zero_optimization"]
    assert zero["offload_param"] == PINNED_CPU and zero["offload_optimizer"] == PINNED_CPU
    assert any("offload_param" in note for note in notes)


def test_torchrun_fsdp_offloads_in_its_config_and_its_fully_shard_call():
    parsed, files, _ = render_checked(_layout("fsdp"), "torchrun-fsdp")
    assert parsed["accelerate_config.yaml"]["fsdp_config"]["fsdp_offload_params"] is True
    assert (
        "fully_shard with reshard_after_forward=True, offload_policy=CPUOffloadPolicy()"
        in files["launch.sh"]
    )


def test_torchtitan_enables_cpu_offload():
    parsed, _, _ = render_checked(_layout("fsdp"), "torchtitan")
    cfg = parsed["job.toml"]
    assert cfg["training"]["enable_cpu_offload"] is True
    assert cfg["parallelism"]["data_parallel_shard_degree"] == 8
    assert cfg["parallelism"]["fsdp_reshard_after_forward"] == "always"


def test_torchtitan_refuses_offload_on_one_gpu_and_activation_offload_still():
    # v0.2.2 applies FSDP2, and with it the offload policy, only when dp_shard > 1 (or cp > 1)
    with pytest.raises(ExportError, match="enable_cpu_offload goes through FSDP2") as one_gpu:
        render_stack(_layout("fsdp", gpus=1), "torchtitan")
    assert "\n" not in str(one_gpu.value)
    with pytest.raises(ExportError, match="no activation or checkpoint offloading"):
        render_stack(_layout("fsdp", offload=False, recompute="offload"), "torchtitan")


@pytest.mark.parametrize("gpus", [8, 1])
def test_llamafactory_points_at_a_deepspeed_json_that_offloads(gpus):
    parsed, _, notes = render_checked(_layout("fsdp", gpus=gpus), "llamafactory")
    assert parsed["train.yaml"]["deepspeed"] == "ds_config.json"
    zero = parsed["ds_config.json"]["zero_optimization"]
    assert zero == {"stage": 3, "offload_param": PINNED_CPU, "offload_optimizer": PINNED_CPU}
    # a deepspeed: run must be launched distributed
    assert "FORCE_TORCHRUN=1" in parsed["launch.sh"]
    assert any("ds_z3_offload_config.json" in note for note in notes)


def test_megatron_refuses_it_in_one_line():
    with pytest.raises(ExportError) as refused:
        render_stack(_layout("fsdp"), "megatron")
    message = str(refused.value)
    assert "\n" not in message and message.startswith("megatron: no CPU offload of parameters and "
                                                      "gradients")
    assert "--optimizer-cpu-offload" in message


@pytest.mark.parametrize("stack", ["deepspeed", "llamafactory", "accelerate"])
def test_deepspeed_paths_refuse_an_optimizer_without_a_cpu_step(stack):
    layout = _layout("deepspeed", optimizer="adam_8bit")
    with pytest.raises(ExportError) as refused:
        render_stack(layout, stack)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{stack}: no CPU step for the adam_8bit "
                                                      "optimizer")


@pytest.mark.parametrize("framework", ["deepspeed", "fsdp"])
def test_every_stack_exports_or_refuses_in_one_line(framework):
    layout = _layout(framework)
    exported = []
    for stack in STACKS:
        try:
            render_checked(layout, stack)
        except ExportError as exc:
            assert "\n" not in str(exc) and str(exc).split(":")[0] in STACKS, exc
            continue
        exported.append(stack)
    assert exported == ["deepspeed", "torchtitan", "llamafactory", "accelerate", "torchrun-fsdp"]


@pytest.mark.parametrize("framework", ["deepspeed", "fsdp"])
def test_without_it_nothing_is_offloaded(framework):
    layout = _layout(framework, offload=False)
    assert not layout.state_offload
    for stack in ("deepspeed", "llamafactory", "accelerate"):
        parsed, _, notes = render_checked(layout, stack)
        zero = parsed["ds_config.json"]["zero_optimization"] if "ds_config.json" in parsed else {}
        # DeepSpeed's default: none
        assert "offload_param" not in zero and "offload_optimizer" not in zero
        assert not any("CPU memory" in note for note in notes)
    for stack in ("accelerate", "torchrun-fsdp"):
        parsed, files, _ = render_checked(layout, stack)
        fsdp = parsed["accelerate_config.yaml"].get("fsdp_config")
        assert fsdp is None or fsdp["fsdp_offload_params"] is False
        assert "CPUOffloadPolicy" not in files["launch.sh"]
    assert (
        "enable_cpu_offload" not in render_checked(layout, "torchtitan")[0]["job.toml"]["training"]
    )  # default false
    render_checked(layout, "megatron")  # ZeRO-3 without offload is Megatron-FSDP, as before


def test_offloaded_checkpoints_are_llamafactorys_use_unsloth_gc_and_refused_elsewhere():
    # full recomputation with the checkpoints in host memory: LLaMA-Factory's Hugging Face path has
    # it (use_unsloth_gc); the other stacks say in one line that they do not
    layout = _layout("fsdp", offload=False, recompute="full_offload", gpus=1)
    parsed, _, _ = render_checked(layout, "llamafactory")
    train = parsed["train.yaml"]
    assert train["use_unsloth_gc"] is True and train["disable_gradient_checkpointing"] is False
    kept, _, _ = render_checked(_layout("fsdp", offload=False, gpus=1), "llamafactory")
    assert "use_unsloth_gc" not in kept["train.yaml"]
    for stack in ("deepspeed", "megatron", "torchtitan", "accelerate", "torchrun-fsdp"):
        with pytest.raises(ExportError) as refused:
            render_stack(layout, stack)
        message = str(refused.value)
        assert message.startswith(f"{stack}: ") and "\n" not in message
        assert "offload" in message, message
