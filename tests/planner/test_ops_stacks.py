"""A team with no ops skill is planned on the PyTorch stacks (constraints/ops_skill.py): no
candidate of a job that names no framework runs Megatron, the plan says why, and a framework the job
names is kept."""

from __future__ import annotations

from typing import Any

from plan.models.layout import Layout
from plan.models.loading import load_scenario
from plan.planner.candidates import build_problem
from plan.planner.solve import solve_session
from tests.conftest import generous_session


def _student(
    base_scenario: dict[str, Any], ops: str, framework: str | None = None
) -> dict[str, Any]:
    """Qwen2.5-7B LoRA on rented one-click H800s (zhixingyun-pro has one_click_env and
    checkpoint_resume)."""
    job: dict[str, Any] = {"id": "lora", "model": "qwen2.5-7b", "method": "lora", "tokens": "50M",
                           "seq_len": 4096, "data": {"sensitivity": "public"}}
    if framework:
        job["framework"] = framework
    base_scenario.update(ops_skill=ops, owned=[], sites=[], jobs=[job], budget="20k", deadline="7d",
                         policy={"allow_platforms": ["zhixingyun-pro"]})
    return base_scenario


def _layouts(path) -> list[Layout]:
    return [c.layout for c in build_problem(load_scenario(path)).candidates["lora"]]


def _frameworks(path) -> set[str]:
    return {lay.framework for lay in _layouts(path)}


def test_no_ops_team_gets_pytorch_stacks_only(base_scenario, write_scenario):
    none_path = write_scenario(_student(base_scenario, "none"), "none.yaml")
    layouts = _layouts(none_path)
    assert layouts and {lay.framework for lay in layouts} == {"fsdp"}
    # the one-click path (LLaMA-Factory, the Hugging Face Trainer): data parallelism with ZeRO/FSDP
    # sharding and whole-layer gradient checkpointing on or off
    assert all(lay.tp == lay.cp == lay.pp == 1 for lay in layouts)
    assert {lay.recompute for lay in layouts} <= {"none", "full"}
    result = solve_session(generous_session(none_path))
    assert result.status == "optimal"
    plan = result.plans[0]
    assert plan.jobs[0].framework == "fsdp"
    assert any(line.startswith("stack of lora: ops skill none") for line in plan.explanation)


def test_skilled_team_and_named_framework_keep_megatron(base_scenario, write_scenario):
    # the same job for a team with basic ops skill searches Megatron too (it is faster on these
    # cards) ...
    basic = _frameworks(write_scenario(_student(base_scenario, "basic"), "basic.yaml"))
    assert "megatron" in basic
    # ... and a framework the job names is the team's choice, whatever its skill; the plan then does
    # not claim the rule chose it
    named_path = write_scenario(_student(base_scenario, "none", framework="megatron"), "named.yaml")
    assert _frameworks(named_path) == {"megatron"}
    result = solve_session(generous_session(named_path))
    assert result.status == "optimal"
    assert not any(line.startswith("stack of") for line in result.plans[0].explanation)


def test_a_stated_eager_kernels_planned_on_megatron_says_so(base_scenario, write_scenario):
    """`kernels` says how a PyTorch stack runs a job's layers; a job that states `kernels: eager`
    and is planned on Megatron (always fused, and faster here) is told the field did not apply and
    how to keep to an eager stack; one that leaves it out is told nothing."""
    def lines(kernels: str | None, framework: str | None = None) -> tuple[str, list[str]]:
        data = _student(base_scenario, "basic", framework)
        if kernels:
            data["jobs"][0]["kernels"] = kernels
        result = solve_session(
            generous_session(write_scenario(data, f"k-{kernels}-{framework}.yaml"))
        )
        assert result.status == "optimal"
        plan = result.plans[0]
        return plan.jobs[0].framework, [
            line for line in plan.explanation if "states kernels" in line
        ]

    framework, said = lines("eager")
    assert framework == "megatron" and len(said) == 1 and "framework: fsdp or deepspeed" in said[0]
    assert lines(None) == ("megatron", [])
    assert lines("eager", "fsdp") == ("fsdp", [])


def test_an_optimizer_other_than_adam_keeps_fsdp_layouts_on_the_hugging_face_path(
    base_scenario, write_scenario
):
    """bitsandbytes' 8-bit AdamW runs on the Hugging Face Trainer (LLaMA-Factory, accelerate), which
    does not pipeline, and torchtune (whole-layer checkpointing or activation offload); torchtitan,
    which pipelines and has op-level selective checkpointing, takes AdamW or Adam only. So a 70B
    full fine-tune with it on 16 GPUs gets no FSDP layout with pp > 1 or selective recomputation."""
    base_scenario.update(
        owned=[], sites=[], budget="1M", deadline="30d", ops_skill="expert", policy={}
    )
    base_scenario["jobs"] = [
        {
            "id": "ft",
            "model": "llama3.1-70b",
            "method": "full_finetune",
            "tokens": "200M",
            "seq_len": 8192,
            "optimizer": "paged-adamw-8bit",
            "min_gpus": 16,
            "max_gpus": 16,
        }
    ]
    layouts = [
        c.layout
        for c in build_problem(load_scenario(write_scenario(base_scenario))).candidates["ft"]
    ]
    fsdp = [lay for lay in layouts if lay.framework == "fsdp"]
    assert fsdp, "the 8-bit optimizer runs on the PyTorch stacks"
    assert all(lay.pp == 1 and lay.recompute in ("none", "full", "offload") for lay in fsdp)
    # with Adam, the same job is searched on torchtitan's pipelined layouts too (the rule is the
    # optimizer's)
    base_scenario["jobs"][0]["optimizer"] = "adamw"
    adam = [
        c.layout
        for c in build_problem(
            load_scenario(write_scenario(base_scenario, "adam.yaml"))
        ).candidates["ft"]
    ]
    assert any(
        lay.framework == "fsdp" and (lay.pp > 1 or lay.recompute == "selective") for lay in adam
    )
