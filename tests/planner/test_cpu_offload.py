"""ZeRO-3 CPU offload of the model states in plans: used where the job fits its hardware no other
way (the lab's own two 24 GB cards), never where the place offers enough GPUs to hold the states,
never when the job says `cpu_offload: false`; and what it needs from the host is said."""

from __future__ import annotations

import contextlib
import re
from typing import Any

import pytest

from plan.models.loading import load_scenario
from plan.planner.candidates import build_problem
from plan.planner.export import ExportError, build_layout
from plan.planner.export.layout import STACKS
from plan.planner.export.writer import render_stack
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.planner.builders import WALL_NET_S


def _duo(base_scenario: dict[str, Any], **job: Any) -> dict[str, Any]:
    """A 3B full fine-tune whose data stays on two 24 GB cards: 16 bytes per parameter do not fit
    them even sharded over both, but fit with the states in host memory (ZeRO-Offload's classic
    case)."""
    base_scenario.update(
        budget="5000",
        deadline="14d",
        ops_skill="expert",
        academic=False,
        policy={},
        sites=[{"id": "site", "jurisdiction": "cn"}],
        owned=[
            {
                "id": "duo",
                "site": "site",
                "gpu": "rtx4090",
                "count": 2,
                "gpus_per_node": 2,
                "cost_per_gpu_hour": 0.3,
            }
        ],
    )
    base_scenario["jobs"] = [
        {
            "id": "ft3b",
            "model": "qwen2.5-3b",
            "method": "full_finetune",
            "tokens": "50M",
            "seq_len": 2048,
            **job,
            "data": {"sensitivity": "regulated", "residency": "on_premises", "at": "site"},
        }
    ]
    return base_scenario


def test_a_pool_too_small_without_it_runs_the_job_with_cpu_offload(base_scenario, write_scenario):
    result = solve(
        load_scenario(write_scenario(_duo(base_scenario))), SolveOptions(time_limit_s=WALL_NET_S)
    )
    assert result.plans
    (job,) = result.plans[0].jobs
    assert job.platform == "duo" and job.state_offload and job.zero == 3 and job.tp == job.pp == 1
    assert job.memory_gib_per_gpu <= 0.92 * job.gpu_memory_gib
    (line,) = [
        x
        for x in result.plans[0].explanation
        if x.startswith("ft3b: ") and "without offloading" not in x
    ]
    assert "zero=3+cpu-offload" in line
    # an expert's first try instead, a leaner optimizer, fits the two cards without offloading: said
    assert any(
        x.startswith("ft3b: without offloading, optimizer: ") for x in result.plans[0].explanation
    )
    notes = " ".join(result.plans[0].explanation + result.plans[0].assumptions)
    assert "host memory" in notes


def test_cpu_offload_false_keeps_it_out(base_scenario, write_scenario):
    result = solve(load_scenario(write_scenario(_duo(base_scenario, cpu_offload=False))),
                   SolveOptions(time_limit_s=WALL_NET_S))
    assert result.status == "infeasible"


def test_no_offload_where_the_place_offers_enough_gpus_to_hold_the_states(
    base_scenario, write_scenario
):
    """A 72B continued pre-training on rented clouds: enough H800s hold it, so no count of any
    cloud's H800 offer is planned offloaded, however cheap its fewer GPUs would look."""
    base_scenario.update(
        owned=[], sites=[], budget="1M", deadline="30d", ops_skill="expert", policy={}
    )
    base_scenario["jobs"] = [{"id": "cpt", "model": "qwen2.5-72b", "method": "continued_pretrain",
                              "tokens": "1B", "seq_len": 4096, "global_batch": 512}]
    problem = build_problem(load_scenario(write_scenario(base_scenario)))
    offloaded = [c for c in problem.all_candidates() if c.layout.state_offload]
    placed = {(c.platform, c.gpu, c.billing) for c in problem.all_candidates()}
    for c in offloaded:  # only where that place fits the job at no count without it
        assert not any(o.platform == c.platform and o.gpu == c.gpu and o.billing == c.billing
                       and not o.layout.state_offload for o in problem.all_candidates()), c.name
    assert placed and not any(c.gpu == "h800" for c in offloaded)


