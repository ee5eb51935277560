"""Per-job `gpus` (exact), `min_gpus` and a fixed `layout`, honoured in every candidate and plan."""

from __future__ import annotations

from typing import get_args

import pytest
from typer.testing import CliRunner

from plan.models.fields import RecomputePolicy
from plan.models.loading import load_scenario
from plan.planner.candidates import build_problem
from plan.planner.cli.app import app
from plan.planner.estimate.types import RECOMPUTE
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.planner.builders import WALL_NET_S

runner = CliRunner()


def _scenario(base_scenario, **job_fields):
    base_scenario["owned"] = []
    base_scenario["sites"] = []
    base_scenario["budget"] = "1M"
    base_scenario["ops_skill"] = "expert"
    base_scenario["jobs"] = [
        {
            "id": "a",
            "model": "llama3-8b",
            "method": "full_finetune",
            "tokens": "200M",
            "seq_len": 2048,
            **job_fields,
        }
    ]
    return base_scenario


def test_exact_count_in_every_candidate_and_plan(base_scenario, write_scenario):
    loaded = load_scenario(write_scenario(_scenario(base_scenario, gpus=12)))
    problem = build_problem(loaded)
    assert problem.candidates["a"] and {c.gpus for c in problem.candidates["a"]} == {12}
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    assert result.plans and all(j.gpus == 12 for p in result.plans for j in p.jobs)
    assert any("fixed by the scenario: gpus=12" in line for line in result.plans[0].explanation)


def test_min_gpus_is_a_floor_and_itself_a_candidate(base_scenario, write_scenario):
    problem = build_problem(load_scenario(write_scenario(_scenario(base_scenario, min_gpus=6))))
    counts = {c.gpus for c in problem.candidates["a"]}
    assert counts and min(counts) >= 6 and 6 in counts


def test_fixed_layout_is_honoured(base_scenario, write_scenario):
    loaded = load_scenario(write_scenario(_scenario(base_scenario, layout={"tp": 2, "zero": 1})))
    problem = build_problem(loaded)
    assert problem.candidates["a"]
    for c in problem.candidates["a"]:
        assert c.layout.tp == 2 and c.layout.zero == 1 and c.gpus % 2 == 0


def test_fixed_layout_the_hardware_cannot_run_is_a_named_removal(base_scenario, write_scenario):
    # Counts that are multiples of 3 exist (24, 48, ...), but tp=3 does not divide llama3-8b's 32
    # heads.
    loaded = load_scenario(write_scenario(_scenario(base_scenario, layout={"tp": 3})))
    problem = build_problem(loaded)
    assert not problem.candidates["a"]
    assert any(r.rule == "layout" and "tp" in r.reason for r in problem.removed)


def test_fixed_recomputation_and_micro_batch_are_honoured(base_scenario, write_scenario):
    """A reproduction fixes the paper's recomputation and micro-batch too: every candidate and plan
    keeps them, and the plan says the scenario fixed them."""
    layout = {"zero": 3, "recompute": "full", "micro_batch": 2}
    loaded = load_scenario(
        write_scenario(_scenario(base_scenario, framework="fsdp", global_batch=64, layout=layout))
    )
    problem = build_problem(loaded)
    assert problem.candidates["a"]
    for c in problem.candidates["a"]:
        assert (c.layout.zero, c.layout.recompute, c.layout.micro_batch) == (3, "full", 2)
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    assert result.plans and all((j.layout.recompute, j.layout.micro_batch) == ("full", 2)
                                for p in result.plans for j in p.jobs)
    assert any("recompute=full micro_batch=2" in line for line in result.plans[0].explanation)
    # left free, the search takes another micro-batch here: the fixed one is not what it would pick
    # anyway
    free = build_problem(
        load_scenario(
            write_scenario(
                _scenario(base_scenario, framework="fsdp", global_batch=64, layout={"zero": 3})
            )
        )
    )
    assert any(
        c.layout.micro_batch != 2 or c.layout.recompute != "full" for c in free.candidates["a"]
    )


def test_a_fixed_expert_split_is_honoured_and_refused_on_a_dense_model(
    base_scenario, write_scenario
):
    moe = _scenario(
        base_scenario, model="mixtral-8x7b", method="continued_pretrain", layout={"ep": 4}
    )
    problem = build_problem(load_scenario(write_scenario(moe)))
    assert problem.candidates["a"] and all(c.layout.ep == 4 for c in problem.candidates["a"])
    dense = build_problem(load_scenario(write_scenario(_scenario(base_scenario, layout={"ep": 4}))))
    assert not dense.candidates["a"]
    assert any(
        r.rule == "layout" and "need an MoE model; this one is dense" in r.reason
        for r in dense.removed
    )


def test_a_job_fixes_the_recomputation_policies_plan_estimate_takes():
    assert get_args(RecomputePolicy) == RECOMPUTE


def test_a_fixed_recomputation_no_stack_runs_is_a_named_removal(base_scenario, write_scenario):
    # selective recomputation on FSDP is torchtitan's op-level policy, and torchtitan trains no LoRA
    loaded = load_scenario(write_scenario(_scenario(base_scenario, method="lora", framework="fsdp",
                                                    layout={"recompute": "selective"})))
    problem = build_problem(loaded)
    assert not problem.candidates["a"]
    assert any(r.rule == "layout" and "recompute: selective recomputation on FSDP" in r.reason
               for r in problem.removed)


@pytest.mark.parametrize(("fields", "expected"), [
    ({"gpus": 4, "min_gpus": 8}, "gpus (4) is below min_gpus (8)"),
    ({"min_gpus": 16, "max_gpus": 8}, "min_gpus (16) is above max_gpus (8)"),
    ({"gpus": 12, "layout": {"tp": 8}}, "layout: tp x pp = 8 does not divide gpus (12)"),
    ({"layout": {"zero": 4}}, "jobs[0].layout.zero: got 4; must be at most 3"),
    ({"layout": {"tp": 2, "dp": 4}}, "jobs[0].layout.dp: unknown field; did you mean 'tp'"),
    ({"layout": {"recompute": "partial"}},
     "jobs[0].layout.recompute: got 'partial'; input should be 'none', 'selective', 'full'"),
    ({"layout": {"micro_batch": 0}}, "jobs[0].layout.micro_batch: got 0; must be above 0"),
])
def test_inconsistent_counts_are_bad_input(base_scenario, write_scenario, fields, expected):
    path = write_scenario(_scenario(base_scenario, **fields))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0] and str(path) in lines[0], result.stderr
