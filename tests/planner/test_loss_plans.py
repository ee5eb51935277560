"""A job's `loss` in plans: a lab's one 24 GB card runs Qwen3 8B QLoRA at 8k tokens only when the
stack never holds the whole logits (a fused linear cross-entropy: Liger, Unsloth) or their fp32 copy
(a chunked one: torchtune); the plan says it assumed that and every export repeats it. Megatron has
neither, so asking for one there is bad input."""

from __future__ import annotations

from typing import Any

import pytest

from plan.models.errors import InputError
from plan.models.loading import load_scenario
from plan.planner.export import build_layout
from plan.planner.solve import solve_session
from tests.conftest import generous_session


def _card(base_scenario: dict[str, Any], **job: Any) -> dict[str, Any]:
    base_scenario.update(
        budget="5000",
        deadline="30d",
        ops_skill="expert",
        academic=False,
        policy={},
        sites=[{"id": "site", "jurisdiction": "cn"}],
        owned=[
            {
                "id": "card",
                "site": "site",
                "gpu": "rtx4090",
                "count": 1,
                "gpus_per_node": 1,
                "cost_per_gpu_hour": 0.3,
            }
        ],
    )
    base_scenario["jobs"] = [
        {
            "id": "qlora",
            "model": "qwen3-8b",
            "method": "qlora",
            "tokens": "5M",
            "seq_len": 8192,
            "global_batch": 16,
            "cpu_offload": False,
            **job,
            "data": {"sensitivity": "regulated", "residency": "on_premises", "at": "site"},
        }
    ]
    return base_scenario


def test_the_plain_loss_does_not_fit_the_card_and_the_fused_one_does(base_scenario, write_scenario):
    plain = solve_session(generous_session(write_scenario(_card(base_scenario))))
    assert plain.status == "infeasible"
    (offered,) = [r for r in plain.relaxations if r.kind == "loss"]  # the one change that fits it
    assert offered.field == "jobs[qlora].loss" and offered.to == "fused"
    path = write_scenario(_card(base_scenario, loss="fused"))
    result = solve_session(generous_session(path))
    assert result.status == "optimal"
    assert result.plans[0].total_cost == pytest.approx(offered.cost, abs=0.01)  # the plan it priced
    (job,) = result.plans[0].jobs
    assert job.platform == "card" and job.layout.loss == "fused" and job.loss == "fused"
    assert job.memory_gib_per_gpu <= 0.92 * job.gpu_memory_gib  # the policy's headroom holds
    (line,) = [x for x in result.plans[0].explanation if x.startswith("qlora: ")]
    assert "fused loss" in line
    loaded = load_scenario(path)
    layout = build_layout(job, loaded.scenario.jobs[0], loaded.models["qlora"])
    assert any("fused linear cross-entropy" in note for note in layout.notes)


def test_a_chunked_loss_is_planned_as_stated(base_scenario, write_scenario):
    path = write_scenario(_card(base_scenario, loss="chunked"))
    result = solve_session(generous_session(path))
    assert result.status == "optimal"
    (job,) = result.plans[0].jobs
    assert job.layout.loss == "chunked" and job.loss == "chunked"
    assert job.memory_gib_per_gpu <= 0.92 * job.gpu_memory_gib
    assert any("chunked loss" in x for x in result.plans[0].explanation)
    loaded = load_scenario(path)
    layout = build_layout(job, loaded.scenario.jobs[0], loaded.models["qlora"])
    assert any("chunked cross-entropy" in note for note in layout.notes)


def test_plans_that_do_not_ask_for_it_do_not_carry_it(base_scenario, write_scenario):
    base = _card(base_scenario, seq_len=2048)
    result = solve_session(generous_session(write_scenario(base)))
    (job,) = result.plans[0].jobs
    assert "loss" not in job.layout.to_dict() and job.loss == "plain"
    assert not any(" loss" in x for x in result.plans[0].explanation if x.startswith("qlora: "))


@pytest.mark.parametrize("loss", ["chunked", "fused"])
def test_a_pytorch_loss_on_megatron_is_bad_input(base_scenario, write_scenario, loss):
    base_scenario["jobs"][0].update({"loss": loss, "framework": "megatron"})
    with pytest.raises(InputError) as err:
        load_scenario(write_scenario(base_scenario))
    assert any(f"loss {loss} is a PyTorch stack's loss" in line and "jobs[0]" in line
               for line in err.value.problems), err.value.problems


def test_where_neither_alone_fits_both_settings_are_offered_together(base_scenario, write_scenario):
    # Llama 3.1 8B LoRA at 16k tokens on the one card: the fused loss alone and fused layers alone
    # leave it over what the policy lets the card hold, both together (as Liger and Unsloth run
    # them) fit
    job = {"model": "llama3.1-8b", "method": "lora", "seq_len": 16384, "tokens": "20M"}
    result = solve_session(generous_session(write_scenario(_card(base_scenario, **job))))
    assert result.status == "infeasible"
    assert not [r for r in result.relaxations if r.kind in ("loss", "kernels")]
    (both,) = [r for r in result.relaxations if r.field == "jobs[qlora].loss; jobs[qlora].kernels"]
    assert both.kind == "joint" and both.to == "fused, fused"
    fixed = solve_session(generous_session(write_scenario(_card(base_scenario, **job, loss="fused",
                                                                kernels="fused"))))
    assert fixed.status == "optimal" and fixed.plans[0].total_cost == pytest.approx(
        both.cost, abs=0.01
    )
    (planned,) = fixed.plans[0].jobs
    assert planned.memory_gib_per_gpu <= 0.92 * planned.gpu_memory_gib