def test_an_offloaded_plan_exports_to_the_stacks_that_offload(base_scenario, write_scenario):
    """Four 24 GB cards and two 7B full fine-tunes (one on 8-bit AdamW, which has no CPU step): each
    planned job, offloaded or not, renders on some stack; an offloaded one on DeepSpeed, with its
    offload keys."""
    data = _duo(base_scenario, model="qwen2.5-7b")
    data["owned"][0].update(count=4, gpus_per_node=4)
    data["jobs"].append({**data["jobs"][0], "id": "eight-bit", "optimizer": "paged-adamw-8bit"})
    loaded = load_scenario(write_scenario(data))
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    assert result.plans
    jobs = {j.id: j for j in loaded.scenario.jobs}
    offloaded = 0
    for jp in result.plans[0].jobs:
        layout = build_layout(jp, jobs[jp.job], loaded.models[jp.job])
        rendered = []
        for stack in STACKS:
            with contextlib.suppress(ExportError):
                rendered.append((stack, render_stack(layout, stack)))
        assert rendered, jp.job
        if jp.state_offload:
            offloaded += 1
            # whole-layer checkpointing, as the offloading stacks run it
            assert jp.recompute in ("none", "full")
            files = dict(rendered)["deepspeed"][0]
            assert '"offload_param"' in files["ds_config.json"]
    assert offloaded >= 1


def test_a_pool_that_declares_its_host_memory_is_held_to_it(base_scenario, write_scenario):
    """A 70B QLoRA on two 24 GB cards needs ~40 GiB of host memory on one GPU, ~20 on each of two: a
    pool that says it has 32 GiB per GPU free runs it on both, and the plan says the figure was
    declared."""
    def plan(host: float | None) -> Any:
        data = _duo(base_scenario, model="llama3.1-70b", method="qlora", lora_rank=16, tokens="20M")
        if host is not None:
            data["owned"][0]["host_memory_gib_per_gpu"] = host
        result = solve(load_scenario(write_scenario(data)), SolveOptions(time_limit_s=WALL_NET_S))
        assert result.plans
        return result.plans[0]

    roomy, tight = plan(None), plan(32)
    # (the cheaper: one card, twice as long)
    assert roomy.jobs[0].gpus == 1 and roomy.jobs[0].state_offload
    assert tight.jobs[0].gpus == 2 and tight.jobs[0].state_offload
    assert any("32 GiB per GPU declared" in line for line in tight.assumptions)
    assert any("128 GiB per GPU assumed" in line for line in roomy.assumptions)


def test_a_cheaper_option_named_in_an_explanation_says_when_it_offloads():
    """medical_hybrid: the hospital's 16 A800s, which its ops skill rules out, would hold the 72B
    continued pre-training only with its states on the CPU; the line naming that option says so, and
    no other."""
    import re

    from tests.conftest import SCENARIOS

    path = next(p for p in SCENARIOS if p.name == "medical_hybrid.yaml")
    loaded = load_scenario(path)
    problem = build_problem(loaded)
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    lines = [x for plan in result.plans for x in plan.explanation if " would cost " in x]
    assert lines
    for line in lines:
        found = re.match(r"(\S+): (\d+)x (\S+) on (\S+) \((\w+)\)( with its model states offloaded "
                         r"to the CPU)? "
                         r"would cost", line)
        assert found, line
        job, gpus, gpu, platform, billing, offloaded = found.groups()
        (option,) = [c for c in problem.candidates[job] if (c.gpus, c.gpu, c.platform, c.billing)
                     == (int(gpus), gpu, platform, billing)]
        assert bool(offloaded) == bool(option.layout.state_offload), line


def _sixteen(base_scenario: dict[str, Any], **job: Any) -> dict[str, Any]:
    """A 14B full fine-tune on a lab's sixteen 24 GB cards in two networked servers: Megatron tp 4 x
    pp 4 holds it without offloading, so the plan does not offload; ZeRO-3 with the states on the
    host is estimated faster there all the same."""
    data = _duo(base_scenario, id="ft14b", model="qwen2.5-14b", tokens="200M", **job)
    data["owned"][0].update(count=16, gpus_per_node=8, fabric={"kind": "roce", "gbps_per_gpu": 100})
    return data


def test_the_plan_says_where_offloading_would_be_clearly_faster(base_scenario, write_scenario):
    result = solve(
        load_scenario(write_scenario(_sixteen(base_scenario))),
            SolveOptions(time_limit_s=WALL_NET_S)
    )
    assert result.plans
    plan = result.plans[0]
    (job,) = plan.jobs
    assert not job.state_offload  # the assumed host speed does not decide the plan...
    # ...it is said
    (line,) = [x for x in plan.explanation if x.startswith("ft14b: cpu_offload: true")]
    gain = int(re.search(r"estimated (\d+)% faster", line).group(1))  # type: ignore[union-attr]
    offloaded_tokens_per_s = float(
        re.search(r": ([\d,]+) tokens/s", line).group(1).replace(",", "")
    )  # type: ignore[union-attr]
    assert gain >= 10 and offloaded_tokens_per_s >= 1.1 * job.tokens_per_s
    assert abs(offloaded_tokens_per_s / job.tokens_per_s - 1 - gain / 100) < 0.01
    assert "zero=3+cpu-offload" in line and "dp=16" in line  # on the plan's own sixteen GPUs
    assert "assumed host figures" in line and "measure a step" in line


