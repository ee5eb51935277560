"""Infeasible scenarios: the conflict is minimal, over the options the policy leaves, and names only
rules that change the outcome; relaxations are numbers with units; why-not still answers."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from typer.testing import CliRunner

from plan.models.loading import load_scenario
from plan.planner.cli.app import app
from plan.planner.cpsat.model import Bounds
from plan.planner.explain.conflicts import can_change
from plan.planner.report import render_markdown
from plan.planner.report_html.page import report_html
from plan.planner.session import Session, SolveOptions
from plan.planner.solve import solve, solve_session
from tests.planner.builders import WALL_NET_S

runner = CliRunner()
EXCLUDED = ("zhixingyun", "autodl", "a800", "h800", "rtx4090", "aliyun", "tencent")


def _domestic(base_scenario: dict[str, Any]) -> dict[str, Any]:
    """Regulated data, only ModelArts and 910B allowed, billed by the hour: ModelArts' hourly pool
    is shared (the catalog: it lacks dedicated hardware, which its monthly pools have)."""
    base_scenario.update(
        owned=[],
        sites=[],
        budget="200k",
        deadline="30d",
        policy={"allow_platforms": ["huawei-modelarts"], "allow_gpus": ["ascend-910b"]},
    )
    base_scenario["jobs"] = [{"id": "glm", "model": "glm-4-9b", "method": "lora", "tokens": "500M",
                              "billing": ["hourly"],
                              "data": {"sensitivity": "regulated", "residency": "cn"}}]
    return base_scenario


def _poor_and_hurried(base_scenario: dict[str, Any], write_scenario) -> dict[str, Any]:
    """A budget that only the slow plans meet and a deadline that only the dear ones meet, read off
    the scenario's own cheapest and fastest plans (so catalog updates do not break the plant)."""
    base_scenario.update(owned=[], sites=[], policy={"allow_spot": False})
    base_scenario.pop("budget"), base_scenario.pop("deadline")
    base_scenario["jobs"] = [{"id": "ft", "model": "llama3-8b", "method": "lora", "tokens": "200M",
                              "seq_len": 2048}]
    cheapest = solve(load_scenario(write_scenario(base_scenario)), SolveOptions(top_k=1)).plans[0]
    fastest = solve(
        load_scenario(write_scenario(base_scenario)), SolveOptions(top_k=1, objective="time")
    ).plans[0]
    assert fastest.makespan_h < cheapest.makespan_h
    base_scenario["budget"] = cheapest.total_cost
    base_scenario["deadline"] = f"{(fastest.makespan_h + cheapest.makespan_h) / 2:.3f}h"
    return base_scenario


def _session(write_scenario, data) -> Session:
    return Session.from_loaded(load_scenario(write_scenario(data)),
        SolveOptions(time_limit_s=WALL_NET_S))


def _check_minimal_and_each_changes_the_outcome(session: Session, names: list[str]) -> None:
    all_groups = set(session.model.groups.literals)
    changeable = {g for g in all_groups if can_change(g)}
    assert names and all(can_change(n) for n in names)
    assert (
        session.run(None, Bounds(lifted=frozenset(changeable - set(names)))).status == "infeasible"
    )
    for name in names:
        # Minimal: without this one (other rules of the set held, facts and policy held) a plan
        # exists.
        rest = set(names) - {name}
        assert session.run(None, Bounds(lifted=frozenset(changeable - rest))).solved, name
        # And it changes the outcome of the scenario as written: lifting it alone gives a plan.
        assert session.run(None, Bounds(lifted=frozenset({name}))).solved, name


def test_planted_sensitivity_conflict_is_minimal_and_ignores_excluded_options(
    base_scenario, write_scenario
):
    session = _session(write_scenario, _domestic(base_scenario))
    result = solve_session(session)
    assert result.status == "infeasible"
    names = [c.constraint for c in result.conflicts]
    assert names == ["sensitivity/glm"]
    detail = result.conflicts[0].detail
    assert "dedicated_hardware" in detail and "huawei-modelarts" in detail
    assert not any(word in c.detail for c in result.conflicts for word in EXCLUDED)
    _check_minimal_and_each_changes_the_outcome(session, names)
    kinds = {r.kind: r for r in result.relaxations}
    assert (
        kinds["sensitivity"].field == "jobs[glm].data.sensitivity"
        and kinds["sensitivity"].to == "internal"
    )
    assert kinds["policy"].cost is not None and "policy.allow_platforms" in kinds["policy"].field


