"""A job's `lora_targets` (`--lora-targets`): adapters on every linear layer (the default, as QLoRA
and LLaMA-Factory do) or on the attention projections only (PEFT's own default for Llama-family
models, NeMo's LoRA). Fewer adapters hold fewer gradients and optimizer states and cost less time;
plans carry the choice and the exports write it."""

from __future__ import annotations

import json
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from plan.models.errors import InputError
from plan.models.loading import load_scenario
from plan.planner.cli.estimate_cmd import estimate_command
from plan.planner.export import build_layout, render_stack
from plan.planner.solve import solve_session
from tests.conftest import generous_session

app = typer.Typer()
app.command()(estimate_command)


def _estimate(*extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        app,
        [
            "--model",
            "qwen2.5-7b",
            "--method",
            "lora",
            "--gpu",
            "h100-sxm",
            "--gpus",
            "1",
            "--seq-len",
            "4096",
            "--micro-batch",
            "2",
            "--global-batch",
            "16",
            "--recompute",
            "full",
            "--format",
            "json",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_attention_targets_hold_fewer_states_and_run_faster():
    everything, attention = _estimate(), _estimate("--lora-targets", "attention")
    assert (
        everything["layout"]["lora_targets"] == "all"
        and attention["layout"]["lora_targets"] == "attention"
    )
    for part in ("gradients", "optimizer"):
        assert attention["memory_gib"][part] < everything["memory_gib"][part]
    assert attention["memory_gib"]["total"] < everything["memory_gib"]["total"]
    assert attention["tokens_per_s"] > everything["tokens_per_s"]


def test_lora_targets_is_for_adapter_methods_only(base_scenario, write_scenario):
    result = CliRunner().invoke(
        app,
        [
            "--model",
            "qwen2.5-7b",
            "--method",
            "full_finetune",
            "--gpu",
            "h100-sxm",
            "--gpus",
            "8",
            "--lora-targets",
            "attention",
        ],
    )
    assert result.exit_code == 2 and "error: --lora-targets: only for" in result.stderr
    result = CliRunner().invoke(
        app,
        [
            "--model",
            "qwen2.5-7b",
            "--method",
            "lora",
            "--gpu",
            "h100-sxm",
            "--gpus",
            "8",
            "--lora-targets",
            "mlp",
        ],
    )
    assert result.exit_code == 2 and "error: --lora-targets:" in result.stderr
    base_scenario["jobs"][0].update({"method": "full_finetune", "lora_targets": "attention"})
    base_scenario["jobs"][0].pop("lora_rank", None)
    with pytest.raises(InputError) as err:
        load_scenario(write_scenario(base_scenario))
    assert any("lora_targets is only for lora" in line for line in err.value.problems), (
        err.value.problems
    )


def test_a_plan_carries_attention_targets_to_its_exports(base_scenario, write_scenario):
    base_scenario.update(
        budget="100k",
        deadline="30d",
        ops_skill="expert",
        owned=[
            {
                "id": "lab",
                "site": "lab",
                "gpu": "a800-80gb",
                "count": 4,
                "gpus_per_node": 4,
                "cost_per_gpu_hour": 1,
            }
        ],
    )
    base_scenario["jobs"] = [
        {
            "id": "lora",
            "model": "qwen2.5-7b",
            "method": "lora",
            "tokens": "20M",
            "seq_len": 4096,
            "lora_targets": "attention",
            "framework": "fsdp",
            "data": {"sensitivity": "public", "at": "lab"},
        }
    ]
    path = write_scenario(base_scenario)
    result = solve_session(generous_session(path))
    assert result.status == "optimal"
    (job,) = result.plans[0].jobs
    assert job.layout.to_dict()["lora_targets"] == "attention"
    (line,) = [x for x in result.plans[0].explanation if x.startswith("lora: ")]
    assert "LoRA on attention only" in line
    loaded = load_scenario(path)
    layout = build_layout(job, loaded.scenario.jobs[0], loaded.models["lora"])
    files, _ = render_stack(layout, "llamafactory")
    (config,) = [
        text for name, text in files.items() if name.endswith(".yaml") and "lora_target" in text
    ]
    assert "lora_target: q_proj,k_proj,v_proj,o_proj" in config