def test_no_offload_note_where_the_job_rules_it_out_or_it_is_not_faster(
    base_scenario, write_scenario
):
    ruled_out = solve(
        load_scenario(write_scenario(_sixteen(base_scenario, cpu_offload=False), "off.yaml")),
        SolveOptions(time_limit_s=WALL_NET_S),
    )
    plain = solve(
        load_scenario(write_scenario(base_scenario, "plain.yaml")),
            SolveOptions(time_limit_s=WALL_NET_S)
    )
    for result in (ruled_out, plain):
        assert result.plans
        assert not any("cpu_offload: true" in line for line in result.plans[0].explanation)


def test_an_offloaded_job_is_told_the_setting_that_fits_its_gpus_without_offloading(
    base_scenario, write_scenario
):
    """Qwen3 32B QLoRA at 4k tokens on the lab's two 24 GB cards: with the plain loss's fp32 logits
    only offloading fits, so the plan offloads; Liger's fused loss fits the same two cards without
    it, and the plan says so with both speeds. Given that loss, the plan indeed runs without
    offloading, at that speed."""
    job = {
        "id": "q32",
        "model": "qwen3-32b",
        "method": "qlora",
        "lora_rank": 16,
        "tokens": "20M",
        "seq_len": 4096,
        "gpus": 2,
    }
    plain = solve(load_scenario(write_scenario(_duo(base_scenario, **job), "plain.yaml")),
                  SolveOptions(time_limit_s=WALL_NET_S)).plans[0]
    (jp,) = plain.jobs
    assert jp.state_offload or jp.recompute in ("offload", "full_offload")
    (line,) = [x for x in plain.explanation if x.startswith("q32: without offloading, loss: fused")]
    assert (
        "fits the same 2x rtx4090" in line and "cpu-offload" not in line.split("fits the same")[1]
    )
    speed = float(re.search(r"GiB, ([\d,]+) tokens/s", line).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert f"against the plan's {jp.tokens_per_s:,.0f}" in line
    fused = solve(
        load_scenario(write_scenario(_duo(base_scenario, **job, loss="fused"), "fused.yaml")),
        SolveOptions(time_limit_s=WALL_NET_S),
    ).plans[0]
    (fj,) = fused.jobs
    assert not fj.state_offload and fj.recompute not in ("offload", "full_offload")
    assert fj.tokens_per_s == pytest.approx(speed, rel=1e-3)
    assert not any("without offloading" in x for x in fused.explanation)


def test_a_pool_whose_hosts_cannot_hold_the_offloaded_states_is_told_what_they_need(
    base_scenario, write_scenario
):
    """A 72B full fine-tune whose data stays on a hospital's eight A800s: no layout fits the cards,
    and with the states in host memory each GPU's 1/8 of 16 bytes a parameter (~135 GiB) exceeds the
    128 GiB of RAM per GPU assumed free. The infeasible answer says so and names the pool's field;
    declared at 200 GiB, the job runs offloaded on the pool."""
    data = _duo(base_scenario, model="qwen2.5-72b", tokens="200M", seq_len=4096, id="ft72")
    data["owned"][0].update(gpu="a800-80gb", count=8, gpus_per_node=8, cost_per_gpu_hour=2.0)
    tight = solve(load_scenario(write_scenario(data, "tight.yaml")),
        SolveOptions(time_limit_s=WALL_NET_S))
    assert tight.status == "infeasible"
    (note,) = [n for n in tight.notes if n.startswith("owned pool duo cannot hold ft72")]
    assert "offloaded to host memory it would not fit either" in note
    assert "owned[duo].host_memory_gib_per_gpu" in note
    states_gib = float(
        re.search(r"the ([\d.]+) GiB of model states per GPU exceed the 128 GiB", note).group(1)
    )  # type: ignore[union-attr]
    assert 128 < states_gib < 200
    data["owned"][0]["host_memory_gib_per_gpu"] = 200
    roomy = solve(load_scenario(write_scenario(data, "roomy.yaml")),
        SolveOptions(time_limit_s=WALL_NET_S))
    assert roomy.plans
    (job,) = roomy.plans[0].jobs
    assert job.state_offload and job.gpus == 8
    assert any(
        f"{states_gib:.1f} GiB of sharded parameters" in a for a in roomy.plans[0].assumptions
    )