def test_planted_budget_deadline_conflict(base_scenario, write_scenario):
    session = _session(write_scenario, _poor_and_hurried(base_scenario, write_scenario))
    result = solve_session(session)
    assert result.status == "infeasible"
    names = sorted(c.constraint for c in result.conflicts)
    assert names == ["budget", "deadline/ft"]
    _check_minimal_and_each_changes_the_outcome(session, names)
    by_kind = {r.kind: r for r in result.relaxations}
    budget = session.problem.scale.to_money(session.problem.budget or 0)
    assert by_kind["budget"].unit == "CNY" and by_kind["budget"].to > budget
    deadline = by_kind["deadline"]
    assert isinstance(deadline.to, float) and isinstance(by_kind["budget"].to, float)
    hours = deadline.to if deadline.unit == "h" else deadline.to * 24
    assert deadline.unit == ("h" if hours < 48 else "d")  # under two days: stated in hours
    assert hours > session.problem.scale.to_hours(session.problem.deadline_min["ft"] or 0)


def test_headroom_relaxation_when_only_the_headroom_blocks(base_scenario, write_scenario):
    # llama3-8b LoRA on one 4090 needs ~18.6 GiB at its leanest: over 75% of 24 GiB, under 92%.
    base_scenario.update(policy={"allow_gpus": ["rtx4090"], "memory_headroom": 0.25})
    base_scenario["owned"][0].update(count=1, gpus_per_node=1)
    # (CPU offload off: with the states on the host it would fit under the headroom)
    base_scenario["jobs"] = [{"id": "ft", "model": "llama3-8b", "method": "lora", "tokens": "10M",
                              "seq_len": 2048, "gpus": 1, "cpu_offload": False}]
    result = solve_session(_session(write_scenario, base_scenario))
    assert result.status == "infeasible"
    headroom = next(r for r in result.relaxations if r.kind == "headroom")
    assert headroom.field == "policy.memory_headroom" and headroom.unit == "fraction of card"
    assert 0 <= headroom.to < 0.25
    base_scenario["policy"]["memory_headroom"] = headroom.to
    assert solve_session(_session(write_scenario, base_scenario)).status in ("optimal", "feasible")


def test_json_relaxations_are_numbers_with_units(base_scenario, write_scenario):
    path = write_scenario(_poor_and_hurried(base_scenario, write_scenario))
    result = runner.invoke(app, ["solve", str(path), "--format", "json"])
    assert result.exit_code == 1
    for relaxation in json.loads(result.stdout)["relaxations"]:
        assert {"kind", "field", "to", "unit", "detail", "cost"} <= set(relaxation)
        if relaxation["kind"] in ("budget", "deadline", "headroom"):
            assert isinstance(relaxation["to"], float) and relaxation["unit"]


