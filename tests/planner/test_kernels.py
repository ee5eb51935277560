"""A job's `kernels`: fused (torch.compile, Liger, Unsloth) keeps fewer activations and issues fewer
kernels than the eager default, the plan says which it assumed, and the exports follow it."""

from __future__ import annotations

from typing import Any

from plan.models.loading import load_scenario
from plan.planner.export import build_layout, render_stack
from plan.planner.solve import solve_session
from tests.conftest import generous_session


def _lab(base_scenario: dict[str, Any], kernels: str) -> dict[str, Any]:
    """One Llama 3.1 8B full fine-tune on the lab's own four A800s under FSDP, nothing else to
    choose."""
    base_scenario.update(
        budget="100k",
        deadline="30d",
        ops_skill="expert",
        owned=[
            {
                "id": "lab-a800",
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
            "id": "ft",
            "model": "llama3.1-8b",
            "method": "full_finetune",
            "tokens": "20M",
            "seq_len": 4096,
            "global_batch": 64,
            "framework": "fsdp",
            "kernels": kernels,
            "data": {"sensitivity": "public", "at": "lab"},
        }
    ]
    return base_scenario


def _plan(base_scenario, write_scenario, kernels: str):
    path = write_scenario(_lab(base_scenario, kernels))
    result = solve_session(generous_session(path))
    assert result.status == "optimal"
    (job,) = result.plans[0].jobs
    return path, result.plans[0], job


def test_fused_kernels_plan_less_memory_or_more_speed(base_scenario, write_scenario):
    _, eager_plan, eager = _plan(base_scenario, write_scenario, "eager")
    _, fused_plan, fused = _plan(base_scenario, write_scenario, "fused")
    assert eager.layout.kernels == "eager" and fused.layout.kernels == "fused"
    # the same work never takes longer on fused kernels, and the plan never costs more
    assert fused.tokens_per_s >= eager.tokens_per_s * (1 - 1e-9)
    assert fused_plan.total_cost <= eager_plan.total_cost + 0.01
    for job in (eager, fused):
        assert job.memory_gib_per_gpu <= job.gpu_memory_gib
    (line,) = [x for x in fused_plan.explanation if x.startswith("ft: ")]
    assert "fused kernels" in line
    assert not any("fused kernels" in x for x in eager_plan.explanation)


def test_fused_kernels_export_compile_to_torchtitan_and_a_note_elsewhere(
    base_scenario, write_scenario
):
    path, _, job = _plan(base_scenario, write_scenario, "fused")
    loaded = load_scenario(path)
    layout = build_layout(job, loaded.scenario.jobs[0], loaded.models["ft"])
    assert layout.kernels == "fused"
    files, _ = render_stack(layout, "torchtitan")
    assert "[compile]" in files["job.toml"] and "enable = true" in files["job.toml"]
    assert any("fused kernels" in note for note in layout.notes)