@pytest.mark.parametrize(("spec", "expected"), [
    ("platform=huawei-modelarts gpu=ascend-910b gpus=8", "sensitivity/glm: regulated data needs "
                                                         "dedicated_hardware"),
    ("platform=aliyun-pai gpu=h800 billing=hourly", "policy.platforms: aliyun-pai is not in "
                                                    "allow_platforms"),
])
def test_why_not_answers_on_an_infeasible_scenario(base_scenario, write_scenario, spec, expected):
    path = write_scenario(_domestic(base_scenario))
    result = runner.invoke(app, ["explain", str(path), "--why-not", spec, "--format", "json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["status"] == "infeasible"
    assert any(expected in reason for reason in answer["reasons"])
    assert any("no plan with any option" in reason for reason in answer["reasons"])


def _own_h100s_only(base_scenario: dict[str, Any], **job: Any) -> dict[str, Any]:
    """A 72B full fine-tune whose data stays on the hospital's two 8-GPU H100 nodes: mixed-precision
    Adam with Megatron's fp32 gradient buffers needs ~18 bytes per parameter, ~76 GiB of states per
    GPU at 16, 78.4 GiB at its leanest layout: over the 98% of the card the policy leaves it at the
    median."""
    base_scenario.update(
        budget="500k",
        deadline="30d",
        confidence=0.5,
        ops_skill="expert",
        sites=[{"id": "hosp", "jurisdiction": "cn"}],
        policy={"memory_headroom": 0.02},
        owned=[
            {
                "id": "hosp-h100",
                "site": "hosp",
                "gpu": "h100-sxm",
                "count": 16,
                "gpus_per_node": 8,
                "cost_per_gpu_hour": 10,
                "fabric": {"kind": "infiniband", "gbps_per_gpu": 400},
            }
        ],
    )
    base_scenario["jobs"] = [
        {
            "id": "sft",
            "model": "qwen2.5-72b",
            "method": "full_finetune",
            "tokens": "50M",
            "seq_len": 4096,
            "global_batch": 32,
            "data": {"sensitivity": "public", "residency": "on_premises", "at": "hosp"},
            **job,
        }
    ]
    return base_scenario


def test_the_leaner_megatron_optimizer_is_offered_where_it_makes_the_memory_fit(
    base_scenario, write_scenario
):
    # (FSDP's ZeRO-3 over 16 GPUs would fit)
    data = _own_h100s_only(base_scenario, framework="megatron")
    result = solve_session(_session(write_scenario, data))
    assert result.status == "infeasible"
    leaner = next(r for r in result.relaxations if r.kind == "optimizer")
    assert (leaner.field, leaner.to, leaner.unit) == (
        "jobs[sft].optimizer",
        "adamw-precision-aware",
        "setting",
    )
    # applying it gives exactly the plan it priced, on the hospital's own GPUs
    data["jobs"][0]["optimizer"] = leaner.to
    after = solve_session(_session(write_scenario, data))
    assert after.status in ("optimal", "feasible")
    plan = after.plans[0]
    assert plan.total_cost == pytest.approx(leaner.cost, abs=0.01)
    assert {j.platform for j in plan.jobs} == {"hosp-h100"}
    assert all(j.memory_gib_per_gpu <= j.gpu_memory_gib for j in plan.jobs)
    # and the plan's explanation says which optimizer made it fit
    (line,) = [x for x in plan.explanation if x.startswith("sft: ")]
    assert "optimizer adamw-precision-aware" in line  # as the scenario names it


def test_an_eight_bit_optimizer_is_offered_to_an_adapter_job_it_makes_fit(
    base_scenario, write_scenario
):
    """A 70B QLoRA on the lab's one 48 GB card whose host has no memory to spare (CPU offload off):
    mixed-precision AdamW's 12 bytes per adapter parameter put it just over the card; the QLoRA
    recipe's paged 8-bit AdamW is the expert's first try. Fused kernels (Unsloth's): on eager
    Hugging Face modules peft's fp32 embeddings and residual stream fit no optimizer there."""
    base_scenario.update(budget="50k", deadline="30d", confidence=0.5, ops_skill="expert",
                         sites=[{"id": "lab", "jurisdiction": "cn"}],
                         owned=[{"id": "lab-a6000", "site": "lab", "gpu": "rtx-a6000", "count": 1,
                                 "gpus_per_node": 1, "cost_per_gpu_hour": 2}])
    base_scenario["jobs"] = [
        {
            "id": "qlora",
            "model": "llama3.1-70b",
            "method": "qlora",
            "tokens": "2M",
            "seq_len": 2048,
            "global_batch": 8,
            "cpu_offload": False,
            "kernels": "fused",
            "data": {"sensitivity": "public", "residency": "on_premises", "at": "lab"},
        }
    ]
    result = solve_session(_session(write_scenario, base_scenario))
    assert result.status == "infeasible"
    (eight_bit,) = [r for r in result.relaxations if r.kind == "optimizer"]
    assert (eight_bit.field, eight_bit.to) == ("jobs[qlora].optimizer", "paged-adamw-8bit")
    assert "QLoRA recipe" in eight_bit.detail
    base_scenario["jobs"][0]["optimizer"] = eight_bit.to
    after = solve_session(_session(write_scenario, base_scenario))
    assert after.status in ("optimal", "feasible")
    (job,) = after.plans[0].jobs
    assert job.platform == "lab-a6000" and job.memory_gib_per_gpu <= 0.92 * job.gpu_memory_gib
    assert after.plans[0].total_cost == pytest.approx(eight_bit.cost, abs=0.01)


def test_two_optimizer_swaps_are_offered_together_when_neither_alone_is_enough(
    base_scenario, write_scenario
):
    """The hospital's 72B full fine-tune needs Megatron's precision-aware optimizer on its 16 H100s
    and the lab's 70B QLoRA at 3,500-token sequences needs paged 8-bit AdamW on its one 48 GB card:
    neither change alone gives a plan, both together do, and the relaxation names both. (The QLoRA
    with fused kernels: on eager Hugging Face modules nothing fits that card.)"""
    data = _own_h100s_only(base_scenario, framework="megatron")
    data["sites"].append({"id": "lab", "jurisdiction": "cn"})
    data["owned"].append(
        {
            "id": "lab-a6000",
            "site": "lab",
            "gpu": "rtx-a6000",
            "count": 1,
            "gpus_per_node": 1,
            "cost_per_gpu_hour": 2,
        }
    )
    data["jobs"].append(
        {
            "id": "qlora",
            "model": "llama3.1-70b",
            "method": "qlora",
            "tokens": "2M",
            # (3,500: with fp32 adapters and every adapter gradient held to the step, as peft
            # and the Hugging Face Trainer run it, 4,000 tokens no longer fit the 48 GB card)
            "seq_len": 3500,
            "global_batch": 8,
            "cpu_offload": False,
            "kernels": "fused",
            "data": {"sensitivity": "public", "residency": "on_premises", "at": "lab"},
        }
    )
    result = solve_session(_session(write_scenario, data))
    assert result.status == "infeasible"
    (both,) = [r for r in result.relaxations if r.kind == "optimizer"]
    assert both.field == "jobs[sft].optimizer; jobs[qlora].optimizer"
    assert both.to == "adamw-precision-aware, paged-adamw-8bit"
    data["jobs"][0]["optimizer"], data["jobs"][1]["optimizer"] = (
        "adamw-precision-aware",
        "paged-adamw-8bit",
    )
    after = solve_session(_session(write_scenario, data))
    assert after.status in ("optimal", "feasible")
    assert after.plans[0].total_cost == pytest.approx(both.cost, abs=0.01)


def test_pure_bf16_adamw_is_offered_to_a_full_fine_tune_as_torchtune_runs_it(
    base_scenario, write_scenario
):
    """torchtune's published 70B full fine-tune on one node of 8 A100s
    (recipes/configs/llama3_1/70B_full.yaml: CPU offload, pure BF16): with mixed-precision AdamW its
    131 GiB of states per GPU fit neither the card nor the host, so nothing fits; pure BF16 AdamW's
    66 GiB per GPU run it on the lab's own node (in host memory, or sharded on the cards with tensor
    parallelism where that leaves room)."""
    base_scenario.update(budget="50k", deadline="30d", confidence=0.5, ops_skill="expert",
                         sites=[{"id": "lab", "jurisdiction": "cn"}],
                         owned=[{"id": "lab-a100", "site": "lab", "gpu": "a100-80gb", "count": 8,
                                 "gpus_per_node": 8, "cost_per_gpu_hour": 3}])
    base_scenario["jobs"] = [
        {
            "id": "sft",
            "model": "llama3.1-70b",
            "method": "full_finetune",
            "tokens": "5M",
            "seq_len": 2048,
            "global_batch": 16,
            "framework": "fsdp",
            "data": {"sensitivity": "public", "residency": "on_premises", "at": "lab"},
        }
    ]
    result = solve_session(_session(write_scenario, base_scenario))
    assert result.status == "infeasible"
    offered = {r.to: r for r in result.relaxations if r.kind == "optimizer"}
    # (Megatron's: not with fsdp)
    assert "adamw-bf16" in offered and "adamw-precision-aware" not in offered
    pure = offered["adamw-bf16"]
    assert pure.field == "jobs[sft].optimizer" and "no fp32 master copy" in pure.detail
    base_scenario["jobs"][0]["optimizer"] = pure.to
    after = solve_session(_session(write_scenario, base_scenario))
    assert after.status in ("optimal", "feasible")
    (job,) = after.plans[0].jobs
    assert job.platform == "lab-a100" and job.memory_gib_per_gpu <= job.gpu_memory_gib
    assert job.figures is not None and job.layout.optimizer == "adam_bf16"
    assert after.plans[0].total_cost == pytest.approx(pure.cost, abs=0.01)


def test_no_optimizer_relaxation_where_it_would_not_fit_either(base_scenario, write_scenario):
    # 405B on 16 GPUs under Megatron: ~350 GiB of states per GPU even at 14 bytes per parameter
    data = _own_h100s_only(base_scenario, framework="megatron", model="llama3.1-405b")
    result = solve_session(_session(write_scenario, data))
    assert result.status == "infeasible"
    assert not [r for r in result.relaxations if r.kind == "optimizer"]


def _on_premises(
    base_scenario: dict[str, Any],
    *,
    ops: str,
    pool: str,
    count: int,
    job: str,
    model: str,
    method: str,
    tokens: str,
    budget: str,
) -> dict[str, Any]:
    """A site with one pool of 24 GB cards in one server; the job's data is regulated and stays
    there."""
    base_scenario.update(budget=budget, deadline="14d", ops_skill=ops, academic=False, policy={},
                         sites=[{"id": "site", "jurisdiction": "cn"}],
                         owned=[{"id": pool, "site": "site", "gpu": "rtx4090", "count": count,
                                 "gpus_per_node": count, "cost_per_gpu_hour": 0.3}])
    base_scenario["jobs"] = [
        {
            "id": job,
            "model": model,
            "method": method,
            "tokens": tokens,
            "seq_len": 2048,
            "data": {"sensitivity": "regulated", "residency": "on_premises", "at": "site"},
        }
    ]
    return base_scenario


def _no_ops_workstation(base_scenario: dict[str, Any]) -> dict[str, Any]:
    """A ward with no ops skill owns one 4-card workstation; its patient notes must stay there."""
    return _on_premises(
        base_scenario,
        ops="none",
        pool="ws",
        count=4,
        job="notes",
        model="qwen2.5-7b",
        method="qlora",
        tokens="20M",
        budget="2000",
    )


def test_a_conflict_names_the_option_only_that_rule_keeps_out(base_scenario, write_scenario):
    """The ops rule removes the clouds and the ward's workstation alike; residency removes the
    clouds anyway, so the reason worth reading is the workstation's: it lacks a one-click
    environment. Declaring that it has one (a vendor image, LLaMA-Factory's web UI) is offered,
    priced, and gives that plan."""
    data = _no_ops_workstation(base_scenario)
    result = solve_session(_session(write_scenario, data))
    assert result.status == "infeasible"
    ops = next(c for c in result.conflicts if c.constraint == "ops_skill/notes")
    assert ops.detail.startswith("ops skill none needs one_click_env and checkpoint_resume; ws "
                                 "lacks it")
    pools = next(r for r in result.relaxations if r.field == "owned[ws].features")
    assert pools.to == "one_click_env, checkpoint_resume" and pools.cost is not None
    data["owned"][0]["features"] = ["one_click_env", "checkpoint_resume"]
    after = solve_session(_session(write_scenario, data))
    assert after.status in ("optimal", "feasible")
    assert after.plans[0].total_cost == pytest.approx(pools.cost, abs=0.01)
    assert {j.platform for j in after.plans[0].jobs} == {"ws"}
    # the pool states its own server size, so the catalog's typical one is not an assumption of this
    # plan
    assert not any("gpus_per_node 8" in line for line in after.plans[0].assumptions)


def test_no_pool_feature_relaxation_where_the_pool_lacks_it_on_purpose(
    base_scenario, write_scenario
):
    data = _no_ops_workstation(base_scenario)
    data["owned"][0]["lacks"] = ["one_click_env"]
    result = solve_session(_session(write_scenario, data))
    assert result.status == "infeasible"
    assert not any("features" in r.field for r in result.relaxations)


def test_a_full_fine_tune_too_big_for_its_pool_is_offered_the_low_memory_recipe(
    base_scenario, write_scenario
):
    """A 3B full fine-tune whose data must stay on two 24 GB cards: mixed-precision AdamW's 16 bytes
    per parameter do not fit even sharded over both. The answer says the pool is too small (with the
    closest figure), and offers torchtune's low-memory recipe (8-bit AdamW in the backward pass,
    bf16 weights), saying that it drops the fp32 master copy; applying it gives the plan it priced,
    on the pool."""
    _on_premises(base_scenario, ops="expert", pool="duo", count=2, job="ft3b", model="qwen2.5-3b",
                 method="full_finetune", tokens="50M", budget="5000")
    # (a host with memory to spare runs it with ZeRO-3 offload)
    base_scenario["jobs"][0]["cpu_offload"] = False
    session = _session(write_scenario, base_scenario)
    result = solve_session(session)
    assert result.status == "infeasible"
    (pool_note,) = [n for n in result.notes if n.startswith("owned pool duo cannot hold ft3b in "
                                                            "memory")]
    assert "on 2x rtx4090" in pool_note  # the closest: the whole pool
    # the markdown answer and the HTML report carry it, as the terminal does
    assert f"- {pool_note}" in render_markdown(result).splitlines()
    assert session.loaded is not None
    assert html.escape(pool_note, quote=True) in report_html(result, session.loaded)
    eight_bit = next(
        r for r in result.relaxations if r.kind == "optimizer" and r.to == "paged-adamw-8bit"
    )
    assert "no fp32 master copy" in eight_bit.detail
    base_scenario["jobs"][0]["optimizer"] = eight_bit.to
    after = solve_session(_session(write_scenario, base_scenario))
    assert after.status in ("optimal", "feasible")
    assert after.plans[0].total_cost == pytest.approx(eight_bit.cost, abs=0.01)
    assert {j.platform for j in after.plans[0].jobs} == {"duo"}


def test_a_deadline_no_option_meets_says_how_long_the_fastest_plan_takes(
    base_scenario, write_scenario
):
    """Six hours for a 72B continued pre-training on 10B tokens: every option ends beyond the
    model's horizon (three times the deadline), so the answer cannot come from the model itself. It
    is a deadline conflict all the same, and the deadline that works is the fastest plan's, solved
    without one."""
    base_scenario.update(
        owned=[], sites=[], budget="100万元", deadline="6h", ops_skill="expert", policy={}
    )
    base_scenario["jobs"] = [{"id": "cpt", "model": "qwen2.5-72b", "method": "continued_pretrain",
                              "tokens": "10B", "seq_len": 4096}]
    result = solve_session(_session(write_scenario, base_scenario))
    assert result.status == "infeasible"
    assert [c.constraint for c in result.conflicts] == ["deadline/cpt"]
    (extend,) = [r for r in result.relaxations if r.kind == "deadline"]
    assert extend.unit in ("h", "d") and isinstance(extend.to, float)
    base_scenario["deadline"] = f"{extend.to:g}{extend.unit}"
    after = solve_session(_session(write_scenario, base_scenario))
    assert after.status in ("optimal", "feasible")
    assert after.plans[0].makespan_h <= extend.to * (24 if extend.unit == "d" else 1) + 1e-6
    # no horizon-beyond option is left in a model: nothing could schedule it
    problem = _session(write_scenario, base_scenario).problem
    assert all(
        c.startup_min + c.duration_min <= problem.horizon_min for c in problem.all_candidates()
    )


def test_two_conflicts_are_both_named_and_relaxed_together(base_scenario, write_scenario):
    """500 CNY for a 72B LoRA on 20B tokens of regulated data, by a team with no ops skill: raising
    the budget alone still leaves no platform the team can run and the data may use, and raising the
    skill alone leaves the budget far too small. Both conflicts are named (not only the first
    found), and the changes are offered together, priced; applying them gives that plan."""
    base_scenario.update(
        owned=[], sites=[], budget="500", deadline="14d", ops_skill="none", policy={}
    )
    base_scenario["jobs"] = [{"id": "j", "model": "qwen2.5-72b", "method": "lora", "tokens": "20B",
                              "seq_len": 8192, "data": {"sensitivity": "regulated"}}]
    session = _session(write_scenario, base_scenario)
    result = solve_session(session)
    assert result.status == "infeasible"
    names = [c.constraint for c in result.conflicts]
    assert "budget" in names and "ops_skill/j" in names
    # neither alone is enough: lifting either leaves the other's conflict
    for name in ("budget", "ops_skill/j"):
        assert not session.run(None, Bounds(lifted=frozenset({name}))).solved
    (joint,) = [r for r in result.relaxations if r.kind == "joint"]
    assert [r.kind for r in result.relaxations] == ["joint"]
    assert (
        "raise the budget to" in joint.detail
        and "set ops_skill to basic (now none)" in joint.detail
    )
    base_scenario.update(budget=f"{joint.cost:.2f}", ops_skill="basic")
    after = solve_session(_session(write_scenario, base_scenario))
    assert after.status in ("optimal", "feasible")
    assert after.plans[0].total_cost == pytest.approx(joint.cost, abs=0.01)


def test_a_conflict_whose_rules_each_fall_short_alone_is_relaxed_together(
    base_scenario, write_scenario
):
    """5,000 CNY for a LoRA-DPO of Qwen3 8B on 20B tokens of regulated data, by a team with no ops
    skill: one conflict, the budget and the data's sensitivity. Confidential data may run on a
    platform that costs 5,021 CNY, just over the budget, and no budget alone opens a platform to
    regulated data for this team: neither change alone is enough, and none was offered
    (explained_answers --seed 84). Both are offered together, priced; applying them gives that
    plan."""
    base_scenario.update(owned=[], sites=[], budget="5000", deadline="14d", ops_skill="none",
                         policy={"allow_spot": False})
    base_scenario["jobs"] = [
        {
            "id": "j",
            "model": "qwen3-8b",
            "method": "lora_dpo",
            "tokens": "20B",
            "seq_len": 2048,
            "data": {"sensitivity": "regulated"},
            "kernels": "fused",
        }
    ]
    session = _session(write_scenario, base_scenario)
    result = solve_session(session)
    assert result.status == "infeasible"
    assert [c.constraint for c in result.conflicts] == ["budget", "sensitivity/j"]
    for name in ("budget", "sensitivity/j"):
        assert not session.run(None, Bounds(lifted=frozenset({name}))).solved
    (joint,) = [r for r in result.relaxations if r.kind == "joint"]
    assert "raise the budget to" in joint.detail
    assert "set jobs[j].data.sensitivity to confidential (now regulated)" in joint.detail
    base_scenario.update(budget=f"{joint.cost:.2f}")
    base_scenario["jobs"][0]["data"]["sensitivity"] = "confidential"
    after = solve_session(_session(write_scenario, base_scenario))
    assert after.status in ("optimal", "feasible")
    assert after.plans[0].total_cost == pytest.approx(joint.cost, abs=0.01)


@pytest.mark.parametrize(
    "case",
    [
        # a budget far too small and a team that can run nothing the data may use, with a deadline
        # in between
        {
            "budget": "50",
            "deadline": "14d",
            "ops_skill": "none",
            "pool": None,
            "job": {
                "model": "llama3.1-70b",
                "method": "qlora",
                "tokens": "20B",
                "seq_len": 2048,
                "data": {"sensitivity": "internal"},
            },
        },
        # on premises on a workstation that cannot hold the model, and a small budget
        {
            "budget": "5000",
            "deadline": "14d",
            "ops_skill": "basic",
            "pool": ("rtx4090", 4, 4),
            "job": {
                "model": "qwen2.5-72b",
                "method": "continued_pretrain",
                "tokens": "10M",
                "seq_len": 2048,
                "data": {"sensitivity": "internal", "residency": "on_premises", "at": "site"},
            },
        },
        # confidential data kept on premises, on one-GPU servers a no-ops team may use one of, too
        # slowly
        {
            "budget": "100万元",
            "deadline": "3d",
            "ops_skill": "none",
            "pool": ("h800", 8, 1),
            "job": {
                "model": "qwen2.5-1.5b",
                "method": "lora",
                "tokens": "20B",
                "seq_len": 2048,
                "data": {"sensitivity": "confidential", "residency": "on_premises", "at": "site"},
            },
        },
    ],
)
def test_every_infeasible_answer_names_a_conflict_and_a_way_out(
    base_scenario, write_scenario, case
):
    """Found by generating scenarios at random: each of these was answered 'infeasible' with a
    conflict and no relaxation, or with neither. An infeasible scenario is an answer: what conflicts
    and what to change, priced."""
    base_scenario.update(
        budget=case["budget"],
        deadline=case["deadline"],
        ops_skill=case["ops_skill"],
        policy={},
        owned=[],
        sites=[],
    )
    if case["pool"]:
        gpu, count, per_node = case["pool"]
        base_scenario.update(sites=[{"id": "site", "jurisdiction": "cn"}],
                             owned=[{"id": "pool", "site": "site", "gpu": gpu, "count": count,
                                     "gpus_per_node": per_node, "cost_per_gpu_hour": 1}])
    base_scenario["jobs"] = [{"id": "j", **case["job"]}]
    result = solve_session(_session(write_scenario, base_scenario))
    assert result.status == "infeasible"
    assert result.conflicts and result.relaxations
    assert all(r.cost is None or r.cost > 0 for r in result.relaxations)


def test_a_chain_with_every_rule_in_the_way_is_relaxed_together(base_scenario, write_scenario):
    """Two jobs, 50 CNY, six hours, no ops skill: each job's deadline and ops rule conflict, and so
    does the budget; five conflicts, more than the first few, are named, and the one way out changes
    them all together, saying the ops skill once though both jobs name it."""
    base_scenario.update(
        owned=[],
        sites=[],
        budget="50",
        deadline="6h",
        ops_skill="none",
        policy={"allow_spot": True},
    )
    base_scenario["jobs"] = [
        {"id": "j", "model": "qwen2.5-72b", "method": "lora", "tokens": "2B", "seq_len": 8192},
        {
            "id": "k",
            "model": "qwen2.5-72b",
            "method": "full_finetune",
            "tokens": "100M",
            "seq_len": 2048,
            "after": ["j"],
        },
    ]
    result = solve_session(_session(write_scenario, base_scenario))
    assert result.status == "infeasible"
    assert {"budget", "deadline/j", "deadline/k", "ops_skill/j", "ops_skill/k"} <= {
        c.constraint for c in result.conflicts
    }
    (joint,) = [r for r in result.relaxations if r.kind == "joint"]
    assert joint.detail.count("set ops_skill to") == 1
    hours = float(re.search(r"extend the deadline to ([\d.]+) h", joint.detail).group(1))  # type: ignore[union-attr]
    base_scenario.update(budget=f"{joint.cost + 1:.2f}", deadline=f"{hours}h", ops_skill="basic")
    after = solve_session(_session(write_scenario, base_scenario))
    assert after.status in ("optimal", "feasible")


def test_a_pool_window_too_short_for_the_job_says_by_how_much(base_scenario, write_scenario):
    """The lab's A800s are free for one day (day 2 to 3) and its regulated data may not leave: the
    answer names the data rules that keep the job off the clouds, and notes that the pool's window
    is shorter than the job's fastest run on it, with both figures."""
    base_scenario.update(
        budget="1000",
        deadline="10d",
        ops_skill="basic",
        policy={},
        sites=[{"id": "lab", "jurisdiction": "cn"}],
        owned=[
            {
                "id": "a800s",
                "site": "lab",
                "gpu": "a800-80gb",
                "count": 8,
                "gpus_per_node": 8,
                "cost_per_gpu_hour": 1,
                "available_from": "2d",
                "available_until": "3d",
            }
        ],
    )
    base_scenario["jobs"] = [
        {
            "id": "ft",
            "model": "qwen2.5-14b",
            "method": "full_finetune",
            "tokens": "2B",
            "seq_len": 4096,
            "data": {"sensitivity": "regulated", "residency": "on_premises", "at": "lab"},
        }
    ]
    session = _session(write_scenario, base_scenario)
    result = solve_session(session)
    assert result.status == "infeasible"
    (note,) = [n for n in result.notes if n.startswith("owned pool a800s is free for 24.0 h (hour "
                                                       "48.0 to 72.0)")]
    need = float(re.search(r"ft needs at least ([\d.,]+) h", note).group(1).replace(",", ""))  # type: ignore[union-attr]
    fastest = min(c.duration_min for c in session.problem.candidates["ft"] if c.resource == "a800s")
    assert need == pytest.approx(fastest / 60, abs=0.05) and need > 24


def test_a_deadline_before_the_delivery_of_the_only_hardware_allowed_says_so(
    base_scenario, write_scenario
):
    """A hospital's patient notes may not leave it and it owns no GPUs: buying is the only way, and
    a delivery lead time past the deadline is why the deadline binds. The conflict says so with the
    option's own figures (the affordable purchase that could end soonest), and the residency
    conflict names each cloud once under one rule."""
    base_scenario.update(
        budget="1.5M",
        deadline="60d",
        ops_skill="basic",
        owned=[],
        sites=[{"id": "hosp", "jurisdiction": "cn"}],
        policy={"consider_purchase": True},
    )
    base_scenario["jobs"] = [
        {
            "id": "lora",
            "model": "qwen2.5-32b",
            "method": "lora",
            "lora_rank": 16,
            "tokens": "500M",
            "seq_len": 4096,
            "data": {"sensitivity": "regulated", "residency": "on_premises", "at": "hosp"},
        }
    ]
    session = _session(write_scenario, base_scenario)
    result = solve_session(session)
    assert result.status == "infeasible"
    deadline = next(c for c in result.conflicts if c.constraint == "deadline/lora")
    found = re.search(
        r"the soonest the other rules allow, (\d+)x (\S+) on (\S+) \(purchase\), can start only at "
        r"day ([\d.]+) \(delivery after purchase\) and ends at day ([\d.]+)",
        deadline.detail,
    )
    assert found, deadline.detail
    problem = session.problem
    option = next(
        c
        for c in problem.candidates["lora"]
        if c.billing == "purchase" and c.gpu == found.group(2) and c.gpus == int(found.group(1))
    )
    delivery_d = problem.resources[option.resource].available_from_min / 60 / 24
    assert float(found.group(4)) == pytest.approx(delivery_d, abs=0.05) and delivery_d > 60
    # the affordable one, not a dearer faster one
    assert problem.standalone_cost(option) <= problem.budget
    residency = next(c for c in result.conflicts if c.constraint == "residency/lora")
    assert residency.detail.count("data must stay on premises") == 1


def test_rules_that_widening_the_conflict_exposes_are_widened_with_it(
    base_scenario, write_scenario
):
    """Two 70B jobs with regulated data kept on premises, no ops skill, 500 CNY and a day, beside a
    4-GPU pool that cannot hold them (bench/explained_answers.py seed 28). No change alone is
    enough, and the conflict's own rules together are not either: widening job k's residency meets
    its sensitivity rule (regulated data needs a private line to a cloud), which the conflict did
    not name. The joint relaxation widens the rules of that kind for the jobs it names too, and the
    scenario changed so has a plan."""
    private = {"sensitivity": "regulated", "at": "site", "residency": "on_premises"}
    base_scenario.update(
        budget="500",
        deadline="1d",
        ops_skill="none",
        policy={"allow_spot": False},
        sites=[{"id": "site", "jurisdiction": "cn"}],
        owned=[
            {
                "id": "pool",
                "site": "site",
                "gpu": "h800",
                "count": 4,
                "gpus_per_node": 4,
                "cost_per_gpu_hour": 1,
            }
        ],
    )
    base_scenario["jobs"] = [
        {
            "id": "j",
            "model": "llama3.1-70b",
            "method": "dpo",
            "tokens": "20B",
            "seq_len": 8192,
            "data": private,
            "optimizer": "adafactor",
            "framework": "deepspeed",
        },
        {
            "id": "k",
            "model": "llama3.1-70b",
            "method": "full_finetune",
            "tokens": "100M",
            "seq_len": 2048,
            "after": ["j"],
            "data": private,
        },
    ]
    result = solve(load_scenario(write_scenario(base_scenario)),
        SolveOptions(time_limit_s=WALL_NET_S))
    assert result.status == "infeasible" and result.conflicts
    (joint,) = [r for r in result.relaxations if r.kind == "joint"]
    assert (
        "set jobs[k].data.sensitivity to" in joint.detail
        and "set jobs[k].data.residency to" in joint.detail
    )
